"""Faults a training run and the commands meet on a real machine: a full disk, a kill
mid-write, output that cannot be written. A full disk is a file-size limit on the
process (SIGXFSZ ignored), which makes writes past it fail with the OS's own error.
Those, a full standard output and what the command logs run the command in a process of
its own; the other faults lie in the files a command reads, and `main` runs it here,
without the seconds a new process spends importing PyTorch."""

from __future__ import annotations

import io
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from rnnsearch.cli import main
from rnnsearch.config.data import DataConfig
from rnnsearch.evaluation.plots import learning_curves
from rnnsearch.files.model_directory import read_tensors, write_tensors
from rnnsearch.text.subwords import Subwords, train_subwords
from tests.integration.conftest import tiny_config, write_config

ROWS = [{"step": 1, "train_loss": 5.0}, {"step": 2, "train_loss": 4.0, "valid_loss": 4.5, "valid_bleu": 1.0}]


def rnnsearch(*args: object, limit: int | None = None) -> subprocess.CompletedProcess:
    """The command in a process of its own, its file writes limited to `limit` bytes."""

    def limit_file_size() -> None:
        if limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "rnnsearch", *map(str, args)]
    return subprocess.run(
        command,
        text=True,
        timeout=300,
        env=environment,
        preexec_fn=limit_file_size,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )


def in_process(*args: object, input: str = "") -> subprocess.CompletedProcess:
    """The command run by `main` in this process, `input` on its standard input: the
    exit status and the standard output and error that `rnnsearch` would give."""
    streams = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(input.encode()), encoding="utf-8")
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    try:
        status = main([str(a) for a in args])
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()
    finally:
        sys.stdin, sys.stdout, sys.stderr = streams
    return subprocess.CompletedProcess(["rnnsearch", *map(str, args)], status, out, err)


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("rnnsearch: error:")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    return lines[0]


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory) -> tuple[Path, Path]:
    """A config and the model directory it trained for 2 steps, to copy and resume; it
    draws an alignment, so that its directory holds every kind of file a run writes."""
    folder = tmp_path_factory.mktemp("trained")
    options = {"max_steps": 2, "valid_every": 2, "valid_heatmaps": 1}
    config = write_config(folder / "c.yaml", tiny_config(corpus, folder / "run", **options))
    result = in_process("train", config)
    assert result.returncode == 0, result.stderr[-3000:]
    return config, folder / "run"


def copy_of(trained: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    config, run = trained
    shutil.copytree(run, tmp_path / "run")
    settings = yaml.safe_load(config.read_text())
    settings["train"]["model_dir"] = str(tmp_path / "run")
    return write_config(tmp_path / "c.yaml", settings), tmp_path / "run"


def test_a_full_disk_at_a_checkpoint_is_one_line_naming_it_and_keeps_the_previous_one(trained, tmp_path):
    config, run = copy_of(trained, tmp_path)
    before = (run / "last.safetensors").read_bytes()
    limit = (run / "last.safetensors").stat().st_size - 1000  # every other file is smaller
    result = rnnsearch("train", config, "--resume", "--set", "train.max_steps=3", limit=limit)
    assert one_line_error(result) == f"rnnsearch: error: {run / 'last.safetensors'}: cannot write: File too large"
    assert (run / "last.safetensors").read_bytes() == before
    assert read_tensors(run / "last.safetensors")[1]["progress"]["step"] == 2
    assert not [p for p in run.rglob(".*")]


def test_a_full_disk_while_writing_a_subword_model_names_it_and_leaves_no_partial_file(corpus, tmp_path):
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run"))
    result = rnnsearch("train", config, limit=20_000)
    run = tmp_path / "run"
    assert one_line_error(result) == (
        f"rnnsearch: error: {run / 'prepared' / 'subwords.src.model'}: cannot write: File too large"
    )
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == [Path("prepared")]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_translations_to_a_full_standard_output_name_it(trained, corpus):
    with open(corpus / "val.de") as source, open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "rnnsearch", "translate", str(trained[1]), "--beam-size", "1"],
            stdin=source,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
    assert one_line_error(result) == "rnnsearch: error: <stdout>: cannot write: No space left on device"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("option", ["-o", "--alignments", "--hard-alignments"])
def test_translations_to_a_full_output_file_name_it(trained, corpus, option):
    result = in_process("translate", trained[1], "--beam-size", "1", "-i", corpus / "val.de", option, "/dev/full")
    assert one_line_error(result) == "rnnsearch: error: /dev/full: cannot write: No space left on device"


def test_a_plot_that_cannot_be_written_leaves_the_previous_figure_whole(tmp_path):
    path = tmp_path / "learning_curve.png"
    learning_curves(ROWS, path, DataConfig.scores[0])
    before = path.read_bytes()
    code = f"""
from rnnsearch.errors import UserError
from rnnsearch.config.data import DataConfig
from rnnsearch.evaluation.plots import learning_curves
try:
    learning_curves({ROWS!r}, "{path}", DataConfig.scores[0])
except UserError as error:
    print(error)
"""

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) // 2, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, preexec_fn=limit_file_size
    )
    assert result.stdout.strip() == f"{path}: cannot write: File too large", result.stderr[-3000:]
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["learning_curve.png"]


def test_a_killed_run_resumes_past_a_torn_metrics_row_and_its_temporaries_are_removed(trained, tmp_path):
    config, run = copy_of(trained, tmp_path)
    with (run / "metrics.jsonl").open("a") as log:
        log.write('{"step": 3, "train_lo')
    stale = [run / ".last.safetensors.0123abcd.rnnsearch-tmp", run / "alignments" / ".x.png.89abcdef.rnnsearch-tmp"]
    stale[0].mkdir()
    (stale[0] / ".tmpAbC123").write_bytes(b"half a checkpoint")
    stale[1].write_bytes(b"")
    (run / ".notes").write_text("not ours")
    result = in_process("train", config, "--resume", "--set", "train.max_steps=3")
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 2, 3, 3]
    assert not any(p.exists() for p in stale)
    assert (run / ".notes").read_text() == "not ours"


def stopped_before_its_first_checkpoint(trained: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the trained run as a kill before its first checkpoint leaves it: its
    config, subword models and log rows, a kept checkpoint, no weights to resume from."""
    config, run = copy_of(trained, tmp_path)
    for name in ("last.safetensors", "best.safetensors"):
        (run / name).unlink()
    (run / "checkpoints").mkdir(exist_ok=True)
    (run / "checkpoints" / "step0000002.safetensors").write_bytes(b"kept by the stopped run")
    return config, run


@pytest.mark.parametrize("resume", [True, False])
def test_a_run_stopped_before_its_first_checkpoint_starts_again_without_its_old_log(trained, tmp_path, resume):
    config, run = stopped_before_its_first_checkpoint(trained, tmp_path)
    old_rows = len((run / "metrics.jsonl").read_text().splitlines())
    result = in_process("train", config, *(["--resume"] if resume else []), "--set", "train.max_steps=2")
    assert result.returncode == 0, result.stderr[-3000:]
    assert ("no checkpoint to resume from" in result.stderr) == resume
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 2] and old_rows == 3
    assert not (run / "checkpoints" / "step0000002.safetensors").exists()
    assert (run / "last.safetensors").exists() and (run / "best.safetensors").exists()


def test_a_model_without_its_best_weights_translates_with_its_last_and_says_so(trained, tmp_path, corpus):
    _, run = copy_of(trained, tmp_path)
    expected = in_process("translate", run, "-i", corpus / "val.de")
    (run / "best.safetensors").unlink()
    result = rnnsearch("translate", run, "-i", corpus / "val.de")
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"{run}: no best.safetensors; translating with last.safetensors, the weights of the last checkpoint\n"
    )
    assert result.stdout == expected.stdout  # the run validated once: its last weights are its best


@pytest.fixture(scope="module")
def kept(corpus, tmp_path_factory) -> Path:
    """A model directory that kept the weights of its two validations, to average."""
    folder = tmp_path_factory.mktemp("kept")
    options = {"max_steps": 2, "valid_every": 1, "keep_checkpoints": 2}
    result = in_process("train", write_config(folder / "c.yaml", tiny_config(corpus, folder / "run", **options)))
    assert result.returncode == 0, result.stderr[-3000:]
    return folder / "run"


@pytest.mark.parametrize("command", ["average", "export"])
def test_a_full_disk_leaves_no_half_written_average_or_package_and_a_retry_succeeds(
    command, trained, kept, tmp_path, corpus
):
    source = kept if command == "average" else trained[1]
    out = tmp_path / "out"
    weights = (source / "best.safetensors").stat().st_size
    result = rnnsearch(command, source, "-o", out, limit=weights // 2)  # the weights or a graph cannot be written
    error = one_line_error(result)
    # one file of the output, named where it belongs: the disk is at fault, not the model
    assert error.startswith(f"rnnsearch: error: {out}/") and error.endswith(": cannot write: File too large"), error
    assert not out.exists() and not list(tmp_path.glob(".*"))
    result = in_process(command, source, "-o", out)
    assert result.returncode == 0, result.stderr[-3000:]
    translated = in_process("translate", out, "-i", corpus / "val.de")
    assert translated.returncode == 0 and len(translated.stdout.splitlines()) == 40, translated.stderr


def test_subword_models_swapped_for_others_of_the_same_size_are_refused(trained, tmp_path, corpus):
    """Same-size models swapped in once translated into nonsense, exit 0: the weights
    record the digests of the models they were trained with."""
    config, run = copy_of(trained, tmp_path)
    own = Subwords.load(run / "subwords.tgt.model")
    texts = [line for name in ("train.de", "train.en") for line in (corpus / name).read_text().splitlines()]
    other = train_subwords(texts, "bpe", len(own))
    assert len(other) == len(own) and other.digest != own.digest
    (run / "subwords.tgt.model").write_bytes(other.model_bytes)
    refusal = (
        "was trained with (its digest differs from the one the weights record); put back the model directory's own"
    )
    result = in_process("translate", run, "-i", corpus / "val.de")
    assert one_line_error(result) == (
        f"rnnsearch: error: {run / 'subwords.tgt.model'}: not the subword model best.safetensors {refusal}"
    )
    result = in_process("train", config, "--resume", "--set", "train.max_steps=3")
    assert one_line_error(result) == (
        f"rnnsearch: error: {run / 'subwords.tgt.model'}: not the subword model last.safetensors {refusal}"
    )


def test_weights_written_before_the_subword_record_still_translate(trained, tmp_path, corpus):
    _, run = copy_of(trained, tmp_path)
    expected = in_process("translate", run, "-i", corpus / "val.de")
    tensors, info = read_tensors(run / "best.safetensors")
    assert set(info.pop("subwords")) == {"src", "tgt"}
    write_tensors(run / "best.safetensors", tensors, info)
    result = in_process("translate", run, "-i", corpus / "val.de")
    assert result.returncode == 0 and result.stdout == expected.stdout, result.stderr


def test_a_torn_metrics_row_before_the_last_is_one_line_naming_the_line(trained, tmp_path):
    config, run = copy_of(trained, tmp_path)
    lines = (run / "metrics.jsonl").read_text().splitlines(keepends=True)
    (run / "metrics.jsonl").write_text(lines[0] + '{"step": 2, "tr\n' + "".join(lines[1:]))
    result = in_process("train", config, "--resume", "--set", "train.max_steps=3")
    assert one_line_error(result) == (
        f"rnnsearch: error: {run / 'metrics.jsonl'}, line 2: not a metrics row (corrupt metrics log)"
    )


@pytest.mark.parametrize("kind", ["model.", "optimizer."])
def test_a_resume_point_with_a_nan_is_one_line_naming_the_tensor_and_trains_nothing(trained, tmp_path, kind):
    """One NaN in the weights or in Adam's moments would make every update after it NaN."""
    config, run = copy_of(trained, tmp_path)
    last = run / "last.safetensors"
    tensors, info = read_tensors(last)
    name = next(n for n, t in sorted(tensors.items()) if n.startswith(kind) and t.is_floating_point() and t.numel())
    tensors[name].view(-1)[0] = float("nan")
    write_tensors(last, tensors, info)
    metrics = (run / "metrics.jsonl").read_bytes()
    result = in_process("train", config, "--resume", "--set", "train.max_steps=3")
    assert one_line_error(result) == (
        f"rnnsearch: error: {last}: tensor {name} holds NaN or infinite values; a run cannot resume from it "
        "(did training diverge?)"
    )
    assert (run / "metrics.jsonl").read_bytes() == metrics


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda info: info.pop("progress"), "its progress is not the counters a run records"),
        (lambda info: info["progress"].update(step=-5), "its progress.step is -5"),
        (lambda info: info["progress"].update(epoch="1"), "its progress.epoch is '1'"),
        (lambda info: info["progress"].update(step=1000), "its step 1000 is beyond the run's budget"),
        (lambda info: info.pop("param_groups"), "its param_groups do not describe this run's optimizer"),
        (lambda info: info.update(param_groups=[{"lr": 1}]), "its param_groups do not describe"),
    ],
)
def test_a_resume_points_edited_record_is_one_line_naming_it_and_trains_nothing(trained, tmp_path, change, said):
    """A resume point's progress and Adam's settings were read unchecked: a missing one was
    a KeyError traceback, a step past the budget or below 0 was taken as it stood."""
    config, run = copy_of(trained, tmp_path)
    last = run / "last.safetensors"
    tensors, info = read_tensors(last)
    change(info)
    write_tensors(last, tensors, info)
    metrics = (run / "metrics.jsonl").read_bytes()
    line = one_line_error(in_process("train", config, "--resume", "--set", "train.max_steps=3"))
    assert line.startswith(f"rnnsearch: error: {last}: ") and said in line
    assert (run / "metrics.jsonl").read_bytes() == metrics and read_tensors(last)[1] == info


@pytest.mark.parametrize(
    ("assignment", "said"),
    [
        ("data.max_length=50", "data.max_length is 100 there but 50 here"),
        ("model.dropout=0.3", "model.dropout is 0.1 there but 0.3 here"),
        ("subwords.vocab_size=500", "subwords.vocab_size is 400 there but 500 here"),
    ],
)
def test_a_run_resumed_with_another_model_data_or_pieces_is_refused_and_keeps_its_files(
    trained, tmp_path, assignment, said
):
    """`train --resume` went on with whatever data the config it was given named."""
    config, run = copy_of(trained, tmp_path)
    before = {path: path.read_bytes() for path in run.rglob("*") if path.is_file()}
    line = one_line_error(in_process("train", config, "--resume", "--set", assignment))
    assert said in line and "a resumed run is the run it resumes" in line
    assert {path: path.read_bytes() for path in run.rglob("*") if path.is_file()} == before


def test_a_run_refused_for_its_validation_set_writes_no_model_files(corpus, tmp_path):
    """The config and subword models were written before the validation set was found too
    long to translate, leaving a directory that looked like a model's."""
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run"))
    line = one_line_error(in_process("train", config, "--set", "search.max_source_length=3"))
    assert "search.max_source_length" in line
    assert not any(
        (tmp_path / "run" / name).exists() for name in ("config.yaml", "subwords.src.model", "last.safetensors")
    )


def test_a_loss_that_is_not_finite_stops_training_and_keeps_the_last_good_checkpoint(trained, tmp_path):
    """A learning rate of 10^30 turns the weights into infinities in one update and the loss
    into NaN at the next step: the run stops there with a line naming the step, exits 1, and
    leaves the checkpoint it resumed from, which still loads and translates."""
    config, original = trained
    run = shutil.copytree(original, tmp_path / "run")
    before = read_tensors(run / "last.safetensors")[0]
    overrides = [
        "--set",
        f"train.model_dir={run}",
        "--set",
        "train.max_steps=10",
        "--set",
        "train.learning_rate=1.0e+30",
    ]
    line = one_line_error(in_process("train", config, "--resume", *overrides))
    assert "train: step 4: the training loss is nan" in line and f"{run} keeps the checkpoint of step 2" in line
    after = read_tensors(run / "last.safetensors")[0]
    assert before.keys() == after.keys() and all(before[name].equal(after[name]) for name in before)
    result = in_process("translate", run, input="Ein Hund läuft.\n")
    assert result.returncode == 0 and result.stdout.strip(), result.stderr[-3000:]


def test_a_rate_no_step_can_take_is_refused_and_one_that_blows_the_weights_up_saves_none_of_them(trained, tmp_path):
    """A learning rate of 1e308 ended in a traceback inside Adam's float32 step; one that
    the step can take but that makes the weights overflow stops the run in one line, and
    every checkpoint it leaves is finite and resumable."""
    config, run = copy_of(trained, tmp_path)
    before = read_tensors(run / "last.safetensors")[0]
    line = one_line_error(in_process("train", config, "--resume", "--set", "train.learning_rate=1e308"))
    assert "train.learning_rate: 1e+308 is larger than 3.4e+37, the largest rate Adam's float32 step" in line
    assert all(before[name].equal(read_tensors(run / "last.safetensors")[0][name]) for name in before)
    blown = ["train.max_steps=5", "train.valid_every=1", "train.learning_rate=3.4e37", "train.warmup_steps=0"]
    line = one_line_error(in_process("train", config, "--resume", *[a for b in blown for a in ("--set", b)]))
    assert "train: step " in line and f"{run} keeps the checkpoint of step " in line
    after = read_tensors(run / "last.safetensors")[0]
    assert all(bool(torch.isfinite(tensor).all()) for tensor in after.values())


@pytest.mark.parametrize("value", [".inf", ".nan", "-.inf"])
def test_a_guided_alignment_weight_that_is_not_finite_is_refused(trained, value):
    config, _ = trained
    line = one_line_error(in_process("train", config, "--set", f"train.guided_alignment_weight={value}"))
    assert "train.guided_alignment_weight: Input should be a finite number" in line

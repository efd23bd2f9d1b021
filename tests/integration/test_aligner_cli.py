"""The alignment module through the CLI: `rnnsearch train-aligner` adds it to a trained
model, resumes its run exactly, leaves the translations as they were, and every command
that shows alignments uses it, saying so."""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import rnnsearch
from rnnsearch.alignments.counted_jumps import LEAST_JUMPS
from rnnsearch.alignments.distortion import CONTIGUITY
from rnnsearch.alignments.words import read_translations
from rnnsearch.cli import main
from rnnsearch.errors import ArgumentValueError
from rnnsearch.files.model_directory import (
    ALIGNER_DIR,
    ALIGNER_JUMPS,
    ALIGNER_WEIGHTS,
    LAST,
    read_tensors,
    stored_digest,
    write_tensors,
)
from rnnsearch.prepared import PreparedPairs
from rnnsearch.text.batches import epoch_batches
from tests.integration.conftest import tiny_config, write_config, write_lines
from tests.integration.test_score_align import assert_one_line_error, read_jsonl, run_cli

MODULE = ["--set", "train.aligner_objective=prediction", "--set", "train.valid_every=2", "--set", "train.log_every=1"]


def copied(model_dir: Path, folder: Path) -> Path:
    target = folder / "model"
    shutil.copytree(model_dir, target, ignore=shutil.ignore_patterns(ALIGNER_DIR))
    return target


@pytest.fixture(scope="module")
def with_module(model_dir, tmp_path_factory) -> Path:
    """The shared tiny model with a module trained 6 steps by prediction."""
    target = copied(model_dir, tmp_path_factory.mktemp("aligner"))
    assert main(["train-aligner", str(target), *MODULE, "--set", "train.max_steps=6"]) == 0
    return target


def module_weights(model: Path) -> dict[str, torch.Tensor]:
    return read_tensors(model / ALIGNER_DIR / ALIGNER_WEIGHTS)[0]


def test_a_resumed_module_run_ends_where_the_whole_run_ends(model_dir, with_module, tmp_path, capsys):
    split = copied(model_dir, tmp_path)
    assert main(["train-aligner", str(split), *MODULE, "--set", "train.max_steps=4"]) == 0
    status, _, err = run_cli(capsys, "train-aligner", split, *MODULE, "--set", "train.max_steps=6")
    assert_one_line_error(status, err, "already holds", "--resume")
    assert main(["train-aligner", str(split), *MODULE, "--set", "train.max_steps=6", "--resume"]) == 0
    whole, resumed = module_weights(with_module), module_weights(split)
    assert whole.keys() == resumed.keys()
    for name in whole:
        torch.testing.assert_close(resumed[name], whole[name], rtol=0, atol=0)
    rows = [json.loads(line) for line in (split / ALIGNER_DIR / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2, 3, 4, 5, 6]


def test_a_run_killed_after_its_checkpoint_resumes_with_its_log_trimmed(model_dir, tmp_path, capsys):
    """A kill leaves the rows of the steps after the last checkpoint, and perhaps a torn
    one: the resumed run redoes those steps, so their rows are written once."""
    model = copied(model_dir, tmp_path)
    assert main(["train-aligner", str(model), *MODULE, "--set", "train.max_steps=2"]) == 0
    log = model / ALIGNER_DIR / "metrics.jsonl"
    with log.open("a") as rows:
        rows.write('{"step": 3, "train_loss": 9.0}\n{"step": 4, "train_loss": 9.0}\n{"step": 5, "al')
    assert main(["train-aligner", str(model), *MODULE, "--set", "train.max_steps=4", "--resume"]) == 0
    steps = [json.loads(line)["step"] for line in log.read_text().splitlines()]
    assert steps == [1, 2, 3, 4]
    assert 9.0 not in [json.loads(line)["train_loss"] for line in log.read_text().splitlines()]


def test_kept_passes_train_the_module_as_passes_computed_at_every_step_and_resume_exactly(model_dir, tmp_path, capsys):
    """A module trained on the frozen passes it keeps (all of them, some or none) is, to
    rounding, the module trained on passes computed at every step, into the second epoch
    (the passes are kept from the first epoch's batches); a run resumed in the second
    epoch, which keeps nothing yet, ends bit for bit where the whole run ends."""
    first_epoch = len(epoch_batches(PreparedPairs(model_dir / "prepared"), 2000, None, 1, 0))
    trained, kept = {}, {}

    def run(memory: str, steps: int, folder: str, *resume: str) -> Path:
        model = tmp_path / folder / "model" if resume else copied(model_dir, tmp_path / folder)
        options = ["--set", f"train.frozen_passes_gib={memory}", "--set", f"train.max_steps={steps}", *resume]
        status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, "--set", "train.batch_tokens=2000", *options)
        assert status == 0, err
        kept[memory] = re.findall(r"passes of (\d+) of (\d+) pairs", err)
        return model

    for memory in ("0", "4", "2e-5"):
        trained[memory] = module_weights(run(memory, first_epoch + 3, memory))
    assert kept["0"] == [] and kept["4"][0][0] == kept["4"][0][1] and 0 < int(kept["2e-5"][0][0]) < 100
    for memory in ("4", "2e-5"):
        for name, computed in trained["0"].items():
            torch.testing.assert_close(trained[memory][name], computed)
    run("2e-5", first_epoch + 1, "split")
    resumed = module_weights(run("2e-5", first_epoch + 3, "split", "--resume"))
    for name, whole in trained["2e-5"].items():
        torch.testing.assert_close(resumed[name], whole, rtol=0, atol=0)


def test_a_run_killed_before_its_first_checkpoint_says_it_starts_again(model_dir, tmp_path, capsys):
    model = copied(model_dir, tmp_path)
    (model / ALIGNER_DIR).mkdir()
    (model / ALIGNER_DIR / "metrics.jsonl").write_text('{"step": 1, "train_loss": 9.0}\n')
    status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, "--set", "train.max_steps=2", "--resume")
    assert status == 0, err
    assert "no checkpoint to resume from (stopped before its first one); starting again" in err
    assert "step 2, epoch 1: loss" in err  # the log lines of `train`: the same loop runs both
    rows = [json.loads(line) for line in (model / ALIGNER_DIR / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2] and rows[0]["train_loss"] != 9.0


@pytest.mark.parametrize(
    "assignment",
    [
        "subwords.vocab_size=500",
        "train.init_from=elsewhere",
        "train.model_dir=elsewhere",
        "data.src_lang=fr",
        "model.aligner=false",
        "model.embedding_size=32",
    ],
)
def test_train_aligner_refuses_keys_it_does_not_take_and_writes_nothing(model_dir, tmp_path, capsys, assignment):
    model = copied(model_dir, tmp_path)
    status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, "--set", assignment)
    key = assignment.partition("=")[0]
    assert_one_line_error(status, err, f"--set {key}: not a key a train-aligner run takes", "model.aligner_size")
    assert not (model / ALIGNER_DIR).exists()


def test_train_aligner_refuses_a_module_too_large_or_a_run_without_a_budget(model_dir, tmp_path, capsys):
    model = copied(model_dir, tmp_path)
    status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, "--set", "model.aligner_size=1000000000")
    assert_one_line_error(status, err, "model.aligner_size", "less than or equal to 16384")
    status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, "--set", "train.max_steps=null")
    assert_one_line_error(status, err, "sets no budget", "--set train.max_steps=N")
    assert not (model / ALIGNER_DIR).exists()


def test_translations_are_the_same_and_alignments_come_from_the_module(model_dir, with_module, corpus, tmp_path):
    sources = (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:12]
    before, after = rnnsearch.load(model_dir, device="cpu"), rnnsearch.load(with_module, device="cpu")
    for beam_size in (1, 3):
        plain = before.translate(sources, beam_size=beam_size)
        aligned = after.translate(sources, beam_size=beam_size)
        assert [(t.text, t.score) for t in plain] == [(t.text, t.score) for t in aligned]
        assert {t.alignment_from for t in plain} == {"attention"} and {t.alignment_from for t in aligned} == {"aligner"}
        attention = after.translate(sources, beam_size=beam_size, alignment_from="attention")
        for a, b in zip(plain, attention):
            assert (a.alignment == b.alignment).all()
    src = write_lines(tmp_path / "in.de", sources)
    for model, name in ((model_dir, "before"), (with_module, "after")):
        out, rows = tmp_path / f"{name}.txt", tmp_path / f"{name}.jsonl"
        assert main(["translate", str(model), "-i", str(src), "-o", str(out), "--alignments", str(rows)]) == 0
    assert (tmp_path / "before.txt").read_bytes() == (tmp_path / "after.txt").read_bytes()
    assert {row["alignment_from"] for row in read_jsonl(tmp_path / "before.jsonl")} == {"attention"}
    assert {row["alignment_from"] for row in read_jsonl(tmp_path / "after.jsonl")} == {"aligner"}


def test_align_and_score_read_the_module_unless_told_otherwise(with_module, corpus, tmp_path, capsys):
    src = write_lines(tmp_path / "s.de", (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:8])
    tgt = write_lines(tmp_path / "t.en", (corpus / "val.en").read_text(encoding="utf-8").splitlines()[:8])
    translator = rnnsearch.load(with_module, device="cpu")
    module = translator.align(src.read_text().splitlines(), tgt.read_text().splitlines())
    attention = translator.align(src.read_text().splitlines(), tgt.read_text().splitlines(), alignment_from="attention")
    assert {a.alignment_from for a in module} == {"aligner"} and {a.alignment_from for a in attention} == {"attention"}
    assert [a.pairs for a in module] != [a.pairs for a in attention]
    assert translator.score(["Ein Hund."], ["A dog."])[0].alignment_from == "aligner"
    from_attention = translator.score(["Ein Hund."], ["A dog."], alignment_from="attention")[0]
    assert from_attention.alignment_from == "attention"
    assert from_attention.log_prob == translator.score(["Ein Hund."], ["A dog."])[0].log_prob
    for source, expected in ((None, "aligner"), ("attention", "attention")):
        flags = [] if source is None else ["--alignment-from", source]
        rows = tmp_path / f"score-{expected}.jsonl"
        status, out, err = run_cli(
            capsys, "score", with_module, "--src", src, "--tgt", tgt, "--alignments", rows, *flags
        )
        assert status == 0, err
        assert len(out.splitlines()) == 8 and {row["alignment_from"] for row in read_jsonl(rows)} == {expected}
    for source, expected in ((None, module), ("attention", attention)):
        flags = [] if source is None else ["--alignment-from", source]
        status, out, _ = run_cli(capsys, "align", with_module, "--src", src, "--tgt", tgt, *flags)
        assert status == 0
        assert out.splitlines() == [a.pharaoh() for a in expected]
    status, _, err = run_cli(capsys, "align", with_module, "--src", src, "--tgt", tgt, "--reading", "input")
    assert_one_line_error(status, err, "reading", "alignment module")


def test_train_aligner_counts_its_modules_jump_table_and_every_reading_of_the_module_uses_it(
    with_module, corpus, tmp_path, caplog
):
    """The table is counted from the module's links of its training pairs and kept with
    the digest of its weights; `align`, `score` and `translate` read the module's rows with
    it, and a table counted from other weights is left out, with a warning."""
    record = json.loads((with_module / ALIGNER_DIR / ALIGNER_JUMPS).read_text())
    assert record["module"] == stored_digest(with_module / ALIGNER_DIR / ALIGNER_WEIGHTS)
    assert record["pairs"] == 300 and record["jumps"] >= LEAST_JUMPS
    translator = rnnsearch.load(with_module, device="cpu")
    table = translator.module_jumps()
    assert table is not None and list(table.weights) == record["weights"]
    sources = (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:20]
    targets = (corpus / "val.en").read_text(encoding="utf-8").splitlines()[:20]
    scored = [pair.as_translation() for pair in translator.score(sources, targets)]
    assert {pair.jumps for pair in scored} == {table}
    counted, fixed = (read_translations(scored, reading="output", prior=prior) for prior in (table, CONTIGUITY))
    assert [a.pairs for a in translator.align(sources, targets)] == [a.pairs for a in counted]
    assert [a.pairs for a in counted] != [a.pairs for a in fixed]
    assert {t.jumps for t in translator.translate(sources[:4], markup="html")} == {table}

    stale = copied(with_module, tmp_path)
    shutil.copytree(with_module / ALIGNER_DIR, stale / ALIGNER_DIR)
    jumps = stale / ALIGNER_DIR / ALIGNER_JUMPS
    jumps.write_text(json.dumps(record | {"module": "0" * 64}))
    with caplog.at_level(logging.WARNING):
        assert rnnsearch.load(stale, device="cpu").module_jumps() is None
    assert "counted from other weights" in caplog.text


def test_a_model_without_a_module_refuses_to_align_with_one(model_dir, corpus, capsys):
    status, _, err = run_cli(
        capsys,
        "align",
        model_dir,
        "--src",
        corpus / "val.de",
        "--tgt",
        corpus / "val.en",
        "--alignment-from",
        "aligner",
    )
    assert_one_line_error(status, err, "alignment_from", f"{model_dir} has no alignment module", "train-aligner")


def test_a_reverse_model_without_a_module_is_named_when_it_alone_lacks_one(
    with_module, reverse_model_dir, corpus, capsys
):
    pairs = ["--src", corpus / "val.de", "--tgt", corpus / "val.en", "--alignment-from", "aligner"]
    status, _, err = run_cli(capsys, "align", with_module, *pairs, "--reverse", reverse_model_dir)
    assert_one_line_error(status, err, f"{reverse_model_dir} has no alignment module")


def test_a_module_trained_on_other_weights_is_left_out(with_module, tmp_path, caplog):
    stale = copied(with_module, tmp_path)
    shutil.copytree(with_module / ALIGNER_DIR, stale / ALIGNER_DIR)
    assert rnnsearch.load(stale, device="cpu").translate(["Ein Hund."])[0].alignment_from == "aligner"
    best = stale / "best.safetensors"
    shutil.copy(stale / LAST, best)  # the translation trained on: other weights than the module read
    translation = rnnsearch.load(stale, device="cpu").translate(["Ein Hund."])[0]
    assert translation.alignment_from == "attention"
    assert "trained on other weights" in caplog.text


@pytest.mark.parametrize("size", [10**12, 0, True])
def test_a_module_whose_recorded_size_is_out_of_bounds_is_one_line_before_it_is_built(
    with_module, tmp_path, size, capsys
):
    """A module's size comes from its file's info: 10^12 was an allocation traceback."""
    model = shutil.copytree(with_module, tmp_path / "model")
    path = model / ALIGNER_DIR / ALIGNER_WEIGHTS
    tensors, info = read_tensors(path)
    write_tensors(path, tensors, {**info, "size": size})
    status, _, err = run_cli(capsys, "attention", model, "Ein Hund.", "-o", tmp_path / "a.png")
    assert_one_line_error(status, err, f"{path}: corrupt alignment module", "from 1 to 16384")


def test_bad_module_settings_are_one_line_errors(model_dir, speech_model, corpus, tmp_path, capsys):
    model = copied(model_dir, tmp_path)
    status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, "--set", "model.embedding_size=32")
    assert_one_line_error(status, err, "train-aligner", "frozen")
    status, _, err = run_cli(capsys, "train-aligner", model)  # the default objective learns from links
    assert_one_line_error(status, err, "train.aligner_objective both", "needs word links", "align-corpus")
    status, _, err = run_cli(capsys, "train-aligner", speech_model)
    assert_one_line_error(status, err, "speech")
    fixed = tiny_config(corpus, tmp_path / "fixed")
    fixed["model"]["attention"] = "none"
    fixed["model"]["aligner"] = True
    status, _, err = run_cli(capsys, "train", write_config(tmp_path / "fixed.yaml", fixed))
    assert_one_line_error(status, err, "model.aligner", "fixed-context")


def test_a_module_trained_with_the_model_leaves_its_translation_weights_as_they_were(corpus, tmp_path):
    """model.aligner: true in a new run: the translation weights are bit for bit those of
    the same run without the module, and the directory aligns with its module."""
    weights = {}
    for name, module in (("plain", False), ("joint", True)):
        tree = tiny_config(corpus, tmp_path / name, max_steps=4, valid_every=4)
        tree["model"]["aligner"] = module
        tree["train"]["aligner_objective"] = "prediction"
        assert main(["train", str(write_config(tmp_path / f"{name}.yaml", tree))]) == 0
        weights[name] = read_tensors(tmp_path / name / LAST)[0]
    translation = {name for name in weights["plain"] if name.startswith("model.")}
    assert {name for name in weights["joint"] if name.startswith("model.") and "aligner" not in name} == translation
    for name in translation:
        assert torch.equal(weights["plain"][name], weights["joint"][name]), name
    aligned = rnnsearch.load(tmp_path / "joint", device="cpu").align(["Ein Hund läuft."], ["A dog runs."])
    assert aligned[0].alignment_from == "aligner"


def test_an_ensemble_aligns_with_the_modules_of_its_members(model_dir, with_module):
    sources, targets = ["Ein Hund läuft im Schnee."], ["A dog runs in the snow."]
    alone = rnnsearch.load(with_module, device="cpu")
    ensemble = rnnsearch.load([with_module, model_dir], device="cpu")  # the second member has no module
    assert ensemble.align(sources, targets)[0].pairs == alone.align(sources, targets)[0].pairs
    translation = ensemble.translate(sources, beam_size=2)[0]
    assert translation.alignment_from == "aligner"
    assert (
        translation.text == rnnsearch.load([model_dir, model_dir], device="cpu").translate(sources, beam_size=2)[0].text
    )


def test_an_exported_package_carries_no_module_and_says_so(with_module, tmp_path):
    assert main(["export", str(with_module), "-o", str(tmp_path / "package")]) == 0
    package = rnnsearch.load(tmp_path / "package", device="cpu")
    assert package.translate(["Ein Hund."])[0].alignment_from == "attention"
    with pytest.raises(ArgumentValueError, match="exported package's graphs carry no alignment module"):
        package.translate(["Ein Hund."], alignment_from="aligner")
    on_torch = rnnsearch.load(tmp_path / "package", runtime="torch", device="cpu")
    assert on_torch.align(["Ein Hund."], ["A dog."])[0].alignment_from == "attention"
    with pytest.raises(ArgumentValueError, match="an exported package carries none: load the model directory"):
        on_torch.align(["Ein Hund."], ["A dog."], alignment_from="aligner")


def test_a_speech_model_is_not_told_to_add_a_module(speech_model):
    with pytest.raises(ArgumentValueError, match="a speech model has no words to align, so none can be added"):
        rnnsearch.load(speech_model, device="cpu").alignment_source("aligner")


def test_a_module_step_that_is_not_finite_stops_in_one_line_and_saves_nothing_of_it(model_dir, tmp_path, capsys):
    """A learning rate of 1e30 makes the module's weights overflow within a few steps: the
    run stops there in one line (it ended in a traceback), and what it leaves is finite."""
    model = copied(model_dir, tmp_path)
    blown = ["--set", "train.learning_rate=1e30", "--set", "train.warmup_steps=0", "--set", "train.max_steps=40"]
    status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, *blown)
    assert_one_line_error(status, err, "train-aligner: step", "the alignment module's loss is", "train.learning_rate")
    if (model / ALIGNER_DIR / ALIGNER_WEIGHTS).exists():
        assert all(bool(torch.isfinite(tensor).all()) for tensor in module_weights(model).values())


AGREEING = [*MODULE, "--set", "train.aligner_agreement_weight=1"]


def test_two_directions_modules_train_together_each_attachable_alone_and_resume_exactly(
    model_dir, reverse_model_dir, corpus, tmp_path
):
    whole = [copied(model, tmp_path / f"whole-{k}") for k, model in enumerate((model_dir, reverse_model_dir))]
    arguments = ["--reverse", str(whole[1]), *AGREEING]
    assert main(["train-aligner", str(whole[0]), *arguments, "--set", "train.max_steps=4"]) == 0
    split = [copied(model, tmp_path / f"split-{k}") for k, model in enumerate((model_dir, reverse_model_dir))]
    arguments = ["--reverse", str(split[1]), *AGREEING]
    assert main(["train-aligner", str(split[0]), *arguments, "--set", "train.max_steps=2"]) == 0
    assert main(["train-aligner", str(split[0]), *arguments, "--set", "train.max_steps=4", "--resume"]) == 0
    for done, again in zip(whole, split, strict=True):
        whole_weights, resumed = module_weights(done), module_weights(again)
        assert whole_weights.keys() == resumed.keys()
        for name in whole_weights:
            torch.testing.assert_close(resumed[name], whole_weights[name], rtol=0, atol=0)
    english = (corpus / "val.en").read_text().splitlines()[:3]
    german = (corpus / "val.de").read_text().splitlines()[:3]
    reverse = rnnsearch.load(whole[1], device="cpu")
    assert [a.alignment_from for a in reverse.align(english, german)] == ["aligner"] * 3
    forward = rnnsearch.load(whole[0], device="cpu")
    for alignment_from, combination in (("aligner", "soft"), ("attention", "grow-diag-final-and")):
        default = forward.align(german, english, reverse=reverse, alignment_from=alignment_from)
        named = forward.align(german, english, reverse=reverse, alignment_from=alignment_from, symmetrize=combination)
        assert [a.pairs for a in default] == [a.pairs for a in named]  # each source's measured best by default
    rows = [json.loads(line) for line in (whole[0] / ALIGNER_DIR / "metrics.jsonl").read_text().splitlines()]
    assert [row["step"] for row in rows] == [1, 2, 3, 4]


def test_agreement_needs_a_reverse_model_of_the_other_direction_in_one_line(model_dir, tmp_path, capsys):
    model = copied(model_dir, tmp_path / "model")
    status, _, err = run_cli(capsys, "train-aligner", model, *AGREEING)
    assert_one_line_error(status, err, "train.aligner_agreement_weight", "--reverse")
    other = copied(model_dir, tmp_path / "same-direction")
    status, _, err = run_cli(capsys, "train-aligner", model, "--reverse", other, *AGREEING)
    assert_one_line_error(status, err, "--reverse", "translates de→en")
    assert not (model / ALIGNER_DIR / LAST).exists()


def diagonal_links(corpus: Path, folder: Path) -> str:
    """A data.train setting of the corpus with links of each word to the word at its place."""
    lines = []
    for source, target in zip(
        (corpus / "train.de").read_text().splitlines(), (corpus / "train.en").read_text().splitlines(), strict=True
    ):
        lines.append(" ".join(f"{k}-{k}" for k in range(min(len(source.split()), len(target.split())))))
    links = write_lines(folder / "train.links", lines)
    files = {"src": str(corpus / "train.de"), "tgt": str(corpus / "train.en"), "alignments": str(links)}
    return f"data.train={json.dumps(files)}"


def test_a_refused_resume_changes_nothing_in_the_run(with_module, reverse_model_dir, tmp_path, capsys):
    """A refused `--resume` had already deleted the jump table and written its own settings
    into config.yaml, so `align` changed silently and the next self-train read them."""
    model = shutil.copytree(with_module, tmp_path / "model")
    before = {path: path.read_bytes() for path in (model / ALIGNER_DIR).rglob("*") if path.is_file()}
    assert (model / ALIGNER_DIR / ALIGNER_JUMPS) in before
    refusals = [
        (["--reverse", reverse_model_dir], "a run of one module, resumed with --reverse"),
        (["--set", "model.aligner_size=64"], "--set model.aligner_size=64 would change the run being resumed"),
        (["--set", "train.batch_tokens=500"], "whose train.batch_tokens is 400"),
    ]
    for arguments, said in refusals:
        status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, "--resume", *arguments)
        assert_one_line_error(status, err, said)
        after = {path: path.read_bytes() for path in (model / ALIGNER_DIR).rglob("*") if path.is_file()}
        assert after == before


def test_a_resumed_run_trains_on_the_data_and_settings_its_resume_point_records(model_dir, corpus, tmp_path, capsys):
    """`--resume` took this call's settings: without the data.train the run started with,
    it trained its last steps on other corpora, with no warning."""
    data = diagonal_links(corpus, tmp_path)
    run = ["--set", data, "--set", "train.seed=3", "--set", "train.learning_rate=0.01"]
    whole = copied(model_dir, tmp_path / "whole")
    assert main(["train-aligner", str(whole), *run, "--set", "train.max_steps=4"]) == 0
    split = copied(model_dir, tmp_path / "split")
    assert main(["train-aligner", str(split), *run, "--set", "train.max_steps=2"]) == 0
    status, _, err = run_cli(capsys, "train-aligner", split, "--resume", "--set", "train.max_steps=4")
    assert status == 0, err
    assert "at step 2, with train.max_steps 4 (was 2)" in err
    for name, tensor in module_weights(whole).items():
        torch.testing.assert_close(module_weights(split)[name], tensor, rtol=0, atol=0)
    status, _, err = run_cli(capsys, "train-aligner", split, "--resume")  # its budget is spent: nothing to do
    assert status == 0 and "at step 4" in err and "step 5" not in err


def test_two_modules_stopped_between_their_files_and_the_resume_point_resume(
    model_dir, reverse_model_dir, tmp_path, capsys
):
    """A run of two modules writes its resume point before either module: a stop between
    its files left modules without one, which neither --resume nor a rerun got past."""
    models = [copied(model, tmp_path / f"m{k}") for k, model in enumerate((model_dir, reverse_model_dir))]
    arguments = ["train-aligner", models[0], "--reverse", models[1], *AGREEING, "--set", "train.max_steps=2"]
    assert run_cli(capsys, *arguments)[0] == 0
    last = models[0] / ALIGNER_DIR / LAST
    assert last.stat().st_mtime_ns <= (models[1] / ALIGNER_DIR / ALIGNER_WEIGHTS).stat().st_mtime_ns
    last.unlink()  # as a stop at the first resume point's write, before the modules were written
    for path in (models[0] / ALIGNER_DIR / ALIGNER_WEIGHTS, models[1] / ALIGNER_DIR / ALIGNER_WEIGHTS):
        path.unlink()
    status, _, err = run_cli(capsys, *arguments, "--resume")
    assert status == 0 and "no checkpoint to resume from" in err, err


def test_a_budget_spent_before_the_first_step_or_a_learning_rate_no_step_can_take_is_one_line(
    model_dir, tmp_path, capsys
):
    model = copied(model_dir, tmp_path)
    status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, "--set", "train.max_minutes=1e-9")
    assert_one_line_error(status, err, "train.max_minutes 1e-09) ended before its first step", "no module")
    huge = ["--set", "train.learning_rate=1e308", "--set", "train.warmup_steps=0", "--set", "train.max_steps=1"]
    status, _, err = run_cli(capsys, "train-aligner", model, *MODULE, *huge, "--set", "train.valid_every=1")
    assert_one_line_error(status, err, "train.learning_rate: 1e+308 is larger than 3.4e+37")
    assert not (model / ALIGNER_DIR / ALIGNER_WEIGHTS).exists() and not (model / ALIGNER_DIR / LAST).exists()


def test_markup_is_placed_tempered_on_the_module_and_by_the_attention_s_links_unless_asked(with_module, corpus):
    """Tags are placed by default `tempered` on the module's alignments (its weights, its
    jump table read looser) and by the links of the attention's, each the measured best;
    `placement` picks any reading by name, each hypothesis keeps the links it was placed
    by, and every reading keeps every tag."""
    from rnnsearch.alignments.words import align_translation
    from rnnsearch.markup import PLACEMENTS, Reading, parse, transfer

    translator = rnnsearch.load(with_module, device="cpu")
    lines = ["Ein <b>kleines Mädchen</b> klettert in ein <i>Spielhaus</i>.", "Zwei <a href='x'>Männer</a> stehen."]
    for alignment_from, default in (("aligner", "tempered"), ("attention", "links")):
        by_default = translator.translate(lines, markup="html", alignment_from=alignment_from)
        for name, placement in PLACEMENTS.items():
            asked = translator.translate(lines, markup="html", alignment_from=alignment_from, placement=name)
            for line, result in zip(lines, asked, strict=True):
                words, parsed = result.words, parse(line, "html")
                read = align_translation(result, temper=placement.temper)
                assert words.pairs == read.pairs and np.array_equal(words.weights, read.weights)
                one_word = None if placement.one_word is None else align_translation(result, temper=placement.one_word)
                weights = placement.weights(Reading(words, None if one_word is None else one_word.weights))
                assert result.marked_up == transfer(parsed, result.text.split(), words.pairs, weights=weights)
                assert parse(result.marked_up, "html").words == result.text.split()
            if name == default:
                assert [r.marked_up for r in asked] == [r.marked_up for r in by_default]
    with pytest.raises(ArgumentValueError, match="placement"):
        translator.translate(lines, markup="html", placement="hull")

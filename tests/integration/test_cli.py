import gzip
import json
import re
import select
import subprocess
import sys

import numpy as np
import pytest
import torch

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.config import config_from_dict
from rnnsearch.errors import UserError
from rnnsearch.search.rules import coverage_log
from rnnsearch.translation.translator import MAX_BEAM_SIZE
from tests.integration.conftest import run_cli, tiny_config, write_config, write_lines


def test_training_writes_a_complete_model_directory(model_dir):
    for name in (
        "config.yaml",
        "subwords.src.model",
        "subwords.tgt.model",
        "best.safetensors",
        "last.safetensors",
        "metrics.jsonl",
        "learning_curve.png",
    ):
        assert (model_dir / name).is_file(), name
    rows = [json.loads(line) for line in (model_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "valid_bleu" in r] == [10, 20]
    assert not list(model_dir.glob("*.pickle")) and not list(model_dir.glob("*.pt"))
    heatmaps = sorted(p.name for p in (model_dir / "alignments").iterdir())
    assert heatmaps == [f"step{step:07d}-{k}.png" for step in (10, 20) for k in (1, 2, 3)]


@pytest.mark.parametrize("heatmaps", [0, 1])
def test_valid_heatmaps_sets_how_many_alignments_each_validation_draws(corpus, tmp_path, heatmaps):
    options = {"max_steps": 4, "valid_every": 2, "valid_heatmaps": heatmaps}
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run", **options))
    assert main(["train", str(config)]) == 0
    drawn = sorted(p.name for p in (tmp_path / "run" / "alignments").glob("*"))
    assert drawn == [f"step{step:07d}-1.png" for step in (2, 4)][: 2 * heatmaps]
    assert (tmp_path / "run" / "alignments").exists() == bool(heatmaps)


def test_translate_is_a_line_for_line_filter(model_dir, tmp_path, capsys, monkeypatch):
    source = write_lines(tmp_path / "in.de", ["Ein Hund läuft.", "", "   ", "Zwei Männer spielen Fußball."])
    status, out, _ = run_cli(capsys, "translate", model_dir, "-i", source, "--alignments", tmp_path / "a.jsonl")
    assert status == 0
    lines = out.split("\n")[:-1]
    assert len(lines) == 4 and lines[1] == "" and lines[2] == ""
    rows = [json.loads(line) for line in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and rows[1]["source_tokens"] == []
    best = rows[0]["hypotheses"][0]
    matrix = np.array(best["alignment"])
    assert best["text"] == lines[0]
    assert matrix.shape == (len(best["target_tokens"]), len(rows[0]["source_tokens"]))
    assert np.allclose(matrix.sum(1), 1.0, atol=1e-3)


def test_sentences_decoded_together_change_the_speed_not_the_translations(model_dir, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", ["Ein Hund läuft.", "Zwei Männer spielen Fußball.", "Eine Frau singt."])
    _, together, _ = run_cli(capsys, "translate", model_dir, "-i", source)
    status, one_by_one, _ = run_cli(capsys, "translate", model_dir, "-i", source, "--batch-sentences", 1)
    assert status == 0 and one_by_one == together
    with pytest.raises(SystemExit):
        main(["translate", str(model_dir), "-i", str(source), "--batch-sentences", "0"])
    assert "--batch-sentences: must be greater than 0" in capsys.readouterr().err


def test_nbest_output_lists_n_scored_hypotheses_per_line(model_dir, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", ["Ein Hund läuft.", "Eine Frau singt."])
    status, out, _ = run_cli(capsys, "translate", model_dir, "-i", source, "--beam-size", 4, "--n-best", 3)
    assert status == 0
    rows = [line.split(" ||| ") for line in out.splitlines()]
    assert [int(r[0]) for r in rows] == [0, 0, 0, 1, 1, 1]
    scores = [float(r[2]) for r in rows[:3]]
    assert scores == sorted(scores, reverse=True)


def test_the_coverage_penalty_adds_beta_times_the_coverage_to_every_score(model_dir, tmp_path, capsys):
    sentences = ["Ein Hund läuft.", "Zwei Männer spielen Fußball."]
    plain = rnnsearch.load(model_dir).translate(sentences, beam_size=4, n_best=4)
    covered = rnnsearch.load(model_dir, coverage_penalty=0.5).translate(sentences, beam_size=4, n_best=4)
    for before, after in zip(plain, covered):
        scores = {tuple(t.target_tokens): t.score for t in [before, *before.alternatives]}
        ranked = [after, *after.alternatives]
        assert scores.keys() == {tuple(t.target_tokens) for t in ranked}  # the same beams, ranked anew
        for t in ranked:
            penalty = 0.5 * coverage_log(torch.from_numpy(t.alignment))
            assert t.score == pytest.approx(scores[tuple(t.target_tokens)] + penalty, abs=1e-4)
        assert [t.score for t in ranked] == sorted((t.score for t in ranked), reverse=True)
    source = write_lines(tmp_path / "in.de", sentences)
    status, out, _ = run_cli(capsys, "translate", model_dir, "-i", source, "--beam-size", 4, "--coverage-penalty", 0.5)
    assert status == 0 and out.splitlines() == [t.text for t in covered]
    numpy_beta = rnnsearch.load(model_dir, coverage_penalty=np.float32(0.5)).translate(sentences, beam_size=4)
    assert [t.text for t in numpy_beta] == [t.text for t in covered]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("-1", "greater than or equal to 0"),
        ("1e308", "less than or equal to 10"),
        ("10.5", "less than or equal to 10"),
        ("nan", "a finite number"),
        ("inf", "a finite number"),
    ],
)
def test_a_coverage_penalty_out_of_its_range_is_refused_by_one_rule_everywhere(model_dir, capsys, value, problem):
    """The config's rule for search.coverage_penalty checks the flag of translate and serve
    and the argument of the Python API alike: a β whose scores would overflow (1e308) is
    refused as surely as a negative one."""
    for command in ("translate", "serve"):
        with pytest.raises(SystemExit):
            main([command, str(model_dir), "--coverage-penalty", value])
        assert f"argument --coverage-penalty: {value}: Input should be {problem}" in capsys.readouterr().err
    with pytest.raises(ValueError, match=re.escape(f"coverage_penalty: {float(value)!r}: Input should be {problem}")):
        rnnsearch.load(model_dir, coverage_penalty=float(value))
    with pytest.raises(UserError, match=f"search.coverage_penalty: Input should be {problem}"):
        config_from_dict({**tiny_config(model_dir, model_dir), "search": {"coverage_penalty": float(value)}})


@pytest.mark.parametrize("value", [True, "0.5", [0.5]])
def test_a_coverage_penalty_that_is_not_a_number_is_a_type_error(model_dir, value):
    with pytest.raises(TypeError, match="coverage_penalty: expected a number, got"):
        rnnsearch.load(model_dir, coverage_penalty=value)


def test_saved_and_reloaded_model_translates_identically(model_dir, corpus):
    sources = (corpus / "val.de").read_text().splitlines()[:20]
    first = rnnsearch.load(model_dir).translate(sources, beam_size=3)
    again = rnnsearch.load(model_dir).translate(sources, beam_size=3)
    assert [t.text for t in first] == [t.text for t in again]
    assert [t.score for t in first] == [t.score for t in again]
    assert all(np.array_equal(a.alignment, b.alignment) for a, b in zip(first, again))


def test_bf16_search_really_runs_in_bf16_and_keeps_fp32_alignments(model_dir, corpus, tmp_path, capsys):
    sources = (corpus / "val.de").read_text().splitlines()[:20]
    fp32 = rnnsearch.load(model_dir, device="cpu").translate(sources, beam_size=1)
    bf16 = rnnsearch.load(model_dir, device="cpu", precision="bf16")
    greedy = bf16.translate(sources, beam_size=1)
    assert [t.score for t in greedy] != [t.score for t in fp32]
    for translation in greedy:
        assert translation.alignment.dtype == np.float32
        assert np.allclose(translation.alignment.sum(1), 1.0, atol=1e-5)
    with pytest.raises(UserError, match="fp16"):
        rnnsearch.load(model_dir, device="cpu", precision="fp16")
    path = write_lines(tmp_path / "in.de", sources[:3])
    status, out, _ = run_cli(capsys, "translate", model_dir, "-i", path, "--precision", "bf16", "--beam-size", 1)
    assert status == 0 and out.splitlines() == [t.text for t in greedy[:3]]


def evaluate(capsys, model_dir, corpus, *options, ref=None) -> tuple[int, str, str]:
    return run_cli(
        capsys, "evaluate", model_dir, "--src", corpus / "val.de", "--ref", ref or corpus / "val.en", *options
    )


def test_evaluate_reports_sacrebleu_and_chrf_with_signatures(model_dir, corpus, capsys):
    status, out, _ = evaluate(capsys, model_dir, corpus, "--beam-size", 2, "--json", "--by-length")
    assert status == 0
    scores = json.loads(out)
    assert set(scores) == {"BLEU", "chrF2", "bleu_by_source_length", "repeated_words"}
    repeated = scores["repeated_words"]
    assert 0 <= repeated["repeated"] <= repeated["words"]
    assert repeated["per_100_words"] == round(100 * repeated["repeated"] / max(repeated["words"], 1), 2)
    assert "tok:13a" in scores["BLEU"]["signature"]
    assert 0.0 <= scores["BLEU"]["score"] <= 100.0
    assert sum(row["sentences"] for row in scores["bleu_by_source_length"]) == 40


def test_evaluate_lowercase_tokenized(model_dir, corpus, tmp_path, capsys):
    references = (corpus / "val.en").read_text().splitlines()
    tokenised = write_lines(tmp_path / "ref.tok.en", [r.lower().replace(".", " .") for r in references])
    status, out, _ = evaluate(capsys, model_dir, corpus, "--beam-size", 1, "--lowercase-tokenized", ref=tokenised)
    assert status == 0 and "tok:none" in out


def test_evaluate_lowercase_tokenized_refuses_cased_references(model_dir, corpus, capsys):
    status, _, err = evaluate(capsys, model_dir, corpus, "--beam-size", 1, "--lowercase-tokenized")
    assert_one_line_error(status, err, "val.en", "line 1", "lowercased")


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_attention_draws_a_heatmap(model_dir, tmp_path, capsys, suffix):
    path = tmp_path / f"heatmap.{suffix}"
    status, _, _ = run_cli(capsys, "attention", model_dir, "Ein Hund läuft im Schnee.", "-o", path)
    assert status == 0 and path.stat().st_size > 1000


def test_resume_continues_exactly_where_training_stopped(corpus, tmp_path, capsys):
    whole = write_config(tmp_path / "whole.yaml", tiny_config(corpus, tmp_path / "whole", max_steps=24, valid_every=8))
    assert main(["train", str(whole)]) == 0
    split = write_config(tmp_path / "split.yaml", tiny_config(corpus, tmp_path / "split", max_steps=16, valid_every=8))
    assert main(["train", str(split)]) == 0
    assert main(["train", str(split), "--set", "train.max_steps=24", "--resume"]) == 0

    def losses(folder):
        rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
        return [(r["step"], r.get("train_loss"), r.get("valid_loss")) for r in rows]

    assert losses(tmp_path / "split") == losses(tmp_path / "whole")


def test_annealed_schedule_warms_up_holds_then_anneals_to_the_floor_at_the_last_step(corpus, tmp_path):
    options = {"lr_schedule": "anneal", "anneal_fraction": 0.5, "max_steps": 12, "valid_every": 12}
    options["min_learning_rate"] = 1e-5
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run", **options))
    assert main(["train", str(config)]) == 0
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    rates = [r["lr"] for r in rows if "lr" in r]
    peak = rates.index(max(rates))
    assert rates[:peak] == sorted(rates[:peak]) and rates[peak:] == sorted(rates[peak:], reverse=True)
    assert 0 < peak < len(rates) - 1 and rates.count(rates[peak]) >= 2
    assert rates[-1] == pytest.approx(1e-5)


@pytest.mark.parametrize(("schedule", "last_step"), [("plateau", 4), ("anneal", 8)])
def test_patience_stops_a_plateau_run_but_an_annealed_run_trains_to_its_budget(corpus, tmp_path, schedule, last_step):
    """A rate too small to change anything: validation never gains after the first time."""
    options = {"lr_schedule": schedule, "max_steps": 8, "valid_every": 2, "patience": 1}
    options |= {"learning_rate": 1e-12, "min_learning_rate": 0.0, "warmup_steps": 0}
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run", **options))
    assert main(["train", str(config)]) == 0
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows if "valid_bleu" in r] == list(range(2, last_step + 1, 2))


def test_training_refuses_to_overwrite_a_trained_model(model_dir, tmp_path, capsys):
    config = write_config(tmp_path / "c.yaml", tiny_config(model_dir.parent, model_dir))
    status, _, err = run_cli(capsys, "train", config)
    assert status == 1 and "--resume" in err


def assert_one_line_error(status: int, err: str, *fragments: str) -> None:
    assert status != 0
    assert "Traceback" not in err
    assert err.splitlines()[-1].startswith("rnnsearch: error: "), err
    for fragment in fragments:
        assert fragment in err.splitlines()[-1], (fragment, err)


def test_mismatched_line_counts(corpus, tmp_path, capsys):
    short = write_lines(tmp_path / "short.en", ["one line"])
    config = tiny_config(corpus, tmp_path / "m")
    config["data"]["train"]["tgt"] = str(short)
    status, _, err = run_cli(capsys, "train", write_config(tmp_path / "c.yaml", config))
    assert_one_line_error(status, err, f"{short} ends after 1 line but {corpus / 'train.de'} has 300 lines")


def test_invalid_utf8_names_file_and_line(corpus, tmp_path, capsys):
    bad = tmp_path / "bad.de.gz"
    with gzip.open(bad, "wb") as out:
        out.write(b"gut\n" * 4 + b"schlecht \xff\n" + b"gut\n" * 295)
    config = tiny_config(corpus, tmp_path / "m")
    config["data"]["train"]["src"] = str(bad)
    status, _, err = run_cli(capsys, "train", write_config(tmp_path / "c.yaml", config))
    assert_one_line_error(status, err, f"{bad}:5", "UTF-8")


def test_missing_data_file(corpus, tmp_path, capsys):
    config = tiny_config(corpus, tmp_path / "m")
    config["data"]["valid"]["src"] = str(tmp_path / "nowhere.de")
    status, _, err = run_cli(capsys, "train", write_config(tmp_path / "c.yaml", config))
    assert_one_line_error(status, err, "nowhere.de", "no such file")


def test_unknown_config_key(corpus, tmp_path, capsys):
    config = tiny_config(corpus, tmp_path / "m")
    config["model"]["decoder"]["hiden_size"] = 3
    status, _, err = run_cli(capsys, "train", write_config(tmp_path / "c.yaml", config))
    assert_one_line_error(status, err, "model.decoder.hiden_size", "unknown key")


def test_wrong_type_in_override(corpus, tmp_path, capsys):
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "m"))
    status, _, err = run_cli(capsys, "train", config, "--set", "train.batch_tokens=many")
    assert_one_line_error(status, err, "train.batch_tokens")


def test_corrupt_and_missing_checkpoints(model_dir, tmp_path, capsys):
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("config.yaml", "subwords.src.model", "subwords.tgt.model"):
        (broken / name).write_bytes((model_dir / name).read_bytes())
    status, _, err = run_cli(capsys, "translate", broken, "-i", model_dir / "config.yaml")
    assert_one_line_error(status, err, "last.safetensors", "missing")
    (broken / "best.safetensors").write_bytes((model_dir / "best.safetensors").read_bytes()[:5000])
    status, _, err = run_cli(capsys, "translate", broken, "-i", model_dir / "config.yaml")
    assert_one_line_error(status, err, "best.safetensors", "corrupt")
    status, _, err = run_cli(capsys, "translate", tmp_path / "no-model")
    assert_one_line_error(status, err, "no-model", "no such model directory")


def test_overlong_input_line_is_refused_with_its_line_number(model_dir, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", ["Ein Hund.", " ".join(["Hund"] * 400)])
    status, _, err = run_cli(capsys, "translate", model_dir, "-i", source)
    assert_one_line_error(status, err, "input line 2", "search.max_source_length")


def test_installed_command_reads_stdin_and_reports_bad_bytes(model_dir):
    command = [sys.executable, "-m", "rnnsearch", "translate", str(model_dir)]
    good = subprocess.run(command, input=b"Ein Hund.\n\nEine Katze.\n", capture_output=True, timeout=120)
    assert good.returncode == 0 and len(good.stdout.decode().split("\n")) == 4
    bad = subprocess.run(command, input=b"gut\n\xfe\n", capture_output=True, timeout=120)
    assert_one_line_error(bad.returncode, bad.stderr.decode(), "<stdin>:2")


def test_fixed_context_model_translates_and_says_why_it_has_no_alignment(corpus, tmp_path, capsys):
    config = tiny_config(corpus, tmp_path / "none", max_steps=4, valid_every=4)
    config["model"]["attention"] = "none"
    assert main(["train", str(write_config(tmp_path / "c.yaml", config))]) == 0
    capsys.readouterr()
    source = write_lines(tmp_path / "in.de", ["Ein Hund läuft.", ""])
    status, out, _ = run_cli(capsys, "translate", tmp_path / "none", "-i", source, "--beam-size", 2)
    assert status == 0 and len(out.split("\n")) == 3
    for command in (
        ["attention", tmp_path / "none", "Ein Hund.", "-o", tmp_path / "h.png"],
        ["translate", tmp_path / "none", "-i", source, "--alignments", tmp_path / "a.jsonl"],
    ):
        status, _, err = run_cli(capsys, *command)
        assert_one_line_error(status, err, "no alignment model")


def test_an_unknown_device_is_a_one_line_error_naming_the_option(model_dir, tmp_path, capsys):
    status, _, err = run_cli(
        capsys, "translate", model_dir, "--device", "gpu", "-i", write_lines(tmp_path / "in", ["x"])
    )
    assert_one_line_error(status, err, "--device", "'gpu'", "cpu, cuda, cuda:N or auto")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a CUDA GPU")
def test_asking_for_a_gpu_that_is_not_there_is_a_one_line_error(model_dir, corpus, tmp_path, capsys):
    status, _, err = run_cli(capsys, "evaluate", model_dir, "--device", "cuda", "--src", corpus / "val.de")
    assert_one_line_error(status, err, "--device", "'cuda'", "no CUDA GPU")
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run", device="cuda:0"))
    status, _, err = run_cli(capsys, "train", config)
    assert_one_line_error(status, err, "train.device", "'cuda:0'", "no CUDA GPU")


def copy_model(model_dir, folder):
    """A copy of the model directory's config, subword models and best weights."""
    folder.mkdir()
    for name in ("config.yaml", "subwords.src.model", "subwords.tgt.model", "best.safetensors"):
        (folder / name).write_bytes((model_dir / name).read_bytes())
    return folder


def test_an_empty_subword_model_is_a_one_line_error_naming_it(model_dir, tmp_path, capsys):
    broken = copy_model(model_dir, tmp_path / "broken")
    (broken / "subwords.src.model").write_bytes(b"")
    status, _, err = run_cli(capsys, "translate", broken, "-i", write_lines(tmp_path / "in.de", ["Ein Hund."]))
    assert_one_line_error(status, err, "subwords.src.model", "empty")


def test_weights_with_a_nan_are_refused_at_load_naming_the_file_and_tensor(model_dir, tmp_path, capsys):
    from safetensors.torch import load_file, save_file

    broken = copy_model(model_dir, tmp_path / "nan")
    tensors = load_file(broken / "best.safetensors")
    name = next(n for n, t in tensors.items() if n.startswith("model.") and t.is_floating_point())
    tensors[name][0] = float("nan")
    save_file(tensors, broken / "best.safetensors")
    source = write_lines(tmp_path / "in.de", ["Ein Hund."])
    for beam in (1, 3):
        status, out, err = run_cli(capsys, "translate", broken, "-i", source, "--beam-size", beam)
        assert_one_line_error(status, err, "best.safetensors", name, "NaN")
        assert out == ""
    with pytest.raises(UserError, match=name):
        rnnsearch.load(broken, device="cpu")


@pytest.mark.parametrize("option", ["--beam-size", "--n-best"])
def test_beam_size_and_n_best_are_bounded(tmp_path, capsys, option):
    source = write_lines(tmp_path / "in.de", ["Ein Hund."])
    with pytest.raises(SystemExit) as exit_status:
        main(["translate", str(tmp_path / "no-model"), "-i", str(source), option, "100000"])
    err = capsys.readouterr().err
    assert exit_status.value.code != 0 and "Traceback" not in err
    assert option in err.splitlines()[-1] and f"at most {MAX_BEAM_SIZE}" in err.splitlines()[-1]


def test_evaluating_empty_files_is_a_one_line_error_naming_the_file(model_dir, tmp_path, capsys):
    empty_src, empty_ref = write_lines(tmp_path / "src.de", []), write_lines(tmp_path / "ref.en", [])
    status, _, err = run_cli(capsys, "evaluate", model_dir, "--src", empty_src, "--ref", empty_ref)
    assert_one_line_error(status, err, str(empty_src), "nothing to evaluate")


def test_a_heatmap_in_an_unknown_format_is_refused_before_translating(tmp_path, capsys):
    missing_model = tmp_path / "no-model"
    status, _, err = run_cli(capsys, "attention", missing_model, "Ein Hund.", "-o", tmp_path / "a.xyz")
    assert_one_line_error(status, err, "a.xyz: unsupported format; use .png, .svg or .pdf")
    assert not (tmp_path / "a.xyz").exists()


def test_translations_are_written_as_lines_arrive_in_input_order(model_dir, tmp_path, capsys):
    lines = ["Ein Hund läuft.", "", "Zwei Männer spielen Fußball.", "Eine Frau singt."]
    status, expected, _ = run_cli(capsys, "translate", model_dir, "-i", write_lines(tmp_path / "in.de", lines))
    assert status == 0
    command = [sys.executable, "-m", "rnnsearch", "translate", str(model_dir)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        answers = []
        for line in lines[:2]:
            process.stdin.write((line + "\n").encode())
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], 120)
            assert ready, "no translation came back while the input was still open"
            answers.append(process.stdout.readline().decode())
        rest, err = process.communicate(("\n".join(lines[2:]) + "\n").encode(), timeout=120)
    assert process.returncode == 0, err
    assert "".join(answers) + rest.decode() == expected


def test_any_search_setting_can_be_overridden_from_python_and_is_checked_by_the_configs_rules(model_dir):
    """load(search=...) overrides any key of the search section through the one check the
    config's values go through: a value the rule refuses, a key the section lacks or
    something other than a mapping is one error naming it, before the model loads."""
    translator = rnnsearch.load(model_dir, search={"max_length_ratio": 0.5, "length_penalty": 0})
    assert (translator.search.max_length_ratio, translator.search.length_penalty) == (0.5, 0.0)
    with pytest.raises(ValueError, match=re.escape("max_length_ratio: 0: Input should be greater than 0")):
        rnnsearch.load(model_dir, search={"max_length_ratio": 0})
    with pytest.raises(ValueError, match="search: 'beam' is not a search setting; choose from beam_size, "):
        rnnsearch.load(model_dir, search={"beam": 3})
    with pytest.raises(ValueError, match=re.escape("batch_sentences: True: Input should be a valid integer")):
        rnnsearch.load(model_dir, search={"batch_sentences": True})
    with pytest.raises(TypeError, match="search: expected a mapping of search keys to values, got list"):
        rnnsearch.load(model_dir, search=["coverage_penalty"])
    with pytest.raises(ValueError, match="search: 'beam' is not a search setting"):
        rnnsearch.load("no/such/model", search={"beam": 3})  # checked before any file is read

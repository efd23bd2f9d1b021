"""Scoring and aligning given translations: `Translator.score`, `rnnsearch score` and `rnnsearch align`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

import rnnsearch
from rnnsearch.alignments import symmetrisation
from rnnsearch.alignments.readings import READINGS
from rnnsearch.alignments.symmetrisation import symmetrise
from rnnsearch.alignments.words import align_translation, hard_alignment, merge, pharaoh, source_words, target_words
from rnnsearch.cli import main
from rnnsearch.config import config_from_dict, load_config
from rnnsearch.errors import UserError
from rnnsearch.files.model_directory import BEST, model_tensors, save_model_files, write_tensors
from rnnsearch.model.seq2seq import build_model
from rnnsearch.text.batches import make_batch
from rnnsearch.training.loss import sequence_loss
from rnnsearch.translation.translator import PairScore, Translator
from tests.integration.conftest import run_cli, tiny_config, write_config, write_lines


def assert_one_line_error(status: int, err: str, *fragments: str) -> None:
    """The CLI failed with exit status 1 and one line that holds every fragment."""
    assert status == 1, err
    assert "Traceback" not in err
    last = err.splitlines()[-1]
    assert last.startswith("rnnsearch: error: "), err
    for fragment in fragments:
        assert fragment in last, (fragment, last)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def pairs(corpus) -> tuple[list[str], list[str]]:
    """Forty validation pairs, then a pair with an empty target and one with a blank source."""
    sources = (corpus / "val.de").read_text(encoding="utf-8").splitlines()
    targets = (corpus / "val.en").read_text(encoding="utf-8").splitlines()
    return sources + ["Ein Hund läuft.", "  "], targets + ["", "A dog runs."]


@pytest.fixture(scope="module")
def translator(model_dir) -> Translator:
    return rnnsearch.load(model_dir, device="cpu")


@pytest.fixture(scope="module")
def scores(translator, pairs) -> list[PairScore]:
    return translator.score(*pairs)


@pytest.fixture(scope="module")
def word_model(corpus, tmp_path_factory) -> Path:
    """A tiny model over whole words: the text of its translations reads back as the very
    pieces it produced, so scoring that text retraces its search step for step."""
    folder = tmp_path_factory.mktemp("words")
    config = tiny_config(corpus, folder / "run", max_steps=10, valid_every=10, valid_bleu_sentences=4)
    config["subwords"] = {"kind": "word", "vocab_size": 5000}
    assert main(["train", str(write_config(folder / "config.yaml", config))]) == 0
    return folder / "run"


@pytest.fixture(scope="module")
def fixed_context_model(model_dir, tmp_path_factory) -> Path:
    """A model directory for the fixed-context baseline (attention: none), random weights."""
    folder = tmp_path_factory.mktemp("fixed")
    trained = rnnsearch.load(model_dir, device="cpu")
    tree = load_config(model_dir / "config.yaml").model_dump(mode="json")
    tree["model"]["attention"] = "none"
    config = config_from_dict(tree)
    save_model_files(folder, config, trained.src_subwords, trained.tgt_subwords)
    model = build_model(config.model, len(trained.src_subwords), len(trained.tgt_subwords))
    write_tensors(folder / BEST, model_tensors(model), {})
    return folder


def test_scores_are_the_training_loss_without_smoothing_pair_by_pair(translator, pairs, scores):
    sources, targets = pairs
    source_ids, target_ids = translator.src_subwords.encode(sources), translator.tgt_subwords.encode(targets)
    with torch.no_grad():
        for pair, ids in zip(scores, zip(source_ids, target_ids), strict=True):
            loss, tokens = sequence_loss(translator.model, make_batch([ids]))
            assert pair.tokens == tokens == len(ids[1]) + 1
            assert pair.log_prob == pytest.approx(-float(loss), rel=1e-5, abs=1e-4)
        total, tokens = sequence_loss(translator.model, make_batch(list(zip(source_ids, target_ids))))
    assert sum(pair.log_prob for pair in scores) == pytest.approx(-float(total), rel=1e-5)
    assert sum(pair.tokens for pair in scores) == tokens


def test_token_log_probs_sum_to_the_total_one_per_target_token(scores):
    for pair in scores:
        assert len(pair.token_log_probs) == len(pair.target_tokens) == pair.tokens
        assert pair.target_tokens[-1] == "</s>" and pair.source_tokens[-1] == "</s>"
        assert math.isclose(sum(pair.token_log_probs), pair.log_prob, abs_tol=1e-9)
        assert all(value <= 0.0 for value in pair.token_log_probs)
        assert pair.alignment.shape == (len(pair.target_tokens), len(pair.source_tokens))
        assert np.allclose(pair.alignment.sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("size", [1, 7])
def test_scores_do_not_depend_on_the_pairs_scored_together(translator, pairs, scores, size):
    sources, targets = pairs
    for start in range(0, len(sources), size):
        part = translator.score(sources[start : start + size], targets[start : start + size])
        for alone, together in zip(part, scores[start : start + size], strict=True):
            assert (alone.source, alone.target) == (together.source, together.target)
            assert alone.target_tokens == together.target_tokens
            assert alone.log_prob == pytest.approx(together.log_prob, abs=1e-5)
            assert np.allclose(alone.token_log_probs, together.token_log_probs, atol=1e-5)
            assert np.allclose(alone.alignment, together.alignment, atol=1e-5)


def test_a_model_left_in_training_mode_scores_without_dropout_and_stays_in_it(translator, pairs, scores):
    translator.model.train()
    try:
        again = translator.score(*pairs)
        assert translator.model.training
    finally:
        translator.model.eval()
    assert [pair.log_prob for pair in again] == pytest.approx([pair.log_prob for pair in scores], abs=1e-5)


def test_scores_keep_the_order_of_the_pairs(translator, pairs, scores):
    assert [(pair.source, pair.target) for pair in scores] == list(zip(*pairs))
    lengths = [len(ids) + 1 for ids in translator.tgt_subwords.encode(pairs[1])]
    assert [pair.tokens for pair in scores] == lengths
    assert lengths != sorted(lengths) and lengths != sorted(lengths, reverse=True)


def test_a_blank_line_is_scored_as_an_empty_sentence(scores):
    empty_target, blank_source = scores[-2], scores[-1]
    assert empty_target.target_tokens == ["</s>"] and empty_target.tokens == 1
    assert empty_target.log_prob == empty_target.token_log_probs[0] < 0.0
    assert blank_source.source_tokens == ["</s>"] and blank_source.tokens > 1
    assert np.allclose(blank_source.alignment, 1.0)


def test_score_prints_a_tab_separated_line_per_pair_in_order(model_dir, pairs, scores, tmp_path, capsys):
    source, target = write_lines(tmp_path / "in.de", pairs[0]), write_lines(tmp_path / "in.en", pairs[1])
    status, out, err = run_cli(capsys, "score", model_dir, "--src", source, "--tgt", target)
    assert status == 0, err
    lines = out.split("\n")[:-1]
    assert len(lines) == len(scores)
    for line, pair in zip(lines, scores):
        total, tokens, token_log_probs = line.split("\t")
        assert float(total) == pytest.approx(pair.log_prob, abs=1e-6)
        assert int(tokens) == pair.tokens
        assert np.allclose([float(v) for v in token_log_probs.split(" ")], pair.token_log_probs, atol=1e-6)
    assert lines[-2].split("\t")[1] == "1"


def test_score_batches_the_pairs_batch_sentences_says(model_dir, pairs, tmp_path, capsys):
    """--batch-sentences sizes the teacher-forced batches as search.batch_sentences does in
    the API: the scores of three pairs a batch, to the last printed digit."""
    source, target = write_lines(tmp_path / "in.de", pairs[0]), write_lines(tmp_path / "in.en", pairs[1])
    status, out, err = run_cli(capsys, "score", model_dir, "--src", source, "--tgt", target, "--batch-sentences", "3")
    assert status == 0, err
    expected = rnnsearch.load(model_dir, batch_sentences=3).score(*pairs)
    printed = [float(line.split("\t")[0]) for line in out.splitlines()]
    assert printed == pytest.approx([pair.log_prob for pair in expected], abs=1e-6)


def test_score_writes_json_lines_to_a_file(model_dir, pairs, scores, tmp_path, capsys):
    source, target = write_lines(tmp_path / "in.de", pairs[0]), write_lines(tmp_path / "in.en", pairs[1])
    output = tmp_path / "scores.jsonl"
    options = ["--src", source, "--tgt", target, "--json", "-o", output]
    status, out, err = run_cli(capsys, "score", model_dir, *options)
    assert status == 0 and out == "", err
    rows = read_jsonl(output)
    assert [row["line"] for row in rows] == list(range(len(scores)))
    for row, pair in zip(rows, scores):
        assert row["log_prob"] == pytest.approx(pair.log_prob, abs=1e-9)
        assert row["tokens"] == pair.tokens and row["token_log_probs"] == pytest.approx(pair.token_log_probs)
        assert (row["source_tokens"], row["target_tokens"]) == (pair.source_tokens, pair.target_tokens)


def test_align_retraces_the_alignment_of_the_models_own_greedy_translation(word_model, corpus):
    translator = rnnsearch.load(word_model, device="cpu")
    sources = (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:12]
    translations = translator.translate(sources, beam_size=1)
    scored = translator.score(sources, [t.text for t in translations])
    kept = [(t, s) for t, s in zip(translations, scored) if "<unk>" not in t.target_tokens]
    assert len(kept) >= 10
    for translation, pair in kept:
        assert (pair.source_tokens, pair.target_tokens) == (translation.source_tokens, translation.target_tokens)
        assert np.allclose(pair.alignment, translation.alignment, atol=1e-5)


def test_align_writes_what_translate_writes_for_the_same_translation(word_model, corpus, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:12])
    status, out, err = run_cli(
        capsys, "translate", word_model, "-i", source, "--beam-size", 1,
        "--alignments", tmp_path / "translate.jsonl", "--hard-alignments", tmp_path / "translate.txt",
    )  # fmt: skip
    assert status == 0, err
    target = tmp_path / "out.en"
    target.write_text(out, encoding="utf-8")
    status, _, err = run_cli(
        capsys, "align", word_model, "--src", source, "--tgt", target,
        "--alignments", tmp_path / "align.jsonl", "--hard-alignments", tmp_path / "align.txt",
    )  # fmt: skip
    assert status == 0, err
    searched, forced = read_jsonl(tmp_path / "translate.jsonl"), read_jsonl(tmp_path / "align.jsonl")
    hard = (tmp_path / "align.txt").read_text(encoding="utf-8").split("\n")[:-1]
    reference_hard = (tmp_path / "translate.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(searched) == len(forced) == len(hard) == len(reference_hard) == 12
    compared = 0
    for mine, theirs, line, reference_line in zip(forced, searched, hard, reference_hard):
        assert (mine["line"], mine["source_tokens"]) == (theirs["line"], theirs["source_tokens"])
        [hypothesis], [reference] = mine["hypotheses"], theirs["hypotheses"]
        assert hypothesis["text"] == reference["text"]
        if "<unk>" in reference["target_tokens"]:  # dropped from the text, so not read back
            continue
        assert hypothesis["target_tokens"] == reference["target_tokens"]
        assert np.allclose(hypothesis["alignment"], reference["alignment"], atol=2e-4)
        assert line == reference_line
        compared += 1
    assert compared >= 10


def test_align_writes_one_output_when_asked_for_one(model_dir, pairs, tmp_path, capsys):
    source, target = write_lines(tmp_path / "in.de", pairs[0]), write_lines(tmp_path / "in.en", pairs[1])
    hard = tmp_path / "hard.txt"
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target, "--hard-alignments", hard)
    assert status == 0 and out == "", err
    lines = hard.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(lines) == len(pairs[0]) and lines[-2:] == ["", ""]
    assert not list(tmp_path.glob("*.jsonl"))


def test_files_of_different_lengths_are_one_line(model_dir, pairs, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", pairs[0][:5])
    target = write_lines(tmp_path / "in.en", pairs[1][:4])
    for command in (["score"], ["align", "--alignments", tmp_path / "a.jsonl"]):
        status, out, err = run_cli(capsys, command[0], model_dir, "--src", source, "--tgt", target, *command[1:])
        assert_one_line_error(status, err, str(target), "ends after 4 lines", "5 lines")
        assert out == ""


def test_align_without_an_output_prints_the_pharaoh_lines_hard_alignments_writes(model_dir, pairs, tmp_path, capsys):
    source, target = write_lines(tmp_path / "in.de", pairs[0]), write_lines(tmp_path / "in.en", pairs[1])
    hard = tmp_path / "hard.txt"
    assert run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target, "--hard-alignments", hard)[0] == 0
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target)
    assert status == 0, err
    assert out == hard.read_text(encoding="utf-8") and len(out.split("\n")) == len(pairs[0]) + 1


@pytest.fixture(scope="module")
def own_links(model_dir, pairs, tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """Source and target files of the pairs, and the model's own Pharaoh lines for them."""
    folder = tmp_path_factory.mktemp("gold")
    source, target = write_lines(folder / "in.de", pairs[0]), write_lines(folder / "in.en", pairs[1])
    hard = folder / "hard.txt"
    arguments = ["align", str(model_dir), "--src", str(source), "--tgt", str(target), "--hard-alignments", str(hard)]
    assert main(arguments) == 0
    return source, target, hard.read_text(encoding="utf-8").splitlines()


def shifted(line: str, by: int, mark: str = "-") -> str:
    return " ".join(f"{int(i) + by}{mark}{int(j) + by}" for i, j in (link.split("-") for link in line.split()))


def test_align_scores_its_own_links_as_gold_perfectly_in_either_numbering(model_dir, own_links, tmp_path, capsys):
    source, target, lines = own_links
    links = sum(len(line.split()) for line in lines)
    assert links > 100
    zero_based = write_lines(tmp_path / "gold0", lines)
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target, "--gold", zero_based)
    assert status == 0, err
    assert out == f"AER 0.0  precision 100.0  recall 100.0  ({len(lines)} pairs, {links} links)\n"
    one_based = write_lines(tmp_path / "gold1", [shifted(line, 1) for line in lines])
    arguments = ["--gold", one_based, "--gold-one-based", "--json"]
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target, *arguments)
    assert status == 0, err
    assert json.loads(out) == {"aer": 0.0, "precision": 100.0, "recall": 100.0, "pairs": len(lines), "links": links}


def test_align_scores_sure_links_it_missed_in_recall_and_aer(model_dir, pairs, own_links, tmp_path, capsys):
    """The gold holds the model's own links and one more sure link per pair where one fits:
    precision stays 100, recall and AER count the missed ones, as their formulas say."""
    source, target, lines = own_links
    gold, missed = [], 0
    for line, src, tgt in zip(lines, *pairs, strict=True):
        extra = f"0-{len(tgt.split()) - 1}"
        fits = bool(src.split() and tgt.split()) and extra not in line.split()
        gold.append(f"{line} {extra}" if fits else line)
        missed += bool(fits)
    found = sum(len(line.split()) for line in lines)
    assert missed > 10
    arguments = ["--src", source, "--tgt", target, "--gold", write_lines(tmp_path / "gold", gold), "--json"]
    status, out, err = run_cli(capsys, "align", model_dir, *arguments)
    assert status == 0, err
    score = json.loads(out)
    assert score["precision"] == 100.0 and score["links"] == found
    assert score["recall"] == pytest.approx(100 * found / (found + missed), abs=0.01)
    assert score["aer"] == pytest.approx(100 * (1 - 2 * found / (2 * found + missed)), abs=0.01)


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        (lambda lines: lines[:-1], ("gold", "41 lines", "hold more pairs")),
        (lambda lines: ["0-0 " + "9" * 5000, *lines[1:]], ("gold: line 1", "not a link", "5,000 characters")),
        (lambda lines: ["0-0 1-" + "9" * 5000, *lines[1:]], ("gold: line 1", "more than 9 digits", "5,002 characters")),
        (lambda lines: [*lines, ""], ("gold", "more lines than the 42 pairs")),
        # Streamed beside the pairs: a gold line past the last pair is never parsed.
        (lambda lines: [*lines, "not links"], ("gold", "more lines than the 42 pairs")),
        (lambda lines: ["0-0 3x1", *lines[1:]], ("gold: line 1", "'3x1'", "not a link")),
        (lambda lines: ["0-0 0-400", *lines[1:]], ("gold: line 1", "0-400", "outside")),
    ],
)
def test_a_bad_gold_file_is_one_line_naming_its_line_and_token(own_links, model_dir, tmp_path, capsys, edit, fragments):
    source, target, lines = own_links
    gold = write_lines(tmp_path / "gold", edit(lines))
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target, "--gold", gold)
    assert_one_line_error(status, err, *fragments)
    assert out == ""


def test_a_zero_in_a_one_based_gold_file_is_one_line(model_dir, own_links, tmp_path, capsys):
    source, target, lines = own_links
    gold = write_lines(tmp_path / "gold", lines)
    arguments = ["--src", source, "--tgt", target, "--gold", gold, "--gold-one-based"]
    status, _, err = run_cli(capsys, "align", model_dir, *arguments)
    assert_one_line_error(status, err, "gold: line 1", "word 0", "1-based")


def test_align_refuses_a_model_without_attention_but_score_scores_it(fixed_context_model, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", ["Ein Hund läuft.", "Eine Katze."])
    target = write_lines(tmp_path / "in.en", ["A dog runs.", ""])
    jsonl = tmp_path / "a.jsonl"
    status, _, err = run_cli(
        capsys, "align", fixed_context_model, "--src", source, "--tgt", target, "--alignments", jsonl
    )
    assert_one_line_error(status, err, "no alignment model")
    assert not jsonl.exists()
    status, out, err = run_cli(capsys, "score", fixed_context_model, "--src", source, "--tgt", target)
    assert status == 0, err
    lines = [line.split("\t") for line in out.split("\n")[:-1]]
    assert len(lines) == 2 and lines[1][1] == "1"
    assert all(math.isfinite(float(line[0])) and float(line[0]) < 0.0 for line in lines)
    assert rnnsearch.load(fixed_context_model, device="cpu").score(["Ein Hund."], ["A dog."])[0].alignment is None


def test_an_over_long_source_is_one_line_naming_file_and_line(model_dir, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", ["Ein Hund.", " ".join(["Hund"] * 300)])
    target = write_lines(tmp_path / "in.en", ["A dog.", "A dog."])
    status, out, err = run_cli(capsys, "score", model_dir, "--src", source, "--tgt", target)
    assert_one_line_error(status, err, f"{source}:2", "search.max_source_length")


def test_invalid_utf8_in_a_target_is_one_line_naming_file_and_line(model_dir, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", ["Ein Hund.", "Eine Katze."])
    target = tmp_path / "in.en"
    target.write_bytes(b"A dog.\nA \xfe cat.\n")
    status, _, err = run_cli(capsys, "score", model_dir, "--src", source, "--tgt", target)
    assert_one_line_error(status, err, f"{target}:2", "not valid UTF-8")


def test_a_failed_write_is_one_line_naming_the_output(model_dir, pairs, tmp_path, capsys):
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    source, target = write_lines(tmp_path / "in.de", pairs[0]), write_lines(tmp_path / "in.en", pairs[1])
    for command in (["score", "-o", "/dev/full"], ["align", "--hard-alignments", "/dev/full"]):
        status, _, err = run_cli(capsys, command[0], model_dir, "--src", source, "--tgt", target, *command[1:])
        assert_one_line_error(status, err, "/dev/full: cannot write")


def test_the_python_api_checks_its_arguments(translator, model_dir):
    with pytest.raises(ValueError, match="2 targets for 1 sources"):
        translator.score(["Ein Hund."], ["A dog.", "A cat."])
    with pytest.raises(TypeError, match="sources"):
        translator.score("Ein Hund.", ["A dog."])
    with pytest.raises(UserError, match="source side 0: a text model needs its source subword model"):
        Translator(translator.model, None, translator.tgt_subwords, load_config(model_dir / "config.yaml"))


@pytest.mark.parametrize("method", ["intersect", "union", "grow-diag-final-and"])
def test_align_combines_a_reverse_models_links_read_transposed(
    model_dir, reverse_model_dir, pairs, own_links, capsys, method
):
    """Each printed line is `symmetrise` of the forward links and the reverse model's
    links of the same pair, transposed."""
    source, target, forward = own_links
    status, reverse, err = run_cli(capsys, "align", reverse_model_dir, "--src", target, "--tgt", source)
    assert status == 0, err
    arguments = ["--src", source, "--tgt", target, "--reverse", reverse_model_dir, "--symmetrize", method]
    status, out, err = run_cli(capsys, "align", model_dir, *arguments)
    assert status == 0, err
    expected = []
    for src, tgt, ahead, back in zip(*pairs, forward, reverse.splitlines(), strict=True):
        links = symmetrise(
            [tuple(map(int, link.split("-"))) for link in ahead.split()],
            [tuple(map(int, link.split("-")))[::-1] for link in back.split()],
            source_length=len(src.split()),
            target_length=len(tgt.split()),
            method=method,
        )
        expected.append(pharaoh(links))
    assert out.split("\n")[:-1] == expected and len(expected) == len(forward)
    if method == "intersect":
        assert sum(len(line.split()) for line in expected) < sum(len(line.split()) for line in forward)


@pytest.mark.parametrize(
    ("flag", "needed"),
    [(["--symmetrize", "union"], "--reverse"), (["--gold-one-based"], "--gold"), (["--json"], "--gold")],
)
def test_a_flag_without_the_one_it_qualifies_is_one_line(model_dir, own_links, capsys, flag, needed):
    source, target, _ = own_links
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target, *flag)
    assert_one_line_error(status, err, flag[0], needed)
    assert out == ""


def reading_by_hand(score: PairScore, reading: str) -> str:
    """The readings worked out from their definitions: target piece i takes row i of α
    ("output") or row i + 1 ("input", the last piece a row of zeros), then words merged
    and each aligned to its argmax."""
    rows = score.alignment
    if reading == "input":
        rows = np.vstack([rows[1:], np.zeros((1, rows.shape[1]))])
    source, target = source_words(score.source_tokens), target_words(score.target_tokens)
    return pharaoh(hard_alignment(merge(rows, source, target)))


@pytest.fixture(scope="module")
def sharp_model(model_dir, tmp_path_factory) -> Path:
    """The tiny model with W_a, which carries the decoder state into e_ij, scaled up 30
    times. Its 20 steps of training leave the rows of α alike, each with the same argmax
    (U_a h_j decides it); with the state weighing more, rows differ as a trained model's
    do, and so do the readings."""
    folder = tmp_path_factory.mktemp("sharp")
    trained = rnnsearch.load(model_dir, device="cpu")
    save_model_files(folder, load_config(model_dir / "config.yaml"), trained.src_subwords, trained.tgt_subwords)
    tensors = model_tensors(trained.model)
    scaled = [name for name in tensors if name.endswith("query_layer.weight")]
    assert scaled
    write_tensors(folder / BEST, {**tensors, **{name: tensors[name] * 30 for name in scaled}}, {})
    return folder


@pytest.mark.parametrize("reading", ["output", "input", "both"])
def test_align_reads_alpha_as_asked_in_the_cli_and_the_python_api(sharp_model, pairs, own_links, capsys, reading):
    source, target, _ = own_links
    status, out, err = run_cli(capsys, "align", sharp_model, "--src", source, "--tgt", target, "--reading", reading)
    assert status == 0, err
    translator = rnnsearch.load(sharp_model, device="cpu")
    assert out.split("\n")[:-1] == [aligned.pharaoh() for aligned in translator.align(*pairs, reading=reading)]
    if reading in ("output", "input"):
        assert out.split("\n")[:-1] == [reading_by_hand(score, reading) for score in translator.score(*pairs)]


def test_the_readings_give_different_links_and_output_is_the_default(sharp_model, pairs):
    translator = rnnsearch.load(sharp_model, device="cpu")
    links = {reading: translator.align(*pairs, reading=reading) for reading in READINGS}
    # The test above tells the readings apart only where their links differ.
    assert any(ahead.pairs != after.pairs for ahead, after in zip(links["output"], links["input"], strict=True))
    assert [a.pairs for a in translator.align(*pairs)] == [a.pairs for a in links["output"]]


def test_a_reverse_model_of_the_same_direction_is_refused(model_dir, translator, own_links, capsys):
    """The model itself as its own reverse: both configs say de→en, so it is refused, in
    one line from the CLI and as a ValueError from the Python API."""
    source, target, _ = own_links
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target, "--reverse", model_dir)
    assert_one_line_error(status, err, "--reverse", "translates de→en", "other direction, en→de")
    assert out == ""
    with pytest.raises(ValueError, match="reverse: the reverse model translates de→en"):
        translator.align(["Ein Hund."], ["A dog."], reverse=translator)


def test_the_python_api_combines_a_reverse_model_as_the_cli_does(
    model_dir, reverse_model_dir, translator, pairs, own_links, capsys
):
    source, target, _ = own_links
    arguments = ["--src", source, "--tgt", target, "--reverse", reverse_model_dir, "--symmetrize", "grow-diag"]
    status, out, err = run_cli(capsys, "align", model_dir, *arguments)
    assert status == 0, err
    reverse = rnnsearch.load(reverse_model_dir, device="cpu")
    combined = translator.align(*pairs, reverse=reverse, symmetrize="grow-diag")
    assert out.split("\n")[:-1] == [aligned.pharaoh() for aligned in combined]
    assert [a.source_words for a in combined] == [line.split() for line in pairs[0]]


def test_soft_combination_links_where_both_directions_word_weights_agree(
    model_dir, reverse_model_dir, translator, pairs, own_links, capsys, monkeypatch
):
    """`soft` reads each direction's word weights, the reverse's transposed; the CLI and
    the API give the same links. The tiny models' weights are diffuse, so the threshold is
    set to the median of their mean weights, where some words link and others do not."""
    reverse = rnnsearch.load(reverse_model_dir, device="cpu")
    forward, backward = translator.align(*pairs), reverse.align(pairs[1], pairs[0])
    means = [(ahead.weights + back.weights.T) / 2 for ahead, back in zip(forward, backward, strict=True)]
    threshold = float(np.median(np.concatenate([mean.flatten() for mean in means])))
    monkeypatch.setattr(symmetrisation, "SOFT_THRESHOLD", threshold)
    combined = translator.align(*pairs, reverse=reverse, symmetrize="soft")
    for soft, mean in zip(combined, means, strict=True):
        assert soft.pairs == sorted((int(s), int(t)) for t, s in zip(*np.nonzero(mean >= threshold)))
    linked = sum(len(soft.pairs) for soft in combined)
    assert 0 < linked < sum(mean.size for mean in means)
    source, target, _ = own_links
    arguments = ["--src", source, "--tgt", target, "--reverse", reverse_model_dir, "--symmetrize", "soft"]
    status, out, err = run_cli(capsys, "align", model_dir, *arguments)
    assert status == 0, err
    assert out.split("\n")[:-1] == [aligned.pharaoh() for aligned in combined]


def test_the_python_api_scores_alignments_against_gold(translator, pairs, own_links, tmp_path):
    gold = rnnsearch.read_gold(write_lines(tmp_path / "gold", own_links[2]))
    links = [aligned.pairs for aligned in translator.align(*pairs)]
    score = rnnsearch.alignment_error_rate(links, gold)
    assert (score.aer, score.precision, score.recall) == (0.0, 100.0, 100.0)
    assert score.links == sum(len(line.split()) for line in own_links[2])


def test_the_python_api_names_a_bad_align_argument(translator, fixed_context_model):
    with pytest.raises(ValueError, match="reading: 'middle' is not one of output, input, both"):
        translator.align(["Ein Hund."], ["A dog."], reading="middle")
    with pytest.raises(ValueError, match="symmetrize: 'grow' is not one of"):
        translator.align(["Ein Hund."], ["A dog."], reverse=translator, symmetrize="grow")
    with pytest.raises(TypeError, match="reverse: expected a Translator"):
        translator.align(["Ein Hund."], ["A dog."], reverse="runs/fr-de")
    with pytest.raises(TypeError, match="symmetrize: expected a str, one of intersect, union"):
        translator.align(["Ein Hund."], ["A dog."], reverse=translator, symmetrize=["union"])
    with pytest.raises(TypeError, match="reading: expected a str, one of output, input, both; got list"):
        translator.align(["Ein Hund."], ["A dog."], reading=["output"])
    with pytest.raises(ValueError, match="2 targets for 1 sources"):
        translator.align(["Ein Hund."], ["A dog.", "A cat."])
    with pytest.raises(UserError, match="no alignment model"):
        rnnsearch.load(fixed_context_model).align(["Ein Hund."], ["A dog."])


def shift_past(pairs: list[tuple[int, int]], dropped: int) -> list[tuple[int, int]]:
    """Links of a sentence with a word inserted at `dropped`: later source words move up one."""
    return [(source + (source >= dropped), target) for source, target in pairs]


def test_word_indices_count_the_texts_words_where_the_subword_model_drops_one(translator, model_dir, tmp_path, capsys):
    """A lone zero-width space and a byte-order mark are words of the text (str.split keeps
    them) that the subword model's normalisation removes: the model reads the same pieces
    as without them, and every alignment output counts the text's words, so its links are
    the plain sentence's with the source words after the dropped one moved up by one."""
    plain = ["Zwei Männer stehen .", "Ein Hund läuft im Schnee ."]
    awkward = ["Zwei \u200b Männer stehen .", "\ufeff Ein Hund läuft im Schnee ."]
    dropped = [1, 0]
    targets = ["Two men stand .", "A dog runs in the snow ."]
    expected = [shift_past(a.pairs, k) for a, k in zip(translator.align(plain, targets), dropped, strict=True)]
    assert [a.pairs for a in translator.align(awkward, targets)] == expected
    assert all(a.pairs for a in translator.align(awkward, targets))
    source, target = write_lines(tmp_path / "in.de", awkward), write_lines(tmp_path / "in.en", targets)
    status, out, err = run_cli(capsys, "align", model_dir, "--src", source, "--tgt", target)
    assert status == 0, err
    assert out.splitlines() == [pharaoh(links) for links in expected]
    hard = tmp_path / "hard.txt"
    plain_words = [align_translation(t) for t in translator.translate(plain)]
    status, _, err = run_cli(capsys, "translate", model_dir, "-i", source, "--hard-alignments", hard)
    assert status == 0, err
    lines = hard.read_text(encoding="utf-8").splitlines()
    assert lines == [pharaoh(shift_past(a.pairs, k)) for a, k in zip(plain_words, dropped, strict=True)]

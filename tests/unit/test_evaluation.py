"""Tests for rnnsearch.evaluation: metric conventions and figure output."""

import numpy as np
import pytest

from rnnsearch.config.data import DataConfig
from rnnsearch.evaluation.metrics import (
    bleu,
    bleu_by_length,
    bleu_lowercase_tokenized,
    chrf,
    moses_lowercase_tokenize,
)
from rnnsearch.evaluation.plots import alignment_heatmap, bleu_by_length_plot, learning_curves

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

SENTENCES = [
    "A man in an orange hat starring at something.",
    "A Boston Terrier is running on lush green grass in front of a white fence.",
    "A girl in karate uniform breaking a stick with a front kick.",
    "Five people wearing winter jackets and helmets stand in the snow.",
    "People are fixing the roof of a house.",
]
RAW_EN = "A young blond-haired boy and a dark-haired girl are eating at a kid's table."
TOK_EN = "a young blond-haired boy and a dark-haired girl are eating at a kid &apos;s table ."


def test_bleu_identical_is_100_and_signed():
    score = bleu(SENTENCES, SENTENCES)
    assert score.value == pytest.approx(100.0)
    assert "tok:13a" in score.signature
    assert str(score).startswith("BLEU = 100.00 (nrefs:1|case:mixed")


def test_bleu_shuffled_scores_lower():
    shuffled = SENTENCES[1:] + SENTENCES[:1]
    assert bleu(shuffled, SENTENCES).value < 50.0


def test_count_mismatch_raises():
    with pytest.raises(ValueError, match="4 hypotheses but 5 references"):
        bleu(SENTENCES[:4], SENTENCES)
    with pytest.raises(ValueError):
        chrf(SENTENCES, SENTENCES[:2])
    with pytest.raises(ValueError):
        bleu_lowercase_tokenized(SENTENCES, [], "en")
    with pytest.raises(ValueError):
        bleu_by_length(SENTENCES, SENTENCES[:1], [5] * 5)


def test_chrf_identical_is_100():
    score = chrf(SENTENCES, SENTENCES)
    assert score.value == pytest.approx(100.0)
    assert score.name.startswith("chrF")


def test_moses_lowercase_tokenize_matches_multi30k_english():
    assert moses_lowercase_tokenize([RAW_EN], "en") == [TOK_EN]


def test_moses_lowercase_tokenize_german():
    [out] = moses_lowercase_tokenize(["Ein Mann sagt „Hallo“, z.B. im Café."], "de")
    assert out == "ein mann sagt &quot; hallo &quot; , z.b. im café ."


def test_bleu_lowercase_tokenized_raw_against_tok_reference():
    score = bleu_lowercase_tokenized([RAW_EN], [TOK_EN], "en")
    assert score.value == pytest.approx(100.0)
    assert "tok:none" in score.signature and score.signature.endswith("|hyp:moses-lc")


def test_bleu_by_length_buckets():
    lengths = [3, 10, 11, 25, 61]
    rows = bleu_by_length(SENTENCES, SENTENCES, lengths)
    assert [label for label, _, _ in rows] == ["1-10", "11-20", "21-30", "61+"]
    assert [n for _, n, _ in rows] == [2, 1, 1, 1]
    assert sum(n for _, n, _ in rows) == len(SENTENCES)
    assert all(value == pytest.approx(100.0) for _, _, value in rows)


def test_bleu_by_length_custom_edges():
    rows = bleu_by_length(SENTENCES, SENTENCES, [1, 2, 3, 4, 5], buckets=[0, 2])
    assert [(label, n) for label, n, _ in rows] == [("1-2", 2), ("3+", 3)]


def _near_diagonal(rows, cols):
    weights = np.full((rows, cols), 0.02)
    for i in range(rows):
        weights[i, min(i, cols - 1)] = 1.0
    return weights / weights.sum(axis=1, keepdims=True)


def test_alignment_heatmap_png_and_svg(tmp_path):
    source = ["the", "agreement", "on", "the", "zone", "</s>"]
    target = ["l'", "accord", "sur", "la", "zone"]
    weights = _near_diagonal(len(target), len(source))
    png, svg = tmp_path / "a.png", tmp_path / "a.svg"
    alignment_heatmap(weights, source, target, png, title="example")
    alignment_heatmap(weights.tolist(), source, target, svg)
    assert png.read_bytes().startswith(PNG_MAGIC)
    assert "<svg" in svg.read_text()


def test_alignment_heatmap_shape_mismatch(tmp_path):
    with pytest.raises(ValueError, match="shape"):
        alignment_heatmap(np.eye(3), ["a", "b"], ["x", "y", "z"], tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


@pytest.mark.parametrize("with_validation", [False, True])
def test_learning_curves(tmp_path, with_validation):
    records = [{"step": step, "train_loss": 5.0 / step**0.3} for step in range(100, 1100, 100)]
    if with_validation:
        records += [
            {"step": 500, "valid_loss": 2.9, "valid_ppl": 18.1, "valid_bleu": 21.3},
            {"step": 1000, "valid_loss": 2.5, "valid_ppl": 12.2, "valid_bleu": 25.0},
        ]
    path = tmp_path / "curves.png"
    learning_curves(records, path, DataConfig.scores[0])
    assert path.read_bytes().startswith(PNG_MAGIC)


def test_bleu_by_length_plot(tmp_path):
    series = {
        "RNNsearch-50": [("1-10", 4, 30.0), ("11-20", 5, 28.0), ("61+", 1, 20.0)],
        "RNNenc-50": [("1-10", 4, 27.0), ("21-30", 3, 18.0)],
    }
    path = tmp_path / "by_length.png"
    bleu_by_length_plot(series, path)
    assert path.read_bytes().startswith(PNG_MAGIC)

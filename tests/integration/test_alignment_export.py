import json

import numpy as np
import pytest

import rnnsearch
from rnnsearch.alignments.readings import DEFAULT_READING
from rnnsearch.alignments.words import align_translation
from rnnsearch.cli import main
from tests.integration.conftest import tiny_config, write_config, write_lines


@pytest.fixture(scope="module")
def sources(corpus) -> list[str]:
    lines = (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:6]
    return lines[:3] + [""] + lines[3:] + ["Der €uro kostet ½ Preis!"]


def translate(capsys, model_dir, source_file, *options) -> list[str]:
    status = main(["translate", str(model_dir), "-i", str(source_file), *map(str, options)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out.split("\n")[:-1]


def read_jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_matrix_fits(matrix: list, source_tokens: list[str], target_tokens: list[str]) -> None:
    if not target_tokens:
        assert matrix == [] and source_tokens == []
        return
    weights = np.array(matrix, dtype=float)
    assert weights.shape == (len(target_tokens), len(source_tokens))
    assert np.allclose(weights.sum(axis=1), 1.0, atol=1e-3)


@pytest.mark.parametrize("beam_size", [1, 5])
def test_alignment_rows_match_the_translations_line_for_line(model_dir, sources, tmp_path, capsys, beam_size):
    source_file = write_lines(tmp_path / "in.de", sources)
    jsonl = tmp_path / "a.jsonl"
    lines = translate(capsys, model_dir, source_file, "--beam-size", beam_size, "--alignments", jsonl)
    rows = read_jsonl(jsonl)
    assert len(lines) == len(rows) == len(sources)
    for number, (line, row) in enumerate(zip(lines, rows)):
        assert row["line"] == number
        assert [h["text"] for h in row["hypotheses"]] == [line]
        assert_matrix_fits(
            row["hypotheses"][0]["alignment"], row["source_tokens"], row["hypotheses"][0]["target_tokens"]
        )
    assert rows[3]["source_tokens"] == [] and lines[3] == ""


def test_nbest_entries_carry_their_own_matrices(model_dir, sources, tmp_path, capsys):
    source_file = write_lines(tmp_path / "in.de", sources)
    jsonl = tmp_path / "a.jsonl"
    lines = translate(capsys, model_dir, source_file, "--beam-size", 5, "--n-best", 3, "--alignments", jsonl)
    rows = read_jsonl(jsonl)
    assert len(rows) == len(sources)
    listed = [line.split(" ||| ") for line in lines]
    for number, row in enumerate(rows):
        texts = [entry[1] for entry in listed if int(entry[0]) == number]
        assert [h["text"] for h in row["hypotheses"]] == texts
        for hypothesis in row["hypotheses"]:
            assert_matrix_fits(hypothesis["alignment"], row["source_tokens"], hypothesis["target_tokens"])
    nonempty = [row for row in rows if row["source_tokens"]]
    assert all(len(row["hypotheses"]) == 3 for row in nonempty)
    shapes = {tuple(np.shape(h["alignment"])) for row in nonempty for h in row["hypotheses"]}
    matrices = [np.array(h["alignment"]) for h in nonempty[0]["hypotheses"]]
    assert len(shapes) > 1 or any(not np.array_equal(matrices[0], m) for m in matrices[1:])


def parse_pharaoh(line: str) -> list[tuple[int, int]]:
    return [tuple(int(index) for index in pair.split("-")) for pair in line.split()]


@pytest.mark.parametrize(
    ("beam_size", "n_best", "reading"), [(1, 1, DEFAULT_READING), (5, 1, DEFAULT_READING), (5, 3, "output")]
)
def test_hard_alignments_give_one_line_per_input_within_the_word_counts(
    model_dir, sources, tmp_path, capsys, beam_size, n_best, reading
):
    source_file = write_lines(tmp_path / "in.de", sources)
    hard = tmp_path / "hard.txt"
    options = ["--beam-size", beam_size, "--n-best", n_best, "--hard-alignments", hard]
    translate(capsys, model_dir, source_file, *options, *([] if reading == DEFAULT_READING else ["--reading", reading]))
    lines = hard.read_text(encoding="utf-8").split("\n")[:-1]
    translations = rnnsearch.load(model_dir).translate(sources, beam_size=beam_size, n_best=n_best)
    assert len(lines) == len(sources)
    assert lines == [align_translation(t, reading=reading).pharaoh() for t in translations]
    for line, source, translation in zip(lines, sources, translations):
        pairs = parse_pharaoh(line)
        assert pairs == sorted(pairs)
        assert all(0 <= i < len(source.split()) for i, _ in pairs)
        assert sorted(j for _, j in pairs) == list(range(len(translation.text.split())))
    assert lines[3] == ""


def test_word_alignment_counts_the_words_of_source_and_translation(model_dir, sources):
    for translation in rnnsearch.load(model_dir).translate(sources, beam_size=3):
        aligned = align_translation(translation)
        assert len(aligned.source_words) == len(translation.source.split())
        assert aligned.target_words == translation.text.split()
        assert np.all(aligned.weights.sum(axis=1) <= 1.0 + 1e-6)


def test_fixed_context_model_refuses_both_alignment_outputs(corpus, tmp_path, capsys):
    config = tiny_config(corpus, tmp_path / "none", max_steps=4, valid_every=4)
    config["model"]["attention"] = "none"
    assert main(["train", str(write_config(tmp_path / "c.yaml", config))]) == 0
    source = write_lines(tmp_path / "in.de", ["Ein Hund läuft."])
    for option, path in (("--alignments", tmp_path / "a.jsonl"), ("--hard-alignments", tmp_path / "h.txt")):
        capsys.readouterr()
        status = main(["translate", str(tmp_path / "none"), "-i", str(source), option, str(path)])
        last = capsys.readouterr().err.splitlines()[-1]
        assert status == 1 and last.startswith("rnnsearch: error: ") and "no alignment model" in last
        assert not path.exists()

"""Guided alignment from the data's side: a corpus's word alignments checked, placed on its
pieces and stored beside its tokens by `rnnsearch prepare`, covered by the manifest, and
trained on, alone or mixed with corpora without alignments."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import tiny_config, write_config, write_lines

from rnnsearch.alignments.guide import piece_links
from rnnsearch.cli import main
from rnnsearch.config import config_from_dict
from rnnsearch.errors import UserError
from rnnsearch.prepared import PreparedPairs, prepare, stale_reason
from rnnsearch.prepared.manifest import LINK_ARRAYS
from rnnsearch.text.corpus import read_lines


def diagonal_links(folder: Path) -> list[str]:
    """Word k of the source linked to word k of the target, as far as the shorter side goes."""
    sources, targets = read_lines(folder / "train.de"), read_lines(folder / "train.en")
    lines = []
    for source, target in zip(sources, targets):
        words = min(len(source.split()), len(target.split()))
        lines.append(" ".join(f"{k}-{k}" for k in range(words)))
    return lines


@pytest.fixture
def aligned(corpus, tmp_path) -> Path:
    """The shared corpus with diagonal word alignments, every fifth line left empty."""
    lines = diagonal_links(corpus)
    for k in range(0, len(lines), 5):
        lines[k] = ""
    return write_lines(tmp_path / "train.links", lines)


def aligned_tree(corpus: Path, model_dir: Path, links: Path, *, mixed: bool = False, **train) -> dict:
    tree = tiny_config(corpus, model_dir, **train)
    with_links = {**tree["data"]["train"], "alignments": str(links)}
    tree["data"]["train"] = [tree["data"]["train"], with_links] if mixed else with_links
    return tree


def test_links_are_stored_beside_the_tokens_on_each_pairs_pieces(corpus, aligned, tmp_path):
    tree = aligned_tree(corpus, tmp_path / "run", aligned, mixed=True)
    tree["data"]["max_length"] = 240  # every pair kept: pair k of each corpus is line k
    subwords = prepare(config_from_dict(tree), tmp_path / "prepared")
    data = PreparedPairs(tmp_path / "prepared")
    assert data.has_links and set(LINK_ARRAYS) <= set(data.manifest["file_sizes"])
    assert data.manifest["inputs"][1]["alignments"]["path"] == str(aligned.resolve())
    sources, targets, lines = read_lines(corpus / "train.de"), read_lines(corpus / "train.en"), read_lines(aligned)
    half = len(sources)  # the corpus without alignments, then the same one with them
    assert len(data) == 2 * half
    assert all(len(data.links(k)) == 0 for k in range(half))
    for k in range(half):
        source, target = data[half + k]
        links = {tuple(int(n) for n in link.split("-")) for link in lines[k].split()}
        expected = piece_links(
            links,
            subwords[0].pieces(source),
            subwords[1].pieces(target),
            source_words=len(sources[k].split()),
            target_words=len(targets[k].split()),
        )
        expected = np.zeros((0, 2)) if expected is None or not links else expected
        assert data.links(half + k).tolist() == expected.tolist()
    assert sum(len(data.links(half + k)) > 0 for k in range(half)) > half // 2


def test_a_corpus_with_and_without_alignments_trains(corpus, aligned, tmp_path, capsys):
    tree = aligned_tree(
        corpus, tmp_path / "run", aligned, mixed=True, max_steps=4, valid_every=4, guided_alignment_weight=1.0
    )
    assert main(["train", str(write_config(tmp_path / "c.yaml", tree))]) == 0
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    losses = [row["train_loss"] for row in rows if "train_loss" in row]
    assert len(losses) == 4 and all(np.isfinite(losses))


def test_guidance_adds_to_the_training_loss(corpus, aligned, tmp_path):
    def first_loss(run: str, weight: float) -> float:
        tree = aligned_tree(corpus, tmp_path / run, aligned, max_steps=1, valid_every=1, guided_alignment_weight=weight)
        tree["data"]["prepared"] = str(tmp_path / "prepared")
        assert main(["train", str(write_config(tmp_path / f"{run}.yaml", tree))]) == 0
        return json.loads((tmp_path / run / "metrics.jsonl").read_text().splitlines()[0])["train_loss"]

    assert first_loss("guided", 1.0) > first_loss("unguided", 0.0)


def test_a_guided_coverage_model_resumes_exactly_where_training_stopped(corpus, aligned, tmp_path):
    """Coverage is decoder state and links are batch data: neither may make a resumed run
    differ from one that never stopped, step for step."""

    def config(run: str, steps: int) -> Path:
        tree = aligned_tree(
            corpus, tmp_path / run, aligned, max_steps=steps, valid_every=4, guided_alignment_weight=1.0
        )
        tree["model"]["attention"]["coverage"] = True
        return write_config(tmp_path / f"{run}.yaml", tree)

    def losses(run: str) -> list:
        rows = [json.loads(line) for line in (tmp_path / run / "metrics.jsonl").read_text().splitlines()]
        return [(row["step"], row.get("train_loss"), row.get("valid_loss")) for row in rows]

    assert main(["train", str(config("whole", 12))]) == 0
    split = config("split", 8)
    assert main(["train", str(split)]) == 0
    assert main(["train", str(split), "--set", "train.max_steps=12", "--resume"]) == 0
    assert losses("split") == losses("whole")
    assert len(losses("whole")) == 12 + 3


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("0-0 1_2", "'1_2' is not a link"),
        ("0-0 0-40", "link 0-40 (0-based) lies outside a pair of"),
        ("0-0 0-" + "1" * 5000, "word number of more than 9 digits"),
    ],
)
def test_a_bad_alignment_line_is_one_line_naming_file_and_line(corpus, aligned, tmp_path, line, problem):
    lines = read_lines(aligned)
    lines[136] = line
    write_lines(aligned, lines)
    config = config_from_dict(aligned_tree(corpus, tmp_path / "run", aligned))
    with pytest.raises(UserError) as excinfo:
        prepare(config, tmp_path / "prepared")
    message = str(excinfo.value)
    assert message.startswith(f"{aligned}: line 137: ") and problem in message and "\n" not in message


@pytest.mark.parametrize("change", [-3, 2])
def test_an_alignment_file_of_another_length_is_one_line_naming_both_files(corpus, aligned, tmp_path, change):
    lines = read_lines(aligned)
    write_lines(aligned, lines[:change] if change < 0 else lines + [""] * change)
    config = config_from_dict(aligned_tree(corpus, tmp_path / "run", aligned))
    with pytest.raises(UserError) as excinfo:
        prepare(config, tmp_path / "prepared")
    count = len(lines) + change
    assert str(excinfo.value) == (
        f"{aligned} has {count} lines but {corpus / 'train.de'} has {len(lines)} lines; "
        "an alignment file has one line per pair"
    )


def test_changing_or_adding_an_alignment_file_makes_the_data_stale(corpus, aligned, tmp_path):
    plain = config_from_dict(tiny_config(corpus, tmp_path / "run"))
    prepare(plain, tmp_path / "prepared")
    config = config_from_dict(aligned_tree(corpus, tmp_path / "run", aligned))
    assert stale_reason(tmp_path / "prepared", config) == "data.train names other files"
    prepare(config, tmp_path / "prepared")
    assert stale_reason(tmp_path / "prepared", config) is None
    lines = read_lines(aligned)
    lines[0] = "0-1"
    write_lines(aligned, lines)
    os.utime(aligned, ns=(0, 0))
    assert stale_reason(tmp_path / "prepared", config) == f"{aligned.resolve()} changed since it was prepared"


def test_pairs_whose_pieces_spell_other_words_are_counted_and_unguided(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    sources = ["the cat sat", "a dog ran", "the dog"] * 20
    # normalisation drops a zero-width space: three words of text, two of pieces
    sources[2] = "the \u200b dog"
    write_lines(folder / "train.src", sources)
    write_lines(folder / "train.tgt", ["le chat", "un chien", "le chien"] * 20)
    links = ["0-0 1-1", "0-0", "1-1"] * 20
    links[2] = "2-1"
    write_lines(folder / "train.links", links)
    tree = tiny_config(folder, folder / "run")
    tree["data"]["train"] = {"src": str(folder / "train.src"), "tgt": str(folder / "train.tgt")}
    tree["data"]["train"]["alignments"] = str(folder / "train.links")
    tree["subwords"] = {"kind": "unigram", "vocab_size": 290, "joint": True}
    prepare(config_from_dict(tree), folder / "prepared")
    data = PreparedPairs(folder / "prepared")
    assert data.manifest["filtered"][0]["unplaced"] == 1
    linked = [len(data.links(k)) > 0 for k in range(6)]
    assert linked == [True, True, False, True, True, True]

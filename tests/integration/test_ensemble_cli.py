"""Ensembles and forced prefixes through `rnnsearch.load`, the CLI and the server."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.config import load_config
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError, UserError
from rnnsearch.files.model_directory import BEST, LAST, SRC_SUBWORDS, TGT_SUBWORDS, model_tensors, write_tensors
from rnnsearch.model.seq2seq import build_model
from rnnsearch.server import Limits
from rnnsearch.server.app import create_app
from rnnsearch.text.subwords import train_subwords
from tests.integration.conftest import write_lines
from tests.integration.test_score_align import assert_one_line_error, run_cli


@pytest.fixture(scope="module")
def sources(corpus) -> list[str]:
    return (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:24]


@pytest.fixture(scope="module")
def single(model_dir):
    return rnnsearch.load(model_dir, device="cpu")


def other_model(model_dir: Path, folder: Path, corpus: Path, *, side: str, vocab_size: int) -> Path:
    """A copy of the model directory with a new subword model of `vocab_size` for one side
    (src or tgt), and random weights that fit it."""
    shutil.copytree(model_dir, folder)
    language = "de" if side == "src" else "en"
    texts = (corpus / f"train.{language}").read_text(encoding="utf-8").splitlines()
    subwords = train_subwords(texts, "unigram", vocab_size)
    (folder / (SRC_SUBWORDS if side == "src" else TGT_SUBWORDS)).write_bytes(subwords.model_bytes)
    config = load_config(folder / "config.yaml")
    trained = rnnsearch.load(model_dir, device="cpu")
    sizes = {"src": len(trained.src_subwords), "tgt": len(trained.tgt_subwords), side: len(subwords)}
    model = build_model(config.model, sizes["src"], sizes["tgt"])
    for name in (BEST, LAST):
        (folder / name).unlink(missing_ok=True)
    write_tensors(folder / BEST, model_tensors(model), {})
    return folder


@pytest.fixture(scope="module")
def other_source(model_dir, corpus, tmp_path_factory) -> Path:
    """A member that reads German in other pieces and shares the target subword model."""
    return other_model(model_dir, tmp_path_factory.mktemp("side") / "run", corpus, side="src", vocab_size=350)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_an_ensemble_of_one_translates_exactly_as_the_model(model_dir, single, sources, beam_size):
    ensemble = rnnsearch.load([model_dir], device="cpu")
    expected, found = single.translate(sources, beam_size=beam_size), ensemble.translate(sources, beam_size=beam_size)
    for e, f in zip(expected, found, strict=True):
        assert (f.text, f.score, f.source_tokens, f.target_tokens) == (
            e.text,
            e.score,
            e.source_tokens,
            e.target_tokens,
        )
        assert np.array_equal(f.alignment, e.alignment)


def test_a_model_with_itself_translates_and_scores_as_the_model(model_dir, single, sources, corpus):
    ensemble = rnnsearch.load([model_dir, model_dir], device="cpu")
    assert [t.text for t in ensemble.translate(sources, beam_size=3)] == [
        t.text for t in single.translate(sources, beam_size=3)
    ]
    targets = (corpus / "val.en").read_text(encoding="utf-8").splitlines()[:24]
    for e, f in zip(single.score(sources, targets), ensemble.score(sources, targets), strict=True):
        assert f.token_log_probs == e.token_log_probs
        assert np.array_equal(f.alignment, e.alignment)


def test_the_cli_decodes_with_every_model_directory_given(model_dir, corpus, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:12])
    assert main(["translate", str(model_dir), "-i", str(source), "-o", str(tmp_path / "one.en")]) == 0
    status = main(["translate", str(model_dir), str(model_dir), "-i", str(source), "-o", str(tmp_path / "two.en")])
    assert status == 0
    assert (tmp_path / "one.en").read_text() == (tmp_path / "two.en").read_text()
    status, out, err = run_cli(
        capsys, "evaluate", model_dir, model_dir, "--src", corpus / "val.de", "--ref", corpus / "val.en", "--json"
    )
    assert status == 0, err
    assert '"BLEU"' in out


def test_members_with_their_own_source_pieces_decode_together(model_dir, other_source, single, sources):
    """Each member reads the source in its own pieces; the alignment is over the pieces of
    the first member, and the output does not depend on how many sentences decode together."""
    together = rnnsearch.load([model_dir, other_source], device="cpu", batch_sentences=64)
    one_by_one = rnnsearch.load([model_dir, other_source], device="cpu", batch_sentences=1)
    found = together.translate(sources, beam_size=3)
    alone = single.translate(sources, beam_size=3)
    assert [t.text for t in one_by_one.translate(sources, beam_size=3)] == [t.text for t in found]
    assert [t.text for t in found] != [t.text for t in alone]  # the second member votes
    for f, a in zip(found, alone):
        assert f.source_tokens == a.source_tokens
        assert f.alignment.shape == (len(f.target_tokens), len(f.source_tokens))
        assert np.allclose(f.alignment.sum(1), 1.0, atol=1e-5)
    reversed_members = rnnsearch.load([other_source, model_dir], device="cpu")
    pieces = reversed_members.src_subwords.encode([sources[0]])[0]
    assert len(reversed_members.translate(sources[:1])[0].source_tokens) == len(pieces) + 1


def test_members_must_share_the_target_vocabulary(model_dir, corpus, tmp_path, capsys):
    other = other_model(model_dir, tmp_path / "run", corpus, side="tgt", vocab_size=350)
    with pytest.raises(UserError, match="target subword model is not that of"):
        rnnsearch.load([model_dir, other], device="cpu")
    status, _, err = run_cli(capsys, "translate", model_dir, other, "-i", corpus / "val.de")
    assert_one_line_error(status, err, str(other), "must share the target vocabulary")


def test_bad_member_lists_are_one_line_errors(model_dir, speech_model, tmp_path, capsys, corpus):
    with pytest.raises(ArgumentValueError, match="an empty list"):
        rnnsearch.load([], device="cpu")
    with pytest.raises(ArgumentTypeError, match=r"model_dir\[1\]: expected a str or a path, got int"):
        rnnsearch.load([model_dir, 3], device="cpu")
    with pytest.raises(UserError, match="reads audio but"):
        rnnsearch.load([model_dir, speech_model], device="cpu")
    status, _, err = run_cli(capsys, "translate", model_dir, tmp_path / "missing", "-i", corpus / "val.de")
    assert_one_line_error(status, err, f"{tmp_path / 'missing'}: no such model directory")


def test_a_prefix_starts_every_translation_and_its_alignment(single, sources):
    free = single.translate(sources, beam_size=3)
    prefixes = [" ".join(t.text.split()[:2]) if k % 3 else "A dog" for k, t in enumerate(free)]
    prefixes[1] = ""
    found = single.translate(sources, beam_size=3, n_best=2, prefixes=prefixes)
    for prefix, translation in zip(prefixes, found):
        for entry in (translation, *translation.alternatives):
            assert entry.text.startswith(prefix)
            assert entry.alignment.shape == (len(entry.target_tokens), len(entry.source_tokens))
    assert found[1].text == free[1].text  # no prefix, no change
    one_by_one = [single.translate([s], beam_size=3, prefixes=[p])[0].text for s, p in zip(sources, prefixes)]
    assert one_by_one == [t.text for t in found]


def test_a_blank_source_with_a_prefix_is_translated(single):
    translation = single.translate(["", "  "], prefixes=["A man", ""])
    assert translation[0].text.startswith("A man") and translation[1].text == ""


def test_prefixes_must_match_the_texts(single, sources):
    with pytest.raises(ArgumentValueError, match="prefixes: 1 prefixes for 2 texts"):
        single.translate(sources[:2], prefixes=["A"])
    with pytest.raises(ArgumentTypeError, match=r"prefixes\[0\]"):
        single.translate(sources[:1], prefixes=[None])


def test_the_cli_forces_prefixes_from_a_file(model_dir, sources, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", sources[:4])
    prefix = write_lines(tmp_path / "prefix.en", ["A man", "", "Two", "The"])
    status, out, err = run_cli(capsys, "translate", model_dir, "-i", source, "--prefix", prefix, "--beam-size", 2)
    assert status == 0, err
    lines = out.splitlines()
    assert len(lines) == 4 and all(line.startswith(p) for line, p in zip(lines, ["A man", "", "Two", "The"]))
    short = write_lines(tmp_path / "short.en", ["A man"])
    status, _, err = run_cli(capsys, "translate", model_dir, "-i", source, "--prefix", short)
    assert_one_line_error(status, err, f"{short} has 1 lines but {source} has 4")


def test_the_server_serves_an_ensemble_and_takes_prefixes(model_dir, sources):
    translator = rnnsearch.load([model_dir, model_dir], device="cpu")
    with TestClient(create_app(translator, [model_dir, model_dir], Limits())) as client:
        assert client.get("/v1/model").json()["members"] == 2
        response = client.post("/v1/translate", json={"texts": sources[:3], "prefixes": ["A dog", "", "Two"]})
        assert response.status_code == 200, response.text
        texts = [t["text"] for t in response.json()["translations"]]
        assert texts[0].startswith("A dog") and texts[2].startswith("Two")
        response = client.post("/v1/translate", json={"texts": sources[:3], "prefixes": ["A dog"]})
        assert response.status_code == 422 and "prefixes: 1 prefixes for 3 texts" in response.json()["error"]

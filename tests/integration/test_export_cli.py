"""Exported ONNX Runtime packages through the CLI, `rnnsearch.load` and the server."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.config import config_from_dict, load_config
from rnnsearch.errors import UserError
from rnnsearch.export.manifest import file_digest
from rnnsearch.files.model_directory import (
    BEST,
    TGT_SUBWORDS,
    model_tensors,
    read_tensors,
    save_model_files,
    write_tensors,
)
from rnnsearch.model.seq2seq import build_model
from rnnsearch.server import Limits
from rnnsearch.server.app import create_app
from rnnsearch.text.subwords import train_subwords
from tests.integration.conftest import write_lines
from tests.integration.test_score_align import assert_one_line_error, read_jsonl, run_cli


@pytest.fixture(scope="module")
def sources(corpus) -> list[str]:
    return (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:32]


@pytest.fixture(scope="module")
def package(model_dir, tmp_path_factory) -> Path:
    """The tiny model exported with int8 graphs, through the CLI."""
    out = tmp_path_factory.mktemp("export") / "package"
    status = main(["export", str(model_dir), "-o", str(out), "--int8"])
    assert status == 0
    return out


@pytest.fixture(scope="module")
def fp32_only(model_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "fp32"
    assert main(["export", str(model_dir), "-o", str(out)]) == 0
    return out


def broken_copy(package: Path, folder: Path) -> Path:
    copy = folder / "package"
    shutil.copytree(package, copy)
    return copy


def test_export_writes_a_package_that_reports_its_check(model_dir, tmp_path, capsys):
    status, _, err = run_cli(capsys, "export", model_dir, "-o", tmp_path / "out")
    assert status == 0, err
    assert "fp32 graphs agree with PyTorch" in err
    manifest = json.loads((tmp_path / "out" / "onnx" / "manifest.json").read_text())
    assert list(manifest["graphs"]) == ["fp32"]
    assert {"config.yaml", "best.safetensors", "subwords.src.model", "subwords.tgt.model"} <= {
        p.name for p in (tmp_path / "out").iterdir()
    }


@pytest.mark.parametrize(("beam_size", "n_best"), [(1, 1), (3, 2)])
def test_a_package_translates_as_the_pytorch_model(model_dir, package, sources, beam_size, n_best):
    expected = rnnsearch.load(model_dir, device="cpu").translate(sources, beam_size=beam_size, n_best=n_best)
    translator = rnnsearch.load(package)
    assert translator.runtime == "onnx fp32"
    found = translator.translate(sources, beam_size=beam_size, n_best=n_best)
    for ours, theirs in zip(expected, found, strict=True):
        assert [t.text for t in [ours, *ours.alternatives]] == [t.text for t in [theirs, *theirs.alternatives]]
        assert theirs.score == pytest.approx(ours.score, abs=1e-4)
        np.testing.assert_allclose(theirs.alignment, ours.alignment, atol=1e-4)


def test_runtime_torch_runs_the_packages_weights_on_pytorch(model_dir, package, sources):
    translator = rnnsearch.load(package, runtime="torch", device="cpu")
    assert translator.runtime == "torch"
    expected = rnnsearch.load(model_dir, device="cpu").translate(sources, beam_size=3)
    found = translator.translate(sources, beam_size=3)
    assert [t.text for t in found] == [t.text for t in expected]
    assert [t.score for t in found] == [t.score for t in expected]


@pytest.mark.parametrize("beam_size", [1, 3])
def test_int8_graphs_translate_and_do_not_depend_on_the_batch(package, sources, beam_size):
    alone = rnnsearch.load(package, precision="int8", batch_sentences=1)
    assert alone.runtime == "onnx int8"
    together = rnnsearch.load(package, precision="int8", batch_sentences=32)
    expected = alone.translate(sources, beam_size=beam_size)
    assert [t.text for t in together.translate(sources, beam_size=beam_size)] == [t.text for t in expected]
    assert sum(bool(t.text) for t in expected) == len(sources)


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_a_package_writes_the_glossary_s_terms_and_none_of_the_avoided_words(model_dir, package, sources, precision):
    terms, avoided = {"Hund": "puppy", "Mann": "Mann"}, ["the"]
    expected = rnnsearch.load(model_dir, device="cpu").translate(sources, beam_size=2, glossary=terms, avoid=avoided)
    found = rnnsearch.load(package, precision=precision).translate(sources, beam_size=2, glossary=terms, avoid=avoided)
    for source, translation in zip(sources, found, strict=True):
        assert not translation.terms.unwritten and translation.terms.found == sum(
            term in source.split() for term in terms
        )
        assert not re.search(r"(?i)(?<!\w)the(?!\w)", translation.text), translation.text
    if precision == "fp32":
        assert [t.text for t in found] == [t.text for t in expected]


def test_translate_and_evaluate_run_a_package_from_the_cli(package, corpus, tmp_path, capsys):
    source = write_lines(tmp_path / "in.de", (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:6])
    status, out, err = run_cli(capsys, "translate", package, "-i", source, "--beam-size", "2")
    assert status == 0, err
    torch_status, torch_out, _ = run_cli(
        capsys, "translate", package, "-i", source, "--beam-size", "2", "--runtime", "torch", "--device", "cpu"
    )
    assert torch_status == 0 and out == torch_out
    status, _, err = run_cli(
        capsys, "translate", package, "-i", source, "--precision", "int8", "--alignments", tmp_path / "a.jsonl"
    )
    assert status == 0, err
    assert len(read_jsonl(tmp_path / "a.jsonl")) == 6
    status, out, err = run_cli(
        capsys, "evaluate", package, "--src", corpus / "val.de", "--ref", corpus / "val.en", "--json"
    )
    assert status == 0, err
    assert "BLEU" in json.loads(out)


def test_score_and_align_run_a_package_on_pytorch(model_dir, package, corpus, capsys):
    args = ("--src", corpus / "val.de", "--tgt", corpus / "val.en")
    assert run_cli(capsys, "score", model_dir, *args)[1] == run_cli(capsys, "score", package, *args)[1]
    with pytest.raises(UserError, match="runtime='torch'"):
        rnnsearch.load(package).score(["Ein Hund."], ["A dog."])


def test_the_server_reports_the_runtime_and_translates_with_the_graphs(model_dir, package, sources):
    translator = rnnsearch.load(package, precision="int8")
    with TestClient(create_app(translator, package, Limits())) as client:
        info = client.get("/v1/model").json()
        assert info["runtime"] == "onnx int8"
        assert info["parameters"] == rnnsearch.load(model_dir, device="cpu").parameters
        response = client.post("/v1/translate", json={"texts": sources[:3], "beam_size": 2})
        assert response.status_code == 200, response.text
        assert len(response.json()["translations"]) == 3


def test_an_ensemble_of_packages_translates_as_the_ensemble_of_models(model_dir, package, sources):
    expected = rnnsearch.load([model_dir, model_dir], device="cpu").translate(sources, beam_size=3)
    found = rnnsearch.load([package, package]).translate(sources, beam_size=3)
    assert [t.text for t in found] == [t.text for t in expected]


def test_bad_packages_and_choices_are_one_line_errors(model_dir, package, fp32_only, tmp_path, capsys):
    def fails(*args):
        return run_cli(capsys, *args)

    assert_one_line_error(*fails("translate", model_dir, "--runtime", "onnx")[::2], "is not an exported package")
    assert_one_line_error(*fails("translate", model_dir, "--precision", "int8")[::2], "export", "--int8")
    assert_one_line_error(*fails("translate", fp32_only, "--precision", "int8")[::2], "no int8 graphs")
    assert_one_line_error(*fails("translate", package, "--precision", "bf16")[::2], "--runtime torch")
    assert_one_line_error(*fails("export", model_dir, "-o", model_dir)[::2], "model directory being exported")
    assert_one_line_error(*fails("export", model_dir, "-o", package)[::2], "already holds a model")

    corrupt = broken_copy(package, tmp_path / "corrupt")
    (corrupt / "onnx" / "step.onnx").write_bytes(b"not a graph")
    assert_one_line_error(*fails("translate", corrupt)[::2], "step.onnx", "digest")

    manifest = broken_copy(package, tmp_path / "manifest")
    (manifest / "onnx" / "manifest.json").write_text("{", encoding="utf-8")
    assert_one_line_error(*fails("translate", manifest)[::2], "manifest.json", "not a readable manifest")

    missing = broken_copy(package, tmp_path / "missing")
    (missing / "onnx" / "encoder.onnx").unlink()
    assert_one_line_error(*fails("translate", missing)[::2], "encoder.onnx", "missing")

    mismatched = broken_copy(package, tmp_path / "mismatched")
    texts = ["a dog runs", "two men sit on a bench", "the girl in red"] * 20
    (mismatched / TGT_SUBWORDS).write_bytes(train_subwords(texts, "unigram", 300).model_bytes)
    assert_one_line_error(*fails("translate", mismatched)[::2], TGT_SUBWORDS, "not the subword model")
    # weights written before they recorded their subword models: the graphs' vocabulary still tells
    tensors, info = read_tensors(mismatched / BEST)
    del info["subwords"]
    write_tensors(mismatched / BEST, tensors, info)
    assert_one_line_error(*fails("translate", mismatched)[::2], "step.onnx", "do not belong together")


@pytest.mark.parametrize("damage", ["no manifest", "a file for the folder"])
def test_a_package_without_its_manifest_is_refused_not_run_on_pytorch(package, sources, tmp_path, capsys, damage):
    damaged = broken_copy(package, tmp_path)
    if damage == "no manifest":
        (damaged / "onnx" / "manifest.json").unlink()
    else:
        shutil.rmtree(damaged / "onnx")
        (damaged / "onnx").write_text("not a folder", encoding="utf-8")
    source = write_lines(tmp_path / "in.de", sources[:3])
    status, _, err = run_cli(capsys, "translate", damaged, "-i", source)
    refusal = f"{damaged / 'onnx'}: an exported package without manifest.json"
    assert_one_line_error(status, err, refusal, "--runtime torch")
    status, out, err = run_cli(capsys, "translate", damaged, "-i", source, "--runtime", "torch")
    assert status == 0, err
    assert len(out.splitlines()) == 3


def with_digests(package: Path) -> None:
    """The manifest's digests brought up to date with the graphs, as a careful vandal would."""
    path = package / "onnx" / "manifest.json"
    manifest = json.loads(path.read_text())
    for digests in manifest["graphs"].values():
        for name in digests:
            digests[name] = file_digest(package / "onnx" / name)
    path.write_text(json.dumps(manifest))


@pytest.fixture(scope="module")
def fixed_context_package(model_dir, tmp_path_factory) -> Path:
    """The package of a fixed-context model (attention: none) with random weights: graphs
    of another model, with the same vocabulary."""
    folder = tmp_path_factory.mktemp("fixed")
    trained = rnnsearch.load(model_dir, device="cpu")
    tree = load_config(model_dir / "config.yaml").model_dump(mode="json")
    tree["model"]["attention"] = "none"
    config = config_from_dict(tree)
    save_model_files(folder / "run", config, trained.src_subwords, trained.tgt_subwords)
    model = build_model(config.model, len(trained.src_subwords), len(trained.tgt_subwords))
    write_tensors(folder / "run" / BEST, model_tensors(model), {})
    assert main(["export", str(folder / "run"), "-o", str(folder / "package")]) == 0
    return folder / "package"


@pytest.fixture(scope="module")
def same_shape_package(model_dir, tmp_path_factory) -> Path:
    """The package of a model of the tiny one's config and vocabulary with other (random) weights."""
    folder = tmp_path_factory.mktemp("same-shape")
    trained = rnnsearch.load(model_dir, device="cpu")
    config = load_config(model_dir / "config.yaml")
    save_model_files(folder / "run", config, trained.src_subwords, trained.tgt_subwords)
    model = build_model(config.model, len(trained.src_subwords), len(trained.tgt_subwords))
    write_tensors(folder / "run" / BEST, model_tensors(model), {})
    assert main(["export", str(folder / "run"), "-o", str(folder / "package")]) == 0
    return folder / "package"


def test_edited_packages_are_one_line_errors(
    package, fixed_context_package, same_shape_package, sources, tmp_path, capsys
):
    source = write_lines(tmp_path / "in.de", sources[:3])

    def refused(damaged: Path, *fragments: str, options: tuple[str, ...] = ()) -> None:
        status, _, err = run_cli(capsys, "translate", damaged, "-i", source, *options)
        assert_one_line_error(status, err, *fragments)

    listed = broken_copy(package, tmp_path / "listed")
    manifest = json.loads((listed / "onnx" / "manifest.json").read_text())
    (listed / "onnx" / "manifest.json").write_text(json.dumps({**manifest, "graphs": [1, 2]}))
    refused(listed, "manifest.json", "'graphs' is not a digest for each graph")

    int8_as_fp32 = broken_copy(package, tmp_path / "int8_as_fp32")
    shutil.copyfile(int8_as_fp32 / "onnx" / "step.int8.onnx", int8_as_fp32 / "onnx" / "step.onnx")
    with_digests(int8_as_fp32)
    refused(int8_as_fp32, "step.onnx", "holds int8 weights but the manifest lists it as fp32")

    swapped = broken_copy(package, tmp_path / "swapped")
    shutil.copyfile(fixed_context_package / "onnx" / "step.onnx", swapped / "onnx" / "step.onnx")
    with_digests(swapped)
    refused(swapped, "manifest.json", "lists graphs other than those exported from", "do not belong together")
    # weights exported before they recorded their graphs: the graph's own inputs still tell
    tensors, info = read_tensors(swapped / BEST)
    del info["graphs"]
    write_tensors(swapped / BEST, tensors, info)
    refused(swapped, "step.onnx", "fixed_context", "do not belong together")

    # another model's graphs and manifest, of the same architecture and vocabulary
    other = broken_copy(package, tmp_path / "other")
    shutil.rmtree(other / "onnx")
    shutil.copytree(same_shape_package / "onnx", other / "onnx")
    refused(other, "manifest.json", "lists graphs other than those exported from")


def test_a_speech_model_is_refused_at_export(speech_model, tmp_path, capsys):
    assert_one_line_error(*run_cli(capsys, "export", speech_model, "-o", tmp_path / "out")[::2], "reads audio")


def test_a_plain_model_directory_loads_without_onnx_runtime(model_dir):
    """Telling a package from a model directory reads a file name only: a PyTorch model's
    process does not carry ONNX Runtime's memory."""
    code = (
        f"import sys, rnnsearch; rnnsearch.load({str(model_dir)!r}, device='cpu'); print('onnxruntime' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"

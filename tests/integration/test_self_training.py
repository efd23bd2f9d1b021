"""`rnnsearch self-train`: a round writes both modules' combined links for the training
pairs that carry none, keeps a corpus's own links, trains a new module for each
direction on them, and a round stopped part way resumes to the same modules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
import yaml

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.files.model_directory import ALIGNER_DIR, ALIGNER_JUMPS, ALIGNER_WEIGHTS, read_tensors
from tests.integration.conftest import write_lines
from tests.integration.test_score_align import assert_one_line_error, run_cli

MODULE = ["--set", "train.aligner_objective=prediction", "--set", "train.max_steps=3", "--set", "train.log_every=1"]
ROUND = ["--set", "train.aligner_objective=both", "--set", "train.valid_every=2", "--set", "train.log_every=1"]


def with_module(model_dir: Path, target: Path, *settings: str) -> Path:
    shutil.copytree(model_dir, target, ignore=shutil.ignore_patterns(ALIGNER_DIR, "prepared"))
    assert main(["train-aligner", str(target), *MODULE, *settings]) == 0
    return target


@pytest.fixture(scope="module")
def pair(model_dir, reverse_model_dir, corpus, tmp_path_factory) -> tuple[Path, Path]:
    """Both tiny models with modules; the de→en module, with the NULL option, learnt from
    its corpus with links on every third pair (each word to the word at its position),
    none on the others; the en→de module has no NULL option."""
    folder = tmp_path_factory.mktemp("self-training")
    sources = (corpus / "train.de").read_text().splitlines()
    targets = (corpus / "train.en").read_text().splitlines()
    taught = [
        " ".join(f"{j}-{j}" for j in range(min(len(s.split()), len(t.split())))) if k % 3 == 0 else ""
        for k, (s, t) in enumerate(zip(sources, targets, strict=True))
    ]
    links = write_lines(folder / "taught.links", taught)
    forward = with_module(model_dir, folder / "de-en", "--set", f"data.train.alignments={links}")
    return forward, with_module(reverse_model_dir, folder / "en-de", "--set", "model.aligner_null=false")


def copied(pair: tuple[Path, Path], folder: Path) -> tuple[Path, Path]:
    return tuple(Path(shutil.copytree(model, folder / model.name)) for model in pair)  # type: ignore[return-value]


def weights(path: Path) -> dict[str, torch.Tensor]:
    return read_tensors(path)[0]


def assert_same(first: dict[str, torch.Tensor], second: dict[str, torch.Tensor]) -> None:
    assert first.keys() == second.keys()
    for name in first:
        torch.testing.assert_close(second[name], first[name], rtol=0, atol=0)


def test_a_round_writes_the_modules_links_where_a_pair_has_none_and_installs_its_modules(pair, tmp_path):
    forward, backward = copied(pair, tmp_path)
    config = yaml.safe_load((forward / ALIGNER_DIR / "config.yaml").read_text())["data"]["train"]
    sources = Path(config["src"]).read_text().splitlines()
    targets = Path(config["tgt"]).read_text().splitlines()
    taught = Path(config["alignments"]).read_text().splitlines()
    translator, reverse = rnnsearch.load(forward, device="cpu"), rnnsearch.load(backward, device="cpu")
    combined = translator.align(sources, targets, reverse=reverse, alignment_from="aligner")
    started = {model: weights(model / ALIGNER_DIR / ALIGNER_WEIGHTS) for model in (forward, backward)}

    apart = [
        "--set",
        "train.max_steps=2",
        "--set",
        "train.aligner_agreement_weight=0",
    ]  # each module in a run of its own
    arguments = ["self-train", str(forward), "--reverse", str(backward), *ROUND, *apart]
    assert main(arguments) == 0

    links = (forward / "self-training" / "round-1" / "corpus-0.links").read_text().splitlines()
    assert len(links) == len(sources)
    for k, line in enumerate(links):
        assert line == (taught[k] if taught[k] else combined[k].pharaoh())
    assert any(line for k, line in enumerate(links) if not taught[k])  # the modules' links, not empty lines
    reversed_links = (backward / "self-training" / "round-1" / "corpus-0.links").read_text().splitlines()
    assert reversed_links == [
        " ".join(f"{t}-{s}" for t, s in sorted((int(t), int(s)) for s, t in (x.split("-") for x in line.split())))
        for line in links
    ]
    for model in (forward, backward):  # both new modules keep the de→en module's NULL option
        installed, info = read_tensors(model / ALIGNER_DIR / ALIGNER_WEIGHTS)
        assert info["null"] and "aligner.null_word" in installed
        assert_same(installed, weights(model / "self-training" / "round-1" / ALIGNER_DIR / ALIGNER_WEIGHTS))
        assert_same(started[model], weights(model / "self-training" / "round-0.safetensors"))
        assert any(not torch.equal(installed[name], started[model][name]) for name in started[model])
        counted = model / "self-training" / "round-1" / ALIGNER_DIR / ALIGNER_JUMPS  # the round's own table
        assert (model / ALIGNER_DIR / ALIGNER_JUMPS).read_bytes() == counted.read_bytes()
        assert rnnsearch.load(model, device="cpu").module_jumps() is not None


def test_a_round_stopped_part_way_resumes_to_the_uninterrupted_modules(pair, tmp_path):
    """Both directions trained together, agreeing: the state a kill leaves after the
    joint run's checkpoint at step 2 of 4 (links written, both modules of step 2 in their
    round folders, the resume point in the model's, nothing marked finished or installed).
    The round's links are read with the starting modules' counted tables. The modules'
    gradients are clipped at every step: a norm summed in an order of the memory's
    choosing once made two uninterrupted runs on these links differ in their last bits."""
    agreeing = [*ROUND, "--set", "train.aligner_agreement_weight=1"]
    whole = copied(pair, tmp_path / "whole")
    stopped = copied(pair, tmp_path / "stopped")
    assert main(["self-train", str(whole[0]), "--reverse", str(whole[1]), *agreeing, "--set", "train.max_steps=4"]) == 0

    forward, backward = stopped
    short = ["--reverse", str(backward), *agreeing, "--set", "train.max_steps=2"]
    assert main(["self-train", str(forward), *short]) == 0
    for model, original in zip(stopped, pair, strict=True):
        (model / "self-training" / "round-1" / ALIGNER_DIR / "finished").unlink()
        shutil.copyfile(model / "self-training" / "round-0.safetensors", model / ALIGNER_DIR / ALIGNER_WEIGHTS)
        shutil.copyfile(original / ALIGNER_DIR / ALIGNER_JUMPS, model / ALIGNER_DIR / ALIGNER_JUMPS)
    links = forward / "self-training" / "round-1" / "corpus-0.links"
    aligned = links.read_bytes()
    links.unlink()  # the forward file alone deleted: it used to be left missing

    resumed = ["--reverse", str(backward), *agreeing, "--set", "train.max_steps=4", "--resume"]
    assert main(["self-train", str(forward), *resumed]) == 0
    assert links.read_bytes() == aligned
    for done, again in zip(whole, (forward, backward), strict=True):
        assert_same(weights(done / ALIGNER_DIR / ALIGNER_WEIGHTS), weights(again / ALIGNER_DIR / ALIGNER_WEIGHTS))
    assert not (backward / "self-training" / "round-1" / ALIGNER_DIR / "last.safetensors").exists()  # one run, both


def test_self_train_refuses_what_it_cannot_start_from_in_one_line(pair, model_dir, tmp_path, capsys):
    forward, backward = copied(pair, tmp_path)
    status, _, err = run_cli(capsys, "self-train", forward, "--reverse", model_dir)
    assert_one_line_error(status, err, str(model_dir), "no alignment module", "train-aligner")
    status, _, err = run_cli(capsys, "self-train", forward, "--reverse", backward, "--set", "data.train.src=x")
    assert_one_line_error(status, err, "data.train.src", "its own links")
    same = Path(shutil.copytree(forward, tmp_path / "same-direction"))
    status, _, err = run_cli(capsys, "self-train", forward, "--reverse", same)
    assert_one_line_error(status, err, "--reverse", "translates de→en")
    (forward / "self-training").mkdir()
    status, _, err = run_cli(capsys, "self-train", forward, "--reverse", backward)
    assert_one_line_error(status, err, "already holds self-training rounds", "--resume")


def test_self_train_checks_its_settings_before_it_writes_anything(pair, tmp_path, capsys):
    """A --set that a round's run refuses was found only after a whole round was aligned,
    and the self-training/ it left then refused the same command without --resume."""
    forward, backward = copied(pair, tmp_path)
    for assignment, said in (
        ("model.embedding_size=8", "not a key a train-aligner run takes"),
        ("train.seed=-1", "train.seed"),
    ):
        status, _, err = run_cli(capsys, "self-train", forward, "--reverse", backward, "--set", assignment)
        assert_one_line_error(status, err, said)
        assert "aligning" not in err
        assert not (forward / "self-training").exists() and not (backward / "self-training").exists()


def test_resuming_fewer_rounds_than_were_run_is_refused_and_keeps_the_last_rounds_modules(pair, tmp_path, capsys):
    """`--rounds 1 --resume` after two rounds put round 1's modules back and called them the last round's."""
    forward, backward = copied(pair, tmp_path)
    (forward / "self-training" / "round-2").mkdir(parents=True)  # as two rounds leave it
    (backward / "self-training").mkdir()
    installed = (forward / ALIGNER_DIR / ALIGNER_WEIGHTS).read_bytes()
    status, _, err = run_cli(capsys, "self-train", forward, "--reverse", backward, "--rounds", 1, "--resume")
    assert_one_line_error(status, err, "holds 2 rounds", "--rounds 2 or more")
    assert (forward / ALIGNER_DIR / ALIGNER_WEIGHTS).read_bytes() == installed

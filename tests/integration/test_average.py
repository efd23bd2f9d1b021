"""Kept checkpoints (train.keep_checkpoints) and their average (`rnnsearch average`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.files.model_directory import (
    load_model_files,
    load_weights,
    read_tensors,
    source_and_target_sizes,
    write_tensors,
)
from rnnsearch.model.seq2seq import build_model
from rnnsearch.training.averaging import average_checkpoints
from tests.integration.conftest import tiny_config, write_config

TEMPORARY = ".step0000004.safetensors.0123abcd.rnnsearch-tmp"


def kept_names(model_dir: Path) -> list[str]:
    return sorted(path.name for path in (model_dir / "checkpoints").iterdir())


def train(corpus: Path, folder: Path, *extra: str, **options) -> Path:
    """Train the tiny model into folder/run with these train options; its directory."""
    config = write_config(folder / "config.yaml", tiny_config(corpus, folder / "run", **options))
    assert main(["train", str(config), *extra]) == 0
    return folder / "run"


@pytest.fixture(scope="module")
def kept_run(corpus, tmp_path_factory) -> Path:
    """A tiny run validated every 2 steps to step 8, keeping the last 2 checkpoints."""
    return train(corpus, tmp_path_factory.mktemp("kept"), keep_checkpoints=2, valid_every=2, max_steps=8)


def step_path(model_dir: Path, step: int) -> Path:
    return model_dir / "checkpoints" / f"step{step:07d}.safetensors"


def test_training_keeps_the_last_checkpoints_whole_and_loadable(kept_run):
    assert kept_names(kept_run) == ["step0000006.safetensors", "step0000008.safetensors"]
    config, src_subwords, tgt_subwords = load_model_files(kept_run)
    for step in (6, 8):
        model = build_model(config.model, *source_and_target_sizes(config, src_subwords, tgt_subwords))
        info = load_weights(model, step_path(kept_run, step))
        assert info["step"] == step and "valid_loss" in info
        assert all(name.startswith("model.") for name in read_tensors(step_path(kept_run, step))[0])
    assert not [path for path in kept_run.rglob("*") if "rnnsearch-tmp" in path.name]


def test_a_resumed_run_counts_the_checkpoints_in_the_folder(corpus, tmp_path):
    """The folder is the record: a temporary left by a kill goes, and so does a checkpoint
    after the resume point, which the resumed run does not reproduce."""
    run = train(corpus, tmp_path, keep_checkpoints=3, valid_every=2, max_steps=4)
    assert kept_names(run) == ["step0000002.safetensors", "step0000004.safetensors"]
    (run / "checkpoints" / TEMPORARY).mkdir()
    shutil.copy(step_path(run, 4), step_path(run, 7))
    train(corpus, tmp_path, "--resume", keep_checkpoints=3, valid_every=2, max_steps=8)
    assert kept_names(run) == [f"step{step:07d}.safetensors" for step in (4, 6, 8)]


def test_the_average_of_identical_checkpoints_is_the_checkpoint(kept_run):
    path = step_path(kept_run, 8)
    weights = read_tensors(path)[0]
    for paths in ([path], [path, path, path]):
        averaged = average_checkpoints(paths)
        assert averaged.keys() == weights.keys()
        assert all(torch.equal(averaged[name], weights[name]) for name in weights)


def test_the_average_of_two_checkpoints_is_their_mean_and_translates(kept_run, tmp_path, capsys):
    out = tmp_path / "averaged"
    assert main(["average", str(kept_run), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == (
        f"averaged 2 checkpoints of {kept_run} (steps 6, 8) into {out / 'best.safetensors'}"
    )
    averaged, info = read_tensors(out / "best.safetensors")
    assert info["averaged_steps"] == [6, 8]
    six, eight = read_tensors(step_path(kept_run, 6))[0], read_tensors(step_path(kept_run, 8))[0]
    assert averaged.keys() == six.keys()
    for name, tensor in averaged.items():
        assert tensor.dtype == six[name].dtype
        assert torch.equal(tensor, ((six[name].double() + eight[name].double()) / 2).to(tensor.dtype))
    assert any(not torch.equal(averaged[n], six[n]) for n in six)
    assert any(not torch.equal(averaged[n], eight[n]) for n in eight)
    translations = rnnsearch.load(out).translate(["Ein Hund läuft im Schnee.", "Zwei Männer."], beam_size=2)
    assert [type(t.text) for t in translations] == [str, str]


def test_averaging_the_last_one_copies_its_weights(kept_run, tmp_path, capsys):
    out = tmp_path / "last"
    assert main(["average", str(kept_run), "-n", "1", "-o", str(out)]) == 0
    assert "(step 8)" in capsys.readouterr().out
    averaged, eight = read_tensors(out / "best.safetensors")[0], read_tensors(step_path(kept_run, 8))[0]
    assert averaged.keys() == eight.keys() and all(torch.equal(averaged[n], eight[n]) for n in eight)


def copy_run(kept_run: Path, folder: Path, checkpoints: bool = True) -> Path:
    """A copy of the kept run's directory, with or without its checkpoints/."""
    ignored = shutil.ignore_patterns("prepared", "alignments", *([] if checkpoints else ["checkpoints"]))
    return Path(shutil.copytree(kept_run, folder / "copy", ignore=ignored))


def no_checkpoints(run: Path) -> list[str]:
    shutil.rmtree(run / "checkpoints")
    return [str(run), "-o", str(run.parent / "out")]


def empty_checkpoints(run: Path) -> list[str]:
    for path in (run / "checkpoints").iterdir():
        path.unlink()
    return [str(run), "-o", str(run.parent / "out")]


def mismatched_checkpoint(run: Path) -> list[str]:
    tensors, info = read_tensors(step_path(run, 8))
    name = sorted(tensors)[0]
    tensors[name] = tensors[name].flatten().repeat(2)
    write_tensors(step_path(run, 8), tensors, info)
    return [str(run), "-o", str(run.parent / "out")]


def occupied_output(run: Path) -> list[str]:
    (run.parent / "out").mkdir()
    shutil.copy(run / "config.yaml", run.parent / "out" / "config.yaml")
    return [str(run), "-o", str(run.parent / "out")]


@pytest.mark.parametrize(
    ("arrange", "fragments"),
    [
        (no_checkpoints, ["copy: no kept checkpoints (train with train.keep_checkpoints: N)"]),
        (empty_checkpoints, ["copy: no kept checkpoints (train with train.keep_checkpoints: N)"]),
        (lambda run: [str(run), "-n", "3", "-o", str(run.parent / "out")], ["-n 3:", "copy keeps only 2"]),
        (lambda run: [str(run), "-n", "0", "-o", str(run.parent / "out")], ["-n 0: average at least 1"]),
        (lambda run: [str(run), "-o", str(run)], ["copy: is the model directory being averaged"]),
        (occupied_output, ["out: already holds a model"]),
        (mismatched_checkpoint, ["step0000008.safetensors: tensor names or shapes differ from", "step0000006"]),
    ],
    ids=["no-folder", "none-kept", "n-too-large", "n-zero", "same-directory", "occupied-output", "mismatched"],
)
def test_average_refuses_with_one_line(kept_run, tmp_path, capsys, arrange, fragments):
    run = copy_run(kept_run, tmp_path)
    best_before = (run / "best.safetensors").read_bytes()
    assert main(["average", *arrange(run)]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("rnnsearch: error: "), err
    assert all(fragment in err for fragment in fragments), err
    assert not (tmp_path / "out" / "best.safetensors").exists()
    assert (run / "best.safetensors").read_bytes() == best_before

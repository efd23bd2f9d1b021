"""train.tensorboard: event files that TensorBoard's own reader reads, with every curve
and heatmap at the steps that were logged, once each, across a kill and a resume."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from rnnsearch.cli import main
from tests.integration.conftest import tiny_config, write_config

CURVES = {
    "train/loss",
    "train/perplexity",
    "train/learning_rate",
    "train/target_tokens_per_second",
    "train/epoch",
    "valid/loss",
    "valid/perplexity",
    "valid/bleu",
}


def read_events(model_dir: Path) -> EventAccumulator:
    events = EventAccumulator(str(model_dir / "tensorboard"), size_guidance={"scalars": 0, "images": 0})
    return events.Reload()


def steps(events: EventAccumulator, tag: str) -> list[int]:
    return [event.step for event in events.Scalars(tag)]


def train(config: Path, *options: str) -> None:
    assert main(["train", str(config), *options]) == 0


@pytest.fixture(scope="module")
def run(corpus, tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tensorboard")
    options = {"max_steps": 2, "valid_every": 2, "valid_heatmaps": 1, "tensorboard": True}
    config = write_config(folder / "c.yaml", tiny_config(corpus, folder / "run", **options))
    train(config)
    return config, folder / "run"


def test_a_run_writes_every_curve_and_heatmap_at_the_steps_it_logged(run):
    _, model_dir = run
    events = read_events(model_dir)
    assert set(events.Tags()["scalars"]) == CURVES
    assert steps(events, "train/loss") == [1, 2]
    assert steps(events, "valid/bleu") == [2]
    rows = [json.loads(line) for line in (model_dir / "metrics.jsonl").read_text().splitlines()]
    assert [e.value for e in events.Scalars("train/loss")] == pytest.approx([r["train_loss"] for r in rows[:2]])
    assert [e.value for e in events.Scalars("valid/perplexity")] == pytest.approx([rows[2]["valid_ppl"]])
    assert events.Tags()["images"] == ["alignment/1"]
    (image,) = events.Images("alignment/1")
    assert image.step == 2 and image.width > 100 and image.height > 100


def test_a_resumed_run_continues_the_curves_without_repeating_the_steps_a_killed_run_logged(run, tmp_path):
    config, model_dir = run
    shutil.copytree(model_dir, tmp_path / "run")
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings["train"]["model_dir"] = str(tmp_path / "run")
    config = write_config(tmp_path / "c.yaml", settings)
    resume_point = (tmp_path / "run" / "last.safetensors").read_bytes()
    train(config, "--resume", "--set", "train.max_steps=4")
    # A kill after steps 3 and 4 were logged, before their checkpoint: the resume point is step 2's.
    (tmp_path / "run" / "last.safetensors").write_bytes(resume_point)
    train(config, "--resume", "--set", "train.max_steps=4")
    events = read_events(tmp_path / "run")
    assert steps(events, "train/loss") == [1, 2, 3, 4]
    assert steps(events, "valid/bleu") == [2, 4]
    assert [image.step for image in events.Images("alignment/1")] == [2, 4]


def test_without_the_tensorboard_package_the_run_stops_with_one_line_naming_the_key(
    corpus, tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # as if the package were not installed
    options = {"max_steps": 2, "valid_every": 2, "tensorboard": True}
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run", **options))
    assert main(["train", str(config)]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("rnnsearch: error:")]
    assert errors == [
        "rnnsearch: error: train.tensorboard: the tensorboard package is not installed; "
        "pip install 'rnnsearch[tensorboard]', or set train.tensorboard: false"
    ]
    assert not (tmp_path / "run" / "tensorboard").exists()

"""A 300-sentence Multi30k subset and a tiny model trained on it through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rnnsearch.cli import main
from rnnsearch.text.corpus import read_lines

DATA = Path(__file__).resolve().parents[2] / "data" / "multi30k"


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    for split, count in (("train", 300), ("val", 40)):
        for lang in ("de", "en"):
            write_lines(folder / f"{split}.{lang}", read_lines(DATA / f"{split}.{lang}.gz")[:count])
    return folder


def tiny_config(corpus: Path, model_dir: Path, **train) -> dict:
    return {
        "data": {
            "train": {"src": str(corpus / "train.de"), "tgt": str(corpus / "train.en")},
            "valid": {"src": str(corpus / "val.de"), "tgt": str(corpus / "val.en")},
            "max_length": 100,
        },
        "subwords": {"kind": "unigram", "vocab_size": 400, "joint": True},
        "model": {
            "embedding_size": 16,
            "encoder": {"hidden_size": 16},
            "attention": {"size": 16},
            "decoder": {"hidden_size": 32, "readout_size": 16},
            "dropout": 0.1,
        },
        "train": {
            "model_dir": str(model_dir),
            "batch_tokens": 400,
            "max_steps": 20,
            "valid_every": 10,
            "log_every": 1,
            "learning_rate": 0.003,
            "warmup_steps": 5,
            **train,
        },
        "search": {"beam_size": 3, "batch_sentences": 16},
    }


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def model_dir(corpus, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("model")
    config = write_config(folder / "config.yaml", tiny_config(corpus, folder / "run"))
    assert main(["train", str(config)]) == 0
    return folder / "run"

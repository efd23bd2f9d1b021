"""The speech model learns: a small model on a few hundred real spoken digit strings."""

from __future__ import annotations

import json

import pytest

from rnnsearch.cli import main
from tests.integration.conftest import SPEECH_CONFIG

pytestmark = pytest.mark.learning

CHANCE_DER = 90.0  # guessing one of ten digits per digit is wrong nine times in ten


def test_a_small_model_beats_chance_clearly_on_spoken_digits(tmp_path):
    overrides = {
        "train.model_dir": tmp_path / "run",
        "data.cache_dir": tmp_path / "cache",
        "data.train_utterances": 400,
        "data.valid_utterances": 40,
        "data.max_digits": 2,
        "model.embedding_size": 32,
        "model.encoder.hidden_size": 64,
        "model.encoder.layers": 1,
        "model.attention.size": 64,
        "model.decoder.hidden_size": 64,
        "model.decoder.readout_size": 32,
        "train.batch_tokens": 1500,
        "train.learning_rate": 0.003,
        "train.warmup_steps": 30,
        "train.max_steps": 250,
        "train.valid_every": 250,
    }
    assert main(["train", str(SPEECH_CONFIG), *[a for k, v in overrides.items() for a in ("--set", f"{k}={v}")]]) == 0
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    final = [r for r in rows if "valid_der" in r][-1]
    assert final["valid_der"] < CHANCE_DER - 30, final
    assert final["valid_accuracy"] > 30, final

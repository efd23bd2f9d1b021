"""A 300-sentence Multi30k subset and a tiny model trained on it through the CLI, and a tiny
spoken-digits model with a helper that writes WAV files."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest
import yaml

from rnnsearch.cli import main
from rnnsearch.text.corpus import read_lines

DATA = Path(__file__).resolve().parents[2] / "data" / "multi30k"
SPEECH_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "fsdd_digits.yaml"


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
            # An untrained model's translations run to their length limit, and drawing
            # their alignments took longer than the training; the model_dir fixture draws them.
            "valid_heatmaps": 0,
            **train,
        },
        "search": {"beam_size": 3, "batch_sentences": 16},
    }


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """The command run by `main` in the test's process: its exit status, standard output and error."""
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def model_dir(corpus, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("model")
    config = write_config(folder / "config.yaml", tiny_config(corpus, folder / "run", valid_heatmaps=3))
    assert main(["train", str(config)]) == 0
    return folder / "run"


def wav_bytes(samples: np.ndarray, rate: int = 8000) -> bytes:
    """A 16-bit mono PCM WAV file of float samples in [-1, 1]."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return buffer.getvalue()


def write_wav(path: Path, samples: np.ndarray, rate: int = 8000) -> Path:
    path.write_bytes(wav_bytes(samples, rate))
    return path


@pytest.fixture(scope="session")
def speech_model(tmp_path_factory) -> Path:
    """A tiny spoken-digits model, trained for a few steps on 120 utterances of up to 3 digits."""
    folder = tmp_path_factory.mktemp("speech")
    overrides = [
        f"train.model_dir={folder / 'run'}",
        f"data.cache_dir={folder / 'cache'}",
        "data.train_utterances=120",
        "data.valid_utterances=6",
        "data.test_utterances=8",
        "data.max_digits=3",
        "model.embedding_size=16",
        "model.encoder.hidden_size=16",
        "model.attention.size=16",
        "model.decoder.hidden_size=32",
        "model.decoder.readout_size=16",
        "train.max_steps=6",
        "train.valid_every=3",
        "train.log_every=3",
    ]
    assert main(["train", str(SPEECH_CONFIG), *[a for o in overrides for a in ("--set", o)]]) == 0
    return folder / "run"


@pytest.fixture(scope="session")
def reverse_model_dir(corpus, tmp_path_factory) -> Path:
    """The tiny model's config trained the other way round, English to German: a reverse
    model for --reverse."""
    folder = tmp_path_factory.mktemp("reverse")
    config = tiny_config(corpus, folder / "run")
    config["data"] |= {
        "train": {"src": str(corpus / "train.en"), "tgt": str(corpus / "train.de")},
        "valid": {"src": str(corpus / "val.en"), "tgt": str(corpus / "val.de")},
        "src_lang": "en",
        "tgt_lang": "de",
    }
    assert main(["train", str(write_config(folder / "config.yaml", config))]) == 0
    return folder / "run"

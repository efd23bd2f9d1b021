"""Every file rnnsearch reads back, damaged at random: bytes flipped in it, or cut short.
Reading it gives one of two things: a one-line error that names the file, or exactly
what the intact file gives. Never a traceback, never a silently different model.

Left out: what a damaged file is not read for (a package's own weights, which only
size and label its graphs, and record the files they belong with)."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.config import config_from_dict
from rnnsearch.errors import UserError
from rnnsearch.prepared import PreparedPairs, ensure_prepared
from tests.integration.conftest import tiny_config

DAMAGES_PER_FILE = 6  # three with bytes flipped, three cut short, from fixed seeds


def damaged_copies(intact: Path, name: str, folder: Path):
    """Copies of the directory `intact`, each with file `name` damaged in its own way."""
    data = (intact / name).read_bytes()
    for seed in range(DAMAGES_PER_FILE):
        rng = random.Random(f"{name}:{seed}")
        copy = folder / f"{Path(name).name}-{seed}"
        shutil.copytree(intact, copy)
        if seed % 2:
            damaged = data[: rng.randrange(len(data))]
        else:
            damaged = bytearray(data)
            for position in rng.sample(range(len(data)), k=min(len(data), 1 + seed)):
                damaged[position] ^= 1 << rng.randrange(8)
        (copy / name).write_bytes(bytes(damaged))
        yield copy


def read_back(read: Callable[[Path], object], intact: Path, name: str, folder: Path) -> None:
    """Every damaged copy is refused in one line naming `name`, or reads as `intact` does."""
    expected = read(intact)
    for copy in damaged_copies(intact, name, folder):
        try:
            result = read(copy)
        except UserError as error:
            message = str(error)
            assert "\n" not in message, message
            assert Path(name).name in message, (name, message)
            continue
        assert result == expected, f"{copy / name}: read as something else without a word"


@pytest.fixture(scope="module")
def sources(corpus) -> list[str]:
    return (corpus / "val.de").read_text(encoding="utf-8").splitlines()[:4]


@pytest.fixture(scope="module")
def package(model_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("damaged-package") / "package"
    assert main(["export", str(model_dir), "-o", str(out)]) == 0
    return out


def translations(sources: list[str]) -> Callable[[Path], list[str]]:
    def read(directory: Path) -> list[str]:
        return [t.text for t in rnnsearch.load(directory, device="cpu").translate(sources, beam_size=2)]

    return read


@pytest.mark.parametrize("name", ["config.yaml", "best.safetensors", "subwords.src.model", "subwords.tgt.model"])
def test_a_damaged_model_directory_file_is_named_or_harmless(model_dir, sources, tmp_path, name):
    kept = tmp_path / "intact"
    shutil.copytree(model_dir, kept, ignore=shutil.ignore_patterns("prepared", "alignments", "*.png"))
    read_back(translations(sources), kept, name, tmp_path)


@pytest.mark.parametrize(
    "name", ["onnx/encoder.onnx", "onnx/step.onnx", "onnx/manifest.json", "config.yaml", "subwords.tgt.model"]
)
def test_a_damaged_package_file_is_named_or_harmless(package, sources, tmp_path, name):
    read_back(translations(sources), package, name, tmp_path)


@pytest.fixture(scope="module")
def prepared_data(corpus, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("damaged-prepared") / "prepared"
    tree = tiny_config(corpus, directory.parent / "run")
    tree["data"]["prepared"] = str(directory)
    ensure_prepared(config_from_dict(tree), directory)
    return directory


def pairs(directory: Path) -> list[tuple[list[int], list[int]]]:
    data = PreparedPairs(directory)
    return [(np.asarray(s).tolist(), np.asarray(t).tolist()) for s, t in (data[i] for i in range(len(data)))]


@pytest.mark.parametrize(
    "name",
    [
        "manifest.json",
        "source.tokens",
        "source.offsets",
        "source.lengths",
        "target.tokens",
        "target.offsets",
        "target.lengths",
        "subwords.src.model",
        "subwords.tgt.model",
    ],
)
def test_a_damaged_prepared_file_is_named_or_harmless(prepared_data, tmp_path, name):
    read_back(pairs, prepared_data, name, tmp_path)

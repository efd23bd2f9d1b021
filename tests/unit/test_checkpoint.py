"""Tests for rnnsearch.training.checkpoint: safetensors files, atomic writes, weight checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import save_file

from rnnsearch.errors import UserError
from rnnsearch.training.checkpoint import (
    assign_weights,
    atomic_write,
    load_weights,
    model_tensors,
    read_tensors,
    write_tensors,
)
from tests.conftest import tiny_model

INFO: dict[str, Any] = {"step": 1200, "epoch": 3, "best": {"bleu": 21.5, "loss": None}, "tags": ["a", "ü"]}


def sample_tensors() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return {
        "model.weight": torch.randn(5, 3, generator=generator),
        "model.bias": torch.randn(5, generator=generator),
        "optimizer.0.step": torch.tensor(7.0),
        "rng.cpu": torch.randint(0, 255, (16,), dtype=torch.uint8, generator=generator),
        "position": torch.arange(4, dtype=torch.long),
    }


def written_checkpoint(directory: Path) -> Path:
    path = directory / "last.safetensors"
    write_tensors(path, sample_tensors(), INFO)
    return path


def message_of(excinfo: pytest.ExceptionInfo[UserError]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def entries(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_tensors_and_info_round_trip(tmp_path: Path) -> None:
    path = written_checkpoint(tmp_path)
    tensors, info = read_tensors(path)
    expected = sample_tensors()
    assert set(tensors) == set(expected)
    for name, tensor in expected.items():
        assert tensors[name].dtype == tensor.dtype
        assert torch.equal(tensors[name], tensor)
    assert info == INFO


def test_non_contiguous_tensor_round_trips(tmp_path: Path) -> None:
    transposed = torch.arange(12.0).reshape(3, 4).t()
    path = tmp_path / "t.safetensors"
    write_tensors(path, {"x": transposed}, {})
    tensors, info = read_tensors(path)
    assert torch.equal(tensors["x"], transposed)
    assert info == {}


def test_truncated_checkpoint(tmp_path: Path) -> None:
    path = written_checkpoint(tmp_path)
    data = path.read_bytes()
    for keep in (len(data) - 8, len(data) // 2, 12, 4, 0):
        path.write_bytes(data[:keep])
        with pytest.raises(UserError) as excinfo:
            read_tensors(path)
        assert str(path) in message_of(excinfo)


def test_garbage_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "best.safetensors"
    path.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(UserError) as excinfo:
        read_tensors(path)
    assert str(path) in message_of(excinfo)


def test_missing_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "absent.safetensors"
    with pytest.raises(UserError) as excinfo:
        read_tensors(path)
    assert str(path) in message_of(excinfo)


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    atomic_write(path, b"first")
    atomic_write(path, b"second version")
    assert path.read_bytes() == b"second version"
    assert entries(tmp_path) == ["config.yaml"]


def test_failed_atomic_write_keeps_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "last.safetensors"
    atomic_write(path, b"previous complete content")
    with pytest.raises(TypeError):
        atomic_write(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_bytes() == b"previous complete content"
    assert entries(tmp_path) == ["last.safetensors"]


def test_failed_first_atomic_write_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        atomic_write(tmp_path / "new.bin", 12345)  # type: ignore[arg-type]
    assert entries(tmp_path) == []


def test_write_tensors_leaves_no_temporary(tmp_path: Path) -> None:
    written_checkpoint(tmp_path)
    written_checkpoint(tmp_path)
    assert entries(tmp_path) == ["last.safetensors"]


def linear(seed: int = 0) -> torch.nn.Linear:
    torch.manual_seed(seed)
    return torch.nn.Linear(3, 5)


def test_assign_weights_copies_matching_tensors(tmp_path: Path) -> None:
    model = linear(seed=1)
    tensors = sample_tensors()
    assign_weights(model, tensors, tmp_path / "w")
    assert torch.equal(model.weight.detach(), tensors["model.weight"])
    assert torch.equal(model.bias.detach(), tensors["model.bias"])


def test_model_weights_round_trip_through_file(tmp_path: Path) -> None:
    source, target = linear(seed=1), linear(seed=2)
    path = tmp_path / "best.safetensors"
    write_tensors(path, model_tensors(source), {"step": 5})
    assert load_weights(target, path) == {"step": 5}
    for name, value in source.state_dict().items():
        assert torch.equal(target.state_dict()[name], value)


def test_tied_weights_are_stored_once_and_stay_tied_after_loading(tmp_path: Path) -> None:
    source, target = (
        tiny_model(seed=1, decoder={"tied_embeddings": True}),
        tiny_model(seed=2, decoder={"tied_embeddings": True}),
    )
    path = tmp_path / "best.safetensors"
    write_tensors(path, model_tensors(source), {})
    stored, _ = read_tensors(path)
    assert ("model.decoder.embedding.weight" in stored) != ("model.decoder.output_layer.weight" in stored)
    load_weights(target, path)
    assert target.decoder.output_layer.weight is target.decoder.embedding.weight
    for name, value in source.state_dict().items():
        assert torch.equal(target.state_dict()[name], value), name


@pytest.mark.parametrize(
    "change",
    [
        {"model.weight": torch.zeros(5, 4)},
        {"model.bias": torch.zeros(6)},
        {"model.weight": torch.zeros(3, 5)},
    ],
)
def test_assign_weights_rejects_wrong_shape(tmp_path: Path, change: dict[str, torch.Tensor]) -> None:
    model = linear()
    before = {name: t.clone() for name, t in model.state_dict().items()}
    path = tmp_path / "best.safetensors"
    with pytest.raises(UserError) as excinfo:
        assign_weights(model, sample_tensors() | change, path)
    assert str(path) in message_of(excinfo)
    for name, value in model.state_dict().items():
        assert torch.equal(value, before[name])


def test_assign_weights_rejects_missing_or_extra_tensors(tmp_path: Path) -> None:
    model = linear()
    tensors = sample_tensors()
    missing = {k: v for k, v in tensors.items() if k != "model.bias"}
    extra = tensors | {"model.extra": torch.zeros(2)}
    for bad in (missing, extra):
        with pytest.raises(UserError) as excinfo:
            assign_weights(model, bad, tmp_path / "w")
        message_of(excinfo)


def test_unreadable_info_metadata(tmp_path: Path) -> None:
    path = tmp_path / "last.safetensors"
    save_file({"x": torch.zeros(2)}, str(path), metadata={"info": "{not json"})
    with pytest.raises(UserError) as excinfo:
        read_tensors(path)
    assert str(path) in message_of(excinfo)


def test_a_failed_tensor_write_keeps_the_previous_checkpoint_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "last.safetensors"
    write_tensors(path, {"weight": torch.arange(6.0)}, {"step": 1})
    shared = torch.ones(4)
    with pytest.raises(RuntimeError):
        write_tensors(path, {"a": shared, "b": shared}, {"step": 2})  # safetensors refuses aliases
    tensors, info = read_tensors(path)
    assert torch.equal(tensors["weight"], torch.arange(6.0)) and info == {"step": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["last.safetensors"]

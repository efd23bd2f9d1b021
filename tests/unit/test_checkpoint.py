"""Tests for rnnsearch.training.checkpoint: safetensors files, atomic writes, weight checks."""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import save_file

from rnnsearch.errors import UserError
from rnnsearch.files.atomic import atomic_write
from rnnsearch.files.metrics_log import read_metrics
from rnnsearch.files.model_directory import assign_weights, load_weights, model_tensors, read_tensors, write_tensors
from rnnsearch.training.checkpoint import remove_temporaries
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


def run_with_file_size_limit(code: str, limit: int) -> subprocess.CompletedProcess:
    """`code` run by Python in a process whose writes past `limit` bytes of a file fail with a
    real EFBIG, as on a full disk (SIGXFSZ ignored, so the write returns the error)."""

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    command = [sys.executable, "-c", code]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, preexec_fn=limit_file_size)


WRITE_BIG_CHECKPOINT = """
import sys, torch
from pathlib import Path
from rnnsearch.errors import UserError
from rnnsearch.files.model_directory import write_tensors
try:
    write_tensors(Path("{path}"), {{"w": torch.zeros(100_000)}}, {{"step": 2}})
except UserError as error:
    print(error)
"""


def test_a_checkpoint_write_past_the_disk_space_names_the_file_and_keeps_the_previous_one(tmp_path: Path) -> None:
    path = tmp_path / "last.safetensors"
    write_tensors(path, {"w": torch.ones(10)}, {"step": 1})
    result = run_with_file_size_limit(WRITE_BIG_CHECKPOINT.format(path=path), 50_000)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == f"{path}: cannot write: File too large"
    tensors, info = read_tensors(path)
    assert torch.equal(tensors["w"], torch.ones(10)) and info == {"step": 1}
    assert entries(tmp_path) == ["last.safetensors"]


def test_an_append_past_the_disk_space_names_the_file_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n' + "x" * 980 + "\n")
    code = f"""
from pathlib import Path
from rnnsearch.errors import UserError
from rnnsearch.files.atomic import append_line
try:
    append_line(Path("{path}"), '{{"step": 2, "train_loss": 1.25}}')
except UserError as error:
    print(error)
"""
    before = path.read_bytes()
    result = run_with_file_size_limit(code, 1000)
    assert result.stdout.strip() == f"{path}: cannot write: File too large", result.stderr[-2000:]
    assert path.read_bytes() == before


def test_files_get_the_permissions_of_any_new_file(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        atomic_write(tmp_path / "config.yaml", b"a: 1\n")
        written_checkpoint(tmp_path)
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "config.yaml").stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "last.safetensors").stat().st_mode) == 0o640


def test_temporaries_left_by_a_kill_are_removed_and_nothing_else(tmp_path: Path) -> None:
    code = f"""
import os, signal, torch
from pathlib import Path
from rnnsearch.files.atomic import replacing
from rnnsearch.files.model_directory import write_tensors
with replacing(Path("{tmp_path}/alignments/step0000002-1.png")) as temporary:
    temporary.write_bytes(b"half a picture")
    with replacing(Path("{tmp_path}/last.safetensors")) as inner:
        write_tensors(inner, {{"w": torch.ones(3)}}, {{}})  # safetensors' own temporary, then killed
        os.kill(os.getpid(), signal.SIGKILL)
"""
    (tmp_path / "alignments").mkdir()
    keep = ["notes.rnnsearch-tmp", ".hidden", ".last.safetensors.zzzzzzzz.rnnsearch-tmp", "last.safetensors"]
    for name in keep:
        (tmp_path / name).write_bytes(b"theirs")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL
    left = [p for p in tmp_path.rglob("*") if p.name not in keep and p.name != "alignments"]
    assert left, "the kill left no temporary: the test proves nothing"
    removed = remove_temporaries(tmp_path)
    assert sorted(p.name for p in removed) == sorted(
        p.name for p in left if p.parent in (tmp_path, tmp_path / "alignments")
    )
    assert sorted(p.name for p in tmp_path.rglob("*")) == sorted([*keep, "alignments"])
    assert all((tmp_path / name).read_bytes() == b"theirs" for name in keep)


def test_a_torn_last_metrics_row_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "train_loss": 2.5}\n{"step": 2, "train_loss": 2.25}\n{"step": 3, "tra')
    assert read_metrics(path) == [{"step": 1, "train_loss": 2.5}, {"step": 2, "train_loss": 2.25}]
    path.write_text('{"step": 1, "train_loss": 2.5}\n{"step": 2, "train_loss": 2.25}\n')
    assert read_metrics(path) == [{"step": 1, "train_loss": 2.5}, {"step": 2, "train_loss": 2.25}]


def test_a_torn_metrics_row_before_the_last_is_corruption(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1, "train_loss": 2.5}\n{"step": 2, "tra\n{"step": 3, "train_loss": 2.0}\n')
    with pytest.raises(UserError) as excinfo:
        read_metrics(path)
    assert f"{path}, line 2:" in message_of(excinfo)

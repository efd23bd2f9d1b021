"""The model directory: config, subword models, weights and training state.

    config.yaml                      the validated config the model was built from
    subwords.src.model / .tgt.model  SentencePiece models (no source model for speech)
    best.safetensors                 weights of the best validation so far
    last.safetensors                 weights + optimizer + RNG + data position: resume point
    metrics.jsonl, learning_curve.png
    alignments/step{N}-{k}.png       heatmaps of the first validation sentences, per validation
    checkpoints/step{N}.safetensors  with train.keep_checkpoints: the weights of the last
                                     validations (N: the step, 7 digits), for `rnnsearch average`
    prepared/                        the encoded training data (rnnsearch.text.prepared), unless
                                     data.prepared puts it elsewhere

Everything is safetensors, YAML or JSON: no pickle. Every file is written to a
temporary and renamed into place (rnnsearch.files), so a kill at any moment leaves the
previous complete file, never a half-written one; the temporaries a kill leaves behind
are removed when training starts again. metrics.jsonl is appended to, a row at a time;
a kill in the middle of an append can leave a torn last row, which the next read drops.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file as save_safetensors_file

from rnnsearch import files
from rnnsearch.config import Config, load_config
from rnnsearch.errors import UserError
from rnnsearch.files import atomic_write, replacing
from rnnsearch.text.subwords import Subwords

CONFIG = "config.yaml"
SRC_SUBWORDS = "subwords.src.model"
TGT_SUBWORDS = "subwords.tgt.model"
BEST = "best.safetensors"
LAST = "last.safetensors"
METRICS = "metrics.jsonl"
LEARNING_CURVE = "learning_curve.png"
ALIGNMENTS = "alignments"
KEPT = "checkpoints"
_KEPT_NAME = re.compile(r"step(\d+)\.safetensors")


def remove_temporaries(directory: Path) -> list[Path]:
    """Delete the temporaries that killed writes left in a model directory, its
    alignments/ and its checkpoints/; return them."""
    return files.remove_temporaries(directory, directory / ALIGNMENTS, directory / KEPT)


def kept_checkpoints(directory: str | Path) -> list[tuple[int, Path]]:
    """The (step, path) of the checkpoints kept in a model directory, oldest first. The
    folder itself is the record, so a resumed run goes on from what it finds there."""
    folder = Path(directory) / KEPT
    if not folder.is_dir():
        return []
    found = ((_KEPT_NAME.fullmatch(path.name), path) for path in folder.iterdir())
    return sorted((int(match.group(1)), path) for match, path in found if match and path.is_file())


def keep_checkpoint(
    directory: Path, step: int, tensors: dict[str, torch.Tensor], info: dict[str, Any], keep: int
) -> None:
    """Write checkpoints/step{step}.safetensors, then delete the oldest beyond `keep`: only
    once the new file is whole, so that a kill never leaves fewer than `keep` complete."""
    folder = directory / KEPT
    folder.mkdir(parents=True, exist_ok=True)
    write_tensors(folder / f"step{step:07d}.safetensors", tensors, info)
    for _, path in kept_checkpoints(directory)[:-keep]:
        path.unlink(missing_ok=True)


def forget_checkpoints_after(directory: Path, step: int) -> None:
    """Delete the kept checkpoints of steps after `step`: a run resumed from `step` redoes
    those steps, and what it keeps must be of its own weights."""
    for kept_step, path in kept_checkpoints(directory):
        if kept_step > step:
            path.unlink(missing_ok=True)


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The rows of a metrics log. An unreadable last line is a row torn by a kill or a
    full disk during its append, and is dropped; an unreadable line elsewhere is
    corruption, reported with its line number."""
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    if lines[-1] == "":
        lines.pop()
    rows = []
    for number, line in enumerate(lines, start=1):
        try:
            row = json.loads(line)
        except ValueError:
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("step"), int):
            if number == len(lines):
                break
            raise UserError(f"{path}, line {number}: not a metrics row (corrupt metrics log)")
        rows.append(row)
    return rows


def write_tensors(path: Path, tensors: dict[str, torch.Tensor], info: dict[str, Any]) -> None:
    """A safetensors file of `tensors`, with `info` as JSON in its metadata.

    Streamed from the tensors' own memory to the file: building the file in memory
    first would hold two extra copies of weights and optimizer state at every save
    (BENCHMARKS.md, "Where the time goes, and how close to the machine's ceiling").
    """
    tensors = {name: t.detach().cpu().contiguous() for name, t in tensors.items()}
    with replacing(path) as temporary:
        try:
            save_safetensors_file(tensors, temporary, metadata={"info": json.dumps(info)})
        except SafetensorError as error:  # a full disk, say, reported in safetensors' own words
            raise files.write_failure(path, error) from None


def read_tensors(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    if not path.is_file():
        raise UserError(f"{path}: checkpoint missing")
    try:
        with safe_open(path, framework="pt") as checkpoint:
            tensors = {name: checkpoint.get_tensor(name) for name in checkpoint.keys()}
            info = json.loads((checkpoint.metadata() or {}).get("info", "{}"))
    except (SafetensorError, OSError, ValueError):
        raise UserError(f"{path}: corrupt checkpoint (not a readable safetensors file)") from None
    return tensors, info


def _distinct_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state dict with each tensor once: a tied weight (one tensor under two names)
    is kept under its first name only, since safetensors stores no aliases."""
    seen: set[int] = set()
    distinct = {}
    for name, tensor in model.state_dict().items():
        if tensor.data_ptr() not in seen:
            seen.add(tensor.data_ptr())
            distinct[name] = tensor
    return distinct


def assign_weights(model: torch.nn.Module, tensors: dict[str, torch.Tensor], path: Path) -> None:
    """Copy the `model.*` tensors into `model`; they must match its parameters exactly."""
    weights = {name[len("model.") :]: t for name, t in tensors.items() if name.startswith("model.")}
    expected = _distinct_weights(model)
    if set(weights) != set(expected) or any(weights[n].shape != expected[n].shape for n in expected):
        raise UserError(f"{path}: weights do not match the model described by config.yaml")
    model.load_state_dict(weights, strict=False)  # the names left out are aliases of names given


def load_weights(model: torch.nn.Module, path: Path) -> dict[str, Any]:
    """Load `path`'s weights into `model`; return the info stored with them."""
    tensors, info = read_tensors(path)
    assign_weights(model, tensors, path)
    return info


def model_tensors(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {f"model.{name}": t for name, t in _distinct_weights(model).items()}


def optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Adam's per-parameter tensors, and its hyper-parameters as JSON-ready data."""
    state = optimizer.state_dict()
    tensors = {
        f"optimizer.{index}.{key}": value for index, slots in state["state"].items() for key, value in slots.items()
    }
    return tensors, {"param_groups": state["param_groups"]}


def restore_optimizer(optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], groups: list) -> None:
    state: dict[int, dict[str, torch.Tensor]] = {}
    for name, value in tensors.items():
        if name.startswith("optimizer."):
            _, index, key = name.split(".", 2)
            state.setdefault(int(index), {})[key] = value
    optimizer.load_state_dict({"state": state, "param_groups": groups})


def save_model_files(directory: Path, config: Config, src_subwords: Subwords | None, tgt_subwords: Subwords) -> None:
    """The config and the subword models; a speech model has no source subwords."""
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write(directory / CONFIG, config.to_yaml().encode("utf-8"))
    if src_subwords is not None:
        atomic_write(directory / SRC_SUBWORDS, src_subwords.model_bytes)
    atomic_write(directory / TGT_SUBWORDS, tgt_subwords.model_bytes)


def load_model_files(directory: str | Path) -> tuple[Config, Subwords | None, Subwords]:
    """The config and subword models of a model directory (no source subwords for speech)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise UserError(f"{directory}: no such model directory")
    config = load_config(directory / CONFIG)
    src_subwords = None if config.speech else Subwords.load(directory / SRC_SUBWORDS)
    return config, src_subwords, Subwords.load(directory / TGT_SUBWORDS)


def weights_path(directory: str | Path) -> Path:
    """The weights a trained model translates with: the best validation, else the last."""
    directory = Path(directory)
    best = directory / BEST
    return best if best.exists() else directory / LAST


def _first_difference(ours: Any, theirs: Any, key: str) -> str | None:
    """The dotted key of the first value that differs between two config sections, with both values."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for name in ours.keys() | theirs.keys():
            difference = _first_difference(ours.get(name), theirs.get(name), f"{key}.{name}")
            if difference:
                return difference
        return None
    return None if ours == theirs else f"{key} is {theirs!r} there but {ours!r} here"


def init_from_subwords(config: Config) -> tuple[Subwords | None, Subwords]:
    """The subword models of train.init_from, the model directory a fine-tuning run
    starts from, once its model section is found to equal `config`'s: the weights fit
    only the same model, and the data must be encoded with the same pieces."""
    source = Path(config.train.init_from)
    source_config, src_subwords, tgt_subwords = load_model_files(source)
    if source_config.speech != config.speech:
        raise UserError(f"train.init_from: {source} reads {source_config.data.kind}, this config {config.data.kind}")
    difference = _first_difference(config.model.model_dump(), source_config.model.model_dump(), "model")
    if difference:
        raise UserError(f"train.init_from: {difference} ({source / CONFIG}); a model starts only from its own kind")
    return src_subwords, tgt_subwords

"""Training's part of a model directory (rnnsearch.files.model_directory): the resume point's
optimizer state, the kept checkpoints, the metrics log, the temporaries a kill leaves,
and starting from another model's weights (train.init_from).
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path
from typing import cast

import torch

from rnnsearch.config import Config, load_config
from rnnsearch.errors import UserError
from rnnsearch.files import atomic
from rnnsearch.files.model_directory import ALIGNMENTS, CONFIG, KEPT, load_model_files, write_tensors
from rnnsearch.model.settings import ModelConfig
from rnnsearch.text.subwords import Subwords
from rnnsearch.training.schedule import Progress

_KEPT_NAME = re.compile(r"step(\d+)\.safetensors", re.ASCII)


def remove_temporaries(directory: Path) -> list[Path]:
    """Delete the temporaries that killed writes left in a model directory, its
    alignments/ and its checkpoints/; return them."""
    return atomic.remove_temporaries(directory, directory / ALIGNMENTS, directory / KEPT)


def kept_checkpoints(directory: str | Path) -> list[tuple[int, Path]]:
    """The (step, path) of the checkpoints kept in a model directory, oldest first. The
    folder itself is the record, so a resumed run goes on from what it finds there."""
    folder = Path(directory) / KEPT
    if not folder.is_dir():
        return []
    found = ((_KEPT_NAME.fullmatch(path.name), path) for path in folder.iterdir())
    return sorted((int(match.group(1)), path) for match, path in found if match and path.is_file())


def keep_checkpoint(
    directory: Path, step: int, tensors: dict[str, torch.Tensor], info: dict[str, object], keep: int
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


def optimizer_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict[str, object]]:
    """Adam's per-parameter tensors, and its hyper-parameters as JSON-ready data."""
    state = optimizer.state_dict()
    tensors = {
        f"optimizer.{index}.{key}": value for index, slots in state["state"].items() for key, value in slots.items()
    }
    return tensors, {"param_groups": state["param_groups"]}


def restore_optimizer(
    optimizer: torch.optim.Optimizer, tensors: dict[str, torch.Tensor], info: dict, path: Path
) -> None:
    """Adam's state from a resume point's `tensors` and its `info`'s param_groups, checked
    to fit `optimizer`'s parameters; a UserError naming `path` where they do not."""
    groups = info.get("param_groups")
    ours = optimizer.param_groups
    if (
        not isinstance(groups, list)
        or len(groups) != len(ours)
        or not all(isinstance(group, dict) and isinstance(group.get("params"), list) for group in groups)
        or [len(group["params"]) for group in groups] != [len(group["params"]) for group in ours]
    ):
        raise UserError(f"{path}: corrupt resume point (its param_groups do not describe this run's optimizer)")
    state: dict[int, dict[str, torch.Tensor]] = {}
    for name, value in tensors.items():
        if name.startswith("optimizer."):
            _, index, key = name.split(".", 2)
            if not index.isascii() or not index.isdigit():
                raise UserError(f"{path}: corrupt resume point (an optimizer tensor named {name!r})")
            state.setdefault(int(index), {})[key] = value
    try:
        optimizer.load_state_dict({"state": state, "param_groups": groups})
    except (ValueError, KeyError, TypeError) as error:
        raise UserError(f"{path}: corrupt resume point (Adam's state: {error})") from None
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            slots = optimizer.state.get(parameter, {})
            if any(key != "step" and value.shape != parameter.shape for key, value in slots.items()):
                raise UserError(f"{path}: corrupt resume point (Adam's state is not of this model's shapes)")


_COUNTERS = {field.name: field for field in dataclasses.fields(Progress)}


def resumed_progress(info: dict, path: Path, *, max_steps: int | None) -> Progress:
    """The progress a resume point's `info` records, checked: whole counters of at least 0,
    finite times and scales, and a step within the run's budget `max_steps`; a UserError
    naming `path` where it is not."""
    recorded = info.get("progress")
    if not isinstance(recorded, dict) or "step" not in recorded or not recorded.keys() <= _COUNTERS.keys():
        raise UserError(f"{path}: corrupt resume point (its progress is not the counters a run records)")
    for name, value in recorded.items():
        if not _counter_fits(name, value):
            raise UserError(f"{path}: corrupt resume point (its progress.{name} is {value!r})")
    progress = Progress(**recorded)
    if max_steps is not None and progress.step > max_steps:
        raise UserError(
            f"{path}: its step {progress.step} is beyond the run's budget of train.max_steps {max_steps}; "
            "give a budget of at least that many steps to go on from it"
        )
    return progress


def _counter_fits(name: str, value: object) -> bool:
    """Whether `value` is what Progress's counter `name` can hold."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if name == "best":
        return value is None or number
    if _COUNTERS[name].type in ("int", int):
        return number and isinstance(value, int) and value >= 0
    return number and cast(float, value) >= 0


def _first_difference(ours: object, theirs: object, key: str) -> str | None:
    """The dotted key of the first value that differs between two config sections, with both values."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for name in ours.keys() | theirs.keys():
            difference = _first_difference(ours.get(name), theirs.get(name), f"{key}.{name}")
            if difference:
                return difference
        return None
    return None if ours == theirs else f"{key} is {theirs!r} there but {ours!r} here"


RUN_SECTIONS = ("model", "data", "subwords")
"""What defines a translation run beside its train section: a resumed run keeps them."""
PREPARATION_KEYS = {"workers", "prepared"}
"""Keys of the data section that say how the data is prepared, not which it is."""


def check_resumed_config(config: Config, model_dir: Path) -> None:
    """Refuse, in one line, resuming the run in `model_dir` with a `config` whose model, data
    or subword section differs from the run's own (its config.yaml): the weights, the
    batches and the pieces of a resumed run are the run's. Its train and search sections
    (budget, learning rate, validation, where it runs) may differ."""
    recorded = load_config(model_dir / CONFIG)
    for section in RUN_SECTIONS:
        ours, theirs = (getattr(each, section).model_dump(mode="json") for each in (config, recorded))
        if section == "data":
            ours, theirs = ({k: v for k, v in each.items() if k not in PREPARATION_KEYS} for each in (ours, theirs))
        difference = _first_difference(ours, theirs, section)
        if difference:
            raise UserError(
                f"--resume: {difference} ({model_dir / CONFIG}); a resumed run is the run it resumes: give "
                "the run's own config, or train into another directory"
            )


def init_from_subwords(source: str | Path, model: ModelConfig, *, data_kind: str) -> tuple[Subwords | None, Subwords]:
    """The subword models of the model directory `source` (train.init_from) that a
    fine-tuning run starts from, once its model section is found to equal `model` and it
    reads data of `data_kind`: the weights fit only the same model, and the data must be
    encoded with the same pieces."""
    source = Path(source)
    source_config, src_subwords, tgt_subwords = load_model_files(source)
    if source_config.data.kind != data_kind:
        raise UserError(f"train.init_from: {source} reads {source_config.data.kind}, this config {data_kind}")
    difference = _first_difference(model.model_dump(), source_config.model.model_dump(), "model")
    if difference:
        raise UserError(f"train.init_from: {difference} ({source / CONFIG}); a model starts only from its own kind")
    return src_subwords, tgt_subwords

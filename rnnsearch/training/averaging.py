"""Checkpoint averaging: the element-wise mean of the weights of a run's last checkpoints.

The weights of the last validations of a run lie near one another around the minimum
the optimizer circles; their mean can translate better than any one of them, at no
cost in training (as OpenNMT-py, fairseq and Marian offer). Training keeps them with
train.keep_checkpoints; `average_model` writes their mean as a new model directory.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from rnnsearch.config import Config
from rnnsearch.errors import UserError
from rnnsearch.files import atomic, model_directory
from rnnsearch.files.model_directory import source_and_target_sizes
from rnnsearch.model.seq2seq import build_model
from rnnsearch.text.subwords import Subwords
from rnnsearch.training import checkpoint


def _model_weights(path: Path) -> dict[str, torch.Tensor]:
    """The `model.*` tensors of a checkpoint (a resume point's optimizer state is left out)."""
    tensors, _ = model_directory.read_tensors(path)
    return {name: tensor for name, tensor in tensors.items() if name.startswith("model.")}


def average_checkpoints(paths: Sequence[Path]) -> dict[str, torch.Tensor]:
    """The element-wise mean of the model weights of `paths`, each tensor summed in float64
    and cast back to its own dtype. The checkpoints are read one at a time, so memory holds
    one checkpoint and the sums, however many are averaged. All must hold the same tensor
    names and shapes; the first that does not is named."""
    if not paths:
        raise UserError("no checkpoints to average")
    first = _model_weights(paths[0])
    if not first:
        raise UserError(f"{paths[0]}: no model weights in the checkpoint")
    sums = {name: tensor.to(torch.float64) for name, tensor in first.items()}
    for path in paths[1:]:
        weights = _model_weights(path)
        if weights.keys() != sums.keys() or any(weights[n].shape != sums[n].shape for n in sums):
            raise UserError(f"{path}: tensor names or shapes differ from {paths[0]}'s; cannot average them")
        for name, tensor in weights.items():
            sums[name] += tensor.to(torch.float64)
    return {name: _cast(total / len(paths), first[name].dtype) for name, total in sums.items()}


def _cast(mean: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """`mean` in `dtype`, rounded to the nearest whole number for an integer dtype."""
    return mean.to(dtype) if dtype.is_floating_point else mean.round().to(dtype)


def chosen_checkpoints(model_dir: Path, last: int | None) -> list[tuple[int, Path]]:
    """The (step, path) of the `last` newest checkpoints kept in `model_dir` (all by default;
    `last` is the command's -n, which its errors name)."""
    kept = checkpoint.kept_checkpoints(model_dir)
    if not kept:
        raise UserError(f"{model_dir}: no kept checkpoints (train with train.keep_checkpoints: N)")
    if last is None:
        return kept
    if last < 1:
        raise UserError(f"-n {last}: average at least 1 checkpoint")
    if last > len(kept):
        raise UserError(f"-n {last}: {model_dir} keeps only {len(kept)} checkpoints")
    return kept[-last:]


def average_model(model_dir: str | Path, out_dir: str | Path, last: int | None = None) -> list[int]:
    """Write a model directory `out_dir` whose best.safetensors is the mean of the last
    `last` checkpoints kept in `model_dir` (all by default), with its config and subword
    models, so that it translates like any trained model. Return the averaged steps, which
    the weights' info records too. The directory is built beside `out_dir` and put in
    place at the end: a failure leaves nothing behind."""
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    model_directory.require_new_output(model_dir, out_dir, made_by="averaged", product="average")
    config, src_subwords, tgt_subwords = model_directory.load_model_files(model_dir)
    chosen = chosen_checkpoints(model_dir, last)
    steps, paths = [step for step, _ in chosen], [path for _, path in chosen]
    averaged = average_checkpoints(paths)
    _require_fit(config, src_subwords, tgt_subwords, averaged, paths[-1])
    info = {"averaged_steps": steps, "averaged_from": str(model_dir / model_directory.KEPT)}
    with atomic.new_directory(out_dir, last=model_directory.BEST) as building:
        model_directory.save_model_files(building, config, src_subwords, tgt_subwords)
        info |= model_directory.files_record(building, src_subwords, tgt_subwords)
        model_directory.write_tensors(building / model_directory.BEST, averaged, info)
    return steps


def _require_fit(
    config: Config, src_subwords: Subwords | None, tgt_subwords: Subwords, weights: dict[str, torch.Tensor], path: Path
) -> None:
    """Refuse weights that the model of config.yaml cannot load, before anything is written."""
    model = build_model(config.model, *source_and_target_sizes(config, src_subwords, tgt_subwords))
    model_directory.assign_weights(model, weights, path)

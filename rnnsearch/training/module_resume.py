"""A module run's resume point (`train-aligner`, aligner_training.py): what each
checkpoint saves of the modules and the run (their weights, Adam's state, the progress
and the run's settings), and how `--resume` reads it back, every part checked against
the run before any is restored.

The resume point is written before the modules' own weights at each checkpoint, so that
a run stopped between its files, two modules included, resumes from it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from rnnsearch.config import Config, load_config
from rnnsearch.config.train import ALIGNER_RUN_KEYS
from rnnsearch.errors import UserError
from rnnsearch.files import model_directory
from rnnsearch.model.aligner import Aligner
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.training import checkpoint
from rnnsearch.training.schedule import Progress


@dataclass(frozen=True)
class Attached:
    """A model whose module a run trains: the model (its translation frozen), the digest
    of its translation weights, and the folder its module is written to."""

    model: RNNSearch
    digest: str | None
    run_dir: Path


RESUME_PREFIXES = ("aligner.", "reverse.aligner.")
"""The names of each module's weights in a run's resume point: the model's, the reverse model's."""

ADJUSTABLE_KEYS = (
    "train.max_steps",
    "train.max_minutes",
    "train.learning_rate",
    "train.warmup_steps",
    "train.min_learning_rate",
    "train.clip_norm",
    "train.frozen_passes_gib",
    "train.log_every",
    "train.valid_every",
    "train.device",
    "train.cuda_graphs",
    "train.threads",
)
"""What a resumed run may set otherwise than the run it resumes: its budget, its learning
rate and clipping (what a run that diverged is resumed with, lowered), how often it logs
and saves, and where and how it runs. Every other key of ALIGNER_RUN_KEYS defines the run
(its data and links, objective, sizes, agreement, batches and seed) and is kept."""


def recorded_settings(config: Config, keys: tuple[str, ...] = ALIGNER_RUN_KEYS) -> dict[str, object]:
    """The value of each of `keys` (section.name) in `config`, as JSON: by default what a
    resume point records of how its run trains."""
    dumped = config.model_dump(mode="json")
    settings = {}
    for key in keys:
        section, _, name = key.partition(".")
        settings[key] = dumped[section][name]
    return settings


def assignments(settings: dict[str, object]) -> list[str]:
    """`settings` as --set assignments, for another run's config to take them."""
    return [f"{key}={json.dumps(value)}" for key, value in settings.items()]


def save_modules(
    attached: list[Attached], optimizer: torch.optim.Optimizer, progress: Progress, config: Config
) -> None:
    """The run's resume point, then each module's weights (what loading attaches) in its
    own folder, recording the digest of the translation weights it was trained on. The
    resume point comes first, so that a run stopped between the files resumes from it; a
    jump table counted from the weights replaced goes before they do."""
    resume_weights: dict[str, torch.Tensor] = {}
    states = []
    for each, prefix in zip(attached, RESUME_PREFIXES, strict=False):
        state = attached_module(each.model).state_dict()
        states.append(state)
        resume_weights |= {f"{prefix}{name}": tensor for name, tensor in state.items()}
    first = attached[0]
    module = attached_module(first.model)
    optimizer_tensors, optimizer_info = checkpoint.optimizer_tensors(optimizer)
    resume_info: dict[str, object] = {
        "size": module.size,
        "null": module.null,
        "translation": first.digest,
        "step": progress.step,
        "progress": asdict(progress),
        "run": recorded_settings(config),
        **optimizer_info,
    }
    if len(attached) > 1:
        resume_info["reverse_translation"] = attached[1].digest
    model_directory.write_tensors(first.run_dir / model_directory.LAST, resume_weights | optimizer_tensors, resume_info)
    for each, state in zip(attached, states, strict=True):
        module = attached_module(each.model)
        info = {"size": module.size, "null": module.null, "translation": each.digest, "step": progress.step}
        weights = {f"aligner.{name}": tensor for name, tensor in state.items()}
        (each.run_dir / model_directory.ALIGNER_JUMPS).unlink(missing_ok=True)
        model_directory.write_tensors(each.run_dir / model_directory.ALIGNER_WEIGHTS, weights, info)


@dataclass(frozen=True)
class ResumePoint:
    """A run's last checkpoint (`last.safetensors`): its tensors, what its info records,
    and the settings of the run it belongs to, as --set assignments."""

    path: Path
    tensors: dict[str, torch.Tensor]
    info: dict[str, object]
    recorded: dict[str, object]

    @classmethod
    def read(cls, run_dir: Path) -> ResumePoint:
        """The resume point of the run in `run_dir`, with the settings it records; a
        resume point written before it recorded them gives the run's config.yaml's."""
        path = run_dir / model_directory.LAST
        tensors, info = model_directory.read_tensors(path)
        recorded = info.get("run")
        if recorded is None and (run_dir / model_directory.CONFIG).is_file():
            recorded = recorded_settings(load_config(run_dir / model_directory.CONFIG))
        if not isinstance(recorded, dict) or not recorded.keys() <= set(ALIGNER_RUN_KEYS):
            raise UserError(f"{path}: corrupt resume point (its run's settings are not train-aligner's keys)")
        return cls(path, tensors, info, recorded)

    @property
    def settings(self) -> list[str]:
        """The recorded settings as --set assignments, for the resumed run's config."""
        return assignments(self.recorded)

    def changes(self, config: Config) -> list[str]:
        """What `config` sets otherwise than the run it resumes, each said as "key value
        (was value)"; a change of a key outside ADJUSTABLE_KEYS is a UserError."""
        changed = []
        for key, value in recorded_settings(config).items():
            if key not in self.recorded or self.recorded[key] == value:
                continue
            if key not in ADJUSTABLE_KEYS:
                raise UserError(
                    f"train-aligner --resume: --set {key}={json.dumps(value)} would change the run being resumed, "
                    f"whose {key} is {json.dumps(self.recorded[key])} ({self.path}); resume it as it is, or delete "
                    f"{self.path.parent} to train the module afresh"
                )
            changed.append(f"{key} {json.dumps(value)} (was {json.dumps(self.recorded[key])})")
        return changed

    def restore(self, attached: list[Attached], optimizer: torch.optim.Optimizer, *, max_steps: int | None) -> Progress:
        """The modules, Adam's state and the progress the resume point holds, each checked
        against the run (its models, its budget of `max_steps`) before any is restored."""
        path, tensors, info = self.path, self.tensors, self.info
        progress = checkpoint.resumed_progress(info, path, max_steps=max_steps)
        digests = [info.get("translation"), info.get("reverse_translation")]
        if ("reverse_translation" in info) != (len(attached) > 1):
            given = "with" if len(attached) > 1 else "without"
            raise UserError(
                f"{path}: a run of {'two modules' if digests[1] else 'one module'}, resumed {given} --reverse"
            )
        for each, digest in zip(attached, digests, strict=False):
            if digest != each.digest:
                raise UserError(
                    f"{path}: the module was trained on other translation weights than {each.run_dir.parent}'s "
                    f"now; delete {path.parent} to train it afresh"
                )
            module = attached_module(each.model)
            if info.get("size") != module.size:
                raise UserError(f"{path}: a module of size {info.get('size')}, not model.aligner_size {module.size}")
            if info.get("null", False) != module.null:
                raise UserError(
                    f"{path}: a module with model.aligner_null {info.get('null', False)}, not {module.null}"
                )
        model_directory.require_finite(tensors, path, refusal="a run cannot resume from it")
        for each, prefix in zip(attached, RESUME_PREFIXES, strict=False):
            model_directory.assign_weights(
                attached_module(each.model),
                tensors,
                path,
                prefix=prefix,
                described="the alignment module they are for",
            )
        checkpoint.restore_optimizer(optimizer, tensors, info, path)
        return progress


def attached_module(model: RNNSearch) -> Aligner:
    """The alignment module a run trains, attached to the model before the run's first step."""
    if model.aligner is None:
        raise ValueError("the model has no alignment module attached")
    return model.aligner

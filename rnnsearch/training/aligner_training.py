"""`rnnsearch train-aligner`: the alignment module added to a trained model and trained
alone, every translation weight frozen, on the model's own training data.

The run lives in the model directory's `aligner/` (model_directory.ALIGNER_DIR):

    config.yaml          the model's config with the run's overrides and model.aligner: true
    weights.safetensors  the module's weights, with its size and the digest of the
                         translation weights it was trained on: what loading attaches
    last.safetensors     the module's weights, Adam's state and the run's progress: the resume point
    metrics.jsonl        training rows (the module's loss, learning rate, speed), as `train` writes them
    tensorboard/         with train.tensorboard, the same rows as curves
    prepared/            the training data, when the run's data section is not the model's
                         (word links added for the links objective, say)

The translation weights are never written, so the model translates exactly as before;
each file is written atomically, and a run killed at any moment resumes from its last
checkpoint (`--resume`), drawing the same batches.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import cast

import torch

from rnnsearch import kernels
from rnnsearch.config import Config, load_config
from rnnsearch.config.train import ALIGNER_RUN_KEYS
from rnnsearch.devices import resolve_device
from rnnsearch.errors import UserError
from rnnsearch.files import atomic, model_directory
from rnnsearch.files.metrics_log import forget_rows_after
from rnnsearch.model.aligner import Aligner
from rnnsearch.model.objectives import OBJECTIVES
from rnnsearch.model.seq2seq import RNNSearch, build_aligner
from rnnsearch.prepared import PreparedPairs, ensure_prepared, prepared_dir
from rnnsearch.text.subwords import Subwords
from rnnsearch.training import checkpoint
from rnnsearch.training.console import say
from rnnsearch.training.environment import configure_cpu, flushing_denormals
from rnnsearch.training.loop import StepContext, TrainingLoop
from rnnsearch.training.loss import Objective
from rnnsearch.training.schedule import Progress


def run_config(model_dir: Path, overrides: list[str]) -> Config:
    """The model's config with `overrides` (each of a key in ALIGNER_RUN_KEYS) and model.aligner:
    true; a run needs a budget, max_steps or max_minutes."""
    for assignment in overrides:
        key = assignment.partition("=")[0]
        if not any(key == allowed or key.startswith(allowed + ".") for allowed in ALIGNER_RUN_KEYS):
            raise UserError(
                f"train-aligner: --set {key}: not a key a train-aligner run takes; it takes "
                f"{', '.join(ALIGNER_RUN_KEYS)} (the translation model of {model_dir} is frozen)"
            )
    config = load_config(model_dir / model_directory.CONFIG, [*overrides, "model.aligner=true"])
    if config.train.max_steps is None and config.train.max_minutes is None:
        raise UserError(
            f"train-aligner: {model_dir}'s config sets no budget (train.max_steps or train.max_minutes); "
            "give one with --set train.max_steps=N"
        )
    return config


def train_aligner(
    model_dir: str | Path, overrides: list[str], *, resume: bool, run_dir: Path | None = None
) -> Progress:
    """Train the alignment module of the model in `model_dir` (see the module docstring);
    the run lives in `run_dir` (None: the model directory's aligner/, the module loading
    attaches; self-training runs its rounds elsewhere and installs the module they end with)."""
    model_dir = Path(model_dir)
    model_config, src_subwords, tgt_subwords = model_directory.load_model_files(model_dir)
    if not model_config.data.aligns_words:
        raise UserError(f"train-aligner: {model_dir} {model_config.data.task}; the alignment module aligns words")
    config = run_config(model_dir, overrides)
    run_dir = run_dir or model_dir / model_directory.ALIGNER_DIR
    started = (run_dir / model_directory.LAST).exists()
    if started and not resume:
        raise UserError(f"{run_dir}: already holds an alignment module's run; use --resume to continue it")
    device = resolve_device(config.train.device, "train.device")
    configure_cpu(config.train.threads)
    model = model_directory.load_model(model_dir, model_config, src_subwords, tgt_subwords, aligner=False)
    translation_digest = model_directory.stored_digest(model_directory.weights_path(model_dir))
    torch.manual_seed(config.train.seed)
    model.aligner = build_aligner(model, size=config.model.aligner_size)
    model.requires_grad_(False)
    model.aligner.requires_grad_(True)
    model.to(device)
    optimizer = torch.optim.Adam(model.aligner.parameters(), lr=config.train.learning_rate)
    run_dir.mkdir(parents=True, exist_ok=True)
    checkpoint.remove_temporaries(run_dir)
    atomic.atomic_write(run_dir / model_directory.CONFIG, config.to_yaml().encode("utf-8"))
    progress = _restored(model, optimizer, run_dir, translation_digest) if started and resume else Progress()
    if started and resume:
        forget_rows_after(run_dir / model_directory.METRICS, progress.step)
    else:
        if resume:
            say(f"{run_dir}: no checkpoint to resume from (stopped before its first one); starting again")
        (run_dir / model_directory.METRICS).unlink(missing_ok=True)
    data_dir = prepared_dir(config, run_dir if config.data != model_config.data else model_dir)
    ensure_prepared(config, data_dir, (cast(Subwords, src_subwords), tgt_subwords))  # text: it aligns words
    train = PreparedPairs(data_dir)
    say(
        f"alignment module: {sum(p.numel() for p in model.aligner.parameters()):,} parameters on {device}, "
        f"objective {config.train.aligner_objective} ({' + '.join(OBJECTIVES[config.train.aligner_objective])}); "
        "the translation's weights frozen"
    )
    context = StepContext(model, optimizer, Objective.of(config, translation=False), config.train.clip_norm)
    loop = ModuleLoop(config, run_dir, context=context, pairs=train, progress=progress, digest=translation_digest)
    with flushing_denormals(), kernels.use(kernels.choose(device, purpose="train")):
        loop.run()
    return progress


class ModuleLoop(TrainingLoop):
    """The training loop of the alignment module: the module alone trains, on the frozen
    model's pass, and a checkpoint writes the module and the run's resume point."""

    command = "train-aligner"
    failed_loss = "the alignment module's loss"

    def __init__(
        self,
        config: Config,
        run_dir: Path,
        *,
        context: StepContext,
        pairs: PreparedPairs,
        progress: Progress,
        digest: str | None,
    ):
        super().__init__(config, run_dir, context=context, pairs=pairs, progress=progress)
        self.digest = digest  # the translation weights' (`_save`)

    def start(self) -> None:
        """The frozen translation runs without dropout; the module has none."""
        self.context.model.eval()

    def checkpoint(self, *, everything: bool = False) -> bool:
        """Save the module and the resume point; the run goes on until its budget is spent."""
        _save(self.context.model, self.context.optimizer, self.progress, self.model_dir, self.digest)
        return False


def _save(
    model: RNNSearch,
    optimizer: torch.optim.Optimizer,
    progress: Progress,
    run_dir: Path,
    translation_digest: str | None,
) -> None:
    """The module's weights (what loading attaches), recording the digest of the translation
    weights it was trained on, then the resume point."""
    module = _attached_module(model)
    weights = {f"aligner.{name}": tensor for name, tensor in module.state_dict().items()}
    info = {"size": module.size, "translation": translation_digest, "step": progress.step}
    model_directory.write_tensors(run_dir / model_directory.ALIGNER_WEIGHTS, weights, info)
    optimizer_tensors, optimizer_info = checkpoint.optimizer_tensors(optimizer)
    resume_info = {**info, "progress": asdict(progress), **optimizer_info}
    model_directory.write_tensors(run_dir / model_directory.LAST, weights | optimizer_tensors, resume_info)


def _restored(
    model: RNNSearch, optimizer: torch.optim.Optimizer, run_dir: Path, translation_digest: str | None
) -> Progress:
    """The module, Adam's state and the progress of the run's last checkpoint."""
    path = run_dir / model_directory.LAST
    tensors, info = model_directory.read_tensors(path)
    if info.get("translation") != translation_digest:
        raise UserError(
            f"{path}: the module was trained on other translation weights than the model's now; "
            f"delete {run_dir} to train it afresh"
        )
    module = _attached_module(model)
    if info.get("size") != module.size:
        raise UserError(f"{path}: a module of size {info.get('size')}, not model.aligner_size {module.size}")
    model_directory.require_finite(tensors, path, refusal="a run cannot resume from it")
    model_directory.assign_weights(
        module, tensors, path, prefix="aligner.", described="the alignment module they are for"
    )
    checkpoint.restore_optimizer(optimizer, tensors, info["param_groups"])
    progress = Progress(**info["progress"])
    say(f"resuming {run_dir} at step {progress.step}")
    return progress


def _attached_module(model: RNNSearch) -> Aligner:
    """The alignment module a run trains, attached to the model before the run's first step."""
    if model.aligner is None:
        raise ValueError("the model has no alignment module attached")
    return model.aligner

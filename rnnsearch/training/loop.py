"""The one training loop: batches drawn in the epoch's order, the learning rate set,
an update, the log rows, and a checkpoint every train.valid_every steps, until the
budget is spent or a checkpoint says stop.

`train` and `train-aligner` both run it. What differs is what the update trains (every
weight, or the alignment module alone, the translation frozen), its objective, and what
a checkpoint does: `TranslationLoop` (trainer.py) validates, keeps the best weights and
writes the resume point; the alignment module's loop (aligner_training.py) writes the
module and its resume point. Budgets, stopping on a non-finite step, the log rows,
the progress bar or log lines, and TensorBoard are this module's, and so the same for both.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn, cast

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

from rnnsearch.config import Config
from rnnsearch.config.train import TrainConfig
from rnnsearch.errors import UserError
from rnnsearch.files import model_directory
from rnnsearch.files.metrics_log import MetricsRow, append_row
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.text.batches import (
    Batch,
    EpochBatches,
    LinkedPairs,
    PairSource,
    Pieces,
    epoch_batches,
    make_batch,
)
from rnnsearch.training import schedule
from rnnsearch.training.console import say
from rnnsearch.training.distributed import SINGLE_PROCESS, World
from rnnsearch.training.frozen_passes import Forced, FrozenPasses
from rnnsearch.training.graphed_loss import GraphedLoss
from rnnsearch.training.loss import Objective, sequence_loss, two_way_loss
from rnnsearch.training.reporting import Reporter
from rnnsearch.training.schedule import Progress


class NonFiniteUpdate(Exception):
    """A training step whose gradients were not finite, so that its update has made the
    weights NaN or infinite; `loss` is this rank's loss of the step."""

    def __init__(self, loss: float):
        super().__init__(f"the gradients of a step are not finite (its loss: {loss})")
        self.loss = loss


@dataclass
class StepContext:
    """What every update of a run works with: the model and the optimizer of the weights
    that train, the objective, the clipping norm; under DDP the `world` of ranks and the
    model's `ddp` wrapper; the precision of the forward pass; on a GPU the loss as
    CUDA graphs (`graphed`), made for the same objective; where two directions'
    alignment modules train together (`train-aligner --reverse`), the `reverse` model,
    whose module `optimizer` updates too (its batches: `step_batch(…, swapped=True)`);
    and where the translations are frozen, their kept passes (`frozen`, frozen_passes.py:
    the model's, then the reverse model's), or none."""

    model: RNNSearch
    optimizer: torch.optim.Optimizer
    objective: Objective
    clip_norm: float
    world: World = SINGLE_PROCESS
    precision: str = "fp32"
    graphed: GraphedLoss | None = None
    ddp: DistributedDataParallel | None = None
    reverse: RNNSearch | None = None
    frozen: tuple[FrozenPasses, ...] = ()


def training_step(
    context: StepContext, batch: Batch, reverse_batch: Batch | None = None, *, indices: np.ndarray | None = None
) -> tuple[float, int]:
    """One update on the per-token mean of the objective's loss, gradients clipped.

    Under DDP (N ranks) the mean is over the tokens of all ranks' batches: DDP averages
    the N gradients, hence the factor N. With precision bf16 the forward pass runs under
    bfloat16 autocast. Returns this rank's summed loss and its number of target tokens.
    Gradients whose norm is not finite (from a loss that is not, or overflowing in the
    backward pass) are a NonFiniteUpdate: DDP has averaged the gradients, so every rank
    sees the same norm and stops at the same step, with no exchange of its own. With a
    `reverse` model, `reverse_batch` holds the same pairs the other way round. With kept
    passes of frozen translations (`context.frozen`), `indices` are the batch's pairs,
    whose passes they give.
    """
    world = context.world
    if context.graphed is not None:
        loss, tokens = context.graphed(batch, forced=_kept(context.frozen, (batch,), indices)[0])
    else:
        with torch.autocast(batch.src.device.type, dtype=torch.bfloat16, enabled=context.precision == "bf16"):
            if context.reverse is not None:
                assert reverse_batch is not None, "the loop makes it for a context with a reverse"
                both = (batch, reverse_batch)
                forced = _kept(context.frozen, both, indices)
                loss, tokens = two_way_loss(
                    context.model, context.reverse, both, context.objective, forced=(forced[0], forced[1])
                )
            else:
                forced = _kept(context.frozen, (batch,), indices)
                loss, tokens = sequence_loss(context.model, batch, context.objective, ddp=context.ddp, forced=forced[0])
    context.optimizer.zero_grad(set_to_none=True)
    (loss / world.total(tokens) * world.size).backward()
    norm = _clipped(context.model, context.clip_norm)
    if context.reverse is not None:
        norm = torch.maximum(norm, _clipped(context.reverse, context.clip_norm))
    context.optimizer.step()
    value, norm_value = torch.stack([loss.detach().float(), norm.float()]).tolist()  # one copy to the host
    if not math.isfinite(norm_value):
        raise NonFiniteUpdate(value)
    return value, tokens


def _kept(
    frozen: tuple[FrozenPasses, ...], batches: tuple[Batch, ...], indices: np.ndarray | None
) -> list[Forced | None]:
    """Each batch's pass from its model's kept passes; None where none are kept."""
    if not frozen or indices is None:
        return [None] * len(batches)
    return [kept.forced(indices, batch) for kept, batch in zip(frozen, batches, strict=True)]


def _clipped(model: RNNSearch, clip_norm: float) -> torch.Tensor:
    """Clip the gradients to `clip_norm`: the alignment module's apart from the translation's,
    which are then clipped exactly as without the module; the largest norm (the same on
    every rank under DDP). Both groups keep the model's order of its parameters: the norm
    sums their squares in that order, so that a run's updates do not depend on where in
    memory its tensors lie."""
    if model.aligner is None:
        return torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    module = list(model.aligner.parameters())
    in_module = {id(p) for p in module}
    translation = [p for p in model.parameters() if id(p) not in in_module]
    norms = [torch.nn.utils.clip_grad_norm_(group, clip_norm) for group in (translation, module)]
    return torch.maximum(*norms)


def next_batch(
    pairs: PairSource, order: EpochBatches, progress: Progress, options: TrainConfig, world: World = SINGLE_PROCESS
) -> tuple[EpochBatches, np.ndarray]:
    """This rank's batch of the next step, `progress` moved past it: a step takes one batch
    per rank from the epoch's `order`; an epoch's last batches too few for every rank are
    skipped, and the next epoch's order (of `pairs`) comes back with the batch."""
    if progress.batch_in_epoch + world.size > len(order):
        progress.epoch += 1
        progress.batch_in_epoch = 0
        order = epoch_batches(pairs, options.batch_tokens, options.max_batch_sentences, options.seed, progress.epoch)
    progress.batch_in_epoch += world.size
    return order, order[progress.batch_in_epoch - world.size + world.rank]


def step_batch(
    pairs: PairSource, indices: np.ndarray, objective: Objective, device: torch.device, *, swapped: bool = False
) -> Batch:
    """The pairs at `indices` as a batch on `device`, with their word links where the
    objective reads them; `swapped`: read the other way round, targets as sources and
    their links turned with them, as a reverse model (whose vocabularies are the model's,
    swapped) reads them."""
    chosen = [pairs[i] for i in indices]
    links = [cast(LinkedPairs, pairs).links(i) for i in indices] if objective.guided else None
    if swapped:  # text: a reverse model aligns words
        chosen = [(target, cast(Pieces, source)) for source, target in chosen]
        links = None if links is None else [np.ascontiguousarray(rows[:, ::-1]) for rows in links]
    return make_batch(chosen, links=links).to(device)


def refuse_non_finite(command: str, step: int, loss: float, *, what: str, kept: str, advice: str) -> NoReturn:
    """Stop `command`'s run at `step`, whose gradients are not finite (a NonFiniteUpdate),
    in one line: `what` loss it was, that nothing of the step is saved, what is `kept`
    instead, and the `advice`."""
    value = f"{loss}" if not math.isfinite(loss) else f"{loss:.4g} but its gradients are not finite"
    raise UserError(
        f"{command}: step {step}: {what} is {value}, so training stopped without saving the step; {kept}. {advice}"
    )


class TrainingLoop:
    """The steps of one process of a run, on `pairs`, from `progress` on; the run's files
    are in `model_dir`. A subclass says what a checkpoint does (`checkpoint`) and how
    a non-finite step is worded (`command`, `failed_loss`, `trained_weights`, `advice`)."""

    command = "train"
    failed_loss = "the training loss"
    trained_weights = "the model's weights"
    advice = "Too large a learning rate does this: lower train.learning_rate"

    def __init__(self, config: Config, model_dir: Path, *, context: StepContext, pairs: PairSource, progress: Progress):
        self.config, self.model_dir, self.progress = config, model_dir, progress
        self.context, self.pairs, self.world = context, pairs, context.world
        self.device = next(p.device for p in context.model.parameters() if p.requires_grad)
        self.report = Reporter(config, model_dir, progress, main=self.world.is_main)
        self._last_tick = time.monotonic()

    def checkpoint(self, *, everything: bool = False) -> bool:
        """What a run does every train.valid_every steps, and once at its end (`everything`);
        True to stop."""
        raise NotImplementedError

    def owes_a_last_checkpoint(self, last: int) -> bool:
        """Whether the run ends with a checkpoint, the last one having been at step `last`."""
        return self.progress.step != last

    def start(self) -> None:
        """Put the model in the mode its updates run in."""
        self.context.model.train()

    def run(self) -> None:
        """Train until a budget is spent or a checkpoint says stop, then checkpoint the
        last step where it is owed one."""
        options, progress, context = self.config.train, self.progress, self.context
        order = epoch_batches(
            self.pairs, options.batch_tokens, options.max_batch_sentences, options.seed, progress.epoch
        )
        self._last_tick = time.monotonic()
        loss_sum, tokens, compute_seconds, last_checkpoint = 0.0, 0, 0.0, progress.step
        self.start()
        stop = False
        while not stop and not self.world.any(self._budget_spent()):
            tick = time.perf_counter()
            order, indices = next_batch(self.pairs, order, progress, options, self.world)
            batch = step_batch(self.pairs, indices, context.objective, self.device)
            reverse_batch = None
            if context.reverse is not None:
                reverse_batch = step_batch(self.pairs, indices, context.objective, self.device, swapped=True)
            for group in context.optimizer.param_groups:
                group["lr"] = schedule.learning_rate(options, progress)
            try:
                loss, n_tokens = training_step(context, batch, reverse_batch, indices=indices)
            except NonFiniteUpdate as failure:
                progress.step += 1
                self.report.close()
                self._refuse_non_finite(failure.loss, last_checkpoint)
            progress.step += 1
            loss_sum += loss
            tokens += n_tokens
            compute_seconds += time.perf_counter() - tick
            self.report.stepped()
            if progress.step % options.log_every == 0:
                self._log_training(loss_sum, tokens, compute_seconds)
                loss_sum, tokens, compute_seconds = 0.0, 0, 0.0
            if progress.step % options.valid_every == 0:
                self._require_finite_weights(last_checkpoint)
                stop = self.checkpoint()
                last_checkpoint = progress.step
        if self.owes_a_last_checkpoint(last_checkpoint):
            self._require_finite_weights(last_checkpoint)
            self.checkpoint(everything=True)
        self.report.close()

    def say(self, message: str) -> None:
        """A line on standard error, from the main process alone."""
        if self.world.is_main:
            say(message)

    def clock(self) -> None:
        """Bring progress.seconds (wall time across resumed runs) up to now."""
        now = time.monotonic()
        self.progress.seconds += now - self._last_tick
        self._last_tick = now

    def _budget_spent(self) -> bool:
        self.clock()
        return schedule.budget_spent(self.config.train, self.progress)

    def _refuse_non_finite(self, loss: float, saved: int) -> NoReturn:
        """Stop the run at a step whose gradients are not finite: its update has made the
        weights NaN or infinite, so nothing of it is saved, and the run's directory keeps
        the checkpoint of step `saved` (0: the run has none yet) to resume from or to use."""
        refuse_non_finite(
            self.command, self.progress.step, loss, what=self.failed_loss, kept=self._kept(saved), advice=self.advice
        )

    def _require_finite_weights(self, saved: int) -> None:
        """Stop the run before a checkpoint, in one line and saving nothing, where an update
        with finite gradients has made the weights that train NaN or infinite (too large a
        learning rate times Adam's step): the directory keeps the checkpoint of step `saved`."""
        context = self.context
        models = [context.model] + ([context.reverse] if context.reverse is not None else [])
        trained = [p for model in models for p in model.parameters() if p.requires_grad]
        if bool(torch.stack([torch.isfinite(p).all() for p in trained]).all()):  # one read back to the host
            return
        self.report.close()
        raise UserError(
            f"{self.command}: step {self.progress.step}: the update made {self.trained_weights} NaN or infinite, so "
            f"training stopped without saving them; {self._kept(saved)}. {self.advice}"
        )

    def _kept(self, saved: int) -> str:
        """What the run's directory keeps of it, its last checkpoint at step `saved` (0: none)."""
        return f"{self.model_dir} keeps the checkpoint of step {saved}" if saved else "no checkpoint was written"

    def _log_training(self, loss_sum: float, tokens: int, compute_seconds: float) -> None:
        """Log the training loss and speed since the last row, summed over the ranks, and
        report them (the progress bar or a log line, and TensorBoard)."""
        options, progress = self.config.train, self.progress
        all_loss, all_tokens = self.world.total(loss_sum), self.world.total(tokens)
        row: MetricsRow = {
            "step": progress.step,
            "train_loss": all_loss / all_tokens,
            "lr": schedule.learning_rate(options, progress),
            "tokens_per_second": all_tokens / compute_seconds,
            "epoch": progress.epoch,
        }
        self.log(row)
        self.report.trained(row, progress)

    def log(self, row: MetricsRow) -> None:
        """Append `row` to the run's metrics log (the main process)."""
        if self.world.is_main:
            append_row(self.model_dir / model_directory.METRICS, row)

"""The training loop: teacher forcing, Adam, clipping, schedule, validation, budgets.

A run can be stopped at any moment and resumed: the model directory's last
checkpoint holds the weights, Adam's moments and the position in the epoch's batch
order, and an epoch's batches are rebuilt from (seed, epoch).

The random numbers of training (dropout masks) are drawn from torch's generators: the
CPU's, and on a GPU the CUDA device's. Rather than saving their states, every rank
seeds them all afresh at each checkpoint, from (seed, rank, step), and a resumed run
seeds them the same way from the checkpoint's step. So a resumed run draws exactly
the masks the uninterrupted run would have drawn, on every rank of a torchrun, with
nothing for ranks other than 0 to send to the one process that writes the directory.
(One stream stays out of reach: the dropout between the layers of cuDNN's stacked
GRUs and LSTMs on a GPU, whose state cuDNN keeps to itself for the process's life.)
"""

from __future__ import annotations

import gc
import math
import time
from dataclasses import asdict
from pathlib import Path
from typing import NoReturn

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

from rnnsearch import kernels
from rnnsearch.config import Config
from rnnsearch.config.train import TrainConfig
from rnnsearch.devices import resolve_device
from rnnsearch.errors import UserError
from rnnsearch.evaluation.plots import learning_curves
from rnnsearch.files import model_directory
from rnnsearch.files.metrics_log import MetricsRow, append_row, read_metrics
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.text.batches import Batch, EpochBatches, PairSource, epoch_batches, make_batch
from rnnsearch.training import checkpoint, schedule
from rnnsearch.training.console import say
from rnnsearch.training.distributed import SINGLE_PROCESS, World, join_world, leave_world
from rnnsearch.training.environment import flushing_denormals, seed_generators
from rnnsearch.training.graphed_loss import GraphedLoss
from rnnsearch.training.loss import Objective, sequence_loss
from rnnsearch.training.reporting import Reporter
from rnnsearch.training.run_data import CorpusKind
from rnnsearch.training.schedule import Progress
from rnnsearch.training.setup import TrainingSetup, set_up


class NonFiniteUpdate(Exception):
    """A training step whose gradients were not finite, so that its update has made the
    weights NaN or infinite; `loss` is this rank's loss of the step."""

    def __init__(self, loss: float):
        super().__init__(f"the gradients of a step are not finite (its loss: {loss})")
        self.loss = loss


def refuse_non_finite(command: str, step: int, loss: float, *, what: str, kept: str, advice: str) -> NoReturn:
    """Stop `command`'s run at `step`, whose gradients are not finite (a NonFiniteUpdate),
    in one line: `what` loss it was, that nothing of the step is saved, what is `kept`
    instead, and the `advice`. `train` and `train-aligner` stop alike."""
    value = f"{loss}" if not math.isfinite(loss) else f"{loss:.4g} but its gradients are not finite"
    raise UserError(
        f"{command}: step {step}: {what} is {value}, so training stopped without saving the step; {kept}. {advice}"
    )


def training_step(
    model: RNNSearch,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    objective: Objective,
    clip_norm: float,
    world: World = SINGLE_PROCESS,
    precision: str = "fp32",
    graphed: GraphedLoss | None = None,
    *,
    ddp: DistributedDataParallel | None = None,
) -> tuple[float, int]:
    """One update on the per-token mean of the `objective`'s loss, gradients clipped to `clip_norm`.

    Under DDP (`model` wrapped in `ddp`, `world` of N ranks) the mean is over the tokens
    of all ranks' batches: DDP averages the N gradients, hence the factor N. With
    precision bf16 the forward pass runs under bfloat16 autocast. `graphed`, on a GPU,
    computes the loss with CUDA graphs instead, made for the same `objective`. Returns
    this rank's summed loss and its number of target tokens. Gradients whose norm is not
    finite (from a loss that is not, or overflowing in the backward pass) are a
    NonFiniteUpdate: DDP has averaged the gradients, so every rank sees the same norm and
    stops at the same step, with no exchange of its own.
    """
    if graphed is not None:
        loss, tokens = graphed(batch)
    else:
        with torch.autocast(batch.src.device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss, tokens = sequence_loss(model, batch, objective, ddp=ddp)
    optimizer.zero_grad(set_to_none=True)
    (loss / world.total(tokens) * world.size).backward()
    norm = _clipped(model, clip_norm)
    optimizer.step()
    value, norm_value = torch.stack([loss.detach().float(), norm.float()]).tolist()  # one copy to the host
    if not math.isfinite(norm_value):
        raise NonFiniteUpdate(value)
    return value, tokens


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


def step_batch(pairs: PairSource, indices: np.ndarray, objective: Objective, device: torch.device) -> Batch:
    """The pairs at `indices` as a batch on `device`, with their word links where the objective reads them."""
    links = [pairs.links(i) for i in indices] if objective.guided else None
    return make_batch([pairs[i] for i in indices], links=links).to(device)


def _clipped(model: RNNSearch, clip_norm: float) -> torch.Tensor:
    """Clip the gradients to `clip_norm`: the alignment module's apart from the translation's,
    which are then clipped exactly as without the module; the largest norm (the same on
    every rank under DDP)."""
    if model.aligner is None:
        return torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    module = set(model.aligner.parameters())
    translation = [p for p in model.parameters() if p not in module]
    norms = [torch.nn.utils.clip_grad_norm_(group, clip_norm) for group in (translation, list(module))]
    return torch.maximum(*norms)


class Trainer:
    """Trains the model `config` describes into `model_dir`, on data of `kind`
    (`rnnsearch.kinds.data_kind(config)`), which prepares and scores it."""

    def __init__(self, config: Config, model_dir: str | Path, kind: CorpusKind):
        self.config, self.kind = config, kind
        self.model_dir = Path(model_dir)
        self.device = resolve_device(config.train.device, "train.device")
        self.progress = Progress()

    def run(self, resume: bool = False) -> Progress:
        """Train until a budget is spent or validation stops improving. A run stopped
        before its first checkpoint left nothing to resume from: resuming it starts again
        from step 0, saying so."""
        started = (self.model_dir / model_directory.LAST).exists()
        if not resume and started:
            raise UserError(f"{self.model_dir}: already holds a trained model; use --resume or another directory")
        restart = resume and not started
        world = join_world(self.device)
        loop = None
        try:
            with flushing_denormals():
                setup = set_up(
                    self.config,
                    self.model_dir,
                    world,
                    self.device,
                    self.kind,
                    resume=resume and not restart,
                    restart=restart,
                )
                loop = TrainingLoop(self.config, self.model_dir, setup, self.kind)
                with kernels.use(setup.kernels):
                    loop.run()
                self.progress = loop.progress
        finally:
            # The DDP wrapper holds the process group's worker threads: it must go while
            # the group and the interpreter are alive, not in a garbage collection at exit,
            # where gloo aborts the process.
            if loop is not None:
                loop.ddp = None
            setup = None
            gc.collect()
            leave_world(world)
        return self.progress


class TrainingLoop:
    """The steps of one process of a run, from its set-up to the last validation."""

    def __init__(self, config: Config, model_dir: Path, setup: TrainingSetup, kind: CorpusKind):
        self.config, self.model_dir, self.kind = config, model_dir, kind
        self.world, self.device, self.corpus = setup.world, setup.device, setup.corpus
        self.model, self.optimizer, self.ddp, self.graphed = setup.model, setup.optimizer, setup.ddp, setup.graphed
        self.validator, self.record, self.progress = setup.validator, setup.record, setup.progress
        self.report = Reporter(config, model_dir, self.progress, main=self.world.is_main)
        self.objective = Objective.of(config)
        self._last_tick = time.monotonic()

    def _say(self, message: str) -> None:
        if self.world.is_main:
            say(message)

    def _clock(self) -> None:
        """Bring progress.seconds (wall time across resumed runs) up to now."""
        now = time.monotonic()
        self.progress.seconds += now - self._last_tick
        self._last_tick = now

    def _budget_spent(self) -> bool:
        self._clock()
        return schedule.budget_spent(self.config.train, self.progress)

    def run(self) -> None:
        """Train until a budget is spent or validation says stop, then validate and save
        the last step if the last validation was not of it or not of the whole set."""
        options, progress = self.config.train, self.progress
        order = epoch_batches(
            self.corpus.train, options.batch_tokens, options.max_batch_sentences, options.seed, progress.epoch
        )
        self._last_tick = time.monotonic()
        loss_sum, tokens, compute_seconds, last_validated = 0.0, 0, 0.0, progress.step
        self.model.train()
        stop = False
        while not stop and not self.world.any(self._budget_spent()):
            tick = time.perf_counter()
            order, indices = next_batch(self.corpus.train, order, progress, options, self.world)
            batch = step_batch(self.corpus.train, indices, self.objective, self.device)
            for group in self.optimizer.param_groups:
                group["lr"] = schedule.learning_rate(options, progress)
            try:
                loss, n_tokens = training_step(
                    self.model,
                    self.optimizer,
                    batch,
                    self.objective,
                    options.clip_norm,
                    self.world,
                    options.precision,
                    self.graphed,
                    ddp=self.ddp,
                )
            except NonFiniteUpdate as failure:
                progress.step += 1
                self.report.close()
                self._refuse_non_finite(failure.loss, last_validated)
            progress.step += 1
            loss_sum += loss
            tokens += n_tokens
            compute_seconds += time.perf_counter() - tick
            self.report.stepped()
            if progress.step % options.log_every == 0:
                self._log_training(loss_sum, tokens, compute_seconds)
                loss_sum, tokens, compute_seconds = 0.0, 0, 0.0
            if progress.step % options.valid_every == 0:
                stop = self._validate_and_save()
                last_validated = progress.step
        if progress.step != last_validated or self._validation_capped():
            self._validate_and_save(everything=True)
        self.report.close()

    def _refuse_non_finite(self, loss: float, saved: int) -> None:
        """Stop the run at a step whose gradients are not finite: its update has made the
        weights NaN or infinite, so nothing of it is saved, and the model directory keeps
        the checkpoint of step `saved` (0: the run has none yet) to resume from or to use."""
        refuse_non_finite(
            "train",
            self.progress.step,
            loss,
            what="the training loss",
            kept=f"{self.model_dir} keeps the checkpoint of step {saved}" if saved else "no checkpoint was written",
            advice="Too large a learning rate or guided alignment weight does this: lower train.learning_rate or "
            "train.guided_alignment_weight",
        )

    def _log_training(self, loss_sum: float, tokens: int, compute_seconds: float) -> None:
        """Log the training loss and speed since the last row, summed over the ranks, and
        report them (the progress bar or a log line, and TensorBoard)."""
        options, progress = self.config.train, self.progress
        loss_sum, tokens = self.world.total(loss_sum), self.world.total(tokens)
        row: MetricsRow = {
            "step": progress.step,
            "train_loss": loss_sum / tokens,
            "lr": schedule.learning_rate(options, progress),
            "tokens_per_second": tokens / compute_seconds,
            "epoch": progress.epoch,
        }
        self._log(row)
        self.report.trained(row, progress)

    def _validation_capped(self) -> bool:
        """Whether validations translate only the first train.valid_bleu_sentences."""
        cap = self.config.train.valid_bleu_sentences
        return cap is not None and cap < len(self.corpus.valid_sources)

    def _validate_and_save(self, *, everything: bool = False) -> bool:
        """Validate, update schedule and best checkpoint, keep this step's weights (with
        train.keep_checkpoints), save the last one; True to stop. With `everything`, the
        whole validation set is translated (see `Validator`)."""
        progress, options = self.progress, self.config.train
        row = self.world.from_main(
            lambda: {"step": progress.step, **self.validator(progress.step, everything=everything)}
        )
        metric = {
            "bleu": lambda: row["valid_bleu"],
            "error_rate": lambda: -row["valid_der"],
            "loss": lambda: -row["valid_loss"],
        }[options.selection_metric]()
        verdict = schedule.validated(options, progress, metric)
        if verdict.improved and self.world.is_main:
            model_directory.write_tensors(
                self.model_dir / model_directory.BEST, model_directory.model_tensors(self.model), row | self.record
            )
        self._log(row)
        self.report.validated(row, self.model_dir / model_directory.ALIGNMENTS)
        scores = self.kind.scores_line(row)
        if "valid_sentences_all" in row:
            scores += f" on the first {options.valid_bleu_sentences}; on all {row['valid_sentences_all']}: "
            scores += self.kind.scores_line(row, "_all")
        self._say(
            f"step {progress.step}: valid loss {row['valid_loss']:.3f}, ppl {row['valid_ppl']:.2f}, "
            f"greedy {scores}{' (best)' if verdict.improved else ''}"
        )
        self._clock()
        if options.keep_checkpoints and self.world.is_main:
            tensors = model_directory.model_tensors(self.model)
            checkpoint.keep_checkpoint(
                self.model_dir, progress.step, tensors, row | self.record, options.keep_checkpoints
            )
        self._save_last()
        return verdict.stop

    def _log(self, row: MetricsRow) -> None:
        if not self.world.is_main:
            return
        path = self.model_dir / model_directory.METRICS
        append_row(path, row)
        if "valid_loss" in row:
            learning_curves(read_metrics(path), self.model_dir / model_directory.LEARNING_CURVE)

    def _save_last(self) -> None:
        """Write the resume point (rank 0), and seed every rank's generators as a run
        resumed from it will (see the module's docstring)."""
        if self.world.is_main:
            tensors = model_directory.model_tensors(self.model)
            optimizer_tensors, optimizer_info = checkpoint.optimizer_tensors(self.optimizer)
            tensors.update(optimizer_tensors)
            info = {"progress": asdict(self.progress), **optimizer_info, **self.record}
            model_directory.write_tensors(self.model_dir / model_directory.LAST, tensors, info)
        seed_generators(self.config.train.seed, self.world.rank, self.progress.step)

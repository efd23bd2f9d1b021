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

import ctypes
import gc
import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from rnnsearch import files, kernels, model_directory
from rnnsearch.config import Config
from rnnsearch.errors import UserError
from rnnsearch.evaluation.plots import learning_curves
from rnnsearch.kernels.cuda_graphs import GraphedLoss
from rnnsearch.model.seq2seq import build_model
from rnnsearch.model_directory import source_and_target_sizes
from rnnsearch.text.batches import Batch, EpochBatches, epoch_batches, make_batch
from rnnsearch.training import checkpoint, schedule
from rnnsearch.training.console import say
from rnnsearch.training.corpus import prepare_corpus
from rnnsearch.training.distributed import SINGLE_PROCESS, World, join_world, leave_world
from rnnsearch.training.loss import sequence_loss
from rnnsearch.training.reporting import Reporter
from rnnsearch.training.schedule import Progress
from rnnsearch.training.validation import Validator
from rnnsearch.translator import (
    Translator,
    resolve_device,
)

M_ARENA_MAX = -8  # a mallopt() parameter, from glibc's malloc.h
ONEDNN_CACHE_CAPACITY = "128"  # compiled oneDNN primitives kept, against oneDNN's default of 1,024


def seed_generators(seed: int, rank: int, step: int) -> None:
    """Seed torch's generators (the CPU's and every CUDA device's) from the run's seed,
    this process's rank and the step, so that each rank draws its own dropout masks and
    a run resumed at `step` draws the same ones as a run that never stopped."""
    digest = hashlib.blake2b(f"{seed}:{rank}:{step}".encode(), digest_size=8).digest()
    torch.manual_seed(int.from_bytes(digest, "little"))


def configure_cpu(threads: int | None) -> None:
    """Threads matched to the cores, one malloc arena for all of them, and a smaller
    oneDNN cache.

    glibc gives each allocating thread an arena whose freed blocks only that arena
    reuses. One arena, with glibc's default return of freed memory to the system,
    lowered the trainer's peak RSS at the same speed.

    In bf16, the CPU's matrix products run on oneDNN, which compiles code for every
    shape it meets and keeps up to 1,024 of them; batches of varying size meet many
    shapes, and a bf16 run's memory kept growing. Keeping 128 lowers the peak, with the
    same losses and no loss of speed. Both are measured in BENCHMARKS.md, "Where the
    time goes, and how close to the machine's ceiling". oneDNN reads the capacity when
    it first runs, so a value set in the environment wins.
    """
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", ONEDNN_CACHE_CAPACITY)
    torch.set_num_threads(threads or len(os.sched_getaffinity(0)))
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(M_ARENA_MAX, 1)


@contextmanager
def flushing_denormals() -> Iterator[None]:
    """Denormal floats flushed to zero while training, and the processor's default after.

    Tiny values (below 1e-38) that reach the weights or Adam's moments make every
    matrix product that touches them run in slow microcode, which slowed training many
    times over (BENCHMARKS.md, "Where the time goes, and how close to the machine's
    ceiling"). Flushing changes only values below float32's normal range. The setting
    is process-wide, so it is undone afterwards for whatever else runs in the process.
    """
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def training_step(
    model,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    label_smoothing: float,
    clip_norm: float,
    world: World = SINGLE_PROCESS,
    precision: str = "fp32",
    graphed: GraphedLoss | None = None,
) -> tuple[float, int]:
    """One update on the per-token mean loss, gradients clipped to `clip_norm`.

    Under DDP (`model` wrapped, `world` of N ranks) the mean is over the tokens of all
    ranks' batches: DDP averages the N gradients, hence the factor N. With precision
    bf16 the forward pass runs under bfloat16 autocast. `graphed`, on a GPU, computes
    the loss with CUDA graphs instead. Returns this rank's summed loss and its number
    of target tokens.
    """
    if graphed is not None:
        loss, tokens = graphed(batch)
    else:
        with torch.autocast(batch.src.device.type, dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss, tokens = sequence_loss(model, batch, label_smoothing)
    optimizer.zero_grad(set_to_none=True)
    (loss / world.total(tokens) * world.size).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    optimizer.step()
    return loss.item(), tokens


class Trainer:
    def __init__(self, config: Config, model_dir: str | Path):
        self.config = config
        self.model_dir = Path(model_dir)
        self.world = SINGLE_PROCESS
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
        self.world = join_world(self.device)
        try:
            with flushing_denormals():
                self._run(resume and not restart, restart=restart)
        finally:
            # The DDP wrapper holds the process group's worker threads: it must go while
            # the group and the interpreter are alive, not in a garbage collection at exit,
            # where gloo aborts the process.
            self.trainee = None
            gc.collect()
            leave_world(self.world)
        return self.progress

    def _run(self, resume: bool, *, restart: bool) -> None:
        config, options, world = self.config, self.config.train, self.world
        if restart:
            self._say(f"{self.model_dir}: no checkpoint to resume from (stopped before its first one); starting again")
        self.device = world.device(self.device)
        configure_cpu(options.threads or world.cpu_threads())
        if world.is_main:
            checkpoint.remove_temporaries(self.model_dir)
            if not resume:
                self._forget_an_earlier_start()
        torch.manual_seed(options.seed)
        self.corpus, src_subwords, tgt_subwords = prepare_corpus(config, self.model_dir, resume, world)
        sizes = source_and_target_sizes(config, src_subwords, tgt_subwords)
        self.model = build_model(config.model, *sizes).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=options.learning_rate, fused=True)
        self.translator = Translator(self.model, src_subwords, tgt_subwords, config)
        self._record = model_directory.files_record(self.model_dir, src_subwords, tgt_subwords)
        self.validator = Validator(
            self.translator, self.corpus, config, alignments=self.model_dir / model_directory.ALIGNMENTS
        )
        if resume:
            self._restore()
        elif options.init_from:
            self._start_from(Path(options.init_from))
        seed_generators(options.seed, world.rank, self.progress.step)
        self.trainee = self.model
        if world.distributed:
            device_ids = [self.device.index] if self.device.type == "cuda" else None
            self.trainee = torch.nn.parallel.DistributedDataParallel(self.model, device_ids=device_ids)
        chosen = kernels.choose(
            self.device,
            purpose="train",
            precision=options.precision,
            cuda_graphs=options.cuda_graphs and not world.distributed,
        )
        self.graphed = None
        if chosen.cuda_graphs:
            self.graphed = GraphedLoss(self.model, options.label_smoothing, config.data.max_length + 1)
        self._say(
            f"model: {sum(p.numel() for p in self.model.parameters()):,} parameters on {self.device}"
            + (f", {world.size} processes" if world.distributed else "")
            + f", kernels: {chosen.name}"
            + (", decoder replayed as CUDA graphs" if self.graphed else "")
        )
        with kernels.use(chosen):
            self._loop()

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

    def _next_batch(self, order: EpochBatches) -> tuple[EpochBatches, np.ndarray]:
        """This rank's batch of the next step: a step takes one batch per rank from the
        epoch's order; an epoch's last batches too few for every rank are skipped."""
        progress, options, world = self.progress, self.config.train, self.world
        if progress.batch_in_epoch + world.size > len(order):
            progress.epoch += 1
            progress.batch_in_epoch = 0
            order = epoch_batches(
                self.corpus.train, options.batch_tokens, options.max_batch_sentences, options.seed, progress.epoch
            )
        progress.batch_in_epoch += world.size
        return order, order[progress.batch_in_epoch - world.size + world.rank]

    def _loop(self) -> None:
        options, progress = self.config.train, self.progress
        order = epoch_batches(
            self.corpus.train, options.batch_tokens, options.max_batch_sentences, options.seed, progress.epoch
        )
        self._last_tick = time.monotonic()
        loss_sum, tokens, compute_seconds, last_validated = 0.0, 0, 0.0, progress.step
        self.report = Reporter(self.config, self.model_dir, progress, main=self.world.is_main)
        self.model.train()
        stop = False
        while not stop and not self.world.any(self._budget_spent()):
            tick = time.perf_counter()
            order, indices = self._next_batch(order)
            batch = make_batch([self.corpus.train[i] for i in indices]).to(self.device)
            for group in self.optimizer.param_groups:
                group["lr"] = schedule.learning_rate(options, progress)
            loss, n_tokens = training_step(
                self.trainee,
                self.optimizer,
                batch,
                options.label_smoothing,
                options.clip_norm,
                self.world,
                options.precision,
                self.graphed,
            )
            progress.step += 1
            loss_sum += loss
            tokens += n_tokens
            compute_seconds += time.perf_counter() - tick
            self.report.stepped()
            if progress.step % options.log_every == 0:
                loss_sum, tokens = self.world.total(loss_sum), self.world.total(tokens)
                row = {
                    "step": progress.step,
                    "train_loss": loss_sum / tokens,
                    "lr": schedule.learning_rate(options, progress),
                    "tokens_per_second": tokens / compute_seconds,
                    "epoch": progress.epoch,
                }
                self._log(row)
                self.report.trained(row, progress)
                loss_sum, tokens, compute_seconds = 0.0, 0, 0.0
            if progress.step % options.valid_every == 0:
                stop = self._validate_and_save()
                last_validated = progress.step
        if progress.step != last_validated or self._validation_capped():
            self._validate_and_save(everything=True)
        self.report.close()

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
                self.model_dir / model_directory.BEST, model_directory.model_tensors(self.model), row | self._record
            )
        self._log(row)
        self.report.validated(row, self.model_dir / model_directory.ALIGNMENTS)
        scores = (
            f"digit error rate {row['valid_der']:.2f}%, strings right {row['valid_accuracy']:.1f}%"
            if self.config.speech
            else f"BLEU {row['valid_bleu']:.2f}"
        )
        if "valid_sentences_all" in row:
            scores += f" on the first {options.valid_bleu_sentences}; on all {row['valid_sentences_all']}: " + (
                f"digit error rate {row['valid_der_all']:.2f}%"
                if self.config.speech
                else f"{row['valid_bleu_all']:.2f}"
            )
        self._say(
            f"step {progress.step}: valid loss {row['valid_loss']:.3f}, ppl {row['valid_ppl']:.2f}, "
            f"greedy {scores}{' (best)' if verdict.improved else ''}"
        )
        self._clock()
        if options.keep_checkpoints and self.world.is_main:
            tensors = model_directory.model_tensors(self.model)
            checkpoint.keep_checkpoint(
                self.model_dir, progress.step, tensors, row | self._record, options.keep_checkpoints
            )
        self._save_last()
        return verdict.stop

    def _log(self, row: dict) -> None:
        if not self.world.is_main:
            return
        path = self.model_dir / model_directory.METRICS
        files.append_line(path, json.dumps(row))
        if "valid_loss" in row:
            learning_curves(checkpoint.read_metrics(path), self.model_dir / model_directory.LEARNING_CURVE)

    def _save_last(self) -> None:
        """Write the resume point (rank 0), and seed every rank's generators as a run
        resumed from it will (see the module's docstring)."""
        if self.world.is_main:
            tensors = model_directory.model_tensors(self.model)
            optimizer_tensors, optimizer_info = checkpoint.optimizer_tensors(self.optimizer)
            tensors.update(optimizer_tensors)
            info = {"progress": asdict(self.progress), **optimizer_info, **self._record}
            model_directory.write_tensors(self.model_dir / model_directory.LAST, tensors, info)
        seed_generators(self.config.train.seed, self.world.rank, self.progress.step)

    def _start_from(self, source: Path) -> None:
        """Fine-tuning: the weights of the model in `source`, with a fresh optimizer,
        schedule and best score."""
        path = model_directory.weights_path(source)
        info = model_directory.load_weights(self.model, path)
        self._say(f"starting from the weights of {path}" + (f" (step {info['step']})" if "step" in info else ""))

    def _restore(self) -> None:
        path = self.model_dir / model_directory.LAST
        tensors, info = model_directory.read_tensors(path)
        model_directory.require_finite(tensors, path, refusal="a run cannot resume from it")
        model_directory.check_files(info, path, self.translator.src_subwords, self.translator.tgt_subwords)
        model_directory.assign_weights(self.model, tensors, path)
        checkpoint.restore_optimizer(self.optimizer, tensors, info["param_groups"])
        self.progress = Progress(**info["progress"])
        if self.world.is_main:
            self._forget_metrics_after(self.progress.step)
            checkpoint.forget_checkpoints_after(self.model_dir, self.progress.step)
        self._say(f"resuming {self.model_dir} at step {self.progress.step}")

    def _forget_an_earlier_start(self) -> None:
        """What a run stopped before its first checkpoint left: its log rows and kept
        weights, which a new run from step 0 must not append to or mix with its own."""
        (self.model_dir / model_directory.METRICS).unlink(missing_ok=True)
        checkpoint.forget_checkpoints_after(self.model_dir, 0)

    def _forget_metrics_after(self, step: int) -> None:
        """Drop log rows of steps after the checkpoint, which the resumed run will redo,
        and a row torn by the kill."""
        path = self.model_dir / model_directory.METRICS
        if path.exists():
            rows = [row for row in checkpoint.read_metrics(path) if row["step"] <= step]
            files.atomic_write(path, "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8"))

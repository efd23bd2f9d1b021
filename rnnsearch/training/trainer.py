"""Training a model: the run set up, then the training loop (loop.py) with validation,
the best weights and the resume point at each checkpoint.

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
from dataclasses import asdict
from pathlib import Path

from rnnsearch import kernels
from rnnsearch.config import Config
from rnnsearch.devices import resolve_device
from rnnsearch.errors import UserError
from rnnsearch.evaluation.plots import learning_curves
from rnnsearch.files import model_directory
from rnnsearch.files.metrics_log import read_metrics
from rnnsearch.training import checkpoint, schedule
from rnnsearch.training.distributed import join_world, leave_world
from rnnsearch.training.environment import flushing_denormals, seed_generators
from rnnsearch.training.loop import TrainingLoop
from rnnsearch.training.run_data import CorpusKind
from rnnsearch.training.schedule import Progress
from rnnsearch.training.setup import TrainingSetup, set_up


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
        if resume and started:
            checkpoint.check_resumed_config(self.config, self.model_dir)
        world = join_world(self.device)
        loop: TranslationLoop | None = None
        setup: TrainingSetup | None = None
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
                loop = TranslationLoop(self.config, self.model_dir, setup, self.kind)
                with kernels.use(setup.kernels):
                    loop.run()
                self.progress = loop.progress
        finally:
            # The DDP wrapper holds the process group's worker threads: it must go while
            # the group and the interpreter are alive, not in a garbage collection at exit,
            # where gloo aborts the process.
            if loop is not None:
                loop.context.ddp = None
            setup = None
            gc.collect()
            leave_world(world)
        return self.progress


class TranslationLoop(TrainingLoop):
    """The training loop of a translation model: every weight trains, and a checkpoint
    validates, keeps the best weights (and, with train.keep_checkpoints, this step's)
    and writes the resume point."""

    advice = (
        "Too large a learning rate or guided alignment weight does this: lower train.learning_rate or "
        "train.guided_alignment_weight"
    )

    def __init__(self, config: Config, model_dir: Path, setup: TrainingSetup, kind: CorpusKind):
        super().__init__(config, model_dir, context=setup.context, pairs=setup.corpus.train, progress=setup.progress)
        self.kind, self.corpus, self.validator, self.record = kind, setup.corpus, setup.validator, setup.record

    def owes_a_last_checkpoint(self, last: int) -> bool:
        """The last step is validated if the last validation was not of it, or not of the whole set."""
        return super().owes_a_last_checkpoint(last) or self._validation_capped()

    def _validation_capped(self) -> bool:
        """Whether validations translate only the first train.valid_bleu_sentences."""
        cap = self.config.train.valid_bleu_sentences
        return cap is not None and cap < len(self.corpus.valid_sources)

    def checkpoint(self, *, everything: bool = False) -> bool:
        """Validate, update schedule and best checkpoint, keep this step's weights (with
        train.keep_checkpoints), save the last one; True to stop. With `everything`, the
        whole validation set is translated (see `Validator`)."""
        progress, options = self.progress, self.config.train
        row = self.world.from_main(
            lambda: {"step": progress.step, **self.validator(progress.step, everything=everything)}
        )
        selection = self.config.selection
        metric = selection.better(row[selection.key])
        verdict = schedule.validated(options, progress, metric)
        if verdict.improved and self.world.is_main:
            model_directory.write_tensors(
                self.model_dir / model_directory.BEST,
                model_directory.model_tensors(self.context.model),
                row | self.record,
            )
        self.log(row)
        if self.world.is_main:
            learning_curves(
                read_metrics(self.model_dir / model_directory.METRICS),
                self.model_dir / model_directory.LEARNING_CURVE,
                self.config.data.quality,
            )
        self.report.validated(row, self.model_dir / model_directory.ALIGNMENTS)
        scores = self.kind.scores_line(row)
        if "valid_sentences_all" in row:
            scores += f" on the first {options.valid_bleu_sentences}; on all {row['valid_sentences_all']}: "
            scores += self.kind.scores_line(row, "_all")
        self.say(
            f"step {progress.step}: valid loss {row['valid_loss']:.3f}, ppl {row['valid_ppl']:.2f}, "
            f"greedy {scores}{' (best)' if verdict.improved else ''}"
        )
        self.clock()
        if options.keep_checkpoints and self.world.is_main:
            tensors = model_directory.model_tensors(self.context.model)
            checkpoint.keep_checkpoint(
                self.model_dir, progress.step, tensors, row | self.record, options.keep_checkpoints
            )
        self._save_last()
        return verdict.stop

    def _save_last(self) -> None:
        """Write the resume point (rank 0), and seed every rank's generators as a run
        resumed from it will (see the module's docstring)."""
        if self.world.is_main:
            tensors = model_directory.model_tensors(self.context.model)
            optimizer_tensors, optimizer_info = checkpoint.optimizer_tensors(self.context.optimizer)
            tensors.update(optimizer_tensors)
            info = {"progress": asdict(self.progress), **optimizer_info, **self.record}
            model_directory.write_tensors(self.model_dir / model_directory.LAST, tensors, info)
        seed_generators(self.config.train.seed, self.world.rank, self.progress.step)

"""What a run tells whoever watches it, between validations: on a terminal, a progress
bar; when standard error is a file, a pipe or a CI log, a line every train.log_every
steps, so that a slow run can be told from a stuck one; and, with train.tensorboard, the
same rows as TensorBoard curves (training/events.py).

metrics.jsonl stays the record of the run (the trainer writes it); what this module
writes is for reading while the run goes on.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from rnnsearch.config import Config
from rnnsearch.config.train import TrainConfig
from rnnsearch.files.metrics_log import MetricsRow
from rnnsearch.training import schedule
from rnnsearch.training.events import EventLog
from rnnsearch.training.schedule import Progress


def seconds_left(options: TrainConfig, progress: Progress) -> float | None:
    """Seconds until the budget is spent: what is left of max_minutes, or max_steps at the
    run's pace so far (wall time across resumed runs, validations included), whichever
    ends first; None without a budget or, with max_steps alone, at the first step."""
    left = []
    if options.max_minutes is not None:
        left.append(60 * options.max_minutes - progress.seconds)
    if options.max_steps is not None and progress.step > 1:  # the clock last read before this step
        left.append((options.max_steps - progress.step) * progress.seconds / (progress.step - 1))
    return max(0.0, min(left)) if left else None


def log_line(row: MetricsRow, seconds: float | None) -> str:
    """One training row as a line: step, epoch (counted from 1), the mean loss since the
    last line, the learning rate, target tokens per second of training and the time left."""
    line = (
        f"step {row['step']}, epoch {row['epoch'] + 1}: loss {row['train_loss']:.3f}, lr {row['lr']:.2e}, "
        f"{row['tokens_per_second']:,.0f} target tokens/s"
    )
    if seconds is not None:
        minutes, rest = divmod(int(seconds), 60)
        line += f", {minutes}:{rest:02d} left"
    return line


class Reporter:
    """The progress bar or the log lines of one process of a run, and its event log.

    Only the main process (`main`) speaks, on standard error.
    A run resumed at `progress.step` continues the same bar and the same curves.
    """

    def __init__(self, config: Config, model_dir: Path, progress: Progress, *, main: bool):
        self.options = config.train
        self.stream = sys.stderr
        self.lines = main and not self.stream.isatty()
        self.bar = tqdm(
            total=self.options.max_steps,
            initial=progress.step,
            unit="step",
            dynamic_ncols=True,
            file=self.stream,
            disable=not main or self.lines,
        )
        self.events = None
        if main and self.options.tensorboard:
            self.events = EventLog(model_dir, first_step=progress.step + 1, scores=config.data.scores)

    def stepped(self) -> None:
        """One more step done."""
        self.bar.update(1)

    def trained(self, row: MetricsRow, progress: Progress) -> None:
        """A training row of metrics.jsonl (train_loss, lr, tokens_per_second, epoch)."""
        if self.lines:
            self.bar.write(log_line(row, seconds_left(self.options, progress)), file=self.stream)
            self.stream.flush()
        else:
            self.bar.set_postfix(
                loss=f"{row['train_loss']:.3f}",
                tok_s=f"{row['tokens_per_second']:.0f}",
                **schedule.time_left(self.options, progress),
            )
        if self.events is not None:
            self.events.scalars(row)

    def validated(self, row: MetricsRow, alignments: Path) -> None:
        """A validation row of metrics.jsonl, and the heatmaps it drew in `alignments`."""
        if self.events is not None:
            self.events.scalars(row)
            self.events.heatmaps(int(row["step"]), alignments)
            self.events.flush()

    def close(self) -> None:
        """End the bar, and put what the event log holds on disk."""
        self.bar.close()
        if self.events is not None:
            self.events.close()

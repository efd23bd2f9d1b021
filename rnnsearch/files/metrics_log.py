"""A run's metrics log (metrics.jsonl in a model directory): one JSON object a line, one
`MetricsRow` each, appended as training goes and read back to plot, resume and report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from rnnsearch.errors import UserError
from rnnsearch.files import atomic

MetricsRow = dict[str, float]
"""One line of the log, a metric's value by its name: a training row (every
`train.log_every` steps), a validation row, or a row of `rnnsearch train-aligner`.

    step                  the update the row was logged after (an int, as every count here)
    epoch                 training rows: the epoch the step belongs to
    train_loss            the objective's per-token loss since the last training row
                          (train-aligner: the alignment module's)
    lr                    the learning rate of the step
    tokens_per_second     target tokens per second of computing since the last row
    valid_loss, valid_ppl validation: the per-token cross-entropy over the whole set, its perplexity
    valid_sentences_all   how many sentences a validation of the whole set translated

and the scores of the run's kind of data, as its config section declares them
(rnnsearch.config.data.ValidationScore: valid_bleu for text, …), over the first
train.valid_bleu_sentences, and with "_all" over the whole set where that is larger.
"""


def append_row(path: Path, row: MetricsRow) -> None:
    """Add `row` to the log at `path`, as one line."""
    atomic.append_line(path, json.dumps(row))


def read_metrics(path: Path) -> list[MetricsRow]:
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
        except (ValueError, RecursionError):  # RecursionError: arrays nested past the stack
            row = None
        if not isinstance(row, dict) or not isinstance(row.get("step"), int):
            if number == len(lines):
                break
            raise UserError(f"{path}, line {number}: not a metrics row (corrupt metrics log)")
        rows.append(cast(MetricsRow, row))  # a JSON object with an int step: a row as appended
    return rows


def forget_rows_after(path: Path, step: int) -> None:
    """Drop the rows of the log at `path` (if any) of steps after `step`, a checkpoint's,
    which a run resumed from it redoes, and a row torn by a kill: the one home of this
    for every run that resumes."""
    if path.exists():
        rows = [row for row in read_metrics(path) if row["step"] <= step]
        atomic.atomic_write(path, "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8"))

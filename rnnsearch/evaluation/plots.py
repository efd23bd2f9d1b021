"""Figures for inspecting a trained model: attention, training, length.

Figures are built with matplotlib's object-oriented ``Figure`` API rather
than ``pyplot``: no GUI backend is ever selected, no window can open, the
global backend of a caller (e.g. a notebook) is left alone, and a figure is
garbage-collected like any other object, so plotting every few thousand steps
of a long training run leaks nothing.  The file suffix picks the renderer (Agg
for PNG, SVG, PDF).  A figure is written to a temporary file and renamed into
place, so a kill while drawing leaves the previous figure, never a torn one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from rnnsearch.config.data import ValidationScore
from rnnsearch.files.atomic import replacing
from rnnsearch.files.metrics_log import MetricsRow

_CELL_INCHES = 0.3  # side of one attention cell
_CHAR_INCHES = 0.075  # rough width of one tick-label character at 9 pt
_MAX_INCHES = 30.0  # cap so very long sentences still render
_DPI = 150
FORMATS = ("png", "svg", "pdf")
"""The file formats a figure is written in, named by the file's suffix."""


def _save(fig: Figure, path: str | os.PathLike) -> None:
    """Write `fig` to `path` atomically, in the format its suffix names (PNG without one)."""
    path = Path(path)
    with replacing(path) as temporary:
        fig.savefig(temporary, format=path.suffix[1:].lower() or "png", dpi=_DPI, bbox_inches="tight")


def _label_inches(tokens: Sequence[str]) -> float:
    return 0.3 + _CHAR_INCHES * max(len(token) for token in tokens)


def alignment_heatmap(
    alignment: Sequence[Sequence[float]] | np.ndarray,
    source_tokens: list[str],
    target_tokens: list[str],
    path: str | os.PathLike,
    title: str | None = None,
    seconds_per_column: float | None = None,
) -> None:
    """Save an attention matrix drawn like Figure 3 of Bahdanau et al. (2015).

    With ``seconds_per_column`` the source is audio: its axis is time in seconds,
    labelled every half second, instead of one label per token, and the gray scale
    runs up to the largest weight (shown in a colour bar), since attention spread over
    a few frames would otherwise be too dark to see.

    ``alignment[i][j]`` is the weight of target token i on source token j.
    Cells are grayscale on a fixed 0..1 scale (black = 0, white = 1) so
    figures are comparable across sentences; source tokens run along the top,
    target tokens down the side.
    """
    weights = np.asarray(alignment, dtype=float)
    expected = (len(target_tokens), len(source_tokens))
    if weights.shape != expected or 0 in expected:
        raise ValueError(
            f"alignment has shape {weights.shape} but the tokens need a non-empty shape {expected} (target x source)"
        )

    if seconds_per_column is not None:
        fig = Figure(figsize=(9.0, 1.2 + 0.3 * expected[0]))
        ax = fig.add_subplot()
        image = ax.imshow(weights, cmap="gray", vmin=0.0, vmax=weights.max(), aspect="auto", interpolation="nearest")
        fig.colorbar(image, ax=ax, pad=0.01, label="α")
        step = max(1, round(0.5 / seconds_per_column))
        ticks = range(0, expected[1], step)
        ax.set_xticks(ticks, [f"{t * seconds_per_column:.1f}" for t in ticks], fontsize=9)
        ax.set_xlabel("time (s)")
    else:
        width = min(_label_inches(target_tokens) + _CELL_INCHES * expected[1], _MAX_INCHES)
        height = min(_label_inches(source_tokens) + _CELL_INCHES * expected[0] + (0.4 if title else 0.0), _MAX_INCHES)
        fig = Figure(figsize=(max(width, 2.0), max(height, 2.0)))
        ax = fig.add_subplot()
        ax.imshow(weights, cmap="gray", vmin=0.0, vmax=1.0, aspect="equal", interpolation="nearest")
        ax.xaxis.tick_top()
        ax.set_xticks(range(expected[1]), source_tokens, rotation=90, fontsize=9)
    ax.set_yticks(range(expected[0]), target_tokens, fontsize=9)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    _save(fig, path)


def _series(records: list[dict], key: str) -> tuple[list[float], list[float]]:
    rows = [row for row in records if "step" in row and row.get(key) is not None]
    return [row["step"] for row in rows], [row[key] for row in rows]


def learning_curves(records: list[MetricsRow], path: str | os.PathLike, quality: ValidationScore) -> None:
    """Save training/validation loss (top) and the validation `quality` score of the run's
    kind of data (bottom: BLEU, digit error rate, …) vs step.

    ``records`` are metric rows as logged during training; a row contributes
    to every curve whose key it has, so early runs without validation rows
    plot only the training loss.
    """
    fig = Figure(figsize=(7.0, 6.0))
    loss_ax, bleu_ax = fig.subplots(2, 1, sharex=True)
    loss_ax.plot(*_series(records, "train_loss"), label="training loss")
    loss_ax.plot(*_series(records, "valid_loss"), marker="o", label="validation loss")
    loss_ax.set_ylabel("loss")
    loss_ax.legend()
    score, label = quality.key, quality.label
    bleu_ax.plot(*_series(records, score), marker="o", color="tab:green")
    bleu_ax.set_ylabel(label)
    bleu_ax.set_xlabel("step")
    for ax in (loss_ax, bleu_ax):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)


def _bucket_start(label: str) -> int:
    """The first length of a bucket's label ("11-20", "61+")."""
    return int(label.split("-")[0].rstrip("+"))


def bleu_by_length_plot(series: dict[str, list[tuple[str, int, float]]], path: str | os.PathLike) -> None:
    """Save BLEU against source-length bucket, one line per named series.

    The analogue of Bahdanau et al.'s Figure 2; each series is the output of
    ``metrics.bleu_by_length``.  Buckets are ordered by their lower bound, so
    series with different empty buckets still share one x axis.
    """
    labels = sorted({label for rows in series.values() for label, _, _ in rows}, key=_bucket_start)
    position = {label: index for index, label in enumerate(labels)}
    fig = Figure(figsize=(max(5.0, 0.8 * len(labels) + 2.0), 4.0))
    ax = fig.add_subplot()
    for name, rows in series.items():
        ax.plot([position[label] for label, _, _ in rows], [score for _, _, score in rows], marker="o", label=name)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel("BLEU")
    ax.grid(alpha=0.3)
    if series:
        ax.legend()
    fig.tight_layout()
    _save(fig, path)

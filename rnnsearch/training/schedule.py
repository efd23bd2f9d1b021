"""Training's schedule: the learning rate at every step, the budget of steps and
minutes, and what a validation decides (a new best, a lower rate, the end).

These are the config's train.* rules in one place, as functions of the counters that
--resume restores (`Progress`), so that a resumed run follows the same schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

from rnnsearch.config.train import TrainConfig


@dataclass
class Progress:
    """Counters that --resume restores, so a resumed run goes on exactly where it stopped."""

    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0
    lr_scale: float = 1.0
    best: float | None = None
    best_step: int = 0
    validations_without_gain: int = 0
    plateau: int = 0
    seconds: float = 0.0


def learning_rate(options: TrainConfig, progress: Progress) -> float:
    """The rate of the next step: a linear warm-up over warmup_steps, then the plateau
    schedule's scale or the annealing at the end of the budget, never below min_learning_rate."""
    warmup = options.warmup_steps
    ramp = min(1.0, (progress.step + 1) / warmup) if warmup else 1.0
    decay = progress.lr_scale if options.lr_schedule == "plateau" else annealing(options, progress)
    return max(options.learning_rate * decay * ramp, options.min_learning_rate)


def budget_fraction(options: TrainConfig, progress: Progress) -> float:
    """How much of the training budget is spent: steps or minutes, whichever runs out first."""
    fractions = [0.0]
    if options.max_steps is not None:
        fractions.append(progress.step / options.max_steps)
    if options.max_minutes is not None:
        fractions.append(progress.seconds / (60 * options.max_minutes))
    return min(1.0, max(fractions))


def annealing(options: TrainConfig, progress: Progress) -> float:
    """1 until the last `anneal_fraction` of the budget, then down in a straight line to 0
    at its end: a short run gains more from annealing at its end than from waiting for
    plateaus it barely reaches, and keeps the full rate for most of its time."""
    left = 1.0 - budget_fraction(options, progress)
    return min(1.0, left / options.anneal_fraction)


def budget_spent(options: TrainConfig, progress: Progress) -> bool:
    """Whether max_steps or max_minutes is reached."""
    return (options.max_steps is not None and progress.step >= options.max_steps) or (
        options.max_minutes is not None and progress.seconds >= 60 * options.max_minutes
    )


def time_left(options: TrainConfig, progress: Progress) -> dict[str, str]:
    """Time left under `max_minutes`, for the progress bar (tqdm's ETA covers max_steps)."""
    if options.max_minutes is None:
        return {}
    seconds = max(0, int(60 * options.max_minutes - progress.seconds))
    return {"left": f"{seconds // 60}:{seconds % 60:02d}"}


@dataclass(frozen=True)
class Verdict:
    """What one validation decided: whether it is the best so far, and whether training stops."""

    improved: bool
    stop: bool


def validated(options: TrainConfig, progress: Progress, metric: float) -> Verdict:
    """Record a validation scoring `metric` (higher is better) in `progress`.

    A new best resets both counts of validations without gain. Under the plateau
    schedule, more than lr_patience of them in a row scale the rate by lr_decay_factor
    (and the count starts again), and `patience` of them since the best stop training;
    the annealing schedule runs to the end of its budget.
    """
    improved = progress.best is None or metric > progress.best
    if improved:
        progress.best, progress.best_step = metric, progress.step
        progress.validations_without_gain = progress.plateau = 0
        return Verdict(improved=True, stop=False)
    progress.validations_without_gain += 1
    progress.plateau += 1
    if options.lr_schedule != "plateau":
        return Verdict(improved=False, stop=False)
    if progress.plateau > options.lr_patience:
        progress.lr_scale *= options.lr_decay_factor
        progress.plateau = 0
    return Verdict(improved=False, stop=progress.validations_without_gain >= options.patience)

"""Training's schedule: the learning rate, the budget, and what validations decide."""

import pytest

from rnnsearch.config.train import TrainConfig
from rnnsearch.training.schedule import Progress, budget_spent, learning_rate, time_left, validated


def plateau(**options) -> TrainConfig:
    return TrainConfig(lr_schedule="plateau", **({"lr_patience": 1, "patience": 3, "warmup_steps": 0} | options))


def test_the_rate_warms_up_linearly_then_holds():
    options = TrainConfig(lr_schedule="plateau", learning_rate=1e-3, warmup_steps=4, min_learning_rate=0.0)
    rates = [learning_rate(options, Progress(step=step)) for step in range(6)]
    assert rates == pytest.approx([2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3])


def test_annealing_holds_the_rate_then_falls_to_zero_over_the_last_fraction_of_the_budget():
    options = TrainConfig(
        lr_schedule="anneal", max_steps=100, anneal_fraction=0.25, warmup_steps=0, min_learning_rate=0.0
    )
    rates = {step: learning_rate(options, Progress(step=step)) for step in (0, 75, 80, 90, 100)}
    assert rates == pytest.approx({0: 1e-3, 75: 1e-3, 80: 8e-4, 90: 4e-4, 100: 0.0})
    assert learning_rate(options.model_copy(update={"min_learning_rate": 1e-5}), Progress(step=100)) == 1e-5


def test_the_minutes_budget_anneals_and_ends_training_as_the_steps_do():
    options = TrainConfig(lr_schedule="anneal", max_minutes=10, warmup_steps=0, min_learning_rate=0.0)
    assert learning_rate(options, Progress(seconds=540)) == pytest.approx(0.4e-3)
    assert not budget_spent(options, Progress(seconds=599))
    assert budget_spent(options, Progress(seconds=600))
    assert time_left(options, Progress(seconds=59)) == {"left": "9:01"}


def test_the_plateau_rule_decays_after_lr_patience_and_stops_after_patience():
    options, progress = plateau(lr_decay_factor=0.5), Progress()
    verdicts = []
    for step, metric in enumerate([10.0, 9.0, 9.5, 11.0, 8.0, 8.0, 8.0], start=1):
        progress.step = step
        verdicts.append(validated(options, progress, metric))
    assert [v.improved for v in verdicts] == [True, False, False, True, False, False, False]
    assert [v.stop for v in verdicts] == [False] * 6 + [True]
    assert progress.best == 11.0 and progress.best_step == 4
    assert progress.lr_scale == 0.25  # halved at each second validation in a row without gain


def test_an_annealed_run_never_stops_early():
    options, progress = TrainConfig(lr_schedule="anneal", max_steps=10, patience=1), Progress()
    verdicts = [validated(options, progress, metric) for metric in [5.0, 4.0, 3.0, 2.0]]
    assert not any(v.stop for v in verdicts)
    assert progress.lr_scale == 1.0

"""Trajectories of the learning tests' two models on this machine.

    python bench/learning.py [--seeds 0,1,2] [--every 50] [--models attentive,fixed]

Trains RNNsearch and the fixed-context model exactly as `tests/integration/
test_learning.py` does (its data, schedule and step budget; `--seeds` sets the seed of
the model's initialisation, which the test leaves at 0) and prints, every `--every`
steps, each model's exact-match accuracy on the held-out reversals: all of them, the
short ones and the long ones, with the seconds spent training; and at the end
RNNsearch's AER against reversal's true alignment, its links read from α in each way
`rnnsearch.alignments.readings.READINGS` offers. Run it a second time under
`ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2` for the
trajectories with AVX2 kernels, as `make test` runs the learning tests with both.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rnnsearch.alignments.readings import READINGS  # noqa: E402
from rnnsearch.model.settings import AttentionConfig  # noqa: E402
from tests.integration.test_learning import (  # noqa: E402
    STEPS,
    exact_match,
    long_pairs,
    mirror_alignment_error,
    reversals,
    short_pairs,
    train,
)

MODELS = {"attentive": AttentionConfig(score="additive", size=64), "fixed": "none"}


def trajectory(name: str, seed: int, every: int) -> None:
    training_pairs, held_out = reversals(20000, seed=1), reversals(300, seed=2)
    short, long = short_pairs(held_out), long_pairs(held_out)
    clock = {"start": time.perf_counter(), "training": 0.0}

    def report(step: int, model) -> None:
        if step % every and step != STEPS:
            return
        clock["training"] += time.perf_counter() - clock["start"]
        scores = [exact_match(model, pairs) for pairs in (held_out, short, long)]
        print(
            f"{name:9} seed {seed}  step {step:4}  all {scores[0]:.3f}  short {scores[1]:.3f}  "
            f"long {scores[2]:.3f}  {clock['training']:6.1f} s training",
            flush=True,
        )
        clock["start"] = time.perf_counter()

    model = train(MODELS[name], training_pairs, seed=seed, after_step=report)
    if name == "attentive":
        errors = [f"{r} {mirror_alignment_error(model, held_out, reading=r):.2f}%" for r in READINGS]
        print(f"{name:9} seed {seed}  AER against the mirror alignment, by reading: {', '.join(errors)}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0", help="comma-separated seeds of the models' initialisation")
    parser.add_argument("--every", type=int, default=50, help="steps between evaluations")
    parser.add_argument("--models", default="attentive,fixed", help=f"comma-separated, of {', '.join(MODELS)}")
    args = parser.parse_args()
    for seed in (int(s) for s in args.seeds.split(",")):
        for name in args.models.split(","):
            trajectory(name, seed, args.every)


if __name__ == "__main__":
    main()

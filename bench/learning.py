"""Trajectories of the learning tests' two models on this machine.

    python bench/learning.py [--seeds 0,1,2] [--every 50] [--models attentive,fixed]

Trains RNNsearch and the fixed-context model exactly as `tests/integration/
test_learning.py` does (its data, schedule and step budget; `--seeds` sets the seed of
the model's initialisation, which the test leaves at 0) and prints, every `--every`
steps, each model's exact-match accuracy on the held-out reversals: all of them, the
short ones and the long ones, with the seconds spent training; and at the end
RNNsearch's AER against reversal's true alignment, its links read from the row of α
that produced each output and from the next row. Run it a second time under
`ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2` for the
trajectories with AVX2 kernels, as `make test` runs the learning tests with both.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rnnsearch.alignment import hard_alignment  # noqa: E402
from rnnsearch.evaluation.alignment_error import GoldLinks, alignment_error_rate  # noqa: E402
from rnnsearch.model.settings import AttentionConfig  # noqa: E402
from rnnsearch.scoring import teacher_forced  # noqa: E402
from tests.integration.test_learning import (  # noqa: E402
    BATCH_TOKENS,
    STEPS,
    Pairs,
    exact_match,
    long_pairs,
    reversals,
    short_pairs,
    train,
)

MODELS = {"attentive": AttentionConfig(score="additive", size=64), "fixed": "none"}


def mirror_alignment_error(model, pairs: Pairs, *, row_offset: int) -> float:
    """The AER, in percent, of the model's teacher-forced attention against reversal's true
    alignment (output symbol j comes from source symbol n−1−j), read off as the toolkit
    reads word alignments (each output to its argmax source position), output j from
    row j + `row_offset` of α: row j is α_j, computed from s_{j-1} for y_j; row j + 1 is
    computed from s_j, the state that emitted y_j."""
    forced = teacher_forced(model, pairs, batch_tokens=BATCH_TOKENS)
    predicted, mirrors = [], []
    for (source, target), result in zip(pairs, forced, strict=True):
        rows = result.alignment[row_offset:, : len(source)]
        predicted.append([(s, j) for s, j in hard_alignment(rows) if j < len(target)])
        mirror = frozenset((len(source) - 1 - j, j) for j in range(len(target)))
        mirrors.append(GoldLinks(sure=mirror, possible=mirror))
    return alignment_error_rate(predicted, mirrors).aer


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
        print(
            f"{name:9} seed {seed}  AER against the mirror alignment, output j read from row j of α: "
            f"{mirror_alignment_error(model, held_out, row_offset=0):.2f}%; from row j + 1: "
            f"{mirror_alignment_error(model, held_out, row_offset=1):.2f}%",
            flush=True,
        )


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

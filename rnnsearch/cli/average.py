"""`rnnsearch average`: a new model directory of a trained one's mean weights over its
last kept checkpoints."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    """Add `average` to the `rnnsearch` command."""
    average = commands.add_parser(
        "average", help="average the weights of a model directory's last kept checkpoints into a new one"
    )
    average.add_argument("model_dir", help="directory trained with train.keep_checkpoints")
    average.add_argument("-n", type=int, help="average the last N kept checkpoints (default: all)")
    average.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the new model directory")
    average.set_defaults(run=run_average)


def run_average(args: argparse.Namespace) -> None:
    """Write the mean of the last -n kept checkpoints as the new directory's best weights."""
    from rnnsearch.files.model_directory import BEST
    from rnnsearch.training.averaging import average_model

    steps = average_model(args.model_dir, args.output, args.n)
    plural = "s" if len(steps) > 1 else ""
    listed = ", ".join(str(step) for step in steps)
    print(
        f"averaged {len(steps)} checkpoint{plural} of {args.model_dir} (step{plural} {listed}) "
        f"into {Path(args.output) / BEST}"
    )

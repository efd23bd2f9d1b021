"""`rnnsearch average` and `rnnsearch export`: a new model directory made from a trained
one, of its checkpoints' mean weights or as an ONNX Runtime package."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(commands: argparse._SubParsersAction) -> None:
    """Add `average` and `export` to the `rnnsearch` command."""
    average = commands.add_parser(
        "average", help="average the weights of a model directory's last kept checkpoints into a new one"
    )
    average.add_argument("model_dir", help="directory trained with train.keep_checkpoints")
    average.add_argument("-n", type=int, help="average the last N kept checkpoints (default: all)")
    average.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the new model directory")
    average.set_defaults(run=run_average)

    export = commands.add_parser(
        "export", help="write a model as an ONNX Runtime package, for fast CPU search (translate, evaluate, serve)"
    )
    export.add_argument("model_dir", help="trained model directory (its best weights)")
    export.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the package's directory")
    export.add_argument("--int8", action="store_true", help="also write graphs with int8 weights (--precision int8)")
    export.set_defaults(run=run_export)


def run_average(args: argparse.Namespace) -> None:
    """Write the mean of the last -n kept checkpoints as the new directory's best weights."""
    from rnnsearch.model_directory import BEST
    from rnnsearch.training.averaging import average_model

    steps = average_model(args.model_dir, args.output, args.n)
    plural = "s" if len(steps) > 1 else ""
    listed = ", ".join(str(step) for step in steps)
    print(
        f"averaged {len(steps)} checkpoint{plural} of {args.model_dir} (step{plural} {listed}) "
        f"into {Path(args.output) / BEST}"
    )


def run_export(args: argparse.Namespace) -> None:
    """Write the package and report, on stderr, how closely its graphs agree with PyTorch."""
    from rnnsearch.export.package import export_package

    report = export_package(args.model_dir, args.output, int8=args.int8)
    print(
        f"exported {args.model_dir} to {args.output} ({', '.join(report.precisions)}); fp32 graphs agree with "
        f"PyTorch to {report.largest_difference:.1e} on {report.sentences} sample sentences",
        file=sys.stderr,
    )
    if report.int8_same is not None:
        print(
            f"int8 graphs: {report.int8_same} of {report.sentences} sample greedy translations equal fp32's; "
            "measure the BLEU cost with `rnnsearch evaluate OUT_DIR --precision int8`",
            file=sys.stderr,
        )

"""`rnnsearch export`: a trained model written as an ONNX Runtime package."""

from __future__ import annotations

import argparse
import sys


def register(commands: argparse._SubParsersAction) -> None:
    """Add `export` to the `rnnsearch` command."""
    export = commands.add_parser(
        "export", help="write a model as an ONNX Runtime package, for fast CPU search (translate, evaluate, serve)"
    )
    export.add_argument("model_dir", help="trained model directory (its best weights)")
    export.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the package's directory")
    export.add_argument("--int8", action="store_true", help="also write graphs with int8 weights (--precision int8)")
    export.set_defaults(run=run_export)


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

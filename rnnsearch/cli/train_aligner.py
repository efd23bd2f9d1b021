"""`rnnsearch train-aligner`: add the alignment module to a trained model and train it alone."""

from __future__ import annotations

import argparse
from pathlib import Path

from rnnsearch.config.train import ALIGNER_RUN_KEYS


def register(commands: argparse._SubParsersAction) -> None:
    """Add `train-aligner` to the `rnnsearch` command."""
    parser = commands.add_parser(
        "train-aligner",
        help="add the alignment module to a trained model and train it alone, the translation frozen",
        description="Train the alignment module (docs/model.md) of the model in MODEL_DIR on the model's own "
        "training data, every translation weight frozen; the run and the module live in MODEL_DIR/aligner/. "
        f"--set takes the run's own keys: {', '.join(ALIGNER_RUN_KEYS)}.",
    )
    parser.add_argument("model_dir", metavar="MODEL_DIR", help="a trained model directory")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="override a value of the model's config for this run (repeatable)",
    )
    parser.add_argument(
        "--reverse",
        metavar="REVERSE_MODEL_DIR",
        help="a model of the other direction, with the same vocabularies swapped: its module trains too, on the "
        "same pairs read the other way round, the two agreeing by train.aligner_agreement_weight; it is written "
        "to REVERSE_MODEL_DIR/aligner/",
    )
    parser.add_argument("--resume", action="store_true", help="continue the module's run from its last checkpoint")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Train the module and say where it went."""
    from rnnsearch.jobs.module_run import train_module

    reverse = None if args.reverse is None else Path(args.reverse)
    progress = train_module(args.model_dir, args.set, resume=args.resume, reverse_dir=reverse)
    minutes = progress.seconds / 60
    print(f"trained the alignment module {progress.step} steps in {minutes:.1f} min; in {args.model_dir}/aligner")

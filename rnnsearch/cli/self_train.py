"""`rnnsearch self-train`: rounds in which a model's alignment module and its reverse
model's learn from their own links, both directions combined."""

from __future__ import annotations

import argparse

from rnnsearch.alignments.readings import ALIGNMENT_SOURCES
from rnnsearch.alignments.symmetrisation import COMBINATIONS
from rnnsearch.cli.options import positive
from rnnsearch.config.train import ALIGNER_RUN_KEYS

MODULE_COMBINATION = next(source.combination for source in ALIGNMENT_SOURCES.values() if source.from_module)
"""How the rounds combine the modules' two directions by default: as module alignments do."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add `self-train` to the `rnnsearch` command."""
    parser = commands.add_parser(
        "self-train",
        help="retrain a model's alignment module and its reverse model's on their own links, both directions "
        "combined, where the training pairs carry none",
        description="Each round aligns every training pair of MODEL_DIR with both alignment modules (MODEL_DIR's "
        "and REVERSE_MODEL_DIR's, combined by --symmetrize), keeps a corpus's own links where it has them, "
        "trains a new module for each direction on those links and makes it the model's. The rounds live in "
        "each directory's self-training/ (docs/model.md). --set takes train-aligner's keys for every round's "
        f"runs ({', '.join(key for key in ALIGNER_RUN_KEYS if key != 'data.train')}).",
    )
    parser.add_argument("model_dir", metavar="MODEL_DIR", help="a model directory with an alignment module")
    parser.add_argument(
        "--reverse",
        metavar="REVERSE_MODEL_DIR",
        required=True,
        help="a model of the other direction, with an alignment module of its own",
    )
    parser.add_argument("--rounds", type=positive(int), default=1, help="how many rounds to run (default 1)")
    parser.add_argument(
        "--symmetrize",
        choices=COMBINATIONS,
        default=MODULE_COMBINATION,
        help=f"how the two directions' links combine (default {MODULE_COMBINATION}, as the modules' alignments do)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SECTION.KEY=VALUE",
        help="a train-aligner setting for every round's runs (repeatable); data.train is the round's own",
    )
    parser.add_argument("--resume", action="store_true", help="continue the rounds where they stopped")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Run the rounds and say where the modules went."""
    from rnnsearch.jobs.self_training import self_train

    rounds = self_train(
        args.model_dir,
        args.reverse,
        rounds=args.rounds,
        symmetrize=args.symmetrize,
        overrides=args.set,
        resume=args.resume,
    )
    print(f"self-trained {rounds} round(s); the modules of {args.model_dir} and {args.reverse} are the last round's")

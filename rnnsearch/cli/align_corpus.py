"""`rnnsearch align-corpus`: word alignments of a config's training corpora from eflomal,
written where their `alignments` keys say, for training guided by them."""

from __future__ import annotations

import argparse

from rnnsearch.alignments.symmetrisation import DEFAULT_METHOD
from rnnsearch.alignments.symmetrisation import METHODS as SYMMETRISATIONS
from rnnsearch.children import terminating_as_interrupt
from rnnsearch.cli.options import add_config, positive
from rnnsearch.jobs.corpus_alignment import DEFAULT_EFLOMAL_MODEL, EFLOMAL_MODELS, align_training_corpora


def register(commands: argparse._SubParsersAction) -> None:
    """Add `align-corpus` to the `rnnsearch` command."""
    command = commands.add_parser(
        "align-corpus",
        help="word-align a config's training corpora with eflomal (both directions, combined) into the Pharaoh "
        "files their data.train alignments keys name, to guide training (needs pip install 'rnnsearch[align]')",
    )
    add_config(command)
    command.add_argument(
        "--symmetrize",
        choices=tuple(SYMMETRISATIONS),
        default=DEFAULT_METHOD,
        help=f"how the two directions' links combine (Koehn et al. 2003; default {DEFAULT_METHOD})",
    )
    command.add_argument(
        "--eflomal-model",
        type=int,
        choices=tuple(EFLOMAL_MODELS),
        default=DEFAULT_EFLOMAL_MODEL,
        help="eflomal's model: "
        + ", ".join(f"{number} {name}" for number, name in EFLOMAL_MODELS.items())
        + f" (default {DEFAULT_EFLOMAL_MODEL}, eflomal's own)",
    )
    command.add_argument(
        "--iterations",
        type=positive(float),
        default=1.0,
        metavar="X",
        help="eflomal's sampling iterations, times its default (which falls as the corpus grows); below 1 is "
        "faster and rougher (default 1)",
    )
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Align every training corpus of the config and say, a line each, what was written."""
    from rnnsearch.config import load_config

    config = load_config(args.config, args.set)
    with terminating_as_interrupt():
        for written in align_training_corpora(
            config,
            origin=args.config,
            symmetrisation=args.symmetrize,
            model=args.eflomal_model,
            iterations=args.iterations,
        ):
            print(written)

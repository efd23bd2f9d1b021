"""`rnnsearch train` and `rnnsearch prepare`: the commands that read a training config."""

from __future__ import annotations

import argparse

from rnnsearch.cli.options import add_config
from rnnsearch.errors import UserError


def register(commands: argparse._SubParsersAction) -> None:
    """Add `train` and `prepare` to the `rnnsearch` command."""
    train = commands.add_parser("train", help="train a model from a YAML config")
    add_config(train)
    train.add_argument("--resume", action="store_true", help="continue from the model directory's last checkpoint")
    train.set_defaults(run=run_train)

    prepare = commands.add_parser(
        "prepare", help="encode a config's training corpus to disk once, for `rnnsearch train` to reuse"
    )
    add_config(prepare)
    prepare.set_defaults(run=run_prepare)


def run_train(args: argparse.Namespace) -> None:
    """Train the config's model, or resume it, and say where it went and how it did."""
    from rnnsearch.config import load_config
    from rnnsearch.kinds import data_kind
    from rnnsearch.training.trainer import Trainer

    config = load_config(args.config, args.set)
    progress = Trainer(config, config.train.model_dir, data_kind(config)).run(resume=args.resume)
    print(
        f"trained {progress.step} steps in {progress.seconds / 60:.1f} min; best validation "
        f"{config.selection.metric} {abs(progress.best or 0):.2f} at step {progress.best_step}; "
        f"model in {config.train.model_dir}"
    )


def run_prepare(args: argparse.Namespace) -> None:
    """Encode the config's training corpus into the model directory's prepared data."""
    from rnnsearch.config import load_config
    from rnnsearch.prepared import ensure_prepared, prepared_dir
    from rnnsearch.text.subwords import text_source

    config = load_config(args.config, args.set)
    if not config.data.prepared_on_disk:
        raise UserError(f"{args.config}: data.kind {config.data.kind} is made in memory and needs no preparation")
    directory = prepared_dir(config, config.train.model_dir)
    if config.train.init_from:
        from rnnsearch.training.checkpoint import init_from_subwords

        given = init_from_subwords(config.train.init_from, config.model, data_kind=config.data.kind)
        ensure_prepared(config, directory, (text_source(given[0], config.train.init_from), given[1]))
    else:
        ensure_prepared(config, directory)
    print(f"prepared training data in {directory}")

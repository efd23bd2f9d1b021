"""The translator a model command asks for, loaded from its model directories with the
device, precision and search options of its flags."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rnnsearch.cli.options import search_overrides
from rnnsearch.errors import UserError

if TYPE_CHECKING:
    from rnnsearch.translation.translator import Translator


def models(model_dirs: list[str]) -> str | list[str]:
    """One model directory as itself; several as the list of an ensemble's members."""
    return model_dirs[0] if len(model_dirs) == 1 else model_dirs


def load(args: argparse.Namespace) -> Translator:
    """The translator a searching command asks for: its model directory, device and search options."""
    from rnnsearch.translation.translator import load as load_translator

    return load_translator(
        models(args.model_dir),
        device=args.device,
        precision=args.precision,
        runtime=args.runtime,
        search=search_overrides(args),
    )


def load_for_pairs(args: argparse.Namespace, model_dir: str | None = None) -> Translator:
    """The translator `score` and `align` use: a text model (--model_dir's, or `model_dir`),
    on the device, precision and batch size asked for, on PyTorch (an exported package holds its
    weights too; its graphs only search)."""
    from rnnsearch.translation.translator import load as load_translator

    model_dirs = args.model_dir if model_dir is None else [model_dir]
    translator = load_translator(
        models(model_dirs), device=args.device, precision=args.precision, runtime="torch", search=search_overrides(args)
    )
    if not translator.data.aligns_words:
        raise UserError(f"{model_dirs[0]}: {translator.data.described}; {args.command} takes text sources and targets")
    return translator

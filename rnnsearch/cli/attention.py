"""`rnnsearch attention`: the alignment of one translated sentence, drawn as a heatmap."""

from __future__ import annotations

import argparse
from pathlib import Path

from rnnsearch.cli.loading import load
from rnnsearch.cli.options import add_alignment_source, add_search, asked_of
from rnnsearch.errors import UserError


def register(commands: argparse._SubParsersAction) -> None:
    """Add `attention` to the `rnnsearch` command."""
    attention = commands.add_parser("attention", help="draw the alignment of one translated sentence")
    add_search(attention)
    attention.add_argument("sentence", help="source sentence, or a WAV file for a speech model")
    attention.add_argument("-o", "--output", required=True, help="heatmap file: .png, .svg or .pdf")
    add_alignment_source(attention, reading=False)
    attention.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Translate the sentence, draw its α to --output and print the translation."""
    from rnnsearch.evaluation.plots import FORMATS, alignment_heatmap

    if Path(args.output).suffix.lower().lstrip(".") not in FORMATS:
        suffixes = [f".{name}" for name in FORMATS]
        raise UserError(f"{args.output}: unsupported format; use {', '.join(suffixes[:-1])} or {suffixes[-1]}")
    translator = load(args)
    translator.require_alignment()
    lines = [args.sentence]
    request = translator.request(asked_of(args))
    translation = translator.kind.translate_lines(translator, lines, request)[0]
    if not translation.source_tokens or translation.alignment is None:
        raise UserError("the sentence is empty: nothing to align")
    alignment_heatmap(
        translation.alignment,
        translation.source_tokens,
        translation.target_tokens,
        args.output,
        seconds_per_column=translator.seconds_per_vector,
    )
    print(translation.text)
    print(f"alignment heatmap written to {args.output}")

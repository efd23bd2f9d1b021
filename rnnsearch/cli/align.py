"""`rnnsearch align`: the teacher-forced word alignment of given translations, combined
with a reverse model's if asked, and scored against human links if given."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from rnnsearch.alignments.symmetrisation import COMBINATIONS
from rnnsearch.cli.alignments import report_plain, report_unplaced, write_alignments
from rnnsearch.cli.loading import load_for_pairs
from rnnsearch.cli.options import (
    add_alignment_files,
    add_alignment_source,
    add_markup,
    add_pairs,
    asked_of,
    check_markup_flags,
)
from rnnsearch.cli.streams import NamedOutput, opened
from rnnsearch.errors import UserError
from rnnsearch.markup import markup_line

if TYPE_CHECKING:
    from rnnsearch.evaluation.alignment_error import GoldLinks
    from rnnsearch.translation.translator import Translation


def register(commands: argparse._SubParsersAction) -> None:
    """Add `align` to the `rnnsearch` command."""
    align = commands.add_parser(
        "align",
        help="align given translations to their sources (teacher-forced attention); with no output option, "
        "print Pharaoh lines",
    )
    add_pairs(align)
    add_alignment_files(align, per="input pair")
    align.add_argument(
        "--gold",
        metavar="GOLD",
        help="human alignments, one line per pair: 'i-j' sure and 'ipj' or 'i?j' possible links, source word "
        "first; print the alignment error rate, precision and recall against them (Och & Ney 2003)",
    )
    align.add_argument("--gold-one-based", action="store_true", help="GOLD counts words from 1, as the shared tasks do")
    align.add_argument(
        "--reverse",
        metavar="REVERSE_MODEL_DIR",
        help="a model of the other direction (--tgt to --src): combine its word links, read transposed, with "
        "the model's",
    )
    align.add_argument(
        "--symmetrize",
        choices=COMBINATIONS,
        help="how --reverse's links and the model's combine: a heuristic over their links (Koehn et al. 2003), "
        "or soft, a link where the mean of the two directions' word weights reaches "
        "symmetrisation.SOFT_THRESHOLD; default: soft for alignment modules, grow-diag-final-and for the attention "
        "(the measured best of each)",
    )
    add_alignment_source(align)
    add_markup(align, reads="--src", writes="each --tgt line with its --src line's markup, placed by the word links")
    align.add_argument("--json", action="store_true", help="print the scores against GOLD as JSON")
    align.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Write the teacher-forced word alignment of every pair of --src and --tgt in the
    formats of `translate --alignments` and `--hard-alignments`, one row or line per pair,
    in order; with neither, no --gold and no --markup, the Pharaoh lines go to standard
    output. With --reverse, the word links are both directions' combined by --symmetrize
    (the JSON rows stay the forward model's α). With --gold, print the links' AER,
    precision and recall against those human links, read a line at a time beside the
    pairs. With --markup, --src is marked up, and each target is printed with its markup."""
    from rnnsearch.config.data import check_reverse
    from rnnsearch.evaluation.alignment_error import AlignmentCounts
    from rnnsearch.text.corpus import stream_lines, stream_parallel

    _check_flags(args)
    check_markup_flags(args, "align")
    gold = stream_lines(args.gold) if args.gold else None
    translator = load_for_pairs(args)
    reverse = load_for_pairs(args, args.reverse) if args.reverse else None
    if reverse is not None:
        check_reverse(translator.data, reverse.data, name=f"--reverse {args.reverse}")
    chunks = ((chunk.sources, chunk.targets) for chunk in stream_parallel(args.src, args.tgt))
    settings = translator.align_settings(asked_of(args), reverse=reverse, symmetrize=args.symmetrize)
    aligned = translator.align_chunks_with(settings, chunks, origin=args.src)
    counts, unplaced, plain = AlignmentCounts(), 0, 0
    with contextlib.ExitStack() as files:
        jsonl = opened(files, args.alignments)
        hard = opened(files, args.hard_alignments)
        if not (jsonl or hard or gold or args.markup):
            hard = NamedOutput(sys.stdout, "<stdout>")
        number = 0
        for chunk in aligned:
            for pair in chunk:
                unplaced += not pair.words.placed
                if gold is not None:
                    counts.add(pair.words.pairs, _gold_line(gold, pair.pair, number, args))
                write_alignments(replace(pair.pair, words=pair.words), number, jsonl, hard, reading=args.reading)
                if args.markup:
                    plain += pair.words.marked_up is None
                    print(markup_line(pair.words.marked_up, pair.pair.text))
                number += 1
            for written in (jsonl, hard, sys.stdout):
                if written:
                    written.flush()
    report_unplaced(unplaced, "pairs")
    report_plain(plain, "pairs")
    if gold is not None:
        if next(gold, None) is not None:
            raise UserError(f"{args.gold}: more lines than the {number:,} pairs of --src and --tgt")
        score = counts.score()
        print(json.dumps(score.as_dict()) if args.json else score)


def _check_flags(args: argparse.Namespace) -> None:
    """Refuse flags that only mean something beside another that is missing."""
    for flag, needs, what in (
        ("json", "gold", "--json prints the scores against --gold; give --gold GOLD too"),
        ("gold_one_based", "gold", "--gold-one-based says how --gold counts words; give --gold GOLD too"),
        ("symmetrize", "reverse", "--symmetrize combines two directions; give --reverse REVERSE_MODEL_DIR too"),
    ):
        if getattr(args, flag) and not getattr(args, needs):
            raise UserError(f"align: {what}")


def _gold_line(gold: Iterator[str], translation: Translation, number: int, args: argparse.Namespace) -> GoldLinks:
    """Pair `number`'s gold line, read and checked to hold links within the words of its texts."""
    from rnnsearch.evaluation.alignment_error import check_within, parse_gold_line

    line = next(gold, None)
    if line is None:
        raise UserError(f"{args.gold}: {number:,} lines, but --src and --tgt hold more pairs")
    where = f"{args.gold}: line {number + 1}"
    human = parse_gold_line(line, one_based=args.gold_one_based, where=where)
    check_within(human, len(translation.source.split()), len(translation.text.split()), where=where)
    return human

"""`rnnsearch align`: the teacher-forced word alignment of given translations, combined
with a reverse model's if asked, and scored against human links if given."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rnnsearch.cli.alignments import report_unplaced, write_alignments
from rnnsearch.cli.loading import load_for_pairs
from rnnsearch.cli.options import add_alignment_files, add_pairs, add_reading
from rnnsearch.cli.streams import opened
from rnnsearch.errors import UserError
from rnnsearch.symmetrisation import DEFAULT_METHOD
from rnnsearch.symmetrisation import METHODS as SYMMETRISATIONS

if TYPE_CHECKING:
    from rnnsearch.alignment import WordAlignment
    from rnnsearch.evaluation.alignment_error import GoldLinks
    from rnnsearch.translator import Translation, Translator


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
        choices=tuple(SYMMETRISATIONS),
        help="how --reverse's links and the model's combine (Koehn et al. 2003; default grow-diag-final-and)",
    )
    add_reading(align)
    align.add_argument("--json", action="store_true", help="print the scores against GOLD as JSON")
    align.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Write the teacher-forced word alignment of every pair of --src and --tgt in the
    formats of `translate --alignments` and `--hard-alignments`, one row or line per pair,
    in order; with neither and no --gold, the Pharaoh lines go to standard output. With
    --reverse, the word links are both directions' combined by --symmetrize (the JSON rows
    stay the forward model's α). With --gold, print the links' AER, precision and recall
    against those human links, read a line at a time beside the pairs."""
    from rnnsearch.alignment import align_translation
    from rnnsearch.evaluation.alignment_error import AlignmentCounts
    from rnnsearch.given_pairs import check_reverse
    from rnnsearch.text.corpus import stream_lines

    _check_flags(args)
    gold = stream_lines(args.gold) if args.gold else None
    translator = load_for_pairs(args)
    forward = _aligned_chunks(translator, args.src, args.tgt)
    backward = None
    if args.reverse:
        reverse = load_for_pairs(args, args.reverse)
        check_reverse(translator.data, reverse.data, name=f"--reverse {args.reverse}")
        backward = _aligned_chunks(reverse, args.tgt, args.src)
    counts, unplaced = AlignmentCounts(), 0
    with contextlib.ExitStack() as files:
        jsonl = opened(files, args.alignments)
        hard = opened(files, args.hard_alignments)
        if not (jsonl or hard or gold):
            hard = sys.stdout
        number = 0
        for chunk in forward:
            reverse_chunk = next(backward) if backward is not None else [None] * len(chunk)
            for translation, reversed_pair in zip(chunk, reverse_chunk, strict=True):
                words = align_translation(translation, reading=args.reading)
                unplaced += not words.placed
                links = _word_links(words, reversed_pair, number, args)
                if gold is not None:
                    counts.add(links, _gold_line(gold, translation, number, args))
                write_alignments(translation, number, jsonl, hard, reading=args.reading, links=links)
                number += 1
            for written in (jsonl, hard):
                if written:
                    written.flush()
    report_unplaced(unplaced, "pairs")
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


def _aligned_chunks(translator: Translator, source: str, target: str) -> Iterator[list[Translation]]:
    """The pairs of two files as translations with their teacher-forced alignments, a
    chunk of lines at a time, in order; a model without an alignment model is refused at
    once, before any output is opened."""
    from rnnsearch.text.corpus import stream_parallel

    translator.require_alignment()
    chunks = ((chunk.sources, chunk.targets) for chunk in stream_parallel(source, target))
    return ([pair.as_translation() for pair in scores] for scores in translator.score_chunks(chunks, origin=source))


def _word_links(
    words: WordAlignment, reverse: Translation | None, number: int, args: argparse.Namespace
) -> list[tuple[int, int]]:
    """Pair `number`'s word links: the forward model's `words`, or with a reverse model's
    reading of the same pair, both combined by --symmetrize."""
    from rnnsearch.alignment import align_translation, combine

    if reverse is None:
        return words.pairs
    backward = align_translation(reverse, reading=args.reading)
    try:
        return combine(words, backward, method=args.symmetrize or DEFAULT_METHOD).pairs
    except ValueError as error:
        raise UserError(f"{args.src}: line {number + 1}: {error}") from None


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

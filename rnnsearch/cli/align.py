"""`rnnsearch align`: the teacher-forced word alignment of given translations, combined
with a reverse model's if asked, and scored against human links if given."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rnnsearch.cli.alignments import write_alignments
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
    against those human links."""
    from rnnsearch.alignment import align_translation
    from rnnsearch.evaluation.alignment_error import alignment_error_rate, read_gold

    if args.json and not args.gold:
        raise UserError("align: --json prints the scores against --gold; give --gold GOLD too")
    if args.symmetrize and not args.reverse:
        raise UserError("align: --symmetrize combines two directions; give --reverse REVERSE_MODEL_DIR too")
    gold = read_gold(args.gold, one_based=args.gold_one_based) if args.gold else None
    forward = _aligned_chunks(load_for_pairs(args), args.src, args.tgt)
    backward = _aligned_chunks(load_for_pairs(args, args.reverse), args.tgt, args.src) if args.reverse else None
    predicted = []
    with contextlib.ExitStack() as files:
        jsonl = opened(files, args.alignments)
        hard = opened(files, args.hard_alignments)
        if not (jsonl or hard or gold):
            hard = sys.stdout
        number = 0
        for chunk in forward:
            reverse = next(backward) if backward is not None else [None] * len(chunk)
            for translation, reversed_pair in zip(chunk, reverse, strict=True):
                words = align_translation(translation, reading=args.reading)
                links = _word_links(words, reversed_pair, number, args)
                if gold is not None:
                    _check_gold_line(words, translation, gold, number, args)
                    predicted.append(links)
                write_alignments(translation, number, jsonl, hard, reading=args.reading, links=links)
                number += 1
            for written in (jsonl, hard):
                if written:
                    written.flush()
    if gold is not None:
        if number != len(gold):
            raise UserError(f"{args.gold}: {len(gold)} lines, but --src and --tgt hold {number} pairs")
        score = alignment_error_rate(predicted, gold)
        print(json.dumps(score.as_dict()) if args.json else score)


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


def _check_gold_line(
    words: WordAlignment, translation: Translation, gold: list[GoldLinks], number: int, args: argparse.Namespace
) -> None:
    """That pair `number` has a gold line whose links fall within the words of its texts,
    and that the model reads the words the gold links count."""
    from rnnsearch.evaluation.alignment_error import check_within

    if number >= len(gold):
        raise UserError(f"{args.gold}: {len(gold)} lines, but --src and --tgt hold more pairs")
    counts = len(translation.source.split()), len(translation.text.split())
    if (len(words.source_words), len(words.target_words)) != counts:
        raise UserError(
            f"{args.src}: line {number + 1}: the model reads {len(words.source_words)} source and "
            f"{len(words.target_words)} target words where the texts have {counts[0]} and {counts[1]}"
        )
    check_within(gold[number], *counts, where=f"{args.gold}: line {number + 1}")

"""`rnnsearch translate`: lines in, translations (and alignments) out, a chunk at a time."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rnnsearch.cli.alignments import report_plain, report_unplaced, write_alignments
from rnnsearch.cli.loading import load
from rnnsearch.cli.options import (
    add_alignment_files,
    add_alignment_source,
    add_markup,
    add_output_file,
    add_search,
    add_terms,
    asked_of,
    beam_width,
    check_markup_flags,
)
from rnnsearch.cli.streams import opened, read_input
from rnnsearch.config.search import MAX_BEAM_SIZE
from rnnsearch.decoding.results import TermReport
from rnnsearch.errors import UserError
from rnnsearch.markup import markup_line

if TYPE_CHECKING:
    from rnnsearch.translation.request import Request
    from rnnsearch.translation.translator import Translation, Translator


def register(commands: argparse._SubParsersAction) -> None:
    """Add `translate` to the `rnnsearch` command."""
    translate = commands.add_parser(
        "translate", help="translate lines (stdin → stdout by default); for a speech model, lines are WAV paths"
    )
    add_search(translate)
    translate.add_argument("-i", "--input", help="input file (plain or .gz); default stdin")
    add_output_file(translate)
    translate.add_argument(
        "--n-best",
        type=beam_width,
        default=1,
        help=f"N > 1 prints 'line ||| text ||| score' rows; at most the beam size and {MAX_BEAM_SIZE}",
    )
    add_alignment_files(translate, per="input line")
    translate.add_argument(
        "--prefix",
        metavar="FILE",
        help="target prefixes, one per input line (empty: none): each translation starts with its prefix",
    )
    add_terms(translate, unit="line")
    add_alignment_source(translate)
    add_markup(translate, reads="the input", writes="each translation with its line's markup, placed by its alignment")
    translate.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Translate the input a chunk at a time, writing each chunk's lines (and alignments) as
    soon as it is done: an interrupted run keeps what it had translated, and a pipe fed
    line by line gets each translation back before it sends the next line."""
    check_markup_flags(args, "translate")
    translator = load(args)
    if args.alignments or args.hard_alignments:
        translator.require_alignment()
    for option, refusal in translator.kind.refused_options:
        if getattr(args, option):
            raise UserError(refusal)
    request = _request(translator, args)
    with contextlib.ExitStack() as files:
        out = opened(files, args.output) or sys.stdout
        jsonl = opened(files, args.alignments)
        hard = opened(files, args.hard_alignments)
        number = unplaced = plain = 0
        reports = []
        for translations in _translated_chunks(translator, request, args):
            for translation in translations:
                plain += bool(args.markup) and translation.marked_up is None
                reports.append(translation.terms)
                for term in translation.terms.unwritten:
                    print(f"line {number + 1}: the glossary's term {term} is not written", file=sys.stderr)
                if args.n_best == 1:
                    out.write(_output(translation, args) + "\n")
                else:
                    for entry in [translation, *translation.alternatives]:
                        out.write(f"{number} ||| {_output(entry, args)} ||| {entry.score:.4f}\n")
                unplaced += not write_alignments(translation, number, jsonl, hard, reading=request.reading)
                number += 1
            for written in (out, jsonl, hard):
                if written:
                    written.flush()
    report_unplaced(unplaced, "lines")
    report_plain(plain, "lines")
    if request.glossary is not None:
        terms = TermReport.total(reports)
        print(
            f"{terms.written:,} of the {terms.found:,} glossary terms found in {number:,} lines written",
            file=sys.stderr,
        )


def _request(translator: Translator, args: argparse.Namespace) -> Request:
    """The call's settings, checked once: what the alignments come from (--alignment-from,
    or the best the model has where alignments are written or placing markup; a plain
    translation keeps search's own α, which costs nothing more), the reading checked
    against it, the markup and the search."""
    shown = bool(args.alignments or args.hard_alignments or args.markup)
    return translator.request(asked_of(args), shown=shown, links_read=True)


def _output(translation: Translation, args: argparse.Namespace) -> str:
    """What is written of a hypothesis: its text, or with --markup its marked-up text (a
    line read as plain text, its text escaped as markup)."""
    return markup_line(translation.marked_up, translation.text) if args.markup else translation.text


def _translated_chunks(translator: Translator, request: Request, args: argparse.Namespace) -> Iterator[list]:
    """The translations of the input, a chunk of lines at a time, in input order."""
    chunks = read_input(args.input)
    prefix_chunks = None
    if args.prefix:
        chunks, prefix_chunks = _with_prefixes(chunks, args.prefix, args.input or "<stdin>")
    yield from translator.kind.translate_chunks(translator, chunks, request, prefix_chunks=prefix_chunks)


def _with_prefixes(
    chunks: Iterator[list[str]], prefix_path: str, input_name: str
) -> tuple[Iterator[list[str]], Iterator[list[str]]]:
    """The input's chunks, and the prefix file's lines cut into the same chunks; a prefix
    file with fewer or more lines than the input is a one-line error naming both counts,
    given before anything is translated when the input is a file."""
    from rnnsearch.text.corpus import read_lines

    prefixes = read_lines(prefix_path)
    if input_name != "<stdin>" and input_name != "-":
        lines = len(read_lines(input_name))
        if lines != len(prefixes):
            raise UserError(f"{prefix_path} has {len(prefixes)} lines but {input_name} has {lines}")
    cuts: list[tuple[int, int]] = []

    def texts() -> Iterator[list[str]]:
        read = 0
        for chunk in chunks:
            if read + len(chunk) > len(prefixes):
                raise UserError(f"{prefix_path} has {len(prefixes)} lines but {input_name} has more")
            cuts.append((read, read + len(chunk)))
            read += len(chunk)
            yield chunk
        if read != len(prefixes):
            raise UserError(f"{prefix_path} has {len(prefixes)} lines but {input_name} has {read}")

    def prefix_chunks() -> Iterator[list[str]]:
        while cuts:
            start, end = cuts.pop(0)
            yield prefixes[start:end]

    return texts(), prefix_chunks()

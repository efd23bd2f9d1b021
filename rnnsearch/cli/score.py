"""`rnnsearch score`: the log-probability of given translations, in total and per token."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rnnsearch.alignments.readings import DEFAULT_READING
from rnnsearch.cli.alignments import write_alignments
from rnnsearch.cli.loading import load_for_pairs
from rnnsearch.cli.options import add_alignment_source, add_output_file, add_pairs, asked_of
from rnnsearch.cli.streams import opened

if TYPE_CHECKING:
    from rnnsearch.translation.request import Request
    from rnnsearch.translation.translator import PairScore, Translator


def register(commands: argparse._SubParsersAction) -> None:
    """Add `score` to the `rnnsearch` command."""
    score = commands.add_parser("score", help="score given translations: log-probability in total and per target token")
    add_pairs(score)
    add_output_file(score)
    score.add_argument(
        "--json", action="store_true", help="write JSON lines with the pieces, instead of tab-separated lines"
    )
    score.add_argument(
        "--alignments", metavar="OUT.jsonl", help="also write each pair's tokens and alignment matrix as JSON lines"
    )
    add_alignment_source(score, reading=False)
    score.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Write one line per pair of --src and --tgt, in order, as each chunk of pairs is scored:
    `log_prob<TAB>tokens<TAB>per-token log-probs`, or a JSON object with --json; with
    --alignments, each pair's alignment too, read from --alignment-from (by default the
    model's alignment module where it has one; without --alignments, α, which costs
    nothing more)."""
    translator = load_for_pairs(args)
    if args.alignments:
        translator.require_alignment()
    request = translator.request(asked_of(args), searches=False, shown=bool(args.alignments))
    with contextlib.ExitStack() as files:
        out = opened(files, args.output) or sys.stdout
        jsonl = opened(files, args.alignments)
        number = 0
        for scores in _scored_chunks(translator, request, args):
            for pair in scores:
                out.write((_score_json(pair, number) if args.json else _score_line(pair)) + "\n")
                if jsonl:
                    write_alignments(pair.as_translation(), number, jsonl, None, reading=DEFAULT_READING)
                number += 1
            for written in (out, jsonl):
                if written:
                    written.flush()


def _scored_chunks(translator: Translator, request: Request, args: argparse.Namespace) -> Iterator[list[PairScore]]:
    """The scores of the pairs of --src and --tgt, a chunk of lines at a time, in order."""
    from rnnsearch.text.corpus import stream_parallel

    chunks = ((chunk.sources, chunk.targets) for chunk in stream_parallel(args.src, args.tgt))
    yield from translator.score_chunks_with(request, chunks, origin=args.src)


def _score_line(pair: PairScore) -> str:
    """log p(target | source), the number of target tokens (</s> included) and each token's log p."""
    token_log_probs = " ".join(f"{value:.6f}" for value in pair.token_log_probs)
    return f"{pair.log_prob:.6f}\t{pair.tokens}\t{token_log_probs}"


def _score_json(pair: PairScore, number: int) -> str:
    """One JSON line: the numbers of `_score_line`, the pair's number and its pieces."""
    row = {
        "line": number,
        "log_prob": pair.log_prob,
        "tokens": pair.tokens,
        "token_log_probs": pair.token_log_probs,
        "source_tokens": pair.source_tokens,
        "target_tokens": pair.target_tokens,
    }
    return json.dumps(row, ensure_ascii=False)

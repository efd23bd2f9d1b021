"""`rnnsearch serve`: the JSON translation API and its page, within the request limits
the flags set."""

from __future__ import annotations

import argparse

from rnnsearch.cli.loading import load, models
from rnnsearch.cli.options import (
    add_coverage_penalty,
    add_device,
    add_model_dirs,
    add_search_precision,
    positive,
)


def register(commands: argparse._SubParsersAction) -> None:
    """Add `serve` to the `rnnsearch` command."""
    serve = commands.add_parser("serve", help="serve a JSON translation API and a web page that shows alignments")
    add_model_dirs(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    serve.add_argument("--port", type=int, default=8000, help="default %(default)s; 0 picks a free port")
    add_coverage_penalty(serve)
    add_device(serve)
    add_search_precision(serve)
    serve.add_argument(
        "--max-texts", type=positive(int), default=64, help="texts or recordings per request (default %(default)s)"
    )
    serve.add_argument(
        "--max-chars", type=positive(int), default=2000, help="characters per text (default %(default)s)"
    )
    serve.add_argument(
        "--max-audio-seconds",
        type=positive(float),
        default=30.0,
        help="seconds per recording, for a speech model (default %(default)s)",
    )
    serve.add_argument(
        "--timeout", type=positive(float), default=30.0, help="seconds per request (default %(default)s)"
    )
    serve.add_argument(
        "--max-document-bytes",
        type=positive(int),
        default=10 * 2**20,
        help="bytes of a document sent to /v1/documents (default %(default)s)",
    )
    serve.add_argument(
        "--max-batch",
        type=positive(int),
        default=64,
        help="sentences per model call when requests are merged (default %(default)s)",
    )
    serve.add_argument(
        "--glossary",
        metavar="TERMS",
        help="the server's terms, as `translate --glossary` reads them (.tsv, .csv or .tbx): each term found in a "
        "text or a document's sentence is written in its translation; a request's own `glossary` lies over them",
    )
    serve.add_argument(
        "--max-glossary-terms",
        type=positive(int),
        default=1000,
        help="terms of a request's own glossary (default %(default)s)",
    )
    serve.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Serve the model directories until interrupted."""
    from rnnsearch.server import Limits, serve

    limits = Limits(
        max_texts=args.max_texts,
        max_chars=args.max_chars,
        max_audio_seconds=args.max_audio_seconds,
        timeout=args.timeout,
        max_batch=args.max_batch,
        max_document_bytes=args.max_document_bytes,
        max_glossary_terms=args.max_glossary_terms,
    )
    model_dirs = models(args.model_dir)
    serve(load(args), model_dirs, limits, host=args.host, port=args.port, glossary=args.glossary)

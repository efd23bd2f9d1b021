"""`rnnsearch evaluate`: a test set's scores, sacreBLEU, chrF and repeated words for text,
digit error rate and accuracy for speech."""

from __future__ import annotations

import argparse
import json

from rnnsearch.cli.loading import load
from rnnsearch.cli.options import add_search, add_terms, asked_of
from rnnsearch.errors import UserError


def register(commands: argparse._SubParsersAction) -> None:
    """Add `evaluate` to the `rnnsearch` command."""
    evaluate = commands.add_parser(
        "evaluate",
        help="score a test set: sacreBLEU, chrF and repeated words for text, digit error rate and accuracy for speech",
    )
    add_search(evaluate)
    evaluate.add_argument("--src", help="source file (text), or a file of WAV paths (speech)")
    evaluate.add_argument("--ref", help="reference file")
    evaluate.add_argument(
        "--part",
        choices=("test", "validation"),
        default="test",
        help="speech models without --src: which part of the config's spoken digits (default test)",
    )
    evaluate.add_argument(
        "--lowercase-tokenized",
        action="store_true",
        help="BLEU against lowercased Moses-tokenised references (e.g. data/multi30k/tok), as Multi30k papers do",
    )
    evaluate.add_argument("--by-length", action="store_true", help="also BLEU per source-length bucket")
    evaluate.add_argument("--json", action="store_true", help="print scores as JSON")
    add_terms(evaluate, unit="source line")
    evaluate.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Translate --src and print its scores against --ref (for a speech model, without
    them, its config's part of the spoken digits), as lines or as JSON: the scores of the
    model's kind of data (rnnsearch.kinds)."""
    translator = load(args)
    for option, refusal in translator.kind.refused_options:
        if getattr(args, option, None):
            raise UserError(refusal)
    from rnnsearch.evaluation.metrics import EvaluationRequest

    asked = EvaluationRequest(
        args.src,
        args.ref,
        part=args.part,
        lowercase_tokenized=args.lowercase_tokenized,
        by_length=args.by_length,
        glossary=args.glossary is not None,
    )
    request = translator.request(asked_of(args))
    evaluation = translator.kind.evaluate(translator, asked, request)
    if args.json:
        print(json.dumps(evaluation.report()))
        return
    if evaluation.heading is not None:
        print(evaluation.heading)
    for line in [*map(str, evaluation.scores), *evaluation.notes]:
        print(line)

"""`rnnsearch evaluate`: a test set's scores, sacreBLEU, chrF and repeated words for text,
digit error rate and accuracy for speech."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from rnnsearch.cli.loading import load
from rnnsearch.cli.options import add_search
from rnnsearch.errors import UserError

if TYPE_CHECKING:
    from rnnsearch.translator import Translator


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
    evaluate.set_defaults(run=run)


def run(args: argparse.Namespace) -> None:
    """Translate --src and print its scores against --ref (for a speech model, without
    them, its config's part of the spoken digits), as lines or as JSON."""
    from rnnsearch.evaluation import metrics
    from rnnsearch.evaluation.repetition import repetitions

    translator = load(args)
    if translator.speech:
        _evaluate_speech(translator, args)
        return
    if not (args.src and args.ref):
        raise UserError("evaluate: a text model needs --src and --ref")
    sources, references = _test_set(args.src, args.ref)
    hypotheses = [t.text for t in translator.translate(sources, beam_size=args.beam_size)]
    if args.lowercase_tokenized:
        cased = next((n for n, line in enumerate(references, start=1) if line != line.lower()), None)
        if cased is not None:
            raise UserError(
                f"{args.ref}, line {cased}: has capitals, but --lowercase-tokenized compares against lowercased "
                "tokenised references (such as data/multi30k/tok/*.lc.norm.tok.*)"
            )
        lang = translator.target_language
        scores = [metrics.bleu_lowercase_tokenized(hypotheses, references, lang)]
    else:
        scores = [metrics.bleu(hypotheses, references), metrics.chrf(hypotheses, references)]
    report = {s.name: {"score": round(s.value, 2), "signature": s.signature} for s in scores}
    repeated = repetitions(hypotheses, references)
    report["repeated_words"] = {
        "per_100_words": round(repeated.per_100_words, 2),
        "repeated": repeated.repeated,
        "words": repeated.words,
    }
    if args.by_length:
        buckets = metrics.bleu_by_length(hypotheses, references, [len(s.split()) for s in sources])
        report["bleu_by_source_length"] = [
            {"words": label, "sentences": count, "bleu": round(value, 2)} for label, count, value in buckets
        ]
    if args.json:
        print(json.dumps(report))
        return
    for score in scores:
        print(score)
    print(
        f"repeated words = {repeated.per_100_words:.2f} per 100 ({repeated.repeated:,} of {repeated.words:,}: "
        "a 1- or 2-gram again, more often than the reference has it)"
    )
    for row in report.get("bleu_by_source_length", []):
        print(f"source words {row['words']:>6}: {row['sentences']:5d} sentences, BLEU {row['bleu']:6.2f}")


def _test_set(src: str, ref: str) -> tuple[list[str], list[str]]:
    """The lines of --src and --ref: as many of each, and at least one."""
    from rnnsearch.text.corpus import read_lines

    sources, references = read_lines(src), read_lines(ref)
    if len(sources) != len(references):
        raise UserError(f"{src} has {len(sources)} lines but {ref} has {len(references)}")
    if not sources:
        raise UserError(f"{src}: no lines, nothing to evaluate")
    return sources, references


def _evaluate_speech(translator: Translator, args: argparse.Namespace) -> None:
    """Digit error rate and string accuracy on a part of the config's spoken digits, or on
    WAV files listed in --src with digit strings in --ref."""
    from rnnsearch.speech.corpus import part_inputs
    from rnnsearch.speech.metrics import digit_error_rate, string_accuracy

    if args.src or args.ref:
        if not (args.src and args.ref):
            raise UserError("evaluate: give both --src (WAV paths) and --ref (digit strings), or neither")
        paths, references = _test_set(args.src, args.ref)
        translations = translator.transcribe_files(paths, beam_size=args.beam_size)
        what = args.src
    else:
        inputs, references = part_inputs(translator.data, args.part)
        names = [f"{args.part} {k}" for k in range(1, len(inputs) + 1)]
        translations = translator.translate_vectors(inputs, names, beam_size=args.beam_size)
        what = f"{translator.data.split} split, {args.part} part ({len(inputs)} utterances)"
    hypotheses = [t.text for t in translations]
    scores = [digit_error_rate(hypotheses, references), string_accuracy(hypotheses, references)]
    if args.json:
        print(json.dumps({s.name: {"score": round(s.value, 2), "signature": s.signature} for s in scores}))
        return
    print(what)
    for score in scores:
        print(f"{score.name} = {score.value:.2f}% ({score.signature})")

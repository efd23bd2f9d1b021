"""The `rnnsearch` command: argument parsing and printing only, no logic."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from rnnsearch.errors import UserError
from rnnsearch.text.synthetic import TASKS


def _train(args: argparse.Namespace) -> None:
    from rnnsearch.config import load_config
    from rnnsearch.training.trainer import Trainer

    config = load_config(args.config, args.set)
    progress = Trainer(config, config.train.model_dir).run(resume=args.resume)
    print(
        f"trained {progress.step} steps in {progress.seconds / 60:.1f} min; best validation "
        f"{config.train.selection_metric} {abs(progress.best or 0):.2f} at step {progress.best_step}; "
        f"model in {config.train.model_dir}"
    )


def _read_input(path: str | None) -> list[str]:
    from rnnsearch.text.corpus import decode_lines, read_lines

    if path is None or path == "-":
        return decode_lines(sys.stdin.buffer, "<stdin>")
    return read_lines(path)


def _alignment_row(translation) -> dict:
    entries = [translation, *translation.alternatives]
    return {
        "source_tokens": translation.source_tokens,
        "hypotheses": [
            {
                "text": t.text,
                "score": t.score,
                "target_tokens": t.target_tokens,
                "alignment": t.alignment.round(4).tolist(),
            }
            for t in entries
        ],
    }


def _translate(args: argparse.Namespace) -> None:
    import rnnsearch

    translator = rnnsearch.load(args.model_dir, device=args.device)
    if args.alignments:
        translator.require_alignment()
    translations = translator.translate(_read_input(args.input), beam_size=args.beam_size, n_best=args.n_best)
    with open(args.output, "w", encoding="utf-8") if args.output else contextlib.nullcontext(sys.stdout) as out:
        for number, translation in enumerate(translations):
            if args.n_best == 1:
                out.write(translation.text + "\n")
            else:
                for entry in [translation, *translation.alternatives]:
                    out.write(f"{number} ||| {entry.text} ||| {entry.score:.4f}\n")
    if args.alignments:
        with open(args.alignments, "w", encoding="utf-8") as jsonl:
            for number, translation in enumerate(translations):
                jsonl.write(json.dumps({"line": number, **_alignment_row(translation)}, ensure_ascii=False) + "\n")


def _evaluate(args: argparse.Namespace) -> None:
    import rnnsearch
    from rnnsearch.evaluation import metrics
    from rnnsearch.text.corpus import read_lines

    translator = rnnsearch.load(args.model_dir, device=args.device)
    sources, references = read_lines(args.src), read_lines(args.ref)
    if len(sources) != len(references):
        raise UserError(f"{args.src} has {len(sources)} lines but {args.ref} has {len(references)}")
    hypotheses = [t.text for t in translator.translate(sources, beam_size=args.beam_size)]
    if args.lowercase_tokenized:
        lang = translator.target_language
        scores = [metrics.bleu_lowercase_tokenized(hypotheses, references, lang)]
    else:
        scores = [metrics.bleu(hypotheses, references), metrics.chrf(hypotheses, references)]
    report = {s.name: {"score": round(s.value, 2), "signature": s.signature} for s in scores}
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
    for row in report.get("bleu_by_source_length", []):
        print(f"source words {row['words']:>6}: {row['sentences']:5d} sentences, BLEU {row['bleu']:6.2f}")


def _attention(args: argparse.Namespace) -> None:
    import rnnsearch
    from rnnsearch.evaluation.plots import alignment_heatmap

    translator = rnnsearch.load(args.model_dir, device=args.device)
    translator.require_alignment()
    translation = translator.translate([args.sentence], beam_size=args.beam_size)[0]
    if not translation.source_tokens:
        raise UserError("the sentence is empty: nothing to align")
    alignment_heatmap(translation.alignment, translation.source_tokens, translation.target_tokens, args.output)
    print(translation.text)
    print(f"alignment heatmap written to {args.output}")


def _compare(args: argparse.Namespace) -> None:
    from rnnsearch.experiment import compare

    output = compare(args.experiment)
    print((output / "results.md").read_text(encoding="utf-8"), end="")
    print(f"results.md, results.csv and bleu_by_length.png written to {output}")


def _synthetic(args: argparse.Namespace) -> None:
    from rnnsearch.text.synthetic import write_task

    sizes = {"train": args.train, "valid": args.valid, "test": args.test}
    paths = write_task(args.output, args.task, sizes, args.min_length, args.max_length, args.vocabulary, args.seed)
    print(f"wrote {len(paths)} files to {args.output}: " + ", ".join(p.name for p in paths))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rnnsearch", description="Attentional encoder–decoder models (RNNsearch).")
    commands = parser.add_subparsers(dest="command", required=True)

    train = commands.add_parser("train", help="train a model from a YAML config")
    train.add_argument("config", help="YAML config (see configs/)")
    train.add_argument(
        "--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override a config value"
    )
    train.add_argument("--resume", action="store_true", help="continue from the model directory's last checkpoint")
    train.set_defaults(run=_train)

    def model_command(name: str, help: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help)
        command.add_argument("model_dir", help="directory written by `rnnsearch train`")
        command.add_argument("--beam-size", type=int, default=None, help="1 = greedy (default: the config's)")
        command.add_argument("--device", default="cpu", help="cpu, cuda or auto")
        return command

    translate = model_command("translate", "translate lines (stdin → stdout by default)")
    translate.add_argument("-i", "--input", help="input file (plain or .gz); default stdin")
    translate.add_argument("-o", "--output", help="output file; default stdout")
    translate.add_argument("--n-best", type=int, default=1, help="N > 1 prints 'line ||| text ||| score' rows")
    translate.add_argument(
        "--alignments", metavar="OUT.jsonl", help="write tokens and alignment matrices as JSON lines"
    )
    translate.set_defaults(run=_translate)

    evaluate = model_command("evaluate", "translate a test set and score it with sacreBLEU and chrF")
    evaluate.add_argument("--src", required=True, help="source file")
    evaluate.add_argument("--ref", required=True, help="reference file")
    evaluate.add_argument(
        "--lowercase-tokenized",
        action="store_true",
        help="BLEU against lowercased Moses-tokenised references (e.g. data/multi30k/tok), as Multi30k papers do",
    )
    evaluate.add_argument("--by-length", action="store_true", help="also BLEU per source-length bucket")
    evaluate.add_argument("--json", action="store_true", help="print scores as JSON")
    evaluate.set_defaults(run=_evaluate)

    compare = commands.add_parser("compare", help="train variants of a config alike and compare them")
    compare.add_argument(
        "experiment", help="experiment YAML: base config, budget, variants (see rnnsearch/experiment.py)"
    )
    compare.set_defaults(run=_compare)

    synthetic = commands.add_parser("synthetic", help="write a synthetic task whose sentence length is controlled")
    synthetic.add_argument(
        "task", choices=TASKS, help="reverse: x reversed; map: each symbol through a fixed permutation"
    )
    synthetic.add_argument("output", help="folder for {train,valid,test}.{src,tgt}")
    synthetic.add_argument("--train", type=int, default=50000, help="training pairs")
    synthetic.add_argument("--valid", type=int, default=500, help="validation pairs")
    synthetic.add_argument("--test", type=int, default=1000, help="test pairs")
    synthetic.add_argument("--min-length", type=int, default=5)
    synthetic.add_argument("--max-length", type=int, default=80)
    synthetic.add_argument("--vocabulary", type=int, default=20, help="distinct symbols")
    synthetic.add_argument("--seed", type=int, default=1)
    synthetic.set_defaults(run=_synthetic)

    attention = model_command("attention", "draw the alignment of one translated sentence")
    attention.add_argument("sentence", help="source sentence")
    attention.add_argument("-o", "--output", required=True, help="heatmap file: .png, .svg or .pdf")
    attention.set_defaults(run=_attention)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        args.run(args)
    except UserError as error:
        print(f"rnnsearch: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rnnsearch: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as error:
        print(f"rnnsearch: error: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The `rnnsearch` command: parses arguments and hands each command to the library.

It also reads each command's input and writes its output, printed or to files, so that
a failed write is one line naming the file rather than a traceback."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rnnsearch.alignment import DEFAULT_READING, READINGS
from rnnsearch.config import MAX_BEAM_SIZE, PRECISIONS, RUNTIMES, SEARCH_PRECISIONS
from rnnsearch.errors import UserError
from rnnsearch.symmetrisation import DEFAULT_METHOD
from rnnsearch.symmetrisation import METHODS as SYMMETRISATIONS
from rnnsearch.text.synthetic import TASKS

if TYPE_CHECKING:
    from rnnsearch.alignment import WordAlignment
    from rnnsearch.evaluation.alignment_error import GoldLinks
    from rnnsearch.translator import PairScore, Translation, Translator

MODEL_DIRS = (
    "directory written by `rnnsearch train`; several decode together as an ensemble, "
    "which must share the target subword model"
)
RUNTIME_HELP = "onnx: an exported package's graphs on ONNX Runtime (its default); torch: PyTorch (any model directory)"


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


def _prepare(args: argparse.Namespace) -> None:
    from rnnsearch.config import load_config
    from rnnsearch.prepared import ensure_prepared, prepared_dir

    config = load_config(args.config, args.set)
    if config.speech:
        raise UserError(f"{args.config}: data.kind {config.data.kind} is made in memory and needs no preparation")
    directory = prepared_dir(config, config.train.model_dir)
    if config.train.init_from:
        from rnnsearch.training.checkpoint import init_from_subwords

        ensure_prepared(config, directory, init_from_subwords(config))
    else:
        ensure_prepared(config, directory)
    print(f"prepared training data in {directory}")


def _average(args: argparse.Namespace) -> None:
    from rnnsearch.model_directory import BEST
    from rnnsearch.training.averaging import average_model

    steps = average_model(args.model_dir, args.output, args.n)
    plural = "s" if len(steps) > 1 else ""
    listed = ", ".join(str(step) for step in steps)
    print(
        f"averaged {len(steps)} checkpoint{plural} of {args.model_dir} (step{plural} {listed}) "
        f"into {Path(args.output) / BEST}"
    )


def _read_input(path: str | None) -> Iterator[list[str]]:
    """The input lines a chunk at a time: a file in chunks of SENTENCES_PER_SEARCH, stdin as
    its lines arrive, so that translations can be written before the input ends."""
    from rnnsearch.text.corpus import read_lines
    from rnnsearch.text.stream import arriving_chunks
    from rnnsearch.translator import SENTENCES_PER_SEARCH

    if path is None or path == "-":
        yield from arriving_chunks(sys.stdin.buffer, "<stdin>", SENTENCES_PER_SEARCH)
        return
    lines = read_lines(path)
    for start in range(0, len(lines), SENTENCES_PER_SEARCH):
        yield lines[start : start + SENTENCES_PER_SEARCH]


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


def _load(args: argparse.Namespace) -> Translator:
    """The translator a model command asks for: its model directory, device and search options."""
    import rnnsearch

    return rnnsearch.load(
        _models(args.model_dir),
        device=args.device,
        precision=args.precision,
        batch_sentences=args.batch_sentences,
        runtime=args.runtime,
    )


def _export(args: argparse.Namespace) -> None:
    from rnnsearch.export.package import export_package

    report = export_package(args.model_dir, args.output, int8=args.int8)
    print(
        f"exported {args.model_dir} to {args.output} ({', '.join(report.precisions)}); fp32 graphs agree with "
        f"PyTorch to {report.largest_difference:.1e} on {report.sentences} sample sentences",
        file=sys.stderr,
    )
    if report.int8_same is not None:
        print(
            f"int8 graphs: {report.int8_same} of {report.sentences} sample greedy translations equal fp32's; "
            "measure the BLEU cost with `rnnsearch evaluate OUT_DIR --precision int8`",
            file=sys.stderr,
        )


def _models(model_dirs: list[str]) -> str | list[str]:
    """One model directory as itself; several as the list of an ensemble's members."""
    return model_dirs[0] if len(model_dirs) == 1 else model_dirs


def _translate(args: argparse.Namespace) -> None:
    """Translate the input a chunk at a time, writing each chunk's lines (and alignments) as
    soon as it is done: an interrupted run keeps what it had translated, and a pipe fed
    line by line gets each translation back before it sends the next line."""
    translator = _load(args)
    if args.alignments or args.hard_alignments:
        translator.require_alignment()
    with contextlib.ExitStack() as files:
        out = files.enter_context(_output(args.output)) if args.output else sys.stdout
        jsonl = files.enter_context(_output(args.alignments)) if args.alignments else None
        hard = files.enter_context(_output(args.hard_alignments)) if args.hard_alignments else None
        number = 0
        for translations in _translated_chunks(translator, args):
            for translation in translations:
                if args.n_best == 1:
                    out.write(translation.text + "\n")
                else:
                    for entry in [translation, *translation.alternatives]:
                        out.write(f"{number} ||| {entry.text} ||| {entry.score:.4f}\n")
                _write_alignments(translation, number, jsonl, hard, reading=args.reading)
                number += 1
            for written in (out, jsonl, hard):
                if written:
                    written.flush()


def _write_alignments(
    translation: Translation,
    number: int,
    jsonl: TextIO | None,
    hard: TextIO | None,
    *,
    reading: str,
    links: list[tuple[int, int]] | None = None,
) -> None:
    """Input line `number`'s alignment as a JSON line and as a Pharaoh line, to those asked
    for; the Pharaoh line holds `links`, by default the translation's own word links as
    `reading` reads α."""
    from rnnsearch.alignment import align_translation, pharaoh

    if jsonl:
        jsonl.write(json.dumps({"line": number, **_alignment_row(translation)}, ensure_ascii=False) + "\n")
    if hard:
        hard.write(pharaoh(align_translation(translation, reading=reading).pairs if links is None else links) + "\n")


def _translated_chunks(translator: Translator, args: argparse.Namespace) -> Iterator[list]:
    """The translations of the input, a chunk of lines at a time, in input order."""
    chunks = _read_input(args.input)
    if not translator.speech:
        prefix_chunks = None
        if args.prefix:
            chunks, prefix_chunks = _with_prefixes(chunks, args.prefix, args.input or "<stdin>")
        yield from translator.translate_chunks(
            chunks, beam_size=args.beam_size, n_best=args.n_best, prefix_chunks=prefix_chunks
        )
        return
    if args.prefix:
        raise UserError("--prefix: a speech model's output cannot be given a prefix")
    for paths in chunks:
        yield translator.transcribe_files(paths, beam_size=args.beam_size, n_best=args.n_best)


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


def _score(args: argparse.Namespace) -> None:
    """Write one line per pair of --src and --tgt, in order, as each chunk of pairs is scored:
    `log_prob<TAB>tokens<TAB>per-token log-probs`, or a JSON object with --json."""
    translator = _load_for_pairs(args)
    with contextlib.ExitStack() as files:
        out = files.enter_context(_output(args.output)) if args.output else sys.stdout
        number = 0
        for scores in _scored_chunks(translator, args):
            for pair in scores:
                out.write((_score_json(pair, number) if args.json else _score_line(pair)) + "\n")
                number += 1
            out.flush()


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


def _align(args: argparse.Namespace) -> None:
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
    forward = _aligned_chunks(_load_for_pairs(args), args.src, args.tgt)
    backward = _aligned_chunks(_load_for_pairs(args, args.reverse), args.tgt, args.src) if args.reverse else None
    predicted = []
    with contextlib.ExitStack() as files:
        jsonl = files.enter_context(_output(args.alignments)) if args.alignments else None
        hard = files.enter_context(_output(args.hard_alignments)) if args.hard_alignments else None
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
                _write_alignments(translation, number, jsonl, hard, reading=args.reading, links=links)
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


def _load_for_pairs(args: argparse.Namespace, model_dir: str | None = None) -> Translator:
    """The translator `score` and `align` use: a text model (--model_dir's, or `model_dir`),
    on the device and precision asked for, on PyTorch (an exported package holds its
    weights too; its graphs only search)."""
    import rnnsearch

    model_dirs = args.model_dir if model_dir is None else [model_dir]
    translator = rnnsearch.load(_models(model_dirs), device=args.device, precision=args.precision, runtime="torch")
    if translator.speech:
        raise UserError(f"{model_dirs[0]}: a speech model; {args.command} takes text sources and targets")
    return translator


def _scored_chunks(translator: Translator, args: argparse.Namespace) -> Iterator[list[PairScore]]:
    """The scores of the pairs of --src and --tgt, a chunk of lines at a time, in order."""
    from rnnsearch.text.corpus import stream_parallel

    chunks = ((chunk.sources, chunk.targets) for chunk in stream_parallel(args.src, args.tgt))
    yield from translator.score_chunks(chunks, origin=args.src)


def _evaluate(args: argparse.Namespace) -> None:
    from rnnsearch.evaluation import metrics

    translator = _load(args)
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


def _test_set(src: str, ref: str) -> tuple[list[str], list[str]]:
    """The lines of --src and --ref: as many of each, and at least one."""
    from rnnsearch.text.corpus import read_lines

    sources, references = read_lines(src), read_lines(ref)
    if len(sources) != len(references):
        raise UserError(f"{src} has {len(sources)} lines but {ref} has {len(references)}")
    if not sources:
        raise UserError(f"{src}: no lines, nothing to evaluate")
    return sources, references


def _evaluate_speech(translator, args: argparse.Namespace) -> None:
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


def _attention(args: argparse.Namespace) -> None:
    from rnnsearch.evaluation.plots import FORMATS, alignment_heatmap

    if Path(args.output).suffix.lower().lstrip(".") not in FORMATS:
        suffixes = [f".{name}" for name in FORMATS]
        raise UserError(f"{args.output}: unsupported format; use {', '.join(suffixes[:-1])} or {suffixes[-1]}")
    translator = _load(args)
    translator.require_alignment()
    if translator.speech:
        translation = translator.transcribe_files([args.sentence], beam_size=args.beam_size)[0]
    else:
        translation = translator.translate([args.sentence], beam_size=args.beam_size)[0]
    if not translation.source_tokens:
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


def _serve(args: argparse.Namespace) -> None:
    from rnnsearch.server import Limits, serve

    limits = Limits(
        max_texts=args.max_texts,
        max_chars=args.max_chars,
        max_audio_seconds=args.max_audio_seconds,
        timeout=args.timeout,
        max_batch=args.max_batch,
    )
    serve(_models(args.model_dir), args.host, args.port, args.device, limits, args.precision, runtime=args.runtime)


def _positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type: a number of `kind` (int or float) greater than zero."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
        return value

    return parse


def _beam_width(text: str) -> int:
    """An argparse type: a beam size or n-best count, an int from 1 to MAX_BEAM_SIZE."""
    value = _positive(int)(text)
    if value > MAX_BEAM_SIZE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_BEAM_SIZE}, got {text}")
    return value


def _add_reading(command: argparse.ArgumentParser) -> None:
    """--reading, for the commands that write word alignments."""
    command.add_argument(
        "--reading",
        choices=tuple(READINGS),
        default=DEFAULT_READING,
        help="which row of α stands for a target word in the word alignments: 'output', the step that "
        f"outputs it, 'input', the next step, which takes it as input, or 'both', their mean (default "
        f"{DEFAULT_READING}; BENCHMARKS.md compares them)",
    )


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

    prepare = commands.add_parser(
        "prepare", help="encode a config's training corpus to disk once, for `rnnsearch train` to reuse"
    )
    prepare.add_argument("config", help="YAML config (see configs/)")
    prepare.add_argument(
        "--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override a config value"
    )
    prepare.set_defaults(run=_prepare)

    def model_command(name: str, help: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help)
        command.add_argument("model_dir", nargs="+", help=MODEL_DIRS)
        command.add_argument(
            "--beam-size",
            type=_beam_width,
            default=None,
            help=f"1 = greedy, at most {MAX_BEAM_SIZE} (default: the config's)",
        )
        command.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: the GPU if any)")
        command.add_argument(
            "--precision",
            choices=SEARCH_PRECISIONS,
            help="search precision (default: the config's); int8 runs an exported package's quantised graphs",
        )
        command.add_argument("--runtime", choices=RUNTIMES, help=RUNTIME_HELP)
        command.add_argument(
            "--batch-sentences",
            type=_positive(int),
            help="sentences decoded together (default: the config's search.batch_sentences); a GPU gains from more",
        )
        return command

    translate = model_command(
        "translate", "translate lines (stdin → stdout by default); for a speech model, lines are WAV paths"
    )
    translate.add_argument("-i", "--input", help="input file (plain or .gz); default stdin")
    translate.add_argument("-o", "--output", help="output file; default stdout")
    translate.add_argument(
        "--n-best",
        type=_beam_width,
        default=1,
        help=f"N > 1 prints 'line ||| text ||| score' rows; at most the beam size and {MAX_BEAM_SIZE}",
    )
    translate.add_argument(
        "--alignments", metavar="OUT.jsonl", help="write tokens and alignment matrices as JSON lines"
    )
    translate.add_argument(
        "--hard-alignments",
        metavar="OUT.txt",
        help="write word alignments, one Pharaoh line of 0-based 'source-target' pairs per input line",
    )
    translate.add_argument(
        "--prefix",
        metavar="FILE",
        help="target prefixes, one per input line (empty: none): each translation starts with its prefix",
    )
    _add_reading(translate)
    translate.set_defaults(run=_translate)

    evaluate = model_command(
        "evaluate", "score a test set: sacreBLEU and chrF for text, digit error rate and accuracy for speech"
    )
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
    evaluate.set_defaults(run=_evaluate)

    def pairs_command(name: str, help: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help)
        command.add_argument("model_dir", nargs="+", help=MODEL_DIRS)
        command.add_argument("--src", required=True, help="source sentences, one a line (plain or .gz)")
        command.add_argument("--tgt", required=True, help="their given translations, line for line (plain or .gz)")
        command.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: the GPU if any)")
        command.add_argument("--precision", choices=PRECISIONS, help="model precision (default: the config's)")
        return command

    score = pairs_command("score", "score given translations: log-probability in total and per target token")
    score.add_argument("-o", "--output", help="output file; default stdout")
    score.add_argument(
        "--json", action="store_true", help="write JSON lines with the pieces, instead of tab-separated lines"
    )
    score.set_defaults(run=_score)

    align = pairs_command(
        "align",
        "align given translations to their sources (teacher-forced attention); with no output option, "
        "print Pharaoh lines",
    )
    align.add_argument("--alignments", metavar="OUT.jsonl", help="write tokens and alignment matrices as JSON lines")
    align.add_argument(
        "--hard-alignments",
        metavar="OUT.txt",
        help="write word alignments, one Pharaoh line of 0-based 'source-target' pairs per input pair",
    )
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
    _add_reading(align)
    align.add_argument("--json", action="store_true", help="print the scores against GOLD as JSON")
    align.set_defaults(run=_align)

    average = commands.add_parser(
        "average", help="average the weights of a model directory's last kept checkpoints into a new one"
    )
    average.add_argument("model_dir", help="directory trained with train.keep_checkpoints")
    average.add_argument("-n", type=int, help="average the last N kept checkpoints (default: all)")
    average.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the new model directory")
    average.set_defaults(run=_average)

    export = commands.add_parser(
        "export", help="write a model as an ONNX Runtime package, for fast CPU search (translate, evaluate, serve)"
    )
    export.add_argument("model_dir", help="trained model directory (its best weights)")
    export.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="the package's directory")
    export.add_argument("--int8", action="store_true", help="also write graphs with int8 weights (--precision int8)")
    export.set_defaults(run=_export)

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
    attention.add_argument("sentence", help="source sentence, or a WAV file for a speech model")
    attention.add_argument("-o", "--output", required=True, help="heatmap file: .png, .svg or .pdf")
    attention.set_defaults(run=_attention)

    serve = commands.add_parser("serve", help="serve a JSON translation API and a web page that shows alignments")
    serve.add_argument("model_dir", nargs="+", help=MODEL_DIRS)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    serve.add_argument("--port", type=int, default=8000, help="default %(default)s; 0 picks a free port")
    serve.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: the GPU if any)")
    serve.add_argument(
        "--precision",
        choices=SEARCH_PRECISIONS,
        help="search precision (default: the config's); int8 runs an exported package's quantised graphs",
    )
    serve.add_argument("--runtime", choices=RUNTIMES, help=RUNTIME_HELP)
    serve.add_argument(
        "--max-texts", type=_positive(int), default=64, help="texts or recordings per request (default %(default)s)"
    )
    serve.add_argument(
        "--max-chars", type=_positive(int), default=2000, help="characters per text (default %(default)s)"
    )
    serve.add_argument(
        "--max-audio-seconds",
        type=_positive(float),
        default=30.0,
        help="seconds per recording, for a speech model (default %(default)s)",
    )
    serve.add_argument(
        "--timeout", type=_positive(float), default=30.0, help="seconds per request (default %(default)s)"
    )
    serve.add_argument(
        "--max-batch",
        type=_positive(int),
        default=64,
        help="sentences per model call when requests are merged (default %(default)s)",
    )
    serve.set_defaults(run=_serve)
    return parser


class _NamedOutput:
    """An output stream whose write errors (a full disk, /dev/full) are one line naming it,
    `<stdout>` for standard output; a closed pipe stays a BrokenPipeError."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self.stream = stream
        self.name = name

    def write(self, text: str) -> int:
        return self._named(self.stream.write, text)

    def flush(self) -> None:
        self._named(self.stream.flush)

    def close(self) -> None:
        self._named(self.stream.close)

    def __enter__(self) -> _NamedOutput:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def _named(self, operation: Callable[..., Any], *args: Any) -> Any:
        try:
            return operation(*args)
        except BrokenPipeError:
            raise
        except OSError as error:
            if self.stream is sys.__stdout__:
                _discard(self.stream)
            raise UserError(f"{self.name}: cannot write: {error.strerror or error}") from None


def _discard(stream: TextIO) -> None:
    """Point the stream's descriptor at /dev/null, so the output still buffered is dropped
    at exit instead of failing again with a traceback."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)


def _output(path: str) -> _NamedOutput:
    """A UTF-8 text file opened for writing, whose write errors name it."""
    return _NamedOutput(open(path, "w", encoding="utf-8"), path)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stdout = sys.stdout
    sys.stdout = _NamedOutput(stdout, "<stdout>")
    try:
        if getattr(args, "device", None) is not None:
            from rnnsearch.translator import resolve_device

            resolve_device(args.device, "--device")
        args.run(args)
        sys.stdout.flush()
    except UserError as error:
        print(f"rnnsearch: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rnnsearch: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"rnnsearch: error: {where}{error.strerror or error}", file=sys.stderr)
        return 1
    finally:
        sys.stdout = stdout
    return 0


if __name__ == "__main__":
    sys.exit(main())

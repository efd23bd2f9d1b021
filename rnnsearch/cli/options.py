"""The flags several commands share, each declared once: the commands add the groups they
take, in the order their help lists them."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from rnnsearch.alignments.readings import ALIGNMENT_SOURCES, DEFAULT_READING, READINGS
from rnnsearch.config.search import (
    MAX_BEAM_SIZE,
    PRECISIONS,
    RUNTIMES,
    SEARCH_PRECISIONS,
    SearchSettingError,
    checked_search_setting,
)
from rnnsearch.errors import UserError
from rnnsearch.markup import MARKUPS, MAX_MARKUP_CHARS, PLACEMENTS

MODEL_DIRS = (
    "directory written by `rnnsearch train`; several decode together as an ensemble, "
    "which must share the target subword model"
)
RUNTIME_HELP = "onnx: an exported package's graphs on ONNX Runtime (its default); torch: PyTorch (any model directory)"


def positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    """An argparse type: a finite number of `kind` (int or float) greater than zero."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be greater than 0, got {text}")
        return value

    return parse


def beam_width(text: str) -> int:
    """An argparse type: a beam size or n-best count, an int from 1 to MAX_BEAM_SIZE."""
    value = int(positive(int)(text))
    if value > MAX_BEAM_SIZE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_BEAM_SIZE}, got {text}")
    return value


def add_config(command: argparse.ArgumentParser) -> None:
    """The YAML config and its --set overrides, for the commands that read a config."""
    command.add_argument("config", help="YAML config (see configs/)")
    command.add_argument(
        "--set", action="append", default=[], metavar="SECTION.KEY=VALUE", help="override a config value"
    )


def add_model_dirs(command: argparse.ArgumentParser) -> None:
    """One model directory or several, decoding together as an ensemble."""
    command.add_argument("model_dir", nargs="+", help=MODEL_DIRS)


def add_device(command: argparse.ArgumentParser) -> None:
    """--device, which `main` checks before the command runs."""
    command.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (default: the GPU if any)")


def search_setting(key: str) -> Callable[[str], float]:
    """An argparse type: a number for search.`key`, checked by the config's rule for it."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        try:
            return checked_search_setting(key, value)
        except SearchSettingError as error:
            raise argparse.ArgumentTypeError(f"{text}: {error.reason}") from None

    parse.__name__ = key  # what argparse names in its own messages
    return parse


SEARCH_DEST = "search."
"""What starts the argparse destination of a flag that overrides a key of the search
section: `search_overrides` hands every such flag given to the model's loading, so a new
search flag is declared here and read nowhere else."""


def search_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The search keys the command's flags override: each flag declared with a destination
    "search.KEY" and given a value."""
    return {
        name.removeprefix(SEARCH_DEST): value
        for name, value in vars(args).items()
        if name.startswith(SEARCH_DEST) and value is not None
    }


def add_coverage_penalty(command: argparse.ArgumentParser) -> None:
    """--coverage-penalty, the β of the coverage penalty that ranks beam search's finished hypotheses."""
    command.add_argument(
        "--coverage-penalty",
        dest=SEARCH_DEST + "coverage_penalty",
        type=search_setting("coverage_penalty"),
        metavar="BETA",
        help="rank finished hypotheses by score + BETA * sum_j log(min(attention on source word j, 1)) "
        "(Wu et al. 2016); 0 = none (default: the config's search.coverage_penalty)",
    )


def add_search_precision(command: argparse.ArgumentParser) -> None:
    """--precision of a search, int8 included, and --runtime, which runs it."""
    command.add_argument(
        "--precision",
        choices=SEARCH_PRECISIONS,
        help="search precision (default: the config's); int8 runs an exported package's quantised graphs",
    )
    command.add_argument("--runtime", choices=RUNTIMES, help=RUNTIME_HELP)


def add_search(command: argparse.ArgumentParser, *, model_dirs: bool = True) -> None:
    """The model directories (unless the command names its own) and search options of
    the commands that translate."""
    if model_dirs:
        add_model_dirs(command)
    command.add_argument(
        "--beam-size",
        type=beam_width,
        default=None,
        help=f"1 = greedy, at most {MAX_BEAM_SIZE} (default: the config's)",
    )
    add_coverage_penalty(command)
    add_device(command)
    add_search_precision(command)
    add_batch_sentences(command, "sentences decoded together")


def add_batch_sentences(command: argparse.ArgumentParser, what: str) -> None:
    """--batch-sentences, search.batch_sentences: how many inputs (`what`) run together."""
    command.add_argument(
        "--batch-sentences",
        dest=SEARCH_DEST + "batch_sentences",
        metavar="BATCH_SENTENCES",
        type=positive(int),
        help=f"{what} (default: the config's search.batch_sentences); a GPU gains from more",
    )


def add_pairs(command: argparse.ArgumentParser) -> None:
    """The model directories, the two files of given pairs and the model's device and
    precision, for the commands that read given translations (on PyTorch)."""
    add_model_dirs(command)
    command.add_argument("--src", required=True, help="source sentences, one a line (plain or .gz)")
    command.add_argument("--tgt", required=True, help="their given translations, line for line (plain or .gz)")
    add_device(command)
    command.add_argument("--precision", choices=PRECISIONS, help="model precision (default: the config's)")
    add_batch_sentences(command, "pairs read together")


def add_output_file(command: argparse.ArgumentParser) -> None:
    """-o, a file in place of standard output."""
    command.add_argument("-o", "--output", help="output file; default stdout")


def add_alignment_files(command: argparse.ArgumentParser, *, per: str) -> None:
    """--alignments and --hard-alignments, the files of alignments written one row or
    line `per` input line or pair."""
    command.add_argument("--alignments", metavar="OUT.jsonl", help="write tokens and alignment matrices as JSON lines")
    command.add_argument(
        "--hard-alignments",
        metavar="OUT.txt",
        help=f"write word alignments, one Pharaoh line of 0-based 'source-target' pairs per {per}",
    )


def add_alignment_source(command: argparse.ArgumentParser, *, reading: bool = True) -> None:
    """--alignment-from, what a command's alignments are read from, and, with `reading`
    (the commands that write word alignments), --reading, how their rows are read."""
    command.add_argument(
        "--alignment-from",
        choices=tuple(ALIGNMENT_SOURCES),
        help="what alignments are read from: 'aligner', the model's alignment module (`rnnsearch train-aligner`), "
        "which sees each target word it aligns, or 'attention', α (default: the module where the model has one)",
    )
    if reading:
        command.add_argument(
            "--reading",
            choices=tuple(READINGS),
            default=DEFAULT_READING,
            help="which row of α stands for a target word in the word alignments: 'output', the step that "
            f"outputs it, 'input', the next step, which takes it as input, or 'both', their mean (default "
            f"{DEFAULT_READING}; BENCHMARKS.md compares them)",
        )


def add_markup(command: argparse.ArgumentParser, *, reads: str, writes: str) -> None:
    """--markup and --lenient-markup: the input `reads` read as lines with inline markup,
    and what is written with it put back."""
    command.add_argument(
        "--markup",
        choices=MARKUPS,
        help=f"read {reads} as lines with inline markup (<b>…</b>, <a href=…>, <br/>, &amp;) and write {writes} "
        "(rnnsearch/markup/ has the rules); a line whose markup is not well-formed stops the command",
    )
    command.add_argument(
        "--lenient-markup",
        action="store_true",
        help="with --markup, a line whose markup is not well-formed is read as plain text instead, its output "
        "escaped, and their count goes to standard error",
    )
    command.add_argument(
        "--max-markup-chars",
        type=positive(int),
        metavar="N",
        help=f"with --markup, the longest line read, in characters (default {MAX_MARKUP_CHARS:,}); a longer line "
        "stops the command",
    )
    add_placement(command, "with --markup, how tags are placed")


PLACEMENT_HELP = (
    "'links', from the first to the last target word linked to an element's words; 'weights', around the span "
    "of target words the alignment's weights make likeliest for them (two directions: the lesser of their "
    "weights); 'averaged', the same with two directions' weights averaged; 'tempered', 'averaged' with the "
    "alignment module's jump table read looser (looser still for an element of one word), so that reordered "
    "phrases keep their words. Default: the "
    "measured best on tags translators placed (docs/guides/markup.md), 'tempered' where the alignment module is "
    "read, else 'links'"
)


def add_placement(command: argparse.ArgumentParser, what: str) -> None:
    """`--placement`: a name of PLACEMENTS, `what` saying what it places."""
    command.add_argument("--placement", choices=tuple(PLACEMENTS), help=f"{what}: {PLACEMENT_HELP}")


def check_markup_flags(args: argparse.Namespace, command: str) -> None:
    """Refuse --lenient-markup, --max-markup-chars and --placement without --markup, whose
    reading of lines and placing of tags they qualify, before any model loads, naming the flag."""
    given_flags = (
        ("--lenient-markup", args.lenient_markup, "reads lines"),
        ("--max-markup-chars", args.max_markup_chars, "reads lines"),
        ("--placement", args.placement, "places tags"),
    )
    for flag, given, what in given_flags:
        if given and not args.markup:
            raise UserError(f"{command}: {flag} says how --markup {what}; give --markup too")


def add_terms(command: argparse.ArgumentParser, *, unit: str) -> None:
    """The user's words: `--glossary` (terms each translation of a `unit` that holds
    them must write) and `--avoid` (words no translation may write)."""
    command.add_argument(
        "--glossary",
        metavar="FILE",
        help=f"the user's terms (.tsv or .csv with a header naming the source and target columns, or .tbx): each "
        f"term found in a {unit} is written in its translation; a term whose target is its source is kept as written",
    )
    command.add_argument(
        "--avoid",
        metavar="FILE",
        help="words and phrases no translation may write, one a line (UTF-8): none is written as a word, in any "
        "case, unless a term asks for it",
    )


def asked_of(args: argparse.Namespace, keywords: type | None = None) -> dict[str, object]:
    """What a command's flags ask of its call, by the Python API's names: each key of
    `keywords` (a TypedDict of the API's keywords; None: rnnsearch.translation.request.Asked,
    what a request reads) the command has a flag for. The one place the commands turn
    their flags into a call's settings, which the request checks."""
    from rnnsearch.translation.request import Asked

    names: frozenset[str] = getattr(Asked if keywords is None else keywords, "__optional_keys__", frozenset())
    return {key: getattr(args, key) for key in sorted(names) if hasattr(args, key)}

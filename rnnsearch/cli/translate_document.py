"""`rnnsearch translate-document`: documents in (web pages, Office and OpenDocument files,
EPUB books, Markdown, subtitles and captions, PO catalogues, resource files, XLIFF, plain
text), the same documents translated out, each under its own file name in the output
folder."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rnnsearch.cli.loading import load
from rnnsearch.cli.options import add_alignment_source, add_placement, add_search, add_terms, asked_of
from rnnsearch.errors import UserError

if TYPE_CHECKING:
    from tqdm import tqdm


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `translate-document` to the `rnnsearch` command."""
    command = commands.add_parser(
        "translate-document",
        help="translate documents (HTML, Office, OpenDocument, EPUB, Markdown, subtitles, PO, JSON, YAML, XLIFF, text) "
        "into OUT_DIR, keeping structure",
    )
    add_search(command, model_dirs=False)
    command.add_argument("model_dir", nargs=1, metavar="MODEL_DIR", help="the model directory")
    command.add_argument("inputs", nargs="+", metavar="IN", help="documents to translate")
    command.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="folder the translations go to")
    command.add_argument(
        "--format",
        choices=_FormatNames(),
        metavar="FORMAT",
        help="read every input as this format, one of %(choices)s (default: each input's extension says)",
    )
    command.add_argument(
        "--source-language",
        metavar="CODE",
        help="the language whose rules cut sentences, a language tag (an ISO 639 code such as de, or a BCP 47 tag "
        "such as pt-BR; one sentencex has no rules for is cut by its fallback, English's); default: the model's "
        "data.src_lang",
    )
    command.add_argument(
        "--unchanged-ok",
        action="store_true",
        help="write a document whose translation is its source, or that holds nothing to translate (default: refuse)",
    )
    _add_format_options(command.add_argument_group("what a format reads"))
    add_placement(command, "how inline formatting is placed")
    add_terms(command, unit="sentence")
    add_alignment_source(command)
    command.set_defaults(run=run)


def _add_format_options(group: argparse._ArgumentGroup) -> None:
    """The options that say what a format reads and how it writes: catalogues' and XLIFF
    files' translations, notes and comments, a workbook's hidden sheets and sheet names."""
    group.add_argument(
        "--retranslate",
        action="store_true",
        help="translate again what a document holds translated already (a PO catalogue's translated entries); "
        "default: keep it",
    )
    group.add_argument(
        "--overwrite",
        metavar="STATES",
        default="",
        help="an XLIFF file's translations in these states (comma-separated: translated, final, reviewed, "
        "signed-off, approved, …) are written over; default: only empty ones and those still to translate",
    )
    group.add_argument(
        "--proposals",
        action="store_true",
        help="offer an XLIFF file's translations beside their targets (<alt-trans>, <mtc:match>) and leave the "
        "targets as they are",
    )
    group.add_argument(
        "--state-qualifier",
        choices=("leveraged-mt", "mt-suggestion"),
        default="leveraged-mt",
        help="what an XLIFF target written says it is: machine translation (1.2 state-qualifier leveraged-mt, 2.x "
        "subState rnnsearch:mt; the default) or a machine's suggestion (mt-suggestion, rnnsearch:mt-suggestion)",
    )
    group.add_argument(
        "--notes",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="translate notes and comments: a presentation's speaker notes, a workbook's notes on cells, a Word or "
        "OpenDocument file's comments (default: on)",
    )
    group.add_argument(
        "--hidden-sheets", action="store_true", help="translate the sheets a workbook hides too (default: visible ones)"
    )
    group.add_argument(
        "--sheet-names",
        action="store_true",
        help="translate an Excel workbook's sheet names, each made one Excel takes, with every formula, name, link and "
        "chart that refers to a sheet following it (default: keep them)",
    )


class _FormatNames:
    """The names `--format` takes, read from the formats' registry only when a value is
    checked or the help is shown: every `rnnsearch` call builds this command's parser,
    and most read no document."""

    def __contains__(self, name: object) -> bool:
        from rnnsearch.documents import formats

        return name in formats()

    def __iter__(self) -> Iterator[str]:
        from rnnsearch.documents import formats

        return iter(formats())


def run(args: argparse.Namespace) -> None:
    """Translate every input (all their sentences in one search) and write each to the
    output folder, atomically, with a summary line each on standard error; what a
    killed run left half-written for these files is removed first."""
    from tqdm import tqdm

    from rnnsearch.files.atomic import atomic_write, remove_temporaries_of
    from rnnsearch.translation.document_translation import DocumentOptions

    out_dir = Path(args.output)
    targets = _targets(args.inputs, out_dir)
    remove_temporaries_of(*targets)  # what a killed run left writing these files
    translator = load(args)
    with tqdm(unit=" sentences", desc="translating", dynamic_ncols=True, disable=None, leave=False) as bar:
        settings = translator.document_settings(asked_of(args, DocumentOptions), source_language=args.source_language)
        translated = translator.translate_documents_with(
            settings, args.inputs, format=args.format, unchanged_ok=args.unchanged_ok, progress=_progress(bar)
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    for document, target in zip(translated, targets, strict=True):
        atomic_write(target, document.data)
        print(f"{document.summary} → {target}", file=sys.stderr)


def _progress(bar: tqdm) -> Callable[[int, int], None]:
    """A progress callback that moves `bar` on by each batch of sentences done."""

    def advance(total: int, done: int) -> None:
        bar.total = total
        bar.update(done)

    return advance


def _targets(inputs: list[str], out_dir: Path) -> list[Path]:
    """Where each input's translation is written: its file name in `out_dir`; two inputs
    of the same name, or one that would be written over itself, are refused."""
    targets: dict[Path, str] = {}
    for name in inputs:
        target = out_dir / Path(name).name
        if target in targets:
            raise UserError(f"translate-document: {targets[target]} and {name} would both be written to {target}")
        if target.exists() and target.resolve() == Path(name).resolve():
            raise UserError(f"translate-document: {name} would be written over itself; give another OUT_DIR")
        targets[target] = name
    return list(targets)

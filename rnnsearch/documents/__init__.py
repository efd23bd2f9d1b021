"""Documents in, the same documents out: each format one entry of `formats()`, one class in
one module of this package.

A format reads a document's bytes into a `Document`: its translation units, each a block
of the document (a paragraph, a heading, a list item, a table cell, a subtitle's run of
cues, a catalogue entry) or a translatable attribute, given as one line of inline markup
in the format's dialect (rnnsearch.markup.dialects), whatever formatting crosses the
block (bold, links, Word runs, Markdown emphasis, subtitle italics) standing as elements
over its words. What is not translated (scripts, code, field codes, timings,
placeholders, every byte between units) is never in a unit, or stands in it as an element
kept whole, so it comes back byte for byte. The translation job
(rnnsearch.translation.document_translation) cuts each unit into sentences, translates
them, puts the unit's markup back by the word alignment, and hands `Document.write` the
translated line of each unit, or None for one whose translation is its own text word for
word, which the document keeps exactly as it was written.

Adding a format (ODT, PPTX, EPUB) is one module here with one class that has `name`,
`extensions`, `dialect`, `media_type` and `read`, one line in `formats()`, and its tests.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from rnnsearch.documents.document import DocumentError, Format


@cache
def formats() -> dict[str, Format]:
    """Each format by the name `--format` and `format=` give it: the registry. Its
    modules, and the libraries they read with (lxml, markdown-it-py, srt, webvtt-py,
    polib, ruamel.yaml), are imported on the first call, when a document is read, so that a call that reads none
    (a plain `translate`, a speech model) loads none of them."""
    from rnnsearch.documents.books import EpubBook
    from rnnsearch.documents.html_page import HtmlPage
    from rnnsearch.documents.markdown_text import MarkdownText
    from rnnsearch.documents.open_document import OpenDocumentPresentation, OpenDocumentSpreadsheet, OpenDocumentText
    from rnnsearch.documents.plain import PlainText
    from rnnsearch.documents.po_catalogue import PoCatalogue
    from rnnsearch.documents.resources import JsonResources, YamlResources
    from rnnsearch.documents.slides import PowerPointSlides
    from rnnsearch.documents.subtitles import Subtitles
    from rnnsearch.documents.vtt_captions import VttCaptions
    from rnnsearch.documents.word.format import WordDocument
    from rnnsearch.documents.workbooks import ExcelWorkbook
    from rnnsearch.documents.xliff.format import Xliff

    entries: tuple[Format, ...] = (
        HtmlPage(),
        WordDocument(),
        PowerPointSlides(),
        ExcelWorkbook(),
        OpenDocumentText(),
        OpenDocumentPresentation(),
        OpenDocumentSpreadsheet(),
        EpubBook(),
        MarkdownText(),
        Subtitles(),
        VttCaptions(),
        PoCatalogue(),
        JsonResources(),
        YamlResources(),
        Xliff(),
        PlainText(),
    )
    return {entry.name: entry for entry in entries}


def format_named(name: str) -> Format:
    """The format called `name`, or a DocumentError listing those there are."""
    if name not in formats():
        raise DocumentError(f"format: {name!r} is not one of {', '.join(formats())}")
    return formats()[name]


def format_of(path: str | Path) -> Format:
    """The format a file name's extension says, or a DocumentError saying to give one."""
    suffix = Path(path).suffix.lower().lstrip(".")
    for entry in formats().values():
        if suffix in entry.extensions:
            return entry
    raise DocumentError(
        f"{path}: no format reads .{suffix or '(no extension)'} files; give one of {', '.join(formats())} as the format"
    )

"""OpenDocument files (.odt text, .odp presentations, .ods spreadsheets), read with lxml:
every paragraph and heading (`text:p`, `text:h`) of the content is a unit, wherever it
stands (the body, a table cell, a list, a frame's text box, a slide, presenter notes, a
note, a comment), its spans and links placed over their words and everything else it
holds kept where it stands (inline_tree.py: a note's own paragraphs are units of their
own, translated in place).

Not translated: deleted text kept for change tracking (`text:tracked-changes`), a
spreadsheet cell whose value is not a string (a number, a date, a currency, a
percentage, a truth value, shown formatted) or that holds a formula, and every part but
`content.xml` (styles, settings, the manifest, images); a file none of whose text changes
comes back byte for byte, its `mimetype` entry first and stored. The package is checked as
an Office package is (rnnsearch.documents.packages).
"""

from __future__ import annotations

from rnnsearch.documents.document import Document, ReadOptions, Unit, checked_size, checked_units
from rnnsearch.documents.inline_tree import TreeParagraph
from rnnsearch.documents.packages import Element, Kind, PackageDocument, Writer, opened

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
PARAGRAPHS = (f"{{{TEXT}}}p", f"{{{TEXT}}}h")
HOLDING = frozenset({f"{{{TEXT}}}span", f"{{{TEXT}}}a", f"{{{TEXT}}}ruby-base"})
"""The inline elements that format the text they hold: spans (a style), links."""
TRACKED = f"{{{TEXT}}}tracked-changes"
CELL = f"{{{TABLE}}}table-cell"

OPEN_DOCUMENT = Kind("an OpenDocument file", "LibreOffice", "content.xml", lambda name: name == "content.xml")


def _translated_here(paragraph: Element) -> bool:
    """Whether a paragraph is text to translate: not deleted text a change keeps, not a
    spreadsheet cell's formatted number or formula."""
    for ancestor in paragraph.iterancestors():
        if ancestor.tag == TRACKED:
            return False
        if ancestor.tag == CELL:
            kind = ancestor.get(f"{{{OFFICE}}}value-type")
            return (kind is None or kind == "string") and ancestor.get(f"{{{TABLE}}}formula") is None
    return True


def _holding(element: Element) -> bool:
    return element.tag in HOLDING


class _OpenDocumentFormat:
    """What the three OpenDocument formats share: their reading."""

    dialect = "xml"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package, parts = opened(checked_size(data, origin), origin, OPEN_DOCUMENT)
        root = parts["content.xml"]
        paragraphs, units = [], []
        for number, element in enumerate(root.iter(*PARAGRAPHS), start=1):
            read = TreeParagraph.of(element, _holding) if _translated_here(element) else None
            if read is not None:
                paragraphs.append(read)
                units.append(Unit(read.markup, f"content.xml, paragraph {number}"))
        writers: list[Writer] = [(("content.xml",), paragraph.write) for paragraph in paragraphs]
        return PackageDocument(data, package, parts, writers, checked_units(units, origin))


class OpenDocumentText(_OpenDocumentFormat):
    """An OpenDocument text (.odt)."""

    name = "odt"
    extensions: tuple[str, ...] = ("odt",)
    media_type = "application/vnd.oasis.opendocument.text"


class OpenDocumentPresentation(_OpenDocumentFormat):
    """An OpenDocument presentation (.odp)."""

    name = "odp"
    extensions: tuple[str, ...] = ("odp",)
    media_type = "application/vnd.oasis.opendocument.presentation"


class OpenDocumentSpreadsheet(_OpenDocumentFormat):
    """An OpenDocument spreadsheet (.ods)."""

    name = "ods"
    extensions: tuple[str, ...] = ("ods",)
    media_type = "application/vnd.oasis.opendocument.spreadsheet"

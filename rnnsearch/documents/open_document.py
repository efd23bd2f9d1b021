"""OpenDocument files (.odt text, .odp presentations, .ods spreadsheets), read with lxml:
every paragraph and heading (`text:p`, `text:h`) of the content is a unit, wherever it
stands (the body, a table cell, a list, a frame's text box, a slide, presenter notes, a
note, a comment), its spans and links placed over their words and everything else it
holds kept where it stands (inline_tree.py: a note's own paragraphs are units of their
own, translated in place).

Not translated: deleted text kept for change tracking (`text:tracked-changes`), a
spreadsheet cell whose value is not a string (a number, a date, a currency, a
percentage, a truth value, shown formatted) or that holds a formula, presenter notes and
comments (`office:annotation`) where a call asks for no notes, a hidden sheet (a table
whose style does not display it) unless a call asks for hidden sheets, and every part but
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
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
PRESENTATION = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
TRACKED = f"{{{TEXT}}}tracked-changes"
CELL, TABLE_ELEMENT = f"{{{TABLE}}}table-cell", f"{{{TABLE}}}table"
NOTES = frozenset({f"{{{PRESENTATION}}}notes", f"{{{OFFICE}}}annotation"})
"""A slide's presenter notes and a comment: translated unless a call asks for no notes."""

OPEN_DOCUMENT = Kind("an OpenDocument file", "LibreOffice", "content.xml", lambda name: name == "content.xml")


def _hidden_tables(root: Element) -> frozenset[str]:
    """The names of the content's table styles that hide a table (a hidden sheet)."""
    hidden = set()
    for style in root.iter(f"{{{STYLE}}}style"):
        shown = style.find(f"{{{STYLE}}}table-properties")
        if shown is not None and shown.get(f"{{{TABLE}}}display") == "false":
            hidden.add(style.get(f"{{{STYLE}}}name", ""))
    return frozenset(hidden)


def _translated_here(paragraph: Element, options: ReadOptions, hidden: frozenset[str]) -> bool:
    """Whether a paragraph is text to translate: not deleted text a change keeps, not a
    spreadsheet cell's formatted number or formula, not a note or a comment where the call
    asks for none, not in a hidden sheet unless it asks for them."""
    for ancestor in paragraph.iterancestors():
        if ancestor.tag == TRACKED or (ancestor.tag in NOTES and not options.notes):
            return False
        if (
            ancestor.tag == TABLE_ELEMENT
            and not options.hidden_sheets
            and ancestor.get(f"{{{TABLE}}}style-name") in hidden
        ):
            return False
        if ancestor.tag == CELL:
            kind = ancestor.get(f"{{{OFFICE}}}value-type")
            if kind not in (None, "string") or ancestor.get(f"{{{TABLE}}}formula") is not None:
                return False
    return True


def _holding(element: Element) -> bool:
    return element.tag in HOLDING


class _OpenDocumentFormat:
    """What the three OpenDocument formats share: their reading."""

    dialect = "xml"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package = opened(checked_size(data, origin), origin, OPEN_DOCUMENT)
        root = package.parts["content.xml"]
        paragraphs, units, hidden = [], [], _hidden_tables(root)
        for number, element in enumerate(root.iter(*PARAGRAPHS), start=1):
            read = TreeParagraph.of(element, _holding) if _translated_here(element, options, hidden) else None
            if read is not None:
                paragraphs.append(read)
                units.append(Unit(read.markup, f"content.xml, paragraph {number}"))
        writers: list[Writer] = [(("content.xml",), paragraph.write) for paragraph in paragraphs]
        return PackageDocument(package, writers, checked_units(units, origin))


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

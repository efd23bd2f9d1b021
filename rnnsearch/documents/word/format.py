"""Word documents (.docx, Office Open XML), read with lxml: every story's paragraphs are
units, each paragraph's content carried as one line of inline markup (its runs'
formatting, hyperlinks, fields, content controls, bookmarks and comments as elements
over their words: rnnsearch.documents.word.paragraph), so that a translated
sentence keeps its bold word on the right word and loses nothing it held.

Stories: the body, tables, headers, footers, footnotes, endnotes and comments (unless a
call asks for no notes), and the
paragraphs of text boxes inside any of them (both branches of `mc:AlternateContent`,
each a paragraph of its own). Every paragraph that is not translated, every other part
of the package (styles, numbering, images, settings, relationships) and the order of the
parts stay exactly as they were; a document none of whose text changes is handed back
byte for byte.

A package is refused, in one line naming the file, when it is not a zip, when its parts
would be larger together than MAX_DOCUMENT_BYTES unpacked (a zip bomb: the sizes it
declares are checked first, and every part is unpacked a chunk at a time, so that one
that lies about its size is stopped at the bound), when a part is encrypted, compressed
by a method Word does not use, or damaged (its CRC), all found before anything is
translated, when a part is not well-formed XML, and when a part declares a DTD (entity
expansion, as in the billion laughs, is never done): the package is opened and checked
by rnnsearch.documents.packages.
"""

from __future__ import annotations

from functools import partial

from rnnsearch.documents.document import (
    Document,
    ReadOptions,
    Unit,
    checked_size,
    checked_units,
)
from rnnsearch.documents.packages import Kind, PackageDocument, Writer, opened
from rnnsearch.documents.word.paragraph import W, WordParagraph
from rnnsearch.documents.word.writing import write_paragraph

PARAGRAPH = f"{{{W}}}p"

COMMENTS = "word/comments.xml"
STORIES = ("word/document.xml", "word/footnotes.xml", "word/endnotes.xml", COMMENTS)
STORY_PREFIXES = ("word/header", "word/footer")

WORD = Kind(
    "a Word document",
    "Word",
    "word/document.xml",
    lambda name: name in STORIES or (name.startswith(STORY_PREFIXES) and name.endswith(".xml")),
)


class WordDocument:
    """A Word (.docx) document."""

    name = "docx"
    extensions: tuple[str, ...] = ("docx",)
    dialect = "xml"
    media_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package = opened(checked_size(data, origin), origin, WORD)
        paragraphs, units = [], []
        for name, root in package.parts.items():
            if name == COMMENTS and not options.notes:
                continue
            for number, paragraph in enumerate(root.iter(PARAGRAPH), start=1):
                read = WordParagraph.of(paragraph)
                if read is not None:
                    paragraphs.append((name, read))
                    units.append(Unit(read.markup, f"{name}, paragraph {number}", parsed=read.parsed))
        writers: list[Writer] = [((name,), partial(write_paragraph, read)) for name, read in paragraphs]
        protected = sum(len(read.others) for _, read in paragraphs)
        return PackageDocument(package, writers, checked_units(units, origin), protected=protected)

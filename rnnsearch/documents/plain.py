"""Plain text: each paragraph (lines up to a blank line) a unit, translated as one
block, so that a line break inside a paragraph never ends a sentence; blank lines,
indentation and the white space around paragraphs kept as they are."""

from __future__ import annotations

from rnnsearch.documents.document import (
    Document,
    ReadOptions,
    Span,
    SplicedText,
    Unit,
    bom_and_text,
    checked_size,
    checked_units,
    plain_markup,
    plain_text,
)


class PlainText:
    """Plain UTF-8 text, by paragraphs."""

    name = "text"
    extensions: tuple[str, ...] = ("txt", "text")
    dialect = "xml"
    media_type = "text/plain"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        bom, text = bom_and_text(checked_size(data, origin), origin)
        units, spans = [], []
        for number, (start, end) in enumerate(paragraphs(text), start=1):
            units.append(Unit(plain_markup(text[start:end]), f"paragraph {number}"))
            spans.append(Span(start, end, plain_text))
        return SplicedText(text, checked_units(units, origin), spans, bom=bom)


def paragraphs(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each paragraph of `text`: a run of lines that are not blank,
    from its first character that is not white space to its last."""
    found, start, position = [], None, 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            if start is None:
                start = position + len(line) - len(line.lstrip())
            end = position + len(line.rstrip())
        elif start is not None:
            found.append((start, end))
            start = None
        position += len(line)
    if start is not None:
        found.append((start, end))
    return found

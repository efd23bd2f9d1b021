"""Where each element of an XML file lies in its bytes, so that a translation is written
into the file in place and every other byte (declarations, notes, the formatting of
attributes, the native data of inline codes) stays as it was.

lxml builds the tree the XLIFF reader walks but keeps no offsets; the standard library's
expat parser reports the byte index of each event, and both meet the elements in the same
(document) order, so the n-th element of one is the n-th of the other. The file has been
parsed by lxml, and refused if it declares a DTD, before expat reads it.
"""

from __future__ import annotations

import xml.parsers.expat
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Extent:
    """An element's bytes: [start, open_end) its start tag, [close_start, end) its end
    tag; for an empty element (`<x/>`) the one tag is both, and close_start == end."""

    start: int
    open_end: int
    close_start: int
    end: int

    @property
    def empty(self) -> bool:
        return self.close_start == self.end


def extents(data: bytes) -> list[Extent]:
    """Each element's extent, in document order."""
    parser = xml.parsers.expat.ParserCreate()
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    events: list[tuple[str, int]] = []  # ("S" start, "E" end, "O" anything else, byte index)

    def noted(kind: str) -> Callable[..., None]:
        return lambda *_: events.append((kind, parser.CurrentByteIndex))

    parser.StartElementHandler = noted("S")
    parser.EndElementHandler = noted("E")
    parser.CharacterDataHandler = noted("O")
    parser.DefaultHandlerExpand = noted("O")
    parser.Parse(data, True)
    return _paired(events, data)


def _paired(events: list[tuple[str, int]], data: bytes) -> list[Extent]:
    """Start and end events matched into extents: a start tag ends where the next event
    begins; an end event right after its start at the start tag's end is an empty
    element's (expat reports it after the `/>`)."""
    found: list[Extent | None] = []
    open_ones: list[tuple[int, int, int]] = []  # (index in found, start, open_end)
    for k, (kind, index) in enumerate(events):
        if kind == "S":
            open_end = events[k + 1][1] if k + 1 < len(events) else len(data)
            open_ones.append((len(found), index, open_end))
            found.append(None)
        elif kind == "E":
            at, start, open_end = open_ones.pop()
            previous = events[k - 1]
            if previous == ("S", start) and index == open_end and data[open_end - 2 : open_end] == b"/>":
                found[at] = Extent(start, open_end, open_end, open_end)
            else:
                found[at] = Extent(start, open_end, index, data.index(b">", index) + 1)
    return [extent for extent in found if extent is not None]

"""A segment's inline codes as elements of a line of markup, and a translated line back
into the segment's bytes with every code as it was written.

A segment's content becomes a line in the `xml` markup whose elements stand for its codes
(the markup package places them by the word alignment, as it places any tags):

- an element that holds text (`<g>`, 1.2's `<mrk>`, 2.x's `<pc>` and `<mrk>`) is an
  element `<g n="…">` over its words;
- a code written as a start and an end apart (1.2's `<bpt>`…`<ept>` and `<bx/>`…`<ex/>`,
  2.x's `<sc/>`…`<ec/>` and `<sm/>`…`<em/>`), where both are in the same element and nest
  with the codes around them, is one such element over the words between them;
- text marked untranslated (1.2's `<mrk mtype="protected">`, 2.x's `<mrk translate="no">`)
  is an element kept whole, `<k n="…" translate="no">`, its words standing where it stood;
- every other code (`<x/>`, `<ph>`, `<it>`, a start or an end left unpaired, a comment) is
  a standalone `<x n="…"/>`; those the file says may not be reordered (2.x
  `canReorder="no"`) are written back in the order the source has them, at the places
  the alignment gave them.

`n` numbers the unit's `Code`s, each the bytes the file holds for it, which the line
written back puts where its element went: each code comes back exactly once, with its id,
its attributes and its native data byte for byte, and nested as the placed line nests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lxml import etree

from rnnsearch.documents.xliff.extents import Extent
from rnnsearch.markup.dialects import escape


@dataclass(frozen=True)
class Code:
    """An inline code as the file writes it: `before`, a paired code's start (or a
    standalone code whole), and `after`, its end (empty for a standalone code)."""

    before: bytes
    after: bytes = b""
    kept: bool = False
    in_order: bool = False


@dataclass(frozen=True)
class Kinds:
    """How a version of XLIFF writes its inline codes: the local names of its elements that
    hold text; of its starts and ends written apart, each start's name with its end's name;
    how a start and an end name the pair they belong to; and whether an element is text
    marked untranslated."""

    holding: frozenset[str]
    apart: dict[str, str]
    pair_key: Callable[[etree._Element], str | None]
    kept: Callable[[etree._Element], bool]


def local(element: etree._Element) -> str:
    """An element's name without its namespace ("" for a comment or an instruction)."""
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


class Reader:
    """Turns segments of one file into lines of markup, numbering their codes."""

    def __init__(self, data: bytes, places: dict[etree._Element, Extent], kinds: Kinds):
        self.data, self.places, self.kinds = data, places, kinds

    def line(self, element: etree._Element) -> tuple[str, list[Code]]:
        """The content of `element` (a source, a segment) as a line of markup, and its codes."""
        codes: list[Code] = []
        return self._content(element, codes), codes

    def raw(self, element: etree._Element) -> bytes:
        """The bytes of an element as the file writes them, or a comment's as lxml does."""
        if not isinstance(element.tag, str):
            return bytes(etree.tostring(element, with_tail=False, encoding="utf-8"))
        place = self.places[element]
        return self.data[place.start : place.end]

    def inner(self, element: etree._Element) -> bytes:
        """The bytes between an element's start and end tags."""
        place = self.places[element]
        return self.data[place.open_end : place.close_start]

    def _content(self, parent: etree._Element, codes: list[Code]) -> str:
        children = list(parent)
        return escape(parent.text or "") + self._run(children, 0, len(children), self._pairs(children), codes)

    def _run(
        self, children: list[etree._Element], first: int, stop: int, pairs: dict[int, int], codes: list[Code]
    ) -> str:
        pieces, k = [], first
        while k < stop:
            child = children[k]
            if k in pairs:
                end = pairs[k]
                codes.append(Code(self.raw(child), self.raw(children[end])))
                held = escape(child.tail or "") + self._run(children, k + 1, end, pairs, codes)
                pieces.append(f'<g n="{len(codes) - 1}">{held}</g>')
                child = children[end]
                k = end
            else:
                pieces.append(self._one(child, codes))
            pieces.append(escape(child.tail or ""))
            k += 1
        return "".join(pieces)

    def _one(self, child: etree._Element, codes: list[Code]) -> str:
        n = len(codes)
        if isinstance(child.tag, str) and self.kinds.kept(child):
            codes.append(Code(self.raw(child), kept=True))
            return f'<k n="{n}" translate="no">{escape("".join(str(text) for text in child.itertext()))}</k>'
        if local(child) in self.kinds.holding and not self.places[child].empty:
            place = self.places[child]
            codes.append(Code(self.data[place.start : place.open_end], self.data[place.close_start : place.end]))
            return f'<g n="{n}">{self._content(child, codes)}</g>'
        codes.append(Code(self.raw(child), in_order=isinstance(child.tag, str) and child.get("canReorder") == "no"))
        return f'<x n="{n}"/>'

    def _pairs(self, children: list[etree._Element]) -> dict[int, int]:
        """Which of these siblings are starts whose end is a later sibling, each start's
        index with its end's: the first end of a start still open closes it, and the
        starts opened after it and not yet closed are left unpaired, so pairs nest."""
        ends = set(self.kinds.apart.values())
        pairs: dict[int, int] = {}
        open_ones: list[tuple[str, str, int]] = []  # (start's name, its key, its index)
        for k, child in enumerate(children):
            name, key = local(child), self.kinds.pair_key(child) if isinstance(child.tag, str) else None
            if name in self.kinds.apart and key is not None:
                open_ones.append((name, key, k))
            elif name in ends and key is not None:
                at = next(
                    (
                        j
                        for j in range(len(open_ones) - 1, -1, -1)
                        if open_ones[j][1] == key and self.kinds.apart[open_ones[j][0]] == name
                    ),
                    None,
                )
                if at is not None:
                    pairs[open_ones[at][2]] = k
                    del open_ones[at:]
        return pairs


def written(line: str, codes: Sequence[Code], encoding: str) -> bytes:
    """A translated line of markup (its elements those `Reader.line` made) as the
    segment's bytes: its words escaped, each element its code as the file wrote it. The
    standalone codes that may not be reordered take the places the alignment gave them
    in the order the source has them."""
    root = etree.fromstring(f"<r>{line}</r>".encode(), etree.XMLParser(resolve_entities=False, no_network=True))
    out: list[bytes] = []
    in_order = [code for code in codes if code.in_order]
    _written(root, codes, encoding, out, in_order)
    return b"".join(out)


def _written(
    element: etree._Element, codes: Sequence[Code], encoding: str, out: list[bytes], in_order: list[Code]
) -> None:
    out.append(_text(element.text, encoding))
    for child in element:
        code = codes[int(child.get("n", ""))]
        if code.in_order:
            code = in_order.pop(0)
        out.append(code.before)
        if child.tag == "g":
            _written(child, codes, encoding, out, in_order)
            out.append(code.after)
        out.append(_text(child.tail, encoding))


def _text(text: str | None, encoding: str) -> bytes:
    return escape(text).encode(encoding, "xmlcharrefreplace") if text else b""

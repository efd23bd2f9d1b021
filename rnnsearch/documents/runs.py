"""Paragraphs made of runs, as DrawingML (PowerPoint's `a:p`) and SpreadsheetML (Excel's
shared and inline strings) write them, read into one line of markup and written back
from its translation.

A paragraph's runs are read by their look (their properties: font, size, bold, colour, a
hyperlink): consecutive runs that look the same are one span of text, the look most of
its characters have is the paragraph's own (its text bare in the unit), and each other
look an element `<r n="…">` over its words. A line break is a standalone code placed
where its neighbours go; a field (a slide number, a date) is kept whole where it stands;
anything else in a paragraph is kept where it stands too. What stands at the paragraph's
edges (its properties, its end) stays as it was, what is dropped (phonetic runs, whose
offsets the translation no longer has) goes, and its runs are written again from the
translation, each word in the look its element gives it, a word outside every element in
the paragraph's own look.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from rnnsearch.documents.document import code_pieces
from rnnsearch.documents.packages import Element
from rnnsearch.markup.dialects import escape
from rnnsearch.markup.parsing import parse

XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


@dataclass(frozen=True)
class RunTags:
    """The tags of one markup's paragraphs: a run, its properties and its text; what
    stands at a paragraph's start (`first`) and at its end (`last`) and stays; what is
    kept whole (`kept`: fields) and what is dropped; and whether text with white space at
    an edge is marked `xml:space="preserve"`."""

    run: str
    properties: str
    text: str
    first: tuple[str, ...] = ()
    last: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    preserve: bool = False


@dataclass
class RunParagraph:
    """A paragraph read: its element, the tags of its markup, its looks (each a run's
    properties, or None for none), the one most of its text has, its codes (breaks,
    fields and what else it holds) and its line of markup."""

    element: Element
    tags: RunTags
    looks: list[Element | None] = field(default_factory=list)
    main: int = 0
    codes: list[Element] = field(default_factory=list)
    markup: str = ""

    @classmethod
    def of(
        cls, element: Element, tags: RunTags, *, keep: Callable[[Element], bool] | None = None
    ) -> RunParagraph | None:
        """The paragraph read, or None where it has no words to translate; a run `keep`
        says is kept whole, as a field is (a note's author)."""
        paragraph = cls(element, tags)
        spans = paragraph._spans(keep)
        lengths: dict[int, int] = {}
        for look, text in spans:
            if isinstance(look, int):
                lengths[look] = lengths.get(look, 0) + len(text)
        paragraph.main = max(lengths, key=lambda look: lengths[look], default=0)
        paragraph.markup = "".join(paragraph._written(span) for span in spans)
        return paragraph if paragraph.markup and parse(paragraph.markup, "xml").has_own_words else None

    def _spans(self, keep: Callable[[Element], bool] | None) -> list[tuple[int | str, str]]:
        """The paragraph's content in order: (look, text) for runs, consecutive runs of one
        look joined; ("code", n) for a code, ("kept", n) for a field or a run `keep` keeps."""
        spans: list[tuple[int | str, str]] = []
        keys: dict[bytes, int] = {}
        tags = self.tags
        for child in self.element:
            if child.tag in (*tags.first, *tags.last, *tags.dropped) or not isinstance(child.tag, str):
                continue
            if child.tag in (tags.run, tags.text) and not (keep is not None and keep(child)):
                properties = child.find(tags.properties)
                key = b"" if properties is None else etree.tostring(properties)
                if key not in keys:
                    keys[key] = len(self.looks)
                    self.looks.append(properties)
                text = "".join(t.text or "" for t in child.iter(tags.text))
                if spans and spans[-1][0] == keys[key]:
                    spans[-1] = (keys[key], spans[-1][1] + text)
                else:
                    spans.append((keys[key], text))
                continue
            self.codes.append(child)
            kept = child.tag in tags.kept or child.tag == tags.run
            spans.append(("kept" if kept else "code", str(len(self.codes) - 1)))
        return spans

    def _written(self, span: tuple[int | str, str]) -> str:
        look, text = span
        if look == "code":
            return f'<x n="{text}"/>'
        if look == "kept":
            shown = "".join(t.text or "" for t in self.codes[int(text)].iter(self.tags.text))
            return f'<k n="{text}" translate="no">{escape(shown)}</k>'
        return escape(text) if look == self.main else f'<r n="{look}">{escape(text)}</r>'

    def write(self, line: str) -> None:
        """The paragraph's runs and codes written again from its translated line."""
        tags = self.tags
        content: list[Element] = []
        looks: list[int] = [self.main]
        for piece in code_pieces(line, "xml"):
            if piece.role == "text":
                content.append(self._run(looks[-1], piece.text))
            elif piece.role == "start":
                looks.append(piece.number)
            elif piece.role == "end":
                looks.pop()
            else:
                content.append(copy.deepcopy(self.codes[piece.number]))
        for child in list(self.element):
            if child.tag not in (*tags.first, *tags.last):
                self.element.remove(child)
        starts = sum(child.tag in tags.first for child in self.element)
        for position, child in enumerate(content, start=starts):
            self.element.insert(position, child)

    def _run(self, look: int, text: str) -> Element:
        run = etree.Element(self.tags.run)
        properties = self.looks[look] if look < len(self.looks) else None
        if properties is not None:
            run.append(copy.deepcopy(properties))
        written = etree.SubElement(run, self.tags.text)
        written.text = text
        if self.tags.preserve and text != text.strip():
            written.set(XML_SPACE, "preserve")
        return run

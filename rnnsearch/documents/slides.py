"""PowerPoint presentations (.pptx), read with lxml: every paragraph (`a:p`) of every
slide and every notes page is a unit, whichever shape holds it (a text box, a
placeholder, a shape in a group, a table cell), its runs' formatting carried over its
words as elements, so that a translated sentence keeps its bold word on the right word.

A paragraph's runs are read by their look (`a:rPr`: font, size, bold, colour, a
hyperlink): consecutive runs that look the same are one span of text, the look most of
its characters have is the paragraph's own (its text bare in the unit), and each other
look an element `<r n="…">` over its words. A line break (`a:br`) is a standalone code
placed where its neighbours go; a field (`a:fld`: a slide number, a date) is kept whole
where it stands; anything else in a paragraph is kept where it stands too. The
paragraph's properties (`a:pPr`) and end (`a:endParaRPr`) stay as they were, and its
runs are written again from the translation, each word in the look its element gives it,
a word outside every element in the paragraph's own look.

Slide layouts and masters, charts, diagrams, images and every other part are left as
they were, as is a presentation none of whose text changes (byte for byte). The package
is checked as Word's is (rnnsearch.documents.packages): a zip bomb, an encrypted or
damaged part, a part that is not XML or declares a DTD is refused in one line naming it.
"""

from __future__ import annotations

import copy
import html
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from lxml import etree

from rnnsearch.documents.document import Document, ReadOptions, Unit, checked_size, checked_units
from rnnsearch.documents.packages import Element, Kind, opened, repacked
from rnnsearch.markup.dialects import escape
from rnnsearch.markup.events import events
from rnnsearch.markup.parsing import parse

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
PARAGRAPH, RUN, PROPERTIES, TEXT = f"{{{A}}}p", f"{{{A}}}r", f"{{{A}}}rPr", f"{{{A}}}t"
KEPT_AT_EDGES = (f"{{{A}}}pPr", f"{{{A}}}endParaRPr")
BREAK, FIELD = f"{{{A}}}br", f"{{{A}}}fld"

POWERPOINT = Kind(
    "a PowerPoint presentation",
    "PowerPoint",
    "ppt/presentation.xml",
    lambda name: name.startswith(("ppt/slides/slide", "ppt/notesSlides/notesSlide")) and name.endswith(".xml"),
)


@dataclass
class SlideParagraph:
    """A paragraph read: its element, its looks (each a run's `a:rPr`, or None for none),
    the one most of its text has, its codes (breaks, fields and what else it holds) and
    its line of markup."""

    element: Element
    looks: list[Element | None] = field(default_factory=list)
    main: int = 0
    codes: list[Element] = field(default_factory=list)
    markup: str = ""

    @classmethod
    def of(cls, element: Element) -> SlideParagraph | None:
        """The paragraph read, or None where it has no words to translate."""
        paragraph = cls(element)
        spans = paragraph._spans()
        lengths: dict[int, int] = {}
        for look, text in spans:
            if isinstance(look, int):
                lengths[look] = lengths.get(look, 0) + len(text)
        paragraph.main = max(lengths, key=lambda look: lengths[look], default=0)
        paragraph.markup = "".join(paragraph._written(span) for span in spans)
        return paragraph if paragraph.markup and parse(paragraph.markup, "xml").has_own_words else None

    def _spans(self) -> list[tuple[int | str, str]]:
        """The paragraph's content in order: (look, text) for runs, consecutive runs of one
        look joined; ("code", n) for a code, ("kept", n) for a field."""
        spans: list[tuple[int | str, str]] = []
        keys: dict[bytes, int] = {}
        for child in self.element:
            if child.tag in KEPT_AT_EDGES or not isinstance(child.tag, str):
                continue
            if child.tag == RUN:
                properties = child.find(PROPERTIES)
                key = b"" if properties is None else etree.tostring(properties)
                if key not in keys:
                    keys[key] = len(self.looks)
                    self.looks.append(properties)
                text = "".join(t.text or "" for t in child.iter(TEXT))
                if spans and spans[-1][0] == keys[key]:
                    spans[-1] = (keys[key], spans[-1][1] + text)
                else:
                    spans.append((keys[key], text))
                continue
            self.codes.append(child)
            spans.append(("kept" if child.tag == FIELD else "code", str(len(self.codes) - 1)))
        return spans

    def _written(self, span: tuple[int | str, str]) -> str:
        look, text = span
        if look == "code":
            return f'<x n="{text}"/>'
        if look == "kept":
            shown = "".join(t.text or "" for t in self.codes[int(text)].iter(TEXT))
            return f'<k n="{text}" translate="no">{escape(shown)}</k>'
        return escape(text) if look == self.main else f'<r n="{look}">{escape(text)}</r>'

    def write(self, line: str) -> None:
        """The paragraph's runs and codes written again from its translated line."""
        edges = [child for child in self.element if child.tag in KEPT_AT_EDGES]
        content: list[Element] = []
        looks: list[int] = [self.main]
        kept = 0
        for segment in parse(line, "xml").segments:
            event = events(segment)[0] if segment.startswith("<") else None
            if kept:
                kept += 0 if event is None else {"start": 1, "end": -1}.get(event.kind, 0)
            elif event is None:
                content.append(self._run(looks[-1], html.unescape(segment)))
            elif event.kind == "end":
                looks.pop()
            else:
                attributes = dict(event.attrs)
                number = int(attributes.get("n") or 0)
                if event.tag == "r":
                    looks.append(number)
                else:
                    content.append(copy.deepcopy(self.codes[number]))
                    kept = 1 if event.tag == "k" and event.kind == "start" else 0
        for child in list(self.element):
            if child.tag not in KEPT_AT_EDGES:
                self.element.remove(child)
        starts = [edge for edge in edges if edge.tag == KEPT_AT_EDGES[0]]
        for position, child in enumerate(content, start=len(starts)):
            self.element.insert(position, child)

    def _run(self, look: int, text: str) -> Element:
        run = etree.Element(RUN)
        properties = self.looks[look] if look < len(self.looks) else None
        if properties is not None:
            run.append(copy.deepcopy(properties))
        etree.SubElement(run, TEXT).text = text
        return run


class PowerPointSlides:
    """A PowerPoint (.pptx) presentation."""

    name = "pptx"
    extensions: tuple[str, ...] = ("pptx",)
    dialect = "xml"
    media_type = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package, parts = opened(checked_size(data, origin), origin, POWERPOINT)
        paragraphs, units = [], []
        for name, root in parts.items():
            for number, element in enumerate(root.iter(PARAGRAPH), start=1):
                read = SlideParagraph.of(element)
                if read is not None:
                    paragraphs.append((name, read))
                    units.append(Unit(read.markup, f"{name}, paragraph {number}"))
        return _Presentation(data, package, parts, paragraphs, checked_units(units, origin))


class _Presentation(Document):
    """The presentation, its translated slides and notes written again, every other part as it was."""

    def __init__(
        self,
        data: bytes,
        package: zipfile.ZipFile,
        parts: dict[str, Element],
        paragraphs: list[tuple[str, SlideParagraph]],
        units: list[Unit],
    ):
        self.data, self.package, self.parts, self.paragraphs, self.units = data, package, parts, paragraphs, units
        self.protected = sum(sum(code.tag == FIELD for code in p.codes) for _, p in paragraphs)

    def write(self, translations: Sequence[str | None]) -> bytes:
        changed = set()
        for (name, paragraph), translation in zip(self.paragraphs, translations, strict=True):
            if translation is not None:
                paragraph.write(translation)
                changed.add(name)
        return repacked(self.package, self.parts, changed) if changed else self.data

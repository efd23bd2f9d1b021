"""PowerPoint presentations (.pptx), read with lxml: every paragraph (`a:p`) of every
slide and every notes page (unless a call asks for no notes) is a unit, whichever shape holds it (a text box, a
placeholder, a shape in a group, a table cell), its runs' formatting carried over its
words as elements, so that a translated sentence keeps its bold word on the right word.

A paragraph's runs are read by their look (`a:rPr`) as runs.py reads them: a line break
(`a:br`) placed where its neighbours go, a field (`a:fld`: a slide number, a date) kept
whole, the paragraph's properties (`a:pPr`) and end (`a:endParaRPr`) as they were.

The summary names each shape whose text grew by more than 30% (GROWTH) and that does
not fit its text to itself (PowerPoint's autofit in the shape: shrink the text, or grow
the shape), where the text may overflow its box. Slide layouts and masters, charts,
diagrams, images and every other part are left as they were, as is a presentation none
of whose text changes (byte for byte). The package is checked as Word's is
(rnnsearch.documents.packages): a zip bomb, an encrypted or damaged part, a part that is
not XML or declares a DTD is refused in one line naming it.
"""

from __future__ import annotations

from rnnsearch.documents.document import Document, ReadOptions, Unit, checked_size, checked_units
from rnnsearch.documents.packages import Element, Kind, PackageDocument, Writer, opened
from rnnsearch.documents.runs import RunParagraph, RunTags

A = "http://schemas.openxmlformats.org/drawingml/2006/main"
PARAGRAPH, FIELD = f"{{{A}}}p", f"{{{A}}}fld"
DRAWING = RunTags(
    f"{{{A}}}r", f"{{{A}}}rPr", f"{{{A}}}t", first=(f"{{{A}}}pPr",), last=(f"{{{A}}}endParaRPr",), kept=(FIELD,)
)
"""DrawingML's paragraphs: runs `a:r` of `a:rPr` and `a:t`, between `a:pPr` and `a:endParaRPr`."""

NOTES = "ppt/notesSlides/notesSlide"
"""Where a slide's notes page is: translated unless a call asks for no notes."""

POWERPOINT = Kind(
    "a PowerPoint presentation",
    "PowerPoint",
    "ppt/presentation.xml",
    lambda name: name.startswith(("ppt/slides/slide", NOTES)) and name.endswith(".xml"),
)


class PowerPointSlides:
    """A PowerPoint (.pptx) presentation."""

    name = "pptx"
    extensions: tuple[str, ...] = ("pptx",)
    dialect = "xml"
    media_type = "application/vnd.openxmlformats-officedocument.presentationml.presentation"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package = opened(checked_size(data, origin), origin, POWERPOINT)
        paragraphs, units = [], []
        shapes = _Shapes()
        for name, root in package.parts.items():
            if name.startswith(NOTES) and not options.notes:
                continue
            for number, element in enumerate(root.iter(PARAGRAPH), start=1):
                read = RunParagraph.of(element, DRAWING)
                if read is not None:
                    paragraphs.append((name, read))
                    units.append(Unit(read.markup, f"{name}, paragraph {number}"))
                    shapes.add(name, element)
        writers: list[Writer] = [((name,), read.write) for name, read in paragraphs]
        protected = sum(sum(code.tag == FIELD for code in read.codes) for _, read in paragraphs)
        return PackageDocument(
            package, writers, checked_units(units, origin), protected=protected, noticed=shapes.grown
        )


GROWTH = 1.3
"""How much longer than its source a shape's text may grow before the summary names the
shape: past it, a box that does not fit its text to itself may overflow."""

P = "http://schemas.openxmlformats.org/presentationml/2006/main"
AUTOFIT = (f"{{{A}}}normAutofit", f"{{{A}}}spAutoFit")


class _Shapes:
    """The shapes whose text is translated, with their text's length as read, so that
    those whose text grows past GROWTH and that do not fit their text to themselves
    (PowerPoint's autofit: shrink the text, or grow the shape) are named."""

    def __init__(self) -> None:
        self.shapes: dict[Element, tuple[str, int]] = {}

    def add(self, part: str, paragraph: Element) -> None:
        shape = next(paragraph.iterancestors(f"{{{P}}}sp"), None)
        if shape is None or shape in self.shapes or next(shape.iter(*AUTOFIT), None) is not None:
            return
        properties = shape.find(f"{{{P}}}nvSpPr/{{{P}}}cNvPr")
        name = "a shape" if properties is None else properties.get("name", "a shape")
        self.shapes[shape] = (f"{part} {name!r}", _length(shape))

    def grown(self) -> tuple[str, ...]:
        grown = [name for shape, (name, length) in self.shapes.items() if _length(shape) > GROWTH * max(length, 1)]
        if not grown:
            return ()
        return (
            f"text grew by more than {GROWTH - 1:.0%} in {len(grown):,} shapes without autofit, which may overflow: "
            + ", ".join(grown),
        )


def _length(shape: Element) -> int:
    return sum(len(text.text or "") for text in shape.iter(f"{{{A}}}t"))

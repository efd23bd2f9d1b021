"""A Word paragraph's translated line of markup (rnnsearch.documents.word.paragraph
reads the paragraph into it) written back as the paragraph's content: each piece of text
a new run with the formatting of the element around it, each container, range and field
around the words the alignment gave it, each tag's nodes where it stands."""

from __future__ import annotations

import copy
import html

from lxml import etree

from rnnsearch.documents.packages import Element
from rnnsearch.documents.word.paragraph import (
    PARAGRAPH_PROPERTIES,
    RUN,
    TEXT,
    XML_SPACE,
    WordParagraph,
    content_of,
)
from rnnsearch.markup.parsing import parse


def write_paragraph(paragraph: WordParagraph, translation: str) -> None:
    """The paragraph's content (all but its properties) replaced by its translation's."""
    written = _Writer(paragraph).nodes(translation)
    for child in list(paragraph.element):
        if child.tag != PARAGRAPH_PROPERTIES:
            paragraph.element.remove(child)
    for node in written:
        paragraph.element.append(node)


class _Writer:
    """A translated line of a paragraph's markup turned into the paragraph's content."""

    def __init__(self, paragraph: WordParagraph):
        self.paragraph = paragraph

    def nodes(self, translation: str) -> list[Element]:
        written: list[Element] = []
        targets: list[Element | list[Element]] = [written]  # where content goes, innermost last
        formats: list[int] = []  # the open format elements, innermost last
        closing: list[int] = []  # each open element's index, innermost last
        shown: str | None = None  # the end tag of the code kept whole being passed over
        for segment in parse(translation, "xml").segments:
            if shown is not None:
                shown = None if segment == shown else shown
                continue
            if not segment.startswith("<"):
                targets[-1].append(self._run(html.unescape(segment), formats))
                continue
            name = segment.strip("</>").split()[0]
            if name.startswith("o"):
                for node in self.paragraph.others[int(name[1:])]:
                    targets[-1].append(node)
                if not segment.endswith("/>"):  # code kept whole: its text is the run's
                    shown = f"</{name}>"
            elif segment.startswith("</"):
                self._close(closing.pop(), targets, formats)
            else:
                closing.append(int(name[1:]))
                self._open(closing[-1], targets, formats)
        return written

    def _open(self, index: int, targets: list[Element | list[Element]], formats: list[int]) -> None:
        mark = self.paragraph.marks[index]
        if mark.kind == "format":
            formats.append(index)
        elif mark.kind == "container":
            assert mark.shell is not None
            shell = _shell(mark.shell)
            targets[-1].append(shell)
            targets.append(content_of(shell))
        elif mark.kind == "range":
            assert mark.shell is not None
            targets[-1].append(mark.shell)
        else:  # a field: its code, whole and in order
            for node in mark.begin:
                targets[-1].append(node)

    def _close(self, index: int, targets: list[Element | list[Element]], formats: list[int]) -> None:
        mark = self.paragraph.marks[index]
        if mark.kind == "format":
            formats.pop()
        elif mark.kind == "container":
            targets.pop()
        else:  # a range's end mark, a field's end run
            assert mark.end is not None
            targets[-1].append(mark.end)

    def _run(self, text: str, formats: list[int]) -> Element:
        run = etree.Element(RUN)
        chosen = formats[-1] if formats else self.paragraph.main
        properties = None if chosen is None else self.paragraph.marks[chosen].shell
        if properties is not None:
            run.append(copy.deepcopy(properties))
        element = etree.SubElement(run, TEXT)
        element.text = text
        element.set(XML_SPACE, "preserve")
        return run


def _shell(container: Element) -> Element:
    """A copy of a container without its runs: its attributes and its own properties
    (w:sdtPr, w:smartTagPr, …), and for a content control an empty w:sdtContent."""
    shell = copy.deepcopy(container)
    content = content_of(shell)
    for child in list(content):
        if not child.tag.endswith("Pr"):
            content.remove(child)
    return shell

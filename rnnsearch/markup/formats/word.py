"""Word documents (.docx, Office Open XML), read with lxml: every story's paragraphs are
units, their runs' formatting carried as inline markup, so that a translated sentence
keeps its bold word on the right word.

Stories: the body, tables, headers, footers, footnotes, endnotes and comments, and the
paragraphs of text boxes inside any of them (both branches of `mc:AlternateContent`,
each a paragraph of its own). A paragraph's text is that of its runs wherever they
stand: in hyperlinks, tracked insertions (`w:ins`), smart tags, content controls
(`w:sdt`) and simple fields (`w:fldSimple`), which python-docx's `Paragraph.text`
misses. Consecutive runs with the same formatting are one element (Word often splits a
word over two runs of the same look: "Bei" + "spiel"); a hyperlink is an element around
its runs. A run that holds no text (a field code, a drawing, a footnote reference, a
tracked deletion's text is never read) stands as a tag of its own and is moved, whole,
where the alignment places it; tabs and line breaks likewise.

A translated paragraph's runs are written again: each piece of text in a new run with
the formatting of the runs its words came from. Every paragraph that is not translated,
every other part of the package (styles, numbering, images, settings, relationships)
and the order of the parts stay exactly as they were; a document none of whose text
changes is handed back byte for byte.

A package is refused, in one line naming the file, when it is not a zip, when its parts
would be larger together than MAX_DOCUMENT_BYTES unpacked (a zip bomb: the sizes it
declares are checked first, and every part is unpacked a chunk at a time, so that one
that lies about its size is stopped at the bound), when a part is encrypted, compressed
by a method Word does not use, or damaged (its CRC), all found before anything is
translated, when a part is not well-formed XML, and when a part declares a DTD (entity
expansion, as in the billion laughs, is never done): the package is opened and checked
by rnnsearch.markup.formats.word_package.
"""

from __future__ import annotations

import copy
import html
import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field

from lxml import etree

from rnnsearch.markup.dialects import escape
from rnnsearch.markup.formats.document import (
    Document,
    ReadOptions,
    Unit,
    checked_size,
    checked_units,
)
from rnnsearch.markup.formats.word_package import Element, opened
from rnnsearch.markup.parsing import MarkedUp, parse

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
SKIPPED = frozenset({f"{{{W}}}del", f"{{{W}}}moveFrom"})
"""Containers whose runs are tracked deletions: never read, never changed."""
BREAKS = frozenset({f"{{{W}}}tab", f"{{{W}}}br", f"{{{W}}}cr", f"{{{W}}}noBreakHyphen", f"{{{W}}}softHyphen"})
TEXT = f"{{{W}}}t"
RUN_PROPERTIES = f"{{{W}}}rPr"

Other = tuple[str, Element, Element | None]
"""What a standalone tag writes back: ("break", its run, the tab or break in it), or
("run", a run holding anything but text, None): that run whole."""


def _w(name: str) -> str:
    return f"{{{W}}}{name}"


class WordDocument:
    """A Word (.docx) document."""

    name = "docx"
    extensions: tuple[str, ...] = ("docx",)
    dialect = "xml"
    media_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        package, stories = opened(checked_size(data, origin), origin)
        parts, paragraphs, units = {}, [], []
        for name, root in stories.items():
            parts[name] = root
            for number, paragraph in enumerate(root.iter(_w("p")), start=1):
                read = _Paragraph.of(paragraph)
                if read is not None:
                    paragraphs.append((name, read))
                    units.append(Unit(read.markup, f"{name}, paragraph {number}", parsed=read.parsed))
        return _Package(data, package, parts, paragraphs, checked_units(units, origin))


@dataclass
class _Paragraph:
    """A paragraph's runs as a line of markup: text runs grouped as `r<k>` elements by
    their formatting (and hyperlink), hyperlinks as `h<k>`, runs without text, tabs and
    breaks as standalone `o<k>` tags."""

    element: Element
    runs: list[Element] = field(default_factory=list)  # every run read, in order
    groups: list[Element | None] = field(default_factory=list)  # a group's rPr (or None)
    links: list[Element] = field(default_factory=list)  # the hyperlink elements
    others: list[Other] = field(default_factory=list)  # what each standalone tag writes back
    markup: str = ""
    parsed: MarkedUp | None = None

    @classmethod
    def of(cls, paragraph: Element) -> _Paragraph | None:
        read = cls(paragraph)
        read.markup = read._markup()
        read.parsed = parse(read.markup, "xml")
        return read if read.parsed.words else None

    def _markup(self) -> str:
        pieces: list[str] = []
        group_key: bytes | None = None  # the formatting of the open group, None when none is open
        link: Element | None = None
        for run in _runs(self.element):
            self.runs.append(run)
            run_link = _hyperlink(run, self.element)
            if run_link is not link:
                pieces.append(self._closed(group_key is not None, link is not None))
                group_key = None
                if run_link is not None:
                    self.links.append(run_link)
                    pieces.append(f"<h{len(self.links) - 1}>")
                link = run_link
            key = _properties_key(run)
            for value in _contents(run):
                if not isinstance(value, str):
                    self.others.append(value)
                    pieces.append(f"<o{len(self.others) - 1}/>")
                    continue
                if key != group_key:
                    pieces.append(self._closed(group_key is not None, False))
                    self.groups.append(run.find(RUN_PROPERTIES))
                    pieces.append(f"<r{len(self.groups) - 1}>")
                    group_key = key
                pieces.append(escape(value))
        pieces.append(self._closed(group_key is not None, link is not None))
        return "".join(pieces)

    def _closed(self, group: bool, link: bool) -> str:
        """The end tags of the open group and the open hyperlink, as asked."""
        return (f"</r{len(self.groups) - 1}>" if group else "") + (f"</h{len(self.links) - 1}>" if link else "")

    def write(self, translation: str) -> None:
        """The paragraph's runs replaced by the translation's, in the order it has them."""
        index = _anchor(self.element, self.runs)
        for run in self.runs:
            parent = run.getparent()
            if parent is not None:
                parent.remove(run)
        _drop_empty(self.element)
        written = _Writer(self).elements(translation)
        for offset, element in enumerate(written):
            self.element.insert(index + offset, element)


def _runs(paragraph: Element) -> list[Element]:
    """The paragraph's own runs, in document order: not those of a paragraph inside it
    (a text box), nor tracked deletions."""
    found = []
    for run in paragraph.iter(_w("r")):
        owner = run.getparent()
        skipped = False
        while owner is not None and owner is not paragraph:
            if owner.tag == _w("p") or owner.tag in SKIPPED:
                skipped = True
                break
            owner = owner.getparent()
        if not skipped and owner is paragraph:
            found.append(run)
    return found


def _hyperlink(run: Element, paragraph: Element) -> Element | None:
    owner = run.getparent()
    while owner is not None and owner is not paragraph:
        if owner.tag == _w("hyperlink"):
            return owner
        owner = owner.getparent()
    return None


def _properties_key(run: Element) -> bytes:
    properties = run.find(RUN_PROPERTIES)
    return b"" if properties is None else etree.tostring(properties)


def _contents(run: Element) -> list[str | Other]:
    """A run's content: the text of each w:t, an `Other` for a tab or a break, and, once,
    the whole run where it holds anything else (a field code, a drawing, a reference)."""
    contents: list[str | Other] = []
    for child in run:
        if child.tag == RUN_PROPERTIES:
            continue
        if child.tag == TEXT:
            if child.text:
                contents.append(child.text)
        elif child.tag in BREAKS:
            contents.append(("break", run, child))
        else:
            return [("run", run, None)]
    return contents


def _anchor(paragraph: Element, runs: list[Element]) -> int:
    """Where in the paragraph the written runs go: at its first child that held a run."""
    if not runs:
        return len(paragraph)
    top = runs[0]
    while (parent := top.getparent()) is not paragraph and parent is not None:
        top = parent
    return int(paragraph.index(top))


def _drop_empty(paragraph: Element) -> None:
    """Hyperlinks, insertions and smart tags left with nothing in them, removed."""
    for name in ("hyperlink", "ins", "smartTag"):
        for element in list(paragraph.iter(_w(name))):
            parent = element.getparent()
            if len(element) == 0 and parent is not None:
                parent.remove(element)


class _Writer:
    """A translated line of a paragraph's markup turned into runs."""

    def __init__(self, paragraph: _Paragraph):
        self.paragraph = paragraph

    def elements(self, translation: str) -> list[Element]:
        written: list[Element] = []
        groups: list[int] = []
        link: Element | None = None
        text: list[str] = []
        for segment in parse(translation, "xml").segments:
            if not segment.startswith("<"):
                text.append(html.unescape(segment))
                continue
            target = written if link is None else link
            if text:
                target.append(self._run("".join(text), groups))
                text = []
            name = segment.strip("</>")
            if segment.startswith("</"):
                if name.startswith("h"):
                    link = None
                elif groups:
                    groups.pop()
            elif name.startswith("h"):
                link = copy.deepcopy(self.paragraph.links[int(name[1:])])
                for child in list(link):
                    link.remove(child)
                written.append(link)
            elif name.startswith("r"):
                groups.append(int(name[1:]))
            else:
                target.append(self._other(self.paragraph.others[int(name[1:])]))
        if text:
            (written if link is None else link).append(self._run("".join(text), groups))
        return written

    def _properties(self, groups: list[int]) -> Element | None:
        group = groups[-1] if groups else 0
        properties = self.paragraph.groups[group] if self.paragraph.groups else None
        return None if properties is None else copy.deepcopy(properties)

    def _run(self, text: str, groups: list[int]) -> Element:
        run = etree.Element(_w("r"))
        properties = self._properties(groups)
        if properties is not None:
            run.append(properties)
        element = etree.SubElement(run, TEXT)
        element.text = text
        element.set(XML_SPACE, "preserve")
        return run

    def _other(self, other: Other) -> Element:
        _, run, child = other
        if child is None:  # a run kept whole
            return run
        written = etree.Element(_w("r"))
        properties = run.find(RUN_PROPERTIES)
        if properties is not None:
            written.append(copy.deepcopy(properties))
        written.append(copy.deepcopy(child))
        return written


class _Package(Document):
    """The package, its translated parts written again, every other part as it was."""

    def __init__(
        self,
        data: bytes,
        package: zipfile.ZipFile,
        parts: dict[str, Element],
        paragraphs: list[tuple[str, _Paragraph]],
        units: list[Unit],
    ):
        self.data, self.package, self.parts, self.paragraphs, self.units = data, package, parts, paragraphs, units
        self.protected = sum(len(paragraph.others) for _, paragraph in paragraphs)

    def write(self, translations: Sequence[str | None]) -> bytes:
        changed = set()
        for (name, paragraph), translation in zip(self.paragraphs, translations, strict=True):
            if translation is not None:
                paragraph.write(translation)
                changed.add(name)
        if not changed:
            return self.data
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as written:
            for member in self.package.infolist():
                data = self.package.read(member.filename)
                if member.filename in changed:
                    data = etree.tostring(
                        self.parts[member.filename], xml_declaration=True, encoding="UTF-8", standalone=True
                    )
                written.writestr(member, data, compress_type=member.compress_type)
        return buffer.getvalue()

"""A Word paragraph as one line of markup and back (rnnsearch.documents.word reads
the package and its stories): everything the paragraph holds, besides its properties,
stands in the line, so that writing its translation back loses and reorders nothing.

- Text runs: the paragraph's main formatting (that of the most characters) is its text's
  own, bare in the line; consecutive runs of any other formatting are one element
  `e<k>` (Word often splits a word over two runs of the same look: "Bei" + "spiel"). A
  translated piece of text gets the formatting of the element around it, and a word
  outside every one the main formatting, never merely the first run's (a bold lead-in, a
  right-to-left run, does not spread over the paragraph). Text in the main formatting
  holds no element, so that it never crosses a bold word's element where the alignment
  links a word of it across that word.
- Containers of runs: hyperlinks, tracked insertions and moves (`w:ins`, `w:moveTo`),
  smart tags, custom XML, content controls (`w:sdt`) and simple fields (`w:fldSimple`)
  are elements over the runs they hold, each written back as itself around the words
  the alignment gives it.
- Ranges marked by a start and an end (bookmarks, comments, permissions) are elements
  over what lies between them, where they nest with the rest; where they do not, each
  mark stays as a tag of its own.
- A complex field (`w:fldChar` begin, its code, separate, its result, end) is an
  element: its code (begin to separate) opens it and its end closes it, kept whole and in
  order, around its result's words. A field that does not end in the paragraph, or has
  no result, leaves its runs as tags of their own.
- Code is kept whole, untranslated: a run whose character style is named for code
  (`VerbatimChar`, as pandoc writes it, `HTMLCode`, any style id with "Code" or
  "Verbatim" in it) or whose font is a monospace one (`MONOSPACE`); a paragraph whose
  style is named for code (`SourceCode`, `HTMLPreformatted`) is not translated at all.
- Everything else (a run without text, or with a drawing or a reference beside it; a
  tab, a break or a symbol; a tracked deletion; an equation; a proofing mark) is a tag
  of its own, moved whole where the alignment places it; `w:lastRenderedPageBreak`, a hint Word writes
  anew whenever it lays the page out, is dropped.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field

from lxml import etree

from rnnsearch.documents.packages import Element
from rnnsearch.markup.dialects import escape
from rnnsearch.markup.elements import MarkedUp
from rnnsearch.markup.parsing import parse

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


def _w(name: str) -> str:
    return f"{{{W}}}{name}"


RUN, TEXT, RUN_PROPERTIES, PARAGRAPH_PROPERTIES = _w("r"), _w("t"), _w("rPr"), _w("pPr")
CONTAINERS = frozenset(
    _w(name) for name in ("hyperlink", "ins", "moveTo", "smartTag", "customXml", "fldSimple", "dir", "bdo", "sdt")
)
"""Elements that hold runs of the paragraph's text, written back around their words."""
RANGE_MARKS = {
    _w(start): _w(end)
    for start, end in (
        ("bookmarkStart", "bookmarkEnd"),
        ("commentRangeStart", "commentRangeEnd"),
        ("permStart", "permEnd"),
        ("moveToRangeStart", "moveToRangeEnd"),
        ("moveFromRangeStart", "moveFromRangeEnd"),
    )
}
"""The marks that open a range, each with the mark that closes it (the same w:id)."""
BREAKS = frozenset(_w(name) for name in ("tab", "br", "cr", "noBreakHyphen", "softHyphen", "sym", "ptab"))
"""What a run with text may hold besides it, each a tag of its own."""
DROPPED = frozenset({_w("lastRenderedPageBreak")})
"""What a run holds that Word writes anew: dropped from a translated paragraph."""
FIELD_CHARACTER, FIELD_TYPE = _w("fldChar"), _w("fldCharType")
CODE_STYLES = ("code", "verbatim", "preformatted")
"""Parts of a style id (in lower case) that name a style for code."""
MONOSPACE = frozenset(
    {
        "courier", "courier new", "consolas", "menlo", "monaco", "lucida console", "lucida sans typewriter",
        "andale mono", "source code pro", "dejavu sans mono", "liberation mono", "fira code", "fira mono",
        "roboto mono", "inconsolata", "cascadia code", "cascadia mono", "jetbrains mono", "ubuntu mono",
        "sf mono", "noto sans mono", "ibm plex mono", "courier prime", "pt mono", "ocr a extended",
    }
)  # fmt: skip
"""Fonts whose text is code: a run set wholly in one of these is kept whole."""


@dataclass(eq=False)
class Mark:
    """One element of the line: how it is written back.

    kind:     "format" (a run's properties, `shell` its w:rPr or None), "container" (`shell`
              the container, written as a copy without its runs), "range" (`shell` the
              start mark, `end` the end mark), "field" (`begin` its runs from begin to
              separate, `end` its end run)
    """

    kind: str
    shell: Element | None = None
    end: Element | None = None
    begin: list[Element] = field(default_factory=list)


@dataclass
class _Event:
    """One step of a paragraph read in document order: a piece of text in a run (`text`,
    its `run`), a tag of its own (`nodes`, what it writes back; `text`, what it shows, for
    code kept whole, which then stands as a word of its own), an element's start or end
    (`mark`), or a range mark or a field's start or end waiting to be paired."""

    kind: str  # piece (of text), kept, open, close, range-start, range-end, field-start, field-end
    text: str = ""
    run: Element | None = None
    nodes: list[Element] = field(default_factory=list)
    mark: Mark | None = None
    key: str = ""  # a range's id, to pair its marks


def code_paragraph(paragraph: Element) -> bool:
    """Whether the paragraph's style is one named for code (its text is kept as it is)."""
    style = paragraph.find(f"{PARAGRAPH_PROPERTIES}/{_w('pStyle')}")
    return style is not None and _named_for_code(style.get(_w("val"), ""))


def _named_for_code(style_id: str) -> bool:
    return any(part in style_id.lower() for part in CODE_STYLES)


def _is_code(run: Element) -> bool:
    """Whether a run is code: its character style is named for code, or its font is a
    monospace one."""
    properties = run.find(RUN_PROPERTIES)
    if properties is None:
        return False
    style = properties.find(_w("rStyle"))
    if style is not None and _named_for_code(style.get(_w("val"), "")):
        return True
    fonts = properties.find(_w("rFonts"))
    return fonts is not None and any(
        (fonts.get(_w(script)) or "").strip().lower() in MONOSPACE for script in ("ascii", "hAnsi")
    )


@dataclass
class WordParagraph:
    """A paragraph as a line of markup (`markup`, `parsed`): elements `e<k>` (`marks`)
    and tags `o<k>` (`others`, the nodes each writes back)."""

    element: Element
    marks: list[Mark] = field(default_factory=list)
    others: list[list[Element]] = field(default_factory=list)
    main: int | None = None  # the format mark of the most words
    markup: str = ""
    parsed: MarkedUp | None = None

    @classmethod
    def of(cls, paragraph: Element) -> WordParagraph | None:
        """The paragraph read, or None where it has no words to translate (or is code)."""
        if paragraph.find(f".//{TEXT}") is None or code_paragraph(paragraph):
            return None  # no text anywhere in it (most empty paragraphs), or code
        read = cls(paragraph)
        read.markup = read._line(_paired(list(_events(paragraph))))
        read.parsed = parse(read.markup, "xml")
        if not read.parsed.has_own_words:
            return None
        return read

    def _line(self, events: list[_Event]) -> str:
        pieces: list[str] = []
        group: tuple[int, bytes] | None = None  # the open format element and its properties
        main = _main_key(events)
        for event in events:
            if event.kind == "piece" and event.run is not None and _properties_key(event.run) == main:
                pieces.append(self._closed(group))
                group = None
                if self.main is None:  # the main formatting's mark, which no element in the line names
                    self.main = self._mark(Mark("format", event.run.find(RUN_PROPERTIES)))
                pieces.append(escape(event.text))
                continue
            if event.kind == "piece":
                assert event.run is not None
                key = _properties_key(event.run)
                if group is None or group[1] != key:
                    pieces.append(self._closed(group))
                    group = (self._mark(Mark("format", event.run.find(RUN_PROPERTIES))), key)
                    pieces.append(f"<e{group[0]}>")
                pieces.append(escape(event.text))
                continue
            if event.kind == "kept":
                self.others.append(event.nodes)
                name = f"o{len(self.others) - 1}"
                shown = f'<{name} translate="no">{escape(event.text)}</{name}>'
                pieces.append(shown if event.text else f"<{name}/>")
                continue
            pieces.append(self._closed(group))
            group = None
            assert event.mark is not None
            if event.kind == "open":
                pieces.append(f"<e{self._mark(event.mark)}>")
            else:
                pieces.append(f"</e{self.marks.index(event.mark)}>")
        pieces.append(self._closed(group))
        return "".join(pieces)

    def _mark(self, mark: Mark) -> int:
        self.marks.append(mark)
        return len(self.marks) - 1

    @staticmethod
    def _closed(group: tuple[int, bytes] | None) -> str:
        return "" if group is None else f"</e{group[0]}>"


def _events(parent: Element) -> Iterator[_Event]:
    """What `parent` (the paragraph, or a container in it) holds, in document order."""
    field_code: list[Element] | None = None  # the runs of a complex field's code being read
    depth = 0  # nested fields inside that code
    for child in parent:
        if field_code is not None:  # inside a field's code: every node is the code's, until separate or end
            field_code.append(child)
            kind = _field_character(child)
            depth += (kind == "begin") - (kind == "end")
            if depth == 0 and kind == "separate":
                yield _Event("field-start", nodes=field_code)
                field_code = None
            elif depth < 0:  # a field with no result: its runs stay as they are, whole
                yield _Event("kept", nodes=field_code)
                field_code, depth = None, 0
            continue
        tag = child.tag
        if tag == PARAGRAPH_PROPERTIES:
            continue
        if tag == RUN and _field_character(child) == "begin":
            field_code, depth = [child], 0
        elif tag == RUN and _field_character(child) == "end":
            yield _Event("field-end", nodes=[child])
        elif tag == RUN:
            yield from _run_events(child)
        elif tag in CONTAINERS:
            mark = Mark("container", child)
            yield _Event("open", mark=mark)
            yield from _events(content_of(child))
            yield _Event("close", mark=mark)
        elif tag in RANGE_MARKS:
            yield _Event("range-start", nodes=[child], key=f"{tag}:{child.get(_w('id'))}")
        elif tag in RANGE_MARKS.values():
            start = next(start for start, end in RANGE_MARKS.items() if end == tag)
            yield _Event("range-end", nodes=[child], key=f"{start}:{child.get(_w('id'))}")
        else:  # a deletion, an equation, a proofing mark: kept whole where it stands
            yield _Event("kept", nodes=[child])
    if field_code is not None:  # a field whose code runs past the paragraph
        yield _Event("kept", nodes=field_code)


def content_of(container: Element) -> Element:
    """Where a container's runs are: a content control's w:sdtContent, else itself."""
    if container.tag == _w("sdt"):
        content = container.find(_w("sdtContent"))
        return container if content is None else content
    return container


def _field_character(node: Element) -> str | None:
    """The type of the complex field character a run holds (begin, separate, end), if any."""
    if node.tag != RUN:
        return None
    character = node.find(FIELD_CHARACTER)
    return None if character is None else character.get(FIELD_TYPE)


def _run_events(run: Element) -> Iterator[_Event]:
    """A run's text pieces, and what else it holds as tags of their own; a run without
    text, and a run of code, whole."""
    known = {TEXT, RUN_PROPERTIES} | BREAKS | DROPPED
    if _is_code(run) and any(child.tag == TEXT and child.text for child in run):
        shown = "".join(child.text or "" for child in run if child.tag == TEXT)
        yield _Event("kept", text=shown, nodes=[run])  # code shows: a word of its own, spaces around it
        return
    if not any(child.tag == TEXT for child in run) or any(child.tag not in known for child in run):
        yield _Event("kept", nodes=[run])
        return
    for child in run:
        if child.tag == RUN_PROPERTIES or child.tag in DROPPED:
            continue
        if child.tag == TEXT:
            if child.text:
                yield _Event("piece", text=child.text, run=run)
        else:
            yield _Event("kept", nodes=[_alone(run, child)])


def _alone(run: Element, child: Element) -> Element:
    """A new run with `run`'s properties holding a copy of `child` (a tab, a break, a symbol)."""
    written = etree.Element(RUN)
    properties = run.find(RUN_PROPERTIES)
    if properties is not None:
        written.append(copy.deepcopy(properties))
    written.append(copy.deepcopy(child))
    return written


def _paired(events: list[_Event]) -> list[_Event]:
    """The events with each range mark and each field's end paired with its start as an
    element's start and end, where the pair nests with the other elements (no element
    opens or closes between them without the other); a mark or a field end left unpaired
    is a tag of its own."""
    keys: dict[int, str] = {}  # a start's event index → what pairs with it (a range's key, "field-start")
    closes: dict[int, int] = {}  # end event → start event
    stack: list[int] = []  # open starts and containers, innermost last
    for k, event in enumerate(events):
        if event.kind in ("open", "range-start", "field-start"):
            stack.append(k)
            keys[k] = event.key if event.kind == "range-start" else event.kind
        elif event.kind == "close":
            while stack and events[stack[-1]].kind != "open":
                stack.pop()  # a mark left open inside the container pairs with nothing
            stack.pop()
        elif event.kind in ("range-end", "field-end"):
            wanted = event.key if event.kind == "range-end" else "field-start"
            if stack and keys[stack[-1]] == wanted and events[stack[-1]].kind != "open":
                closes[k] = stack.pop()
    starts = set(closes.values())
    paired: list[_Event] = []
    for k, event in enumerate(events):
        if event.kind in ("range-start", "field-start") and k in starts:
            begin = event.nodes if event.kind == "field-start" else []
            shell = None if event.kind == "field-start" else event.nodes[0]
            event.mark = Mark("range" if shell is not None else "field", shell, begin=begin)
            paired.append(_Event("open", mark=event.mark))
        elif event.kind in ("range-end", "field-end") and k in closes:
            start = events[closes[k]]
            assert start.mark is not None
            start.mark.end = event.nodes[0]
            paired.append(_Event("close", mark=start.mark))
        elif event.kind in ("range-start", "range-end", "field-start", "field-end"):
            paired.append(_Event("kept", nodes=event.nodes))
        else:
            paired.append(event)
    return paired


def _properties_key(run: Element) -> bytes:
    properties = run.find(RUN_PROPERTIES)
    return b"" if properties is None else etree.tostring(properties)


def _main_key(events: list[_Event]) -> bytes | None:
    """The formatting (its properties as written) of the most characters of the
    paragraph's text: the main formatting, which a word outside every element takes."""
    counts: dict[bytes, int] = {}
    for event in events:
        if event.kind == "piece" and event.run is not None:
            key = _properties_key(event.run)
            counts[key] = counts.get(key, 0) + len(event.text)
    return max(counts, key=lambda key: counts[key]) if counts else None

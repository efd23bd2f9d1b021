"""HTML pages (and XHTML): each run of phrasing content between block boundaries a unit,
each translatable attribute a unit, every other byte of the page as it was.

The page is read with the standard library's `html.parser`, as the line markup is
(rnnsearch.markup.parsing), each event cut from the page at the offset the parser
reports. A unit is a run of the HTML standard's phrasing content (text and inline
elements: `<b>`, `<a>`, `<span>`, `<img>`, `<br>`, …) between two boundaries, a start or
end tag of any other element (`<p>`, `<li>`, `<td>`, `<h1>`, `<title>`, …): a paragraph
with a bold word or a link in it is one unit, its sentences translated whole, and the
inline elements placed back by the alignment. A run is read in the `html` dialect, which
keeps `<code>`, `<kbd>`, `<samp>`, `<var>`, `<svg>`, `<math>`, scripts, comments,
`translate="no"` and `class="notranslate"` whole, untranslated.

Not translated, kept byte for byte: `<script>`, `<style>`, `<pre>`, `<textarea>`,
`<template>` and every element marked `translate="no"` or `class="notranslate"`, with all
they contain, except, as the standard's inheritance of `translate` has it, an element
inside one of those marked `translate="yes"`, translated again up to its end (inside a
run of phrasing content, an inline element kept whole keeps all it holds, whatever its
tags: a `<math>`'s `<mi>`, an `<svg>`'s `<text>`); comments, declarations and processing
instructions; the white space around each run. A `<picture>`'s, `<video>`'s or
`<audio>`'s `<source>` and `<track>` are part of the run, not boundaries. Translated
besides the text (the attributes the standard's `translate` covers): `alt`, `title`,
`placeholder`, `label`, `abbr`, `aria-label`, the `value` of a button, reset or submit
`<input>`, and the `content` of `<meta name="description">`, each where it is first
given on its tag (as browsers read a repeated attribute), never on an element kept whole
nor inside one. Only a translated attribute's value is written again, as name="value";
every other byte of its start tag stays as written (names in their case, `viewBox`). The
`lang` of `<html>`, and its `xml:lang` where it has one, become the target language.

A run whose inline elements do not nest (`<p><b>a</p>`, as browsers forgive) is
translated text piece by text piece instead, its tags left where they are.

The encoding is the byte order mark's, else the one a `<meta charset>` (or its
`http-equiv` form) in the first 1,024 bytes names by a label of the WHATWG Encoding
standard (`page_encoding`), else UTF-8; the page is written back
in it, a character it cannot hold as a character reference.
"""

from __future__ import annotations

import bisect
import html
import html.parser
from collections.abc import Callable, Sequence

from rnnsearch.documents.document import (
    Document,
    ReadOptions,
    Unit,
    checked_size,
    checked_units,
    decoded,
    plain_markup,
    plain_text,
)
from rnnsearch.documents.page_encoding import page_encoding
from rnnsearch.documents.start_tags import with_values
from rnnsearch.markup.dialects import DIALECTS, KEPT_CLASSES, KEPT_ELEMENTS, TEXT_ELEMENTS, VOID_ELEMENTS
from rnnsearch.markup.events import Event, events
from rnnsearch.markup.parsing import MarkupError, parse

PHRASING = frozenset(
    {
        "a", "abbr", "area", "audio", "b", "bdi", "bdo", "br", "button", "canvas", "cite", "code", "data",
        "datalist", "del", "dfn", "em", "embed", "font", "i", "iframe", "img", "input", "ins", "kbd", "label",
        "link", "map", "mark", "math", "meta", "meter", "noscript", "object", "output", "picture", "progress",
        "q", "ruby", "rp", "rt", "s", "samp", "select", "slot", "small", "span", "strong", "sub", "sup", "svg",
        "time", "u", "var", "video", "wbr",
    }
)  # fmt: skip
"""The HTML standard's phrasing content (and `font`, which pages still use), less what is
kept whole: a unit runs over these."""

MEDIA_SOURCES = frozenset({"source", "track", "param"})
"""The empty elements that give a `<picture>`, `<video>`, `<audio>` or `<object>` its
sources: part of the run their element stands in, never a boundary that cuts its sentence."""

KEPT_BLOCKS = frozenset({"script", "style", "pre", "textarea", "template", "xmp", "plaintext"})
"""Elements kept whole, untranslated, with all they contain, where they start a block."""

TRANSLATED_ATTRIBUTES = frozenset({"alt", "title", "placeholder", "label", "abbr", "aria-label"})
"""Attributes whose value is text for people, on any element."""

BUTTON_TYPES = frozenset({"button", "reset", "submit"})
"""`<input>` types whose `value` is the text the button shows."""

HTML = DIALECTS["html"]

_BLOCKS_AFTER_P = (
    "address article aside blockquote details dialog div dl fieldset figcaption figure footer form h1 h2 h3 h4 "
    "h5 h6 header hgroup hr main menu nav ol p pre search section table ul"
)
OPTIONAL_END: dict[str, frozenset[str]] = {
    "p": frozenset(_BLOCKS_AFTER_P.split()),
    "li": frozenset({"li"}),
    "dt": frozenset({"dt", "dd"}),
    "dd": frozenset({"dt", "dd"}),
    "tr": frozenset({"tr", "tbody", "tfoot"}),
    "td": frozenset({"td", "th", "tr", "tbody", "tfoot"}),
    "th": frozenset({"td", "th", "tr", "tbody", "tfoot"}),
    "option": frozenset({"option", "optgroup"}),
}
"""Elements whose end tag a page may leave out, each with the start tags that end it (the
HTML standard's optional end tags): a kept one ends there too, not at the page's end."""


class HtmlPage:
    """An HTML or XHTML page."""

    name = "html"
    extensions: tuple[str, ...] = ("html", "htm", "xhtml")
    dialect = "html"
    media_type = "text/html"

    def read(self, data: bytes, *, origin: str, options: ReadOptions) -> Document:
        encoding, bom = page_encoding(checked_size(data, origin))
        text = decoded(data[len(bom) :], origin, encoding)
        return _PageReader(text, origin, options.target_language).document(encoding, bom)


class _PageReader:
    """The page's units: its runs of phrasing content and its translated attributes."""

    def __init__(self, text: str, origin: str, target_language: str):
        self.text, self.origin, self.target_language = text, origin, target_language
        self.units: list[Unit] = []
        self.runs: list[tuple[int, int, Callable[[str], str]]] = []  # a unit's span, its writer
        self.tags: dict[int, tuple[Event, dict[str, int]]] = {}  # a start tag → its attributes' units
        self.protected = 0
        self.run: list[Event] = []  # the run of phrasing content being read
        self.kept: tuple[str, int] | None = None  # the element kept whole being passed over, and its depth
        self.inline_kept: tuple[str, int] | None = None  # the inline element kept whole in the run, and its depth
        # elements turned back on inside one kept whole: the kept one's state, their name and depth
        self.resumed: list[tuple[tuple[str, int], str, int]] = []
        self.line_starts = [0] + [k + 1 for k, character in enumerate(text) if character == "\n"]

    def document(self, encoding: str, bom: bytes) -> Document:
        for event in events(self.text, text_elements=TEXT_ELEMENTS):
            self._step(event)
        self._run()
        checked_units(self.units, self.origin)
        return _Page(self, encoding=encoding, bom=bom)

    def _step(self, event: Event) -> None:
        """Read one event: passed over inside an element kept whole, unless it starts one
        that `translate="yes"` turns back on, which is read until it ends."""
        if self.kept is not None and _ends_implicitly(self.kept, event):
            self.kept = None  # a kept <p> (or <li>, <td>, …) ended without its end tag: this event is the page's
        if self.kept is not None and not _turns_back_on(event, self.kept):
            self.kept = _still_kept(self.kept, event)
            return
        if self.kept is not None:
            self.resumed.append((self.kept, event.tag, 0))
            self.kept = None
        self._read(event)
        if self.resumed and self.kept is None and event.tag == self.resumed[-1][1]:
            outer, name, depth = self.resumed[-1]
            depth += (event.kind == "start") - (event.kind == "end")
            self.resumed[-1] = (outer, name, depth)
            if depth == 0:  # the element turned back on has ended: the one around it is kept again
                self.resumed.pop()
                self._run()
                self.kept = outer

    def _read(self, event: Event) -> None:
        """An event outside what is kept whole: a run's, or a boundary that ends the run.
        Inside an inline element kept whole (`<code>`, `<svg>`, `<math>`, a `<span>`
        marked translate="no"), every event is the run's, whatever its tag, and no
        attribute is translated: the element comes back byte for byte."""
        if self.inline_kept is not None:
            self.run.append(event)
            self.inline_kept = _still_kept(self.inline_kept, event)
            return
        if _in_run(event):
            self.run.append(event)
            if event.kind == "start" and event.tag not in VOID_ELEMENTS and HTML.kept_whole(event.tag, event.attrs):
                self.inline_kept = (event.tag, 1)
            else:
                self._attributes(event)
            return
        self._run()
        if event.kind == "start" and _kept_block(event):
            self.kept = (event.tag, 1)
            self.protected += 1
            return
        self._attributes(event)
        if event.kind == "other":
            self.protected += 1

    def _run(self) -> None:
        """The run read so far as a unit, trimmed of its white space; one with no words is
        none; one that does not nest, a unit per piece of text. A new run begins."""
        run, self.run = self.run, []
        if not run:
            return
        start, end = _trimmed(self.text, run[0].start, run[-1].end)
        if start >= end:
            return
        line = self.text[start:end]
        try:
            parsed = parse(line, "html")
        except MarkupError:
            self._pieces(run)
            return
        if not parsed.has_own_words:
            return
        self.protected += sum(1 for element in parsed.elements if element.shown)
        self.units.append(Unit(line, self._place(start), parsed=parsed))
        self.runs.append((start, end, _as_written))

    def _pieces(self, run: list[Event]) -> None:
        """A run that does not nest, translated a piece of text at a time."""
        for event in run:
            if event.kind != "data":
                continue
            start, end = _trimmed(self.text, event.start, event.end)
            if start < end:
                self.units.append(Unit(plain_markup(html.unescape(self.text[start:end])), self._place(start)))
                self.runs.append((start, end, _escaped_text))

    def _attributes(self, event: Event) -> None:
        """The translated attributes of a start tag as units; `<html>`'s lang noted."""
        if event.kind not in ("start", "standalone"):
            return
        units: dict[str, int] = {}
        for name, value in event.attrs:
            if name in units:
                continue  # a repeated attribute: the first is the element's, as browsers read it
            if value and value.strip() and _translated(event, name):
                units[name] = len(self.units)
                self.units.append(Unit(plain_markup(value), f"{self._place(event.start)}, {name}", attribute=True))
        if units or event.tag == "html":
            self.tags[event.start] = (event, units)

    def _place(self, offset: int) -> str:
        """Where `offset` is, as a line number, found by bisection."""
        return f"line {bisect.bisect_right(self.line_starts, offset)}"


def _ends_implicitly(kept: tuple[str, int], event: Event) -> bool:
    """Whether `event` ends the kept element, one whose end tag HTML lets a page leave out
    (`OPTIONAL_END`), as the standard's parser ends it: a start tag that closes it (a
    `<p>` before a `<div>` or another `<p>`, an `<li>` before the next), or the end tag of
    an element around it."""
    name, depth = kept
    if name not in OPTIONAL_END or depth != 1:
        return False
    if event.kind == "start":
        return event.tag in OPTIONAL_END[name]
    return event.kind == "end" and event.tag != name


def _still_kept(kept: tuple[str, int], event: Event) -> tuple[str, int] | None:
    """The element kept whole and its depth after `event`, or None once it has ended."""
    name, depth = kept
    if event.tag == name and event.kind == "start" and name not in VOID_ELEMENTS:
        return name, depth + 1
    if event.tag == name and event.kind == "end":
        return (name, depth - 1) if depth > 1 else None
    return kept


def _turns_back_on(event: Event, kept: tuple[str, int]) -> bool:
    """Whether `event` starts an element marked `translate="yes"` inside one that
    `translate="no"` (or the class notranslate) keeps whole: it is translated again, as
    the HTML standard's inheritance of `translate` says. What is kept for what it is (a
    script, a `<pre>`) is never turned back on, nor anything inside it."""
    if kept[0] in KEPT_BLOCKS or event.kind != "start" or event.tag in VOID_ELEMENTS | KEPT_BLOCKS:
        return False
    return any(name == "translate" and (value or "").strip().lower() == "yes" for name, value in event.attrs)


def _kept_block(event: Event) -> bool:
    values = {name: (value or "") for name, value in event.attrs}
    return (
        event.tag in KEPT_BLOCKS
        or values.get("translate", "").strip().lower() == "no"
        or bool(KEPT_CLASSES.intersection(values.get("class", "").split()))
    ) and event.tag not in VOID_ELEMENTS


def _in_run(event: Event) -> bool:
    """Whether `event` belongs to a run of phrasing content."""
    if event.kind in ("data", "reference"):
        return True
    if event.kind == "other":
        return False
    return event.tag in PHRASING | MEDIA_SOURCES or (event.tag in KEPT_ELEMENTS and event.kind != "end")


def _translated(event: Event, name: str) -> bool:
    """Whether the attribute `name` of the start tag `event` is text to translate."""
    values = {key: (value or "").strip().lower() for key, value in event.attrs}
    if name in TRANSLATED_ATTRIBUTES:
        return True
    if name == "value":
        return event.tag == "input" and values.get("type", "") in BUTTON_TYPES
    return name == "content" and event.tag == "meta" and values.get("name", "") == "description"


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) moved in past the white space at either end."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _as_written(translation: str) -> str:
    return translation


def _escaped_text(translation: str) -> str:
    return html.escape(plain_text(translation), quote=False)


class _Page(Document):
    """The page, written back with each unit's translation in its place, and each start
    tag with a translated attribute (or `<html>`, for its lang, once anything is
    translated) written again."""

    def __init__(self, read: _PageReader, *, encoding: str, bom: bytes):
        self.text, self.units, self.runs, self.tags = read.text, read.units, read.runs, read.tags
        self.run_units = [k for k, unit in enumerate(self.units) if not unit.attribute]
        self.encoding, self.bom, self.protected, self.language = encoding, bom, read.protected, read.target_language

    def write(self, translations: Sequence[str | None]) -> bytes:
        tags = self._tags(translations)
        offsets = sorted(tags)
        splices, inside = [], set()
        for (start, end, writer), unit in zip(self.runs, self.run_units, strict=True):
            translation = translations[unit]
            written = self.text[start:end] if translation is None else writer(translation)
            for tag_start in offsets[bisect.bisect_left(offsets, start) : bisect.bisect_left(offsets, end)]:
                tag_end, tag = tags[tag_start]
                written = written.replace(self.text[tag_start:tag_end], tag)
                inside.add(tag_start)
            splices.append((start, end, written))
        splices += [(start, tags[start][0], tags[start][1]) for start in offsets if start not in inside]
        pieces, position = [], 0
        for start, end, written in sorted(splices):
            pieces += [self.text[position:start], written]
            position = end
        pieces.append(self.text[position:])
        return self.bom + "".join(pieces).encode(self.encoding, errors="xmlcharrefreplace")

    def _tags(self, translations: Sequence[str | None]) -> dict[int, tuple[int, str]]:
        """Each start tag written again, by its offset: (its end, the tag as written now)."""
        translated = any(translation is not None for translation in translations)
        written = {}
        for offset, (event, units) in self.tags.items():
            changed = {name: plain_text(text) for name, k in units.items() if (text := translations[k]) is not None}
            if event.tag == "html" and translated and self.language:
                changed["lang"] = self.language
                if any(name == "xml:lang" for name, _ in event.attrs):
                    changed["xml:lang"] = self.language
            if changed:
                written[offset] = (event.end, with_values(self.text[event.start : event.end], changed))
        return written

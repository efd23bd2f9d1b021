"""Marked-up text through translation: inline tags carried to the words they enclosed.

A line with inline markup (`<b>…</b>`, `<a href="…">…</a>`, `<br/>`, `&amp;`) is parsed
with the standard library's `html.parser` into the text to translate and the markup
around it; the text is translated (or a given translation aligned to it) as any other,
and every tag is put back around the target words aligned to the source words it
enclosed (Hanneman & Dinu 2020; Zenkel et al. 2021 describe the approach).

Parsing (`parse`). The line is read as a sequence of raw segments, text and tags, whose
concatenation is the line itself, byte for byte. The text to translate is the text
segments with their character references decoded and the tags left out, except that
an element with no content of its own (`<br/>`, `<img …/>`, and HTML's void elements
such as `<br>`) stands for a word break. Words are that text's whitespace-separated
words. Each element covers the words whose characters lie within it, so a tag inside a
word ("fahr<b>e</b>n") covers the whole word; an element with no words inside it, and
a comment, stands at a boundary between words. Markup is checked as it is read: an end
tag that closes another element than the last one opened, an element never closed, an
end tag with nothing open, and, for `xml`, a bare "<" or "&" or an entity other than
XML's five are MarkupErrors naming what is wrong. Start tags, attributes and end tags
are kept as written.

`html` differs from `xml` in what a valid line is: its void elements (`<br>`, `<img>`,
…) need no end tag, tag names are compared without case, and its named character
references (`&nbsp;`) are known.

Transfer (`transfer`), given word links (source word i, target word j):

1. An element that covers every source word covers every target word: markup around
   the whole sentence stays around the whole translation.
2. Any other element covers the target words from the first to the last aligned to one
   of its words: whole words, so a tag never splits a word, and the words between them
   too, so that its content stays one span.
3. An element none of whose words is aligned, an element with no words and a
   standalone tag are placed at a boundary between target words: after the target
   words aligned to the nearest aligned source word before them, else before those of
   the nearest aligned source word after them; at the start or the end of the
   translation if they are at the start or the end of the source, and, with no links at
   all, at the same relative position. The tag is never lost.
4. The output must nest as the input did. An element's span is cut to its parent's. Of
   two elements with the same parent, the one that comes later in the source yields to
   the earlier where their spans overlap or one holds the other: it keeps the part of
   its span after the earlier one's (or, if none, before it), and a standalone tag
   inside the earlier one's span moves to its nearer edge (the end, on a tie).

The output is the target words separated by single spaces, each escaped for markup
("&", "<" and ">"), with the tags in place: an opening tag before the first word it
encloses, a closing tag after the last, and a standalone tag after the word before it.
Elements at the same boundary come in source order.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser

from rnnsearch.arguments import checked_choice
from rnnsearch.errors import ArgumentTypeError, UserError

MARKUPS = ("xml", "html")
"""The kinds of markup a line can be read as."""

VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
"""HTML's elements that have no end tag."""

XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})

Link = tuple[int, int]  # (source word, target word), 0-based


class MarkupError(UserError, ValueError):
    """A line whose markup is not well-formed: the message says what is wrong, and where."""


@dataclass
class Element:
    """An element of a marked-up line, or a standalone tag (`end_tag` None).

    start_tag, end_tag: as written in the line
    first, stop: the source words it covers, first to stop − 1; for an element without
      words and a standalone tag, first == stop, the boundary (number of words before it)
    parent: the index of the enclosing element in `MarkedUp.elements`, or None
    """

    start_tag: str
    end_tag: str | None
    first: int
    stop: int
    parent: int | None
    name: str = field(repr=False, default="")

    @property
    def has_words(self) -> bool:
        return self.stop > self.first


@dataclass(frozen=True)
class MarkedUp:
    """A parsed line: `segments` joined give the line back byte for byte; `text` is what
    is translated, `words` its whitespace-separated words, and `elements` the markup
    over them, in the order their start tags come."""

    segments: list[str]
    text: str
    elements: list[Element]

    @property
    def line(self) -> str:
        return "".join(self.segments)

    @property
    def words(self) -> list[str]:
        return self.text.split()


def parse(line: str, markup: str) -> MarkedUp:
    """`line` read as `markup` (MARKUPS); a MarkupError says what is not well-formed."""
    if markup not in MARKUPS:
        raise ValueError(f"markup: {markup!r} is not one of {', '.join(MARKUPS)}")
    reader = _Reader(line, markup)
    reader.feed(line)
    reader.close()
    return reader.result()


class _Reader(HTMLParser):
    """html.parser's events, each cut from the line by the positions the parser reports,
    turned into text, words and elements (see the module docstring)."""

    def __init__(self, line: str, markup: str):
        super().__init__(convert_charrefs=False)
        self.line, self.markup = line, markup
        # where each of the text's lines starts: the parser reports (line, column) positions
        self.line_starts = [0] + [k + 1 for k, character in enumerate(line) if character == "\n"]
        self.events: list[tuple[int, str, tuple]] = []  # (offset, kind, details)

    # html.parser's callbacks: only record each event and where it starts
    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._record("start", tag, self.get_starttag_text())

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        self._record("standalone", tag, self.get_starttag_text())

    def handle_endtag(self, tag: str) -> None:
        self._record("end", tag)

    def handle_data(self, data: str) -> None:
        self._record("data", data)

    def handle_entityref(self, name: str) -> None:
        self._record("reference", name)

    def handle_charref(self, name: str) -> None:
        self._record("reference", "#" + name)

    def handle_comment(self, data: str) -> None:
        self._record("other")

    def handle_decl(self, decl: str) -> None:
        self._record("other")

    def handle_pi(self, data: str) -> None:
        self._record("other")

    def unknown_decl(self, data: str) -> None:
        self._record("other")

    def _record(self, kind: str, *details: str) -> None:
        line, column = self.getpos()
        self.events.append((self.line_starts[line - 1] + column, kind, details))

    def result(self) -> MarkedUp:
        """The segments, text and elements of the line, checked. What the parser passes
        over without an event (a lone "</>") is read as text, as it is between events."""
        if self.line and (not self.events or self.events[0][0] > 0):
            first = self.events[0][0] if self.events else len(self.line)
            self.events.insert(0, (0, "data", (self.line[:first],)))
        builder = _Builder(self.markup)
        offsets = [offset for offset, _, _ in self.events] + [len(self.line)]
        for (offset, kind, details), end in zip(self.events, offsets[1:], strict=True):
            builder.add(kind, self.line[offset:end], details)
        return builder.finish()


class _Builder:
    """Text, words and elements built from the line's events in order."""

    def __init__(self, markup: str):
        self.markup = markup
        self.segments: list[str] = []
        self.text: list[str] = []
        self.words = 0  # words begun so far, the one being written included
        self.in_word = False  # whether the text so far ends inside a word
        self.elements: list[Element] = []
        self.open: list[tuple[int, int]] = []  # (element, words begun at its start tag), innermost last

    def add(self, kind: str, raw: str, details: tuple) -> None:
        self.segments.append(raw)
        if kind == "data":
            self._data(raw)
        elif kind == "reference":
            self._reference(raw, details[0])
        elif kind == "start":
            void = self.markup == "html" and details[0] in VOID_ELEMENTS
            self._start(raw, standalone=void)
        elif kind == "standalone":
            self._start(raw, standalone=True)
        elif kind == "end":
            self._close(raw)
        else:  # a comment, a declaration or a processing instruction: kept where it stands
            self._standalone(raw, breaks=False)

    def _append(self, text: str) -> None:
        """Add text to translate, counting the words it begins."""
        for character in text:
            inside = not character.isspace()
            self.words += inside and not self.in_word
            self.in_word = inside
        self.text.append(text)

    def _data(self, raw: str) -> None:
        if self.markup == "xml" and ("<" in raw or "&" in raw):
            bare = "<" if "<" in raw else "&"
            escaped = "&lt;" if bare == "<" else "&amp;"
            raise MarkupError(f"a bare {bare!r} in {_shown(raw)} is not XML: write {escaped}")
        self._append(raw)

    def _reference(self, raw: str, name: str) -> None:
        if self.markup == "xml" and not name.startswith("#") and (name not in XML_ENTITIES or not raw.endswith(";")):
            raise MarkupError(f"{_shown(raw)} is not one of XML's entities (&amp; &lt; &gt; &quot; &apos;)")
        self._append(html.unescape(raw))

    def _name(self, raw: str) -> str:
        """The tag's name as written (for an end tag, after the "/"), case folded for html."""
        name = raw.lstrip("</")
        for stop, character in enumerate(name):
            if character.isspace() or character in "/>":
                name = name[:stop]
                break
        return name.lower() if self.markup == "html" else name

    def _parent(self) -> int | None:
        return self.open[-1][0] if self.open else None

    def _start(self, raw: str, *, standalone: bool) -> None:
        if standalone:
            self._standalone(raw, breaks=True)
            return
        first = self.words - self.in_word  # a tag inside a word covers the whole word
        self.elements.append(Element(raw, None, first, first, self._parent(), self._name(raw)))
        self.open.append((len(self.elements) - 1, self.words))

    def _standalone(self, raw: str, *, breaks: bool) -> None:
        """A tag with no content, after the word it follows; a word break if `breaks`."""
        self.elements.append(Element(raw, None, self.words, self.words, self._parent()))
        if breaks:
            self._append(" ")

    def _close(self, raw: str) -> None:
        if not self.open:
            raise MarkupError(f"{raw} closes nothing: no element is open")
        index, words_at_start = self.open[-1]
        element = self.elements[index]
        if element.name != self._name(raw):
            raise MarkupError(f"{raw} closes {element.start_tag}, which needs its own end tag first")
        self.open.pop()
        element.end_tag = raw
        if self.words > words_at_start or (self.in_word and element.first < self.words):
            element.stop = self.words  # it holds a word, or a part of one
        else:
            element.first = element.stop = self.words  # no word inside: a boundary

    def finish(self) -> MarkedUp:
        if self.open:
            raise MarkupError(f"{self.elements[self.open[-1][0]].start_tag} is never closed")
        return MarkedUp(self.segments, "".join(self.text), self.elements)


@dataclass(frozen=True)
class Reading:
    """How the inputs of a call are read: as `markup` (MARKUPS), and with `lenient`, an
    input whose markup is not well-formed is taken as plain text instead of refused."""

    markup: str
    lenient: bool = False

    @classmethod
    def of(cls, markup: object, lenient: object) -> Reading | None:
        """The Python API's `markup` and `lenient_markup` arguments, checked; None for no markup."""
        if not isinstance(lenient, bool):
            raise ArgumentTypeError(f"lenient_markup: expected a bool, got {type(lenient).__name__}")
        if markup is None:
            return None
        return cls(checked_choice(markup, "markup", MARKUPS), lenient)

    def lines(
        self, lines: Sequence[str], *, origin: str | None = None, first_line: int = 1, items: str | None = None
    ) -> list[MarkedUp | None]:
        """Each line parsed; one that is not well-formed is None when lenient (the caller
        takes it as plain text), else a MarkupError naming it: as line `first_line` + k of
        the file `origin` (or of the input), or with `items` as item `items`.k (0-based),
        as the server names the texts of a request."""
        parsed: list[MarkedUp | None] = []
        for k, line in enumerate(lines):
            try:
                parsed.append(parse(line, self.markup))
            except MarkupError as error:
                if not self.lenient:
                    raise MarkupError(f"{_where(k, origin, first_line, items)}: {error}") from None
                parsed.append(None)
        return parsed


def _where(k: int, origin: str | None, first_line: int, items: str | None) -> str:
    """How an error names the k-th of the lines `Reading.lines` reads."""
    if items is not None:
        return f"{items}.{k}"
    return f"{origin}:{first_line + k}" if origin else f"input line {first_line + k}"


def _shown(text: str, limit: int = 40) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


def escape(text: str) -> str:
    """Text as markup: "&", "<" and ">" as character references."""
    return html.escape(text, quote=False)


def markup_line(marked_up: str | None, text: str) -> str:
    """The markup line written for an output: its marked-up text, or, for an input read as
    plain text (`marked_up` None), its text escaped, so that every line is markup."""
    return escape(text) if marked_up is None else marked_up


def transfer(marked: MarkedUp, target_words: Sequence[str], links: Iterable[Link]) -> str:
    """The target words with `marked`'s markup put back by the word `links` between its
    words and them (the rules in the module docstring)."""
    spans = place(marked, len(target_words), links)
    return _Output(target_words, marked.elements, spans).text()


def place(marked: MarkedUp, targets: int, links: Iterable[Link]) -> list[tuple[int, int]]:
    """Where each of `marked`'s elements goes among `targets` target words, by the word
    `links`: (start, stop) target boundaries, the words start to stop − 1 inside it
    (start == stop: at that boundary, with no words)."""
    by_source: dict[int, list[int]] = {}
    for source, target in links:
        by_source.setdefault(source, []).append(target)
    return _Placing(len(marked.words), targets, by_source).spans(marked.elements)


class _Placing:
    """Where each element goes among the target words (rules 1 to 4)."""

    def __init__(self, sources: int, targets: int, links: dict[int, list[int]]):
        self.sources, self.targets, self.links = sources, targets, links

    def spans(self, elements: list[Element]) -> list[tuple[int, int]]:
        """Each element's (start, stop) boundaries in the target, nested as in the source."""
        spans: list[tuple[int, int]] = []
        placed: dict[int | None, list[int]] = {}  # parent → its children placed so far
        for index, element in enumerate(elements):
            start, stop = self._span(element)
            lower, upper = (0, self.targets) if element.parent is None else spans[element.parent]
            start, stop = min(max(start, lower), upper), max(min(stop, upper), lower)
            for earlier in placed.get(element.parent, []):
                start, stop = _yield_to(spans[earlier], (start, stop), zero_width=not element.has_words)
            spans.append((start, stop))
            placed.setdefault(element.parent, []).append(index)
        return spans

    def _span(self, element: Element) -> tuple[int, int]:
        if element.has_words and element.first == 0 and element.stop == self.sources:
            return 0, self.targets
        aligned = [t for s in range(element.first, element.stop) for t in self.links.get(s, [])]
        if aligned:
            return min(aligned), max(aligned) + 1
        boundary = self._boundary(element.first)
        return boundary, boundary

    def _boundary(self, source: int) -> int:
        """The target boundary of source boundary `source` (before source word `source`)."""
        if source == 0:
            return 0
        if source >= self.sources:
            return self.targets
        for before in range(source - 1, -1, -1):
            if before in self.links:
                return max(self.links[before]) + 1
        for after in range(source, self.sources):
            if after in self.links:
                return min(self.links[after])
        return round(source * self.targets / self.sources)


def _yield_to(earlier: tuple[int, int], span: tuple[int, int], *, zero_width: bool) -> tuple[int, int]:
    """`span` moved off an earlier sibling's span (rule 4)."""
    start0, stop0 = earlier
    start, stop = span
    if zero_width or start == stop:
        if start0 < start < stop0:
            edge = stop0 if stop0 - start <= start - start0 else start0
            return edge, edge
        return start, stop
    if stop <= start0 or start >= stop0 or start0 == stop0:
        return start, stop  # apart, or the earlier one has no words to overlap
    if stop > stop0:
        return max(start, stop0), stop
    if start < start0:
        return start, start0
    return stop0, stop0


class _Output:
    """The target words with the placed elements, as one line."""

    def __init__(self, words: Sequence[str], elements: list[Element], spans: list[tuple[int, int]]):
        self.words, self.elements, self.spans = [escape(w) for w in words], elements, spans
        self.children: dict[int | None, list[int]] = {}
        for index, element in enumerate(elements):
            self.children.setdefault(element.parent, []).append(index)

    def text(self) -> str:
        tokens: list[tuple[str, str]] = []  # (kind: word, open, close, standalone; text)
        self._emit(None, 0, len(self.words), tokens)
        return _joined(tokens)

    def _emit(self, parent: int | None, start: int, stop: int, tokens: list[tuple[str, str]]) -> None:
        position = start
        children = sorted(self.children.get(parent, []), key=lambda k: (*self.spans[k], k))
        for child in children:
            child_start, child_stop = self.spans[child]
            tokens.extend(("word", self.words[k]) for k in range(position, child_start))
            element = self.elements[child]
            if element.end_tag is None:
                tokens.append(("standalone", element.start_tag))
            else:
                tokens.append(("open", element.start_tag))
                self._emit(child, child_start, child_stop, tokens)
                tokens.append(("close", element.end_tag))
            position = max(position, child_stop)
        tokens.extend(("word", self.words[k]) for k in range(position, stop))


def _joined(tokens: list[tuple[str, str]]) -> str:
    """The tokens as text: between two words a space, before the first opening tag
    between them (or, if none, just before the second word); none after the last word."""
    words = [k for k, (kind, _) in enumerate(tokens) if kind == "word"]
    spaces = set()
    for before, after in zip(words, words[1:]):
        between = range(before + 1, after)
        spaces.add(next((k for k in between if tokens[k][0] == "open"), after))
    return "".join((" " if k in spaces else "") + text for k, (_, text) in enumerate(tokens))

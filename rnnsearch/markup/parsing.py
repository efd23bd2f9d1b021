"""Parsing a marked-up line: the text to translate, its words, and the elements over them.

The line is read as a sequence of raw segments, text and tags, whose concatenation is the
line itself, byte for byte. The text to translate is the text segments with their
character references decoded and the tags left out, except that an element with no
content of its own (`<br/>`, `<img …/>`, and HTML's void elements such as `<br>`) stands
for a word break. Words are that text's whitespace-separated words. Each element covers
the words whose characters lie within it, so a tag inside a word ("fahr<b>e</b>n")
covers the whole word, and knows which of the word's characters are its own where it
begins or ends inside one ("ISA<g>2</g>", "<b>Fuß</b>ball": Element.inside); an element
with no words inside it, and a comment, stands at a boundary between words. Two elements
of one name and no attributes written one right after the other are items of a list (a
menu path's steps, "<uicontrol>Setup</uicontrol><uicontrol>Users</uicontrol>", a list's
items), not the parts of a word: the boundary between them breaks words, and is written
back with no space, as the source wrote it. A start or end tag between punctuation that
ends a sentence or a clause and a word, or between a word and a dash ("in:<li>Direct",
"<b>Term</b>—meaning"), breaks the word there too (word_breaks.py).

Some content is not translated but kept whole, as one standalone piece of markup at the
boundary where it stands: the raw text elements `<script>` and `<style>`, whose content is
code that no character reference is decoded in, every element marked
`translate="no"` (the HTML standard's attribute), with all it contains, and, in `html`,
`<textarea>` (a form field's value) and `<xmp>`, whose content HTML reads as text up to
their end tag, tags and all, the elements that hold code, input, output, variables,
drawings and formulas (`<code>`, `<kbd>`, `<samp>`, `<var>`, `<svg>`, `<math>`), and
those of the class `notranslate`. Such an element also stands for a word break, as its content
stays between the words around it, and is written back as a word of its own, a space on
either side; a script or a stylesheet, which shows nothing, does neither. Where what it
shows is a few short words (a name, a command: `STAND_IN_WORDS`), they stand in the text
where it stands, words the element covers, so that the model reads the sentence whole
("definiert audio - und video -Elemente" where `<code>audio</code>-` stood, not
"definiert - und -Elemente"); written back, the element takes the place of the target
words there that are those words (Element.stand_in).

Markup is checked as it is read: an end tag that closes another element than the last
one opened, an element never closed, an end tag with nothing open, and, for `xml`, a
bare "<" or "&", an entity other than XML's five, a reference without its ";" and a
character reference to a character XML does not allow are MarkupErrors naming what is
wrong. Start tags, attributes and end tags are kept as written.

`html` differs from `xml` in what a valid line is: its void elements (`<br>`, `<img>`,
…) need no end tag, tag names are compared without case, and its character references
are decoded as HTML decodes them (`&nbsp;`, and `&amp` without its ";").
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from rnnsearch.errors import UserError
from rnnsearch.markup.dialects import DIALECTS, Dialect
from rnnsearch.markup.elements import Element, MarkedUp, inside_of
from rnnsearch.markup.events import events
from rnnsearch.markup.word_breaks import SENTENCE_MARKS, breaks_word, text_after

MARKUPS = tuple(DIALECTS)
"""The markups a line can be read as (dialects.py)."""

XML_ENTITIES = frozenset({"amp", "lt", "gt", "quot", "apos"})

STAND_IN_WORDS = 3
STAND_IN_CHARACTERS = 40
"""The most words, and the longest word, of a kept element's text that stands in for it
in the text the model reads (Element.stand_in): a name, a command, a file name."""

CLAUSE_ENDS = SENTENCE_MARKS | frozenset(")]}»›”’")
"""What ends a clause or a phrase: a tag of its own written right before one (a footnote's
call) stands at the end of that clause in the translation (Element.before_punctuation)."""

NOT_STANDING_IN = frozenset("%{}$<>[]")
"""Characters of placeholders (`%(name)s`, `{count}`) and of markup kept as written (a
Markdown image or autolink), whose words never stand in for their element."""


class MarkupError(UserError, ValueError):
    """A line whose markup is not well-formed: the message says what is wrong, and where."""


def parse(line: str, markup: str) -> MarkedUp:
    """`line` read as `markup` (MARKUPS); a MarkupError says what is not well-formed."""
    if markup not in DIALECTS:
        raise ValueError(f"markup: {markup!r} is not one of {', '.join(DIALECTS)}")
    dialect = DIALECTS[markup]
    builder = _Builder(dialect)
    found = events(line, text_elements=dialect.text_elements)
    for event, after in zip(found, text_after(line, found, dialect), strict=True):
        kept = dialect.kept_whole(event.tag, event.attrs) if event.kind == "start" else None
        builder.add(event.kind, line[event.start : event.end], (event.tag, kept, after))
    return builder.finish()


@dataclass
class _Kept:
    """An element being kept whole: where its segments start, why it is kept, and the
    names of the elements open inside it, its own first."""

    first_segment: int
    why: str
    open: list[str]
    text: list[str] = field(default_factory=list)


class _Builder:
    """Text, words and elements built from the line's events in order."""

    def __init__(self, dialect: Dialect):
        self.dialect = dialect
        self.segments: list[str] = []
        self.text: list[str] = []
        self.words = 0  # words begun so far, the one being written included
        self.in_word = False  # whether the text so far ends inside a word
        self.broken = False  # whether a tag broke the word the text so far ended inside (word_breaks.py)
        self.elements: list[Element] = []
        self.open: list[tuple[int, int, int]] = []  # (element, words and text pieces before its start tag)
        self.last = ""  # the last character of the text so far that is not a space
        self.kept: _Kept | None = None  # the element being kept whole, if inside one
        self.gluing: int | None = None  # an element breaking words, whose next text says whether it touches it
        self.spaced = True  # whether the line so far ends with white space (or nothing) as written
        self.ending: list[int] = []  # elements of punctuation closed inside a word that may end it
        self.characters = 0  # the text's length so far
        self.closed: int | None = None  # the element the last event closed
        self.spans: dict[int, tuple[int, int]] = {}  # an element's first and last character, past its last

    def add(self, kind: str, raw: str, details: tuple) -> None:
        self.segments.append(raw)
        closed, self.closed = self.closed, None
        if self.kept is not None:
            self._inside_kept(self.kept, kind, raw, details)
        elif kind == "data":
            self._data(raw)
        elif kind == "reference":
            self._reference(raw, details[0])
        elif kind == "start" and details[1] is not None and not self._void(details[0]):
            self.kept = _Kept(len(self.segments) - 1, details[1], [self._name(raw)])
        elif kind == "start":
            self._start(raw, standalone=self._void(details[0]), closed=closed, after=details[2])
        elif kind == "standalone":
            self._start(raw, standalone=True)
        elif kind == "end":
            self._close(raw, after=details[2])
        else:  # a comment, a declaration or a processing instruction: kept where it stands
            self._standalone(raw, breaks=False)

    def _void(self, tag: str) -> bool:
        return tag in self.dialect.void_elements

    def _inside_kept(self, kept: _Kept, kind: str, raw: str, details: tuple) -> None:
        """An event inside the element `kept` whole: checked (its nesting, and for xml its
        text, outside a script or a stylesheet), not translated; its end tag makes the
        whole element one standalone piece of markup."""
        if kind == "data" and kept.why == "untranslated":
            self._check_data(raw)
            kept.text.append(raw)
        elif kind == "reference":
            self._check_reference(raw, details[0])
            kept.text.append(raw)
        elif kind == "start" and not self._void(details[0]):
            kept.open.append(self._name(raw))
        elif kind == "end":
            if kept.open[-1] != self._name(raw):
                raise MarkupError(f"{_tag(raw)} closes <{kept.open[-1]}>, which needs its own end tag first")
            kept.open.pop()
            if not kept.open:
                self.kept = None
                whole = "".join(self.segments[kept.first_segment :])
                words = _stand_in("".join(kept.text)) if kept.why == "untranslated" else ()
                if words:
                    self._stood_in(whole, words)
                else:
                    self._standalone(whole, breaks=kept.why == "untranslated", shown=kept.why == "untranslated")

    def _stood_in(self, whole: str, words: tuple[str, ...]) -> None:
        """An element kept whole whose text's `words` stand in for it, words of their own."""
        self._word_ended(True)
        touching = self._touching()
        self._append(" ")
        first = self.words
        self._append(" ".join(words) + " ")
        self.elements.append(Element(whole, None, first, self.words, self._parent(), shown=True, stand_in=words))
        self._glue(touching)

    def _touching(self) -> bool:
        """Whether an element breaking words, about to be added, touches what stands
        before it (the line so far ends with no white space); one waiting to know what
        follows it (`gluing`) learns that this element touches it."""
        self._followed_by("")
        return not self.spaced

    def _followed_by(self, text: str) -> None:
        """The element breaking words that waits to know what follows it, if any, told:
        `text` (its first character), or another such element where `text` is ""."""
        if self.gluing is None:
            return
        element = self.elements[self.gluing]
        element.glued = (element.glued[0], not text[:1].isspace())
        element.before_punctuation = element.end_tag is None and not element.shown and text[:1] in CLAUSE_ENDS
        self.gluing = None

    def _glue(self, touching: bool) -> None:
        """The element breaking words just added touches what stands before it
        (`touching`); whether it touches the text after it, the next text says (`_data`)."""
        self.elements[-1].glued = (touching, False)
        self.gluing = len(self.elements) - 1

    def _break_word(self) -> None:
        """End the word the text so far ends inside, where a tag breaks it."""
        if self.in_word:
            self._word_ended(True)
            self._append(" ")
            self.broken = True

    def _append(self, text: str) -> None:
        """Add text to translate, counting the words it begins."""
        for character in text:
            inside = not character.isspace()
            self.words += inside and not self.in_word
            self.in_word = inside
        self.text.append(text)
        self.characters += len(text)
        self.last = text.rstrip()[-1:] or self.last

    def _first_character(self, piece: int) -> str:
        """The first character that is not a space in the text from piece `piece` on."""
        return next((text.lstrip()[0] for text in self.text[piece:] if text.strip()), "")

    def _data(self, raw: str) -> None:
        self._check_data(raw)
        self._written_text(self.dialect.text(raw))

    def _written_text(self, text: str) -> None:
        """Text of the line (data, or a reference decoded): whether it touches the element
        breaking words before it is known now, and whether it ends spaced."""
        if text:
            self.broken = False
            self._followed_by(text)
            self._word_ended(text[0].isspace())
            self.spaced = text[-1].isspace()
        self._append(text)

    def _check_data(self, raw: str) -> None:
        if self.dialect.well_formed and ("<" in raw or "&" in raw):
            bare = "<" if "<" in raw else "&"
            escaped = "&lt;" if bare == "<" else "&amp;"
            raise MarkupError(f"a bare {bare!r} in {_shown(raw)} is not XML: write {escaped}")

    def _reference(self, raw: str, name: str) -> None:
        self._check_reference(raw, name)
        self._written_text(html.unescape(raw))

    def _check_reference(self, raw: str, name: str) -> None:
        if not self.dialect.well_formed:
            return
        if not name.startswith("#") and (name not in XML_ENTITIES or not raw.endswith(";")):
            raise MarkupError(f"{_shown(raw)} is not one of XML's entities (&amp; &lt; &gt; &quot; &apos;)")
        if not raw.endswith(";"):
            raise MarkupError(f"{_shown(raw)} is not XML: a character reference ends with ';'")
        if name.startswith("#") and not _xml_character(int(name[2:], 16) if name[1:2] in "xX" else int(name[1:])):
            raise MarkupError(f"{_shown(raw)} is not XML: it refers to a character XML does not allow")

    def _name(self, raw: str) -> str:
        """The tag's name as written (for an end tag, after the "/"), case folded where the dialect folds it."""
        name = raw.lstrip("</")
        for stop, character in enumerate(name):
            if character.isspace() or character in "/>":
                name = name[:stop]
                break
        return name.lower() if self.dialect.folds_case else name

    def _parent(self) -> int | None:
        return self.open[-1][0] if self.open else None

    def _start(self, raw: str, *, standalone: bool, closed: int | None = None, after: str = " ") -> None:
        """A start tag; `closed`: the element closed right before it, if any; `after`: the
        first character of the text after it (word_breaks.text_after)."""
        if standalone:
            self._standalone(raw, breaks=True)
            return
        before = None if closed is None else self.elements[closed]
        touching = self.in_word or self.broken
        listed = before is not None and before.start_tag == raw and touching and not any(map(str.isspace, raw))
        if listed and before is not None:  # the next of a list of items ("<li>A</li><li>B</li>")
            before.glued = (before.glued[0], True)
        if listed or breaks_word(self.last, after):
            self._break_word()
        first = self.words - self.in_word  # a tag inside a word covers the whole word
        self.elements.append(Element(raw, None, first, first, self._parent(), self._name(raw)))
        self.elements[-1].glued = (listed, False)
        self.open.append((len(self.elements) - 1, self.words, len(self.text)))
        self.spans[len(self.elements) - 1] = (self.characters, self.characters)

    def _standalone(self, raw: str, *, breaks: bool, shown: bool = False) -> None:
        """A tag with no content, after the word it follows; a word break if `breaks`;
        `shown`: an element kept whole whose content shows (Element.shown)."""
        if breaks:
            self._word_ended(True)
        touching = self._touching() if breaks else not self.spaced
        self.elements.append(Element(raw, None, self.words, self.words, self._parent(), shown=shown))
        if breaks:
            self._glue(touching)
        if breaks:
            self._append(" ")

    def _close(self, raw: str, *, after: str) -> None:
        if not self.open:
            raise MarkupError(f"{_tag(raw)} closes nothing: no element is open")
        index, words_at_start, text_at_start = self.open[-1]
        element = self.elements[index]
        if element.name != self._name(raw):
            raise MarkupError(f"{_tag(raw)} closes {_tag(element.start_tag)}, which needs its own end tag first")
        self.open.pop()
        element.end_tag = raw
        self.closed = index
        if self._trailing_punctuation(element, words_at_start, text_at_start):
            element.stop = self.words  # over its word, until what follows says whether it ends the word
            self.ending.append(index)
        elif self.words > words_at_start or (self.in_word and element.first < self.words):
            element.stop = self.words  # it holds a word, or a part of one
            element.punctuated = (_punctuation(self._first_character(text_at_start)), _punctuation(self.last))
            self.spans[index] = (self.spans[index][0], self.characters)
        else:
            element.first = element.stop = self.words  # no word inside: a boundary
        if breaks_word(self.last, after):
            self._break_word()

    def _trailing_punctuation(self, element: Element, words_at_start: int, text_at_start: int) -> bool:
        """Whether an element just closed holds only a sentence's or a clause's punctuation
        (SENTENCE_MARKS), begun inside a word: where the word ends there ("Hund<e>.</e>", a
        Word run of its own for the full stop; what follows says so, `_word_ended`), it
        stands at the boundary after that word rather than over it, so that the word's own
        element, not the punctuation's, is placed on the word's translation; where the
        word goes on, it covers it. Brackets are left out: a ruby's `<rp>)</rp>` stays with
        the annotation it closes."""
        own = "".join(self.text[text_at_start:])
        started_inside = element.first < words_at_start and self.words == words_at_start
        return started_inside and bool(own) and all(character in SENTENCE_MARKS for character in own)

    def _word_ended(self, ended: bool) -> None:
        """What follows the elements of punctuation closed inside a word (`ending`): where
        the word ends (a space, a break, the line's end), each stands after it instead."""
        for index in self.ending if ended else ():
            element = self.elements[index]
            element.first = element.stop
        self.ending = []

    def finish(self) -> MarkedUp:
        self._word_ended(True)
        if self.kept is not None:
            raise MarkupError(f"{_tag(self.segments[self.kept.first_segment])} is never closed")
        if self.open:
            raise MarkupError(f"{_tag(self.elements[self.open[-1][0]].start_tag)} is never closed")
        text = "".join(self.text)
        for index, (start, end) in self.spans.items():
            if self.elements[index].has_words:
                self.elements[index].inside = inside_of(text, start, end)
        return MarkedUp(self.segments, text, self.elements, self.dialect)


def _punctuation(character: str) -> bool:
    return bool(character) and not character.isalnum()


def _stand_in(text: str) -> tuple[str, ...]:
    """The words of a kept element's text that stand in for it, or none where it has more
    than STAND_IN_WORDS or a word longer than STAND_IN_CHARACTERS (a block of code, which
    the model should not read as a sentence)."""
    words = tuple(html.unescape(text).split())
    if len(words) > STAND_IN_WORDS or any(len(word) > STAND_IN_CHARACTERS for word in words):
        return ()
    if any(NOT_STANDING_IN.intersection(word) for word in words):
        return ()  # a placeholder that a model would mangle, or markup
    return words


def _xml_character(code: int) -> bool:
    """Whether XML 1.0 allows the character `code` (its production Char)."""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def _shown(text: str, limit: int = 40) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


def _tag(text: str, limit: int = 80) -> str:
    """A tag as an error message shows it: as written, cut after `limit` characters."""
    return text if len(text) <= limit else text[:limit] + "…"

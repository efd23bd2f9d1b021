"""Where a tag written inside a word breaks it: between punctuation that ends a sentence or
a clause and the word after it ("in:<ul><li>Direct", "rule.<ph>For example"), and
between a word and the dash after it ("<codeph>error_description</codeph>—Description").

A marked-up line often has no space there: the tag stood for the break, a list's start or
a term's end, and the text was written against it. Read as one word, "in:Direct" would be
one source word whose links reach the translations of both "in:" and "Direct", and the
element that begins at "Direct" would take both. Read as two, each element covers its own
words, and the model reads the text with the space a reader sees. A tag between two
letters or digits ("<b>Fuß</b>ball", "ISA<g>2</g>") stays inside its word
(Element.inside), as does one before punctuation ("Hund<e>.</e>") or between a number's
digits and its point ("1.<b>5</b>").
"""

from __future__ import annotations

import html

from rnnsearch.markup.dialects import Dialect
from rnnsearch.markup.events import Event

SENTENCE_MARKS = frozenset(".,;:!?…")
"""The punctuation that ends a sentence or a clause, brackets and quotation marks aside."""

DASHES = frozenset("—–")
"""The dashes that set a term apart from what follows it, written against both."""

BEFORE_A_WORD = SENTENCE_MARKS | DASHES
"""What a tag after it breaks the word at, where a letter follows the tag."""


def breaks_word(before: str, after: str) -> bool:
    """Whether a tag between the characters `before` and `after`, with no space between
    them, breaks the word they are part of (the module docstring says where)."""
    return (before in BEFORE_A_WORD and after.isalpha()) or (before.isalnum() and after in DASHES)


def text_after(line: str, found: list[Event], dialect: Dialect) -> list[str]:
    """For each event of `line`, the first character of the text that follows it and the
    start and end tags right after it; a space where anything else (a tag of its own, a
    comment) or the line's end comes first, which breaks words of its own."""
    following, after = " ", []
    for event in reversed(found):
        after.append(following)
        if event.kind in ("data", "reference") and event.end > event.start:
            following = _first_character(line, event, dialect)
        elif event.kind not in ("start", "end", "data"):
            following = " "
    return after[::-1]


def _first_character(line: str, event: Event, dialect: Dialect) -> str:
    """The first character of a text event of `line` as it reads: decoded only where it
    begins a reference, so that a long text is not decoded twice (the parser decodes it)."""
    if line[event.start] != "&":
        return line[event.start]
    raw = line[event.start : event.end]
    return (html.unescape(raw) if event.kind == "reference" else dialect.text(raw))[:1]

"""Writing placed markup: the target words with each element's tags where placing put
them (rnnsearch.markup.placing), as one line, written with a stack of the elements open
at each point rather than by recursion, so any depth is written.

An element whose own text does not end with punctuation closes before the punctuation
its last word ends with ("<b>supprimés</b>." for "<b>deleted</b>."), and one whose text
does not start with punctuation opens after the punctuation its first word starts
with ("(<b>remarque</b>)"): a tag splits a word there, at EDGE_PUNCTUATION (a word
holding a character reference, "&amp;", is never split), and where the source has the
element begin or end inside a word whose own characters the translation's word ends or
begins with ("ISA<g>2</g>", "<b>Fuß</b>ball" copied through: Element.inside)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rnnsearch.markup.dialects import escape
from rnnsearch.markup.elements import Element

EDGE_PUNCTUATION = ".,:;!?…)]}»›”’\"'([{«‹“‘¡¿"
"""What a tag may be moved past at a word's edge: sentence and clause punctuation,
brackets and quotation marks."""

QUOTES = "\"'“”‘’„‚«»‹›"
CLOSING, OPENING = ".,:;!?…)]}%-" + QUOTES, "([{¡¿" + QUOTES
"""The punctuation written against an element kept whole, with no space, where the source
had it touch the element: after it ("{name},", "<code>x</code>-fold"), and before it
("(<code>y</code>"); a quotation mark on either side, as languages quote differently."""


def written(words: Sequence[str], elements: list[Element], spans: list[tuple[int, int]]) -> str:
    """The target `words` (escaped as markup) with `elements` placed at `spans`, as one
    line (the package docstring says how it is spaced)."""
    return _Output(words, elements, spans).text()


@dataclass
class _Open:
    """An element being written: its end tag (None for the line itself), its children
    still to write, the next of its words to write, and where its words stop."""

    closing: str | None
    children: Iterator[int]
    position: int
    stop: int
    element: Element | None = None
    opened_at: int = 0


class _Output:
    """The target words with the placed elements, as one line."""

    def __init__(self, words: Sequence[str], elements: list[Element], spans: list[tuple[int, int]]):
        self.words, self.elements, self.spans = words, elements, spans  # the words escaped as markup
        self.children: dict[int | None, list[int]] = {}
        for index, element in enumerate(elements):
            self.children.setdefault(element.parent, []).append(index)

    def text(self) -> str:
        tokens: list[tuple[str, str]] = []  # (kind: word, open, close, standalone; text)
        glued: dict[int, tuple[bool, bool]] = {}  # a shown element's token: Element.glued
        stack = [_Open(None, self._in_order(None), 0, len(self.words))]
        while stack:
            current = stack[-1]
            child = next(current.children, None)
            if child is None:
                self._words(tokens, current.position, current.stop)
                stack.pop()
                if current.closing is not None:
                    tokens.append(("close", current.closing))
                    if current.element is not None:
                        _off_punctuation(tokens, current.element, current.opened_at)
                        _inside_words(tokens, current.element, current.opened_at)
                continue
            child_start, child_stop = self.spans[child]
            self._words(tokens, current.position, child_start)
            current.position = max(current.position, child_stop)
            element = self.elements[child]
            moved = _trailing_punctuation(tokens) if element.before_punctuation else ""
            if element.end_tag is None:
                glued[len(tokens)] = element.glued
            if element.stand_in:
                tokens.append(("word", element.start_tag))
                self._stood_in(tokens, element, child_start, child_stop)
            elif element.end_tag is None:
                tokens.append(("word" if element.shown else "standalone", element.start_tag))
                if moved:
                    tokens.append(("word", moved))
            else:
                tokens.append(("item" if any(element.glued) else "open", element.start_tag))
                children = self._in_order(child)
                opened = _Open(element.end_tag, children, child_start, child_stop, element, len(tokens) - 1)
                stack.append(opened)
        return _joined(tokens, glued)

    def _in_order(self, parent: int | None) -> Iterator[int]:
        """The children of `parent` in the order they are written: by span, then source order."""
        return iter(sorted(self.children.get(parent, []), key=lambda k: (*self.spans[k], k)))

    def _stood_in(self, tokens: list[tuple[str, str]], element: Element, start: int, stop: int) -> None:
        """The target words start to stop − 1, where a kept element whose text stood in for
        it was placed, less those that are its words (the same but for case): what
        translated the stand-in is the element itself; any other word stays."""
        left = Counter(escape(word).casefold() for word in element.stand_in)
        for k in range(start, stop):
            if left[self.words[k].casefold()] > 0:
                left[self.words[k].casefold()] -= 1
            else:
                tokens.append(("word", self.words[k]))

    def _words(self, tokens: list[tuple[str, str]], start: int, stop: int) -> None:
        tokens.extend(("word", self.words[k]) for k in range(start, stop))


def _off_punctuation(tokens: list[tuple[str, str]], element: Element, opened_at: int) -> None:
    """The element just closed (its start tag at tokens[opened_at], its end tag last)
    moved off the punctuation at the edges of its words that its own text lacks
    (module docstring): split off its first and last words as "before" and "after"
    tokens, or, where an inner element split them already, stepped over."""
    opens, closes = element.punctuated
    if not closes and len(tokens) >= 3:
        kind, text = tokens[-2]
        if kind == "after":
            tokens[-2], tokens[-1] = tokens[-1], tokens[-2]
        elif kind == "word" and (cut := _cut(text, from_end=True)) is not None:
            tokens[-2:] = [("word", text[:cut]), tokens[-1], ("after", text[cut:])]
    if not opens and opened_at + 1 < len(tokens):
        kind, text = tokens[opened_at + 1]
        if kind == "before":
            tokens[opened_at], tokens[opened_at + 1] = tokens[opened_at + 1], tokens[opened_at]
        elif kind == "word" and (cut := _cut(text, from_end=False)) is not None:
            tokens[opened_at : opened_at + 2] = [("before", text[:cut]), tokens[opened_at], ("word", text[cut:])]


def _inside_words(tokens: list[tuple[str, str]], element: Element, opened_at: int) -> None:
    """The element just closed (its start tag at tokens[opened_at], or after the
    punctuation split off there; its end tag last, or before the punctuation split off
    after it) moved inside its first and last words where the source has it begin and
    end inside words and those words end (begin) with its own characters of them
    (Element.inside): "ISA<g>2</g>" stays so where "ISA2" is copied through."""
    head, tail = element.inside
    closing = len(tokens) - 1 if tokens[-1][0] == "close" else len(tokens) - 2
    if tail and closing >= 1 and tokens[closing - 1][0] == "word":
        word = tokens[closing - 1][1]
        if len(word) > len(tail) and word[: len(tail)].lower() == tail.lower():
            after = [("after", word[len(tail) :])]
            tokens[closing - 1 : closing + 1] = [("word", word[: len(tail)]), tokens[closing], *after]
    opening = opened_at + (tokens[opened_at][0] == "before")
    if head and opening + 1 < len(tokens) and tokens[opening + 1][0] == "word":
        word = tokens[opening + 1][1]
        if len(word) > len(head) and word[-len(head) :].lower() == head.lower():
            before = ("before", word[: -len(head)])
            tokens[opening : opening + 2] = [before, tokens[opening], ("word", word[-len(head) :])]


def _trailing_punctuation(tokens: list[tuple[str, str]]) -> str:
    """The EDGE_PUNCTUATION that ends the last word written, taken off it, for a tag that
    the source writes before punctuation to be written before it ("air<x/>." where the
    translation's "air." holds the full stop); "" where the last token is no such word."""
    if not tokens or tokens[-1][0] != "word":
        return ""
    word = tokens[-1][1]
    cut = _cut(word, from_end=True)
    if cut is None:
        return ""
    tokens[-1] = ("word", word[:cut])
    return word[cut:]


def _cut(word: str, *, from_end: bool) -> int | None:
    """Where the EDGE_PUNCTUATION at the word's end (or start) begins (ends), where the
    word has some and more besides; None where it has none, or holds a reference."""
    if "&" in word:
        return None
    cut = len(word.rstrip(EDGE_PUNCTUATION)) if from_end else len(word) - len(word.lstrip(EDGE_PUNCTUATION))
    return cut if 0 < cut < len(word) else None


def _next_item(before: tuple[str, str], token: tuple[str, str]) -> bool:
    """Whether `token` opens an item of a list of elements (parsing.py) right where an
    element of its name closes (`before`), whatever order the placing gave the items."""
    return token[0] == "item" and before == ("close", "</" + token[1][1:])


def _joined(tokens: list[tuple[str, str]], glued: dict[int, tuple[bool, bool]]) -> str:
    """The tokens as text: between two words a space, before the first opening tag or
    punctuation moved before one between them (or, if none, just before the second
    word); none after the last word, nor before punctuation moved after a closing tag.
    An element kept whole whose content shows is a word here (Element.shown), written
    against the punctuation beside it where the source had them touch, and a break (a
    line break, a code) between two words takes the spaces the source gave it: none, or
    one before it only (`glued`: Element.glued by token); an item of a list of elements
    ("item": parsing.py) is written against the item it follows."""
    words = [k for k, (kind, _) in enumerate(tokens) if kind == "word"]
    spaces = set()
    for before, after in zip(words, words[1:]):
        if _touching(tokens[before][1], tokens[after][1], glued.get(before), glued.get(after)):
            continue
        between = range(before + 1, after)
        if any(_next_item(tokens[k - 1], tokens[k]) for k in between):
            continue  # an item of a list right after another ("A</li><li>B")
        breaking = next((k for k in between if tokens[k][0] == "standalone" and k in glued), None)
        opening = next((k for k in between if tokens[k][0] in ("open", "item", "before")), after)
        if breaking is not None and glued[breaking] == (True, True):
            continue  # a break the source wrote with no space beside it ("one<br/>two")
        spaces.add(min(opening, breaking) if breaking is not None and glued[breaking] == (False, True) else opening)
    return "".join((" " if k in spaces else "") + text for k, (_, text) in enumerate(tokens))


def _touching(
    before: str, after: str, glued_before: tuple[bool, bool] | None, glued_after: tuple[bool, bool] | None
) -> bool:
    """Whether two words are written with no space between: a kept element (`glued_…`,
    the element's Element.glued) that the source had touch the text after it, followed
    by CLOSING punctuation, or touch the text before it, preceded by OPENING punctuation."""
    after_element = glued_before is not None and glued_before[1] and after[:1] in CLOSING and after[:1] != ""
    before_element = glued_after is not None and glued_after[0] and before[-1:] in OPENING and before[-1:] != ""
    return after_element or before_element

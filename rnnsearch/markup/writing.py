"""Writing placed markup: the target words with each element's tags where placing put
them (rnnsearch.markup.placing), as one line, written with a stack of the elements open
at each point rather than by recursion, so any depth is written."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rnnsearch.markup.dialects import escape
from rnnsearch.markup.parsing import Element


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


class _Output:
    """The target words with the placed elements, as one line."""

    def __init__(self, words: Sequence[str], elements: list[Element], spans: list[tuple[int, int]]):
        self.words, self.elements, self.spans = words, elements, spans  # the words escaped as markup
        self.children: dict[int | None, list[int]] = {}
        for index, element in enumerate(elements):
            self.children.setdefault(element.parent, []).append(index)

    def text(self) -> str:
        tokens: list[tuple[str, str]] = []  # (kind: word, open, close, standalone; text)
        stack = [_Open(None, self._in_order(None), 0, len(self.words))]
        while stack:
            current = stack[-1]
            child = next(current.children, None)
            if child is None:
                self._words(tokens, current.position, current.stop)
                stack.pop()
                if current.closing is not None:
                    tokens.append(("close", current.closing))
                continue
            child_start, child_stop = self.spans[child]
            self._words(tokens, current.position, child_start)
            current.position = max(current.position, child_stop)
            element = self.elements[child]
            if element.stand_in:
                tokens.append(("word", element.start_tag))
                self._stood_in(tokens, element, child_start, child_stop)
            elif element.end_tag is None:
                tokens.append(("word" if element.shown else "standalone", element.start_tag))
            else:
                tokens.append(("open", element.start_tag))
                stack.append(_Open(element.end_tag, self._in_order(child), child_start, child_stop))
        return _joined(tokens)

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


def _joined(tokens: list[tuple[str, str]]) -> str:
    """The tokens as text: between two words a space, before the first opening tag
    between them (or, if none, just before the second word); none after the last word.
    An element kept whole whose content shows is a word here (Element.shown)."""
    words = [k for k, (kind, _) in enumerate(tokens) if kind == "word"]
    spaces = set()
    for before, after in zip(words, words[1:]):
        between = range(before + 1, after)
        spaces.add(next((k for k in between if tokens[k][0] == "open"), after))
    return "".join((" " if k in spaces else "") + text for k, (_, text) in enumerate(tokens))

"""A paragraph held as an XML element of mixed content (OpenDocument's `text:p`), read into
one line of markup and written back from its translation, its inline elements the very
elements it held.

Each element inside the paragraph is a code: one that holds text and formats it (a span,
a link) is an element `<g n="…">` over its words; one that stands for something else (a
space, a tab, a line break, a bookmark, a field, a note, a frame, a comment) is a
standalone `<x n="…"/>` placed where its neighbours go, kept whole with all it holds.
Written back, the paragraph's content is rebuilt from the translated line: its text, and
each code's own element in its place (a formatting element emptied and refilled with the
words and codes placed in it; any other as it was), so that what a code holds, a note's
own paragraphs among them, keeps any translation written into it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rnnsearch.documents.document import code_pieces
from rnnsearch.documents.packages import Element
from rnnsearch.markup.dialects import escape
from rnnsearch.markup.parsing import parse


@dataclass
class TreeParagraph:
    """A paragraph read: its element, its codes (elements inside it) and its line of markup."""

    element: Element
    holding: Callable[[Element], bool]
    codes: list[Element] = field(default_factory=list)
    markup: str = ""

    @classmethod
    def of(cls, element: Element, holding: Callable[[Element], bool]) -> TreeParagraph | None:
        """The paragraph read (`holding`: whether an element formats the text it holds), or
        None where it has no words to translate."""
        paragraph = cls(element, holding)
        paragraph.markup = paragraph._content(element)
        return paragraph if parse(paragraph.markup, "xml").has_own_words else None

    def _content(self, element: Element) -> str:
        pieces = [escape(element.text or "")]
        for child in element:
            self.codes.append(child)
            number = len(self.codes) - 1
            if isinstance(child.tag, str) and self.holding(child):
                pieces.append(f'<g n="{number}">{self._content(child)}</g>')
            else:
                pieces.append(f'<x n="{number}"/>')
            pieces.append(escape(child.tail or ""))
        return "".join(pieces)

    def write(self, line: str) -> None:
        """The paragraph's content rebuilt from its translated line."""
        for code in self.codes:
            code.tail = None
            if isinstance(code.tag, str) and self.holding(code):
                code.text = None
                for child in list(code):
                    code.remove(child)
        for child in list(self.element):
            self.element.remove(child)
        self.element.text = None
        stack = [self.element]
        for piece in code_pieces(line, "xml"):
            if piece.role == "text":
                _append_text(stack[-1], piece.text)
            elif piece.role == "end":
                stack.pop()
            else:
                code = self.codes[piece.number]
                stack[-1].append(code)
                if piece.role == "start":
                    stack.append(code)


def _append_text(element: Element, text: str) -> None:
    """`text` after what `element` holds: its last child's tail, or its own text."""
    if len(element):
        last = element[len(element) - 1]
        last.tail = (last.tail or "") + text
    else:
        element.text = (element.text or "") + text

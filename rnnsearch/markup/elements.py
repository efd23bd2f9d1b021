"""A parsed line of markup: the text to translate, its words, and the elements over them
(parsing.py reads a line into one; placing and writing put its elements back over a
translation's words)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from rnnsearch.markup.dialects import DIALECTS, Dialect
from rnnsearch.text.glossary import KeptWords


@dataclass
class Element:
    """An element of a marked-up line, or a standalone tag (`end_tag` None).

    start_tag, end_tag: as written in the line (for an element kept whole, untranslated,
      `start_tag` is all of it, from its start tag to its end tag, and `end_tag` None)
    first, stop: the source words it covers, first to stop − 1; for an element without
      words and a standalone tag, first == stop, the boundary (number of words before it)
    parent: the index of the enclosing element in `MarkedUp.elements`, or None
    shown: an element kept whole whose content shows between the words around it, so
      that it is written as a word of its own, with a space on either side
    stand_in: the words of such an element's text, where it has few and short ones
      (STAND_IN_WORDS), which stand in the text where it stands: the model reads the
      sentence whole, a name or a command where it stood, and translates around them.
      The element covers them; written back, it stands where the alignment places them,
      in place of the target words there that are theirs (the same but for case)
    punctuated: whether its own text starts, and ends, with punctuation (a character
      that is not a letter, a digit or a space): a translation's words of punctuation
      alone at its edges are its own only then (wording.py)
    glued: for an element that breaks words (a line break, a code, an element kept whole
      and shown), whether the text touches it before, and after, with no space between
      ("{name}," "(<code>y</code>)", "one<br/>two"): written, a shown one takes punctuation
      beside it without a space, and a break takes the spaces the source gave it (writing.py);
      for an item of a list of elements (parsing.py), whether it touches the item before
      it, and the one after it: written, items are written against each other
    before_punctuation: for a tag of its own, whether the text right after it is
      punctuation ("legislation<x/>."): it goes before that punctuation's translation,
      the end of the clause, wherever the translation put the word before it (placing.py)
    inside: for an element that begins inside a word (after a letter or a digit), its own
      characters of that word ("2" in "ISA<g>2</g>"), and for one that ends inside a word,
      its own characters of that one ("Fuß" in "<b>Fuß</b>ball"); "" at a word's edge.
      Written, its tag goes inside the translation's word where that word ends (begins)
      with those characters, as a name, a number or a footnote's call is copied through
      (writing.py); elsewhere the element takes the whole word
    """

    start_tag: str
    end_tag: str | None
    first: int
    stop: int
    parent: int | None
    name: str = field(repr=False, default="")
    shown: bool = False
    stand_in: tuple[str, ...] = ()
    punctuated: tuple[bool, bool] = field(repr=False, default=(False, False))
    glued: tuple[bool, bool] = field(repr=False, default=(False, False))
    before_punctuation: bool = field(repr=False, default=False)
    inside: tuple[str, str] = field(repr=False, default=("", ""))

    @property
    def has_words(self) -> bool:
        return self.stop > self.first

    @property
    def follows_item(self) -> bool:
        """Whether it is an item of a list written right after the item before it, its
        sibling of the same start tag (parsing.py; `glued`)."""
        return self.end_tag is not None and self.glued[0]


def inside_of(text: str, start: int, end: int) -> tuple[str, str]:
    """Element.inside of an element over characters start to end − 1 of `text`: its own
    characters of the word it begins inside (a letter or a digit before it), and of the
    word it ends inside (one after it); "" at a word's edge. An element within one word
    has neither: where it would go in the translation's word is not known."""
    own = text[start:end].split()
    opens = 0 < start < len(text) and text[start - 1].isalnum() and not text[start].isspace()
    closes = 0 < end < len(text) and text[end].isalnum() and not text[end - 1].isspace()
    if not own or (opens and closes and len(own) == 1):
        return "", ""
    return own[0] if opens else "", own[-1] if closes else ""


@dataclass(frozen=True)
class MarkedUp:
    """A parsed line: `segments` joined give the line back byte for byte; `text` is what
    is translated, `words` its whitespace-separated words, and `elements` the markup
    over them, in the order their start tags come."""

    segments: list[str]
    text: str
    elements: list[Element]
    dialect: Dialect = DIALECTS["xml"]

    @property
    def line(self) -> str:
        return "".join(self.segments)

    @cached_property
    def words(self) -> list[str]:
        """The text's words, split once: a paragraph of many sentences is cut by them."""
        return self.text.split()

    @cached_property
    def kept_words(self) -> frozenset[int]:
        """The words that stand in for elements kept whole (Element.stand_in), by index:
        read by the model, never matched by a term."""
        return frozenset(k for element in self.elements if element.stand_in for k in range(element.first, element.stop))

    @property
    def source_text(self) -> str:
        """The text as the model reads it: a KeptWords where words stand in for kept
        elements, so that no glossary term is found on them."""
        return KeptWords(self.text, self.kept_words) if self.kept_words else self.text

    @cached_property
    def has_own_words(self) -> bool:
        """Whether the text has a word of its own, not only the words that stand in for
        elements kept whole (a paragraph of one `<code>` has nothing to translate)."""
        return sum(element.stop - element.first for element in self.elements if element.stand_in) < len(self.words)

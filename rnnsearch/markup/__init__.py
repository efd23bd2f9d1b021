"""Marked-up text through translation: inline tags carried to the words they enclosed.

A line with inline markup (`<b>…</b>`, `<a href="…">…</a>`, `<br/>`, `&amp;`) is parsed
with the standard library's `html.parser` into the text to translate and the markup
around it; the text is translated (or a given translation aligned to it) as any other,
and every tag is put back around the target words aligned to the source words it
enclosed (Hanneman & Dinu 2020; Zenkel et al. 2021 describe the approach).

MarkupOptions (`parse`, rnnsearch.markup.parsing): the line's text, its words and the
elements over them, checked to be well-formed; scripts, stylesheets and what is marked
`translate="no"` are kept whole, untranslated (that module's docstring has the rules).

Transfer (`transfer`), given word links (source word i, target word j):

1. An element that covers every source word covers every target word: markup around
   the whole sentence stays around the whole translation.
2. Any other element covers the target words from the first to the last aligned to one
   of its words: whole words, so a tag never splits a word, and the words between them
   too, so that its content stays one span. Placed by word weights (a `Placement` by
   weights: PLACEMENTS), it covers the span its links most probably have, the weights
   read as their probabilities and each unlinked word inside it weighing a little
   against it (weights.likeliest_hull, UNLINKED_INSIDE); where most probably none of its
   words is linked, it is placed as by the links. With one direction's weights, an
   element of one source word goes around its likeliest target word and the words beside
   it nearly as likely instead (placements.ONE_DIRECTION_PEAK): a model's rows read alone
   give the function word beside a term's translation more than even odds of being its.
   The target's words have the last word (wording.py): where they copy an element's
   words as written (but for case and edge punctuation: a name, a code, a path), the
   element goes around the copy nearest to where its links put it; else a target word of
   punctuation alone at an edge of its span stays out unless the element's own text ends
   (or starts) with punctuation.
   Items of a list (two elements or more of one name and no attributes, each written
   right after the one before: a list's items, a menu path's steps) are placed together
   (items.py): the target words their links reach, or all of their parent's where they
   fill it, are cut into one run per item, in the source's order, each word going to the
   item its words are likeliest linked to, so that no item takes its neighbour's words.
3. An element none of whose words is aligned, an element with no words and a
   standalone tag are placed at a boundary between target words: after the target
   words aligned to the nearest aligned source word before them, else before those of
   the nearest aligned source word after them; at the start or the end of the
   translation if they are at the start or the end of the source, and, with no links at
   all, at the same relative position. A standalone tag that the source writes right
   before punctuation that ends a clause ("legislation<x/>.", a footnote's call) goes
   before that punctuation's translation instead, the end of the clause in the target
   ("la législation … de l’air<x/>."), where the punctuation is aligned. The tag is
   never lost.
4. The output must nest as the input did. An element's span is cut to its parent's. Of
   two elements with the same parent, the one that comes later in the source yields to
   the earlier where their spans overlap or one holds the other: it keeps the part of
   its span after the earlier one's (or, if none, before it), and a standalone tag
   inside the earlier one's span moves to its nearer edge (the end, on a tie).
5. An element with words is never left with none (a link with no text, an emphasis a
   reader sees as bare asterisks): where rules 2 to 4 leave it none, it takes one word
   of its parent's span that no earlier sibling holds, the one the weights most link to
   its words (given weights), else the one nearest to the boundary where it stands, the
   word after it first; where the earlier siblings hold every word, the nearest one
   with a word to spare (one its own children with words do not hold) gives up its edge
   word on that side. Only a translation with too few words leaves it empty.

The output is the target words separated by single spaces, each escaped for markup
("&", "<" and ">"), with the tags in place: an opening tag before the first word it
encloses, a closing tag after the last, and a standalone tag after the word before it;
an element kept whole whose content shows (`translate="no"`) stands as a word of its own.
Elements at the same boundary come in source order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rnnsearch.arguments import checked_choice, checked_count
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError
from rnnsearch.markup.dialects import DIALECTS, Dialect, escape
from rnnsearch.markup.elements import Element, MarkedUp
from rnnsearch.markup.parsing import MARKUPS, MarkupError, parse
from rnnsearch.markup.placements import PLACEMENTS, Placement, Reading
from rnnsearch.markup.placing import Link, place, transfer, transferred
from rnnsearch.markup.weights import JoinedWeights, PairWeights, WordWeights

__all__ = [
    "DIALECTS",
    "PLACEMENTS",
    "MARKUPS",
    "MAX_MARKUP_CHARS",
    "Dialect",
    "Element",
    "Link",
    "MarkedUp",
    "MarkupError",
    "MarkupOptions",
    "escape",
    "markup_line",
    "parse",
    "place",
    "transfer",
    "transferred",
    "WordWeights",
    "JoinedWeights",
    "PairWeights",
    "Placement",
    "Reading",
    "checked_placement",
    "chosen_placement",
]

MAX_MARKUP_CHARS = 1_000_000
"""The longest marked-up line read by default, in characters: a line of markup is read in
time linear in its length, and this bound keeps one line from holding a command or a
caller for long; `--max-markup-chars` and `max_markup_chars=` raise it (a page with large
inline images, say). The server bounds every text by its own `--max-chars`."""


def checked_placement(placement: object) -> Placement | None:
    """The API's `placement`, a name of PLACEMENTS or a Placement, checked; None stays
    None: the measured best for the alignment read (`chosen_placement`)."""
    if placement is None or isinstance(placement, Placement):
        return placement
    return PLACEMENTS[checked_choice(placement, "placement", tuple(PLACEMENTS))]


def chosen_placement(placement: Placement | None, *, from_module: bool) -> Placement:
    """`placement`, or where it is None the measured best for the alignment read
    (BENCHMARKS.md, "Tags where people put them, decided"): on an alignment module's rows,
    `tempered`, which placed the most tags where translators put them, one direction
    or two; on the attention, whose diffuse rows the links read better, `links`."""
    if placement is not None:
        return placement
    return PLACEMENTS["tempered" if from_module else "links"]


@dataclass(frozen=True)
class MarkupOptions:
    """How the inputs of a call are read, and their markup put back: as `markup`
    (MARKUPS), and with `lenient`, an input whose markup is not well-formed is taken as
    plain text instead of refused; a line longer than `max_chars` characters is refused
    either way (None: the caller has bounded its inputs already, as the server does with
    its --max-chars); the tags are placed as `placement` says (PLACEMENTS; None: as
    `chosen_placement` chooses for the alignment read)."""

    markup: str
    lenient: bool = False
    max_chars: int | None = MAX_MARKUP_CHARS
    placement: Placement | None = None

    @classmethod
    def of(
        cls, markup: object, lenient: object, max_chars: object = None, placement: object = None
    ) -> MarkupOptions | None:
        """The Python API's `markup`, `lenient_markup`, `max_markup_chars` (None:
        MAX_MARKUP_CHARS) and `placement` (None: the measured best for the alignment
        read, `chosen_placement`) arguments, checked; None for no markup. The last three say how
        markup is read and put back, so they are refused without it."""
        if not isinstance(lenient, bool):
            raise ArgumentTypeError(f"lenient_markup: expected a bool, got {type(lenient).__name__}")
        bound = MAX_MARKUP_CHARS if max_chars is None else checked_count(max_chars, "max_markup_chars")
        placed = checked_placement(placement)
        if markup is None:
            if lenient:
                raise ArgumentValueError("lenient_markup: it says how markup is read; give markup too")
            if max_chars is not None:
                raise ArgumentValueError("max_markup_chars: it bounds lines read as markup; give markup too")
            if placement is not None:
                raise ArgumentValueError("placement: it says how markup is placed; give markup too")
            return None
        return cls(checked_choice(markup, "markup", DIALECTS), lenient, bound, placed)

    def lines(
        self, lines: Sequence[str], *, origin: str | None = None, first_line: int = 1, items: str | None = None
    ) -> list[MarkedUp | None]:
        """Each line parsed; one that is not well-formed is None when lenient (the caller
        takes it as plain text), else a MarkupError naming it: as line `first_line` + k of
        the file `origin` (or of the input), or with `items` as item `items`.k (0-based),
        as the server names the texts of a request."""
        parsed: list[MarkedUp | None] = []
        for k, line in enumerate(lines):
            if self.max_chars is not None and len(line) > self.max_chars:
                raise MarkupError(
                    f"{_where(k, origin, first_line, items)}: {len(line):,} characters is more than the "
                    f"{self.max_chars:,} a marked-up line may have (raise it with --max-markup-chars or "
                    "max_markup_chars=)"
                )
            try:
                parsed.append(parse(line, self.markup))
            except MarkupError as error:
                if not self.lenient:
                    raise MarkupError(f"{_where(k, origin, first_line, items)}: {error}") from None
                parsed.append(None)
        return parsed


def _where(k: int, origin: str | None, first_line: int, items: str | None) -> str:
    """How an error names the k-th of the lines `MarkupOptions.lines` reads."""
    if items is not None:
        return f"{items}.{k}"
    return f"{origin}:{first_line + k}" if origin else f"input line {first_line + k}"


def markup_line(marked_up: str | None, text: str) -> str:
    """The markup line written for an output: its marked-up text, or, for an input read as
    plain text (`marked_up` None), its text escaped, so that every line is markup."""
    return escape(text) if marked_up is None else marked_up

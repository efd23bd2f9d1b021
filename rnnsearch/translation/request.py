"""What one call asks of a model: the one value (`Request`) that the API's methods, the
commands and the server build once, by one builder (`build_request`), and hand down to
the place that reads each of its parts.

A call's settings are checked when the request is built, against the model that will run
it: where its alignments come from, resolved to the entry of ALIGNMENT_SOURCES (not a name
to look up again), the reading of that source's rows, how its inputs' markup is read, and
how its search runs. Whatever a call asks is then read from the request, not passed on by
hand: a new setting is a field here, its check in `build_request`, and the one place that
reads it.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections import ChainMap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from rnnsearch.alignments.readings import ALIGNMENT_SOURCES, DEFAULT_READING, READINGS, AlignmentSource, check_reading
from rnnsearch.arguments import checked_choice
from rnnsearch.decoding.decoding import Decoding
from rnnsearch.decoding.wanted import Wanted
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError
from rnnsearch.markup import MarkupOptions
from rnnsearch.reserved import UNK
from rnnsearch.search.avoided import AvoidTable
from rnnsearch.search.rules import Cancelled, SearchOptions
from rnnsearch.search.terms import piece_kinds
from rnnsearch.text.glossary import Glossary, GlossaryError, Match
from rnnsearch.text.glossary_files import avoided_phrases, read_avoided


@dataclass(frozen=True)
class Request:
    """One call's settings, checked (`build_request`).

    source:  where the alignments come from: the entry of ALIGNMENT_SOURCES
    reading: which row of the alignment stands for each target piece (READINGS), where the
             alignments are read as word links
    markup:  how the inputs' markup is read; None for plain text
    search:  how search runs; None for a call that searches nothing (scoring and aligning
             given pairs)
    glossary: the user's terms, each found in a text written in its translation; None: none
    term_pieces: each term's target spelled in the model's target pieces (read from the
             glossary: requests are equal, and merged by the server, where their
             glossaries are the same object)
    avoid:   words and phrases no translation may contain; `avoided`, the pieces that
             would complete each, for the model's vocabulary
    kinds:   each target piece's kind (search.terms.piece_kinds: a term is not run on into a word)
    """

    source: AlignmentSource
    reading: str = DEFAULT_READING
    markup: MarkupOptions | None = None
    search: SearchOptions | None = None
    glossary: Glossary | None = None
    term_pieces: Mapping[str, tuple[int, ...]] = field(default_factory=dict, compare=False)
    avoid: tuple[str, ...] = ()
    avoided: AvoidTable | None = field(default=None, compare=False)
    kinds: torch.Tensor | None = field(default=None, compare=False)

    def matches_of(self, texts: Sequence[str], owners: Sequence[Request] | None = None) -> list[list[Match]] | None:
        """The glossary's terms found in each text, or, given `owners`, each text's own
        request's; None where no glossary applies."""
        if owners is not None and any(owner.glossary is not None for owner in owners):
            return [[] if o.glossary is None else o.glossary.matches(t) for o, t in zip(owners, texts, strict=True)]
        return None if self.glossary is None else [self.glossary.matches(text) for text in texts]

    def shared(self) -> Request:
        """What requests must have in common to be decoded in one search: all but their
        glossaries, which apply to their own texts (`matches_of` with `owners`), so that a
        server's requests that bring their own terms still decode together."""
        return dataclasses.replace(self, glossary=None, term_pieces={}, kinds=None)

    def spelling_for(self, owners: Sequence[Request]) -> Request:
        """The request with the spellings of every owner's terms, for texts whose own
        requests are `owners` (requests this one is `shared` by)."""
        pieces: dict[str, tuple[int, ...]] = {}
        for owner in {id(owner): owner for owner in owners}.values():
            pieces.update(owner.term_pieces)
        kinds = next((owner.kinds for owner in owners if owner.kinds is not None), None)
        return dataclasses.replace(self, term_pieces=pieces, kinds=kinds)

    def wanted(
        self,
        prefixes: Sequence[Sequence[int]] | None = None,
        matches: Sequence[Sequence[Match]] | None = None,
        ends: Sequence[Sequence[int]] | None = None,
    ) -> Wanted | None:
        """What the call asks of its translations beyond the model's choice: their
        `prefixes` (target pieces, one list per text), the target pieces of the terms
        `matches` found in each (each term once) with, given `ends` (the source piece
        after each match), where the first match of each ends, the words no translation
        may contain; None: nothing."""
        terms = term_ends = None
        if matches is not None:
            pieces = self.term_pieces
            given = ends or [[-1] * len(found) for found in matches]
            firsts = [_first_ends(found, ended) for found, ended in zip(matches, given, strict=True)]
            terms = [[list(pieces[target]) for target in first] for first in firsts]
            term_ends = None if ends is None else [list(first.values()) for first in firsts]
        if prefixes is None and terms is None and self.avoided is None:
            return None
        return Wanted(prefixes, terms, self.avoided, self.kinds, term_ends)

    @property
    def alignment_from(self) -> str:
        """The source's name, as results record it."""
        return self.source.name

    @property
    def searched(self) -> SearchOptions:
        """How the search runs, for a request that searches (an ArgumentValueError for one
        built for given pairs, which searches nothing)."""
        if self.search is None:
            raise ArgumentValueError("request: it searches nothing (built for given pairs); build one that searches")
        return self.search

    def cancelled_by(self, cancelled: Cancelled | None) -> Request:
        """The request with its search stopped once `cancelled` returns True (the server's
        requests, merged into one call, are cancelled together)."""
        if self.search is None:
            raise ValueError("a request that searches nothing cannot be cancelled")
        return dataclasses.replace(self, search=dataclasses.replace(self.search, cancelled=cancelled))


def _first_ends(found: Sequence[Match], ends: Sequence[int]) -> dict[str, int]:
    """Each target of a text's matches, in the order first found, and the end of its first match."""
    first: dict[str, int] = {}
    for match, end in zip(found, ends, strict=True):
        first.setdefault(match.term.target, end)
    return first


def build_request(
    decoding: Decoding,
    *,
    alignment_from: object = None,
    reading: object = DEFAULT_READING,
    markup: object = None,
    lenient_markup: object = False,
    max_markup_chars: object = None,
    beam_size: object = None,
    n_best: object = 1,
    cancelled: Cancelled | None = None,
    placement: object = None,
    searches: bool = True,
    shown: bool = True,
    links_read: bool = False,
    glossary: object = None,
    avoid: object = None,
) -> Request:
    """A call's settings for the model `decoding` runs, each checked once, as the Python
    API names them (a wrong one is an ArgumentValueError or ArgumentTypeError naming it).

    `alignment_from` None takes the alignment module where the model has one and the
    alignments are `shown` (written, or used to place markup), else search's own α. The
    reading is checked against the source where word links are read from it: with markup,
    or where the caller reads them (`links_read`: written as Pharaoh lines, or aligned).
    With `searches`, the beam size and n-best count (the config's beam for None) make the
    search options; a call on given pairs searches nothing. `placement` says how markup
    is placed back (MarkupOptions). `glossary` (a Glossary or a mapping from source terms
    to their targets) is checked to be spelled in the model's target pieces; `avoid`
    (a list of words and phrases, or the path of a file of them, one a line) is read into
    the pieces that would complete each."""
    markup_options = MarkupOptions.of(markup, lenient_markup, max_markup_chars, placement)
    search = decoding.options(beam_size, n_best, cancelled) if searches else None
    source = ALIGNMENT_SOURCES[decoding.alignment_source(alignment_from, shown=shown)]
    if markup_options is not None or source.from_module:
        decoding.require_alignment()
    chosen = checked_choice(reading, "reading", READINGS)
    if markup_options is not None or links_read:
        check_reading(chosen, source)
    checked, pieces = _spelled(decoding, glossary)
    avoided = () if avoid is None else _avoided(avoid)
    if avoided and searches:
        decoding.input_kind.require_text("give it no words to avoid, which are written text")
    table = AvoidTable.of(avoided, decoding.tgt_subwords.texts) if avoided and searches else None
    kinds = piece_kinds(decoding.tgt_subwords.texts) if checked is not None else None
    return Request(source, chosen, markup_options, search, checked, pieces, avoided, table, kinds)


def _avoided(avoid: object) -> tuple[str, ...]:
    """The words of `avoid`: a file of them (a path), or a list of them."""
    if isinstance(avoid, (str, Path)):
        return read_avoided(avoid)
    if not isinstance(avoid, (list, tuple)):
        raise ArgumentTypeError(f"avoid: expected a file or a list of words and phrases, got {type(avoid).__name__}")
    return avoided_phrases(avoid)


def _spelled(decoding: Decoding, glossary: object) -> tuple[Glossary | None, Mapping[str, tuple[int, ...]]]:
    """The call's glossary and each of its targets in the model's target pieces; a target
    the vocabulary cannot spell (an unknown piece) is refused, naming where it was given.
    A glossary laid over another (a server's request over the server's own) spells its
    own terms, and reads the other's as spelled once for this model (`_SPELLINGS`)."""
    if glossary is None:
        return None, {}
    decoding.input_kind.require_text("give it no glossary, whose terms are found in text")
    if isinstance(glossary, Mapping):
        glossary = Glossary.of(glossary)
    if not isinstance(glossary, Glossary):
        raise ArgumentTypeError(f"glossary: expected a Glossary or a mapping of terms, got {type(glossary).__name__}")
    layers: list[dict[str, tuple[int, ...]]] = []
    layer: Glossary | None = glossary
    while layer is not None:
        layers.append(_own_spelling(decoding, layer))
        layer = layer.base
    return glossary, layers[0] if len(layers) == 1 else ChainMap(*layers)


_SPELLINGS: weakref.WeakKeyDictionary[Glossary, tuple[object, dict[str, tuple[int, ...]]]] = weakref.WeakKeyDictionary()
"""Each glossary's own targets as the last model that spelled it spells them: a server's
glossary is spelled once, not for every request laid over it."""


def _own_spelling(decoding: Decoding, glossary: Glossary) -> dict[str, tuple[int, ...]]:
    """`glossary`'s own targets (not its base's) in the target pieces of `decoding`'s model."""
    cached = _SPELLINGS.get(glossary)
    if cached is not None and cached[0] is decoding.tgt_subwords:
        return cached[1]
    terms = {term.target: term for term in glossary.terms}
    pieces = dict(zip(terms, map(tuple, decoding.tgt_subwords.encode(list(terms))), strict=True))
    for target, spelled in pieces.items():
        if UNK in spelled or not spelled:
            raise GlossaryError(f"{terms[target].origin}: the model's target pieces cannot spell {target!r}")
    _SPELLINGS[glossary] = (decoding.tgt_subwords, pieces)
    return pieces

"""What one call asks of a model: the one value (`Request`) that the API's methods, the
commands and the server build once, by one builder (`build_request`), from the one set of
keywords a caller may give (`Asked`), and hand down whole to the place that reads each of
its parts.

A call's settings are checked when the request is built, against the model that will run
it: where its alignments come from, resolved to the entry of ALIGNMENT_SOURCES (not a name
to look up again), the reading of that source's rows, how its inputs' markup is read, how
its search runs, its terms, the words it avoids and the start of each translation. The
request holds them as data (a term's target as text, the avoid list as phrases), equal
where they are equal: the search spells them in the model's pieces and keeps the tables it
builds (rnnsearch.search.tables). Whatever a call asks is then read from the request, not
passed on by hand: a new setting is a key of `Asked`, a field here, its check in
`build_request`, and the one place that reads it.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from rnnsearch.alignments.readings import ALIGNMENT_SOURCES, DEFAULT_READING, READINGS, AlignmentSource, check_reading
from rnnsearch.arguments import checked_choice, checked_strings
from rnnsearch.decoding.decoding import Decoding
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError
from rnnsearch.markup import MarkupOptions, Placement
from rnnsearch.search.rules import Cancelled, SearchOptions
from rnnsearch.text.glossary import Glossary, GlossaryError, Match
from rnnsearch.text.glossary_files import avoided_phrases, read_avoided
from rnnsearch.text.subwords import Subwords


class AlignKeywords(TypedDict, total=False):
    """What a call on given pairs may ask (`align`): where its alignments come from
    (`alignment_from`), how their rows are read (`reading`), and how its inputs' markup is
    read and placed (`markup`, `lenient_markup`, `max_markup_chars`, `placement`)."""

    alignment_from: str | None
    reading: str
    markup: str | None
    lenient_markup: bool
    max_markup_chars: int | None
    placement: str | Placement | None


class TermKeywords(TypedDict, total=False):
    """The user's terms (`glossary`: a Glossary, a mapping of source terms to their
    targets, or a glossary file's path) and the words no translation may write (`avoid`:
    a list of them, or a file's path, one a line)."""

    glossary: Glossary | Mapping[str, str] | str | Path | None
    avoid: Sequence[str] | str | Path | None


class DocumentKeywords(TermKeywords, total=False):
    """What a document call may ask of its search (`translate_documents`, the server's
    documents): its beam size, where its alignments come from, how they are read and how
    its markup is placed."""

    beam_size: int | None
    alignment_from: str | None
    reading: str
    placement: str | Placement | None


class ChunkKeywords(AlignKeywords, TermKeywords, total=False):
    """What `translate_chunks` may ask besides its search widths."""


class TextKeywords(ChunkKeywords, total=False):
    """What `translate` may ask besides its search widths: `prefixes`, one a text ("" for
    none), the start each translation is forced to."""

    prefixes: Iterable[str] | None


class Asked(TextKeywords, total=False):
    """Everything a call may ask, by the names the Python API gives them: what
    `build_request` reads. `beam_size` (None: the config's), `n_best`, and `cancelled`,
    asked before every decoder step, which stops the work once it returns True."""

    beam_size: int | None
    n_best: int
    cancelled: Cancelled | None


def taken(asked: Mapping[str, object], keywords: type, call: str, *, besides: tuple[str, ...] = ()) -> None:
    """Refuse a keyword `call` does not take (one of `keywords`, a TypedDict above, or of
    its own parameters, `besides`), in one line naming it and what it takes: a misspelt
    option is never ignored."""
    names = set(getattr(keywords, "__optional_keys__", ())) | set(besides)
    unknown = sorted(set(asked) - names)
    if unknown:
        raise ArgumentTypeError(f"{call}: no keyword {unknown[0]!r}; it takes {', '.join(sorted(names))}")


@dataclass(frozen=True)
class Request:
    """One call's settings, checked (`build_request`), as plain data: requests that ask the
    same are equal, and a server's are decoded together.

    source:   where the alignments come from: the entry of ALIGNMENT_SOURCES
    reading:  which row of the alignment stands for each target piece (READINGS), where the
              alignments are read as word links
    markup:   how the inputs' markup is read; None for plain text
    search:   how search runs; None for a call that searches nothing (scoring and aligning
              given pairs)
    glossary: the user's terms, each found in a text written in its translation; None: none
    avoid:    words and phrases no translation may contain
    prefixes: the start each translation is forced to, one a text ("" for none); None: none
    """

    source: AlignmentSource
    reading: str = DEFAULT_READING
    markup: MarkupOptions | None = None
    search: SearchOptions | None = None
    glossary: Glossary | None = None
    avoid: tuple[str, ...] = ()
    prefixes: tuple[str, ...] | None = None

    def matches_of(self, texts: Sequence[str], owners: Sequence[Request] | None = None) -> list[list[Match]] | None:
        """The glossary's terms found in each text, or, given `owners`, each text's own
        request's; None where no glossary applies."""
        if owners is not None and any(owner.glossary is not None for owner in owners):
            return [[] if o.glossary is None else o.glossary.matches(t) for o, t in zip(owners, texts, strict=True)]
        return None if self.glossary is None else [self.glossary.matches(text) for text in texts]

    def shared(self) -> Request:
        """What requests must have in common to be decoded in one search: all but their
        glossaries, which apply to their own texts (`matches_of` with `owners`), and their
        prefixes, one a text, so that a server's requests that bring their own terms or
        prefixes still decode together."""
        return dataclasses.replace(self, glossary=None, prefixes=None)

    def prefixed(self, prefixes: Sequence[str] | None) -> Request:
        """The request with these prefixes, one a text ("" for none; None: none)."""
        return dataclasses.replace(self, prefixes=None if prefixes is None else tuple(prefixes))

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


def build_request(
    decoding: Decoding,
    asked: Mapping[str, object],
    *,
    searches: bool = True,
    shown: bool = True,
    links_read: bool = False,
) -> Request:
    """What `asked` (the keywords of `Asked`, any value) asks of the model `decoding`
    runs, each setting checked once, as the Python API names them (a wrong one is an
    ArgumentValueError or ArgumentTypeError naming it; a glossary's path is read by the
    caller, who knows the model's languages).

    `alignment_from` None takes the alignment module where the model has one and the
    alignments are `shown` (written, or used to place markup), else search's own α. The
    reading is checked against the source where word links are read from it: with markup,
    or where the caller reads them (`links_read`: written as Pharaoh lines, or aligned).
    With `searches`, the beam size and n-best count (the config's beam for None) make the
    search options; a call on given pairs searches nothing. Each glossary target is checked
    to be spelled in the model's target pieces."""
    taken(asked, Asked, "request")
    markup_options = MarkupOptions.of(
        asked.get("markup"), asked.get("lenient_markup", False), asked.get("max_markup_chars"), asked.get("placement")
    )
    search = None
    if searches:
        search = decoding.options(asked.get("beam_size"), asked.get("n_best", 1), _cancelled(asked.get("cancelled")))
    source = ALIGNMENT_SOURCES[decoding.alignment_source(asked.get("alignment_from"), shown=shown)]
    if markup_options is not None or source.from_module:
        decoding.require_alignment()
    reading = checked_choice(asked.get("reading", DEFAULT_READING), "reading", READINGS)
    if markup_options is not None or links_read:
        check_reading(reading, source)
    glossary = _glossary(decoding, asked.get("glossary"))
    avoid = _avoided(asked.get("avoid"))
    if avoid and searches:
        decoding.input_kind.require_text("give it no words to avoid, which are written text")
    prefixes = asked.get("prefixes")
    if prefixes is not None:
        decoding.input_kind.require_text("give it no prefixes, which are written text")
        prefixes = tuple(checked_strings(prefixes, "prefixes", example='a list such as ["A dog", ""]'))
    return Request(source, reading, markup_options, search, glossary, avoid, prefixes)


def _cancelled(cancelled: object) -> Cancelled | None:
    """`cancelled`, checked to be a function (or None)."""
    if cancelled is not None and not callable(cancelled):
        raise ArgumentTypeError(f"cancelled: expected a function that returns a bool, got {type(cancelled).__name__}")
    return cancelled


def _avoided(avoid: object) -> tuple[str, ...]:
    """The words of `avoid`: a file of them (a path), or a list of them."""
    if avoid is None:
        return ()
    if isinstance(avoid, (str, Path)):
        return read_avoided(avoid)
    if not isinstance(avoid, (list, tuple)):
        raise ArgumentTypeError(f"avoid: expected a file or a list of words and phrases, got {type(avoid).__name__}")
    return avoided_phrases(avoid)


def _glossary(decoding: Decoding, glossary: object) -> Glossary | None:
    """The call's glossary, each of its targets (its base's too, for a glossary laid over
    another) checked to be spelled by the model's target pieces: one an unknown piece
    would stand in is refused, naming where it was given."""
    if glossary is None:
        return None
    decoding.input_kind.require_text("give it no glossary, whose terms are found in text")
    if isinstance(glossary, Mapping):
        glossary = Glossary.of(glossary)
    if not isinstance(glossary, Glossary):
        raise ArgumentTypeError(f"glossary: expected a Glossary or a mapping of terms, got {type(glossary).__name__}")
    layer: Glossary | None = glossary
    while layer is not None and _CHECKED.get(layer) is not decoding.tgt_subwords:
        for term in layer.terms:
            if not decoding.spells(term.target):
                raise GlossaryError(f"{term.origin}: the model's target pieces cannot spell {term.target!r}")
        _CHECKED[layer] = decoding.tgt_subwords
        layer = layer.base
    return glossary


_CHECKED: weakref.WeakKeyDictionary[Glossary, Subwords] = weakref.WeakKeyDictionary()
"""Each glossary and the vocabulary that last spelled all its targets: a server's
glossary is checked once, not for every request laid over it."""

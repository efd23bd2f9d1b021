"""What a call asks of its outputs beyond the model's choice (`Wanted`), made into the
search's constraints (rnnsearch.search.constraints) in one place: each sentence's
prefix and terms, and the words no output may contain. A call asks them as text; they
are spelled here in the model's target pieces, by the search's tables
(rnnsearch.search.tables), built once per vocabulary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch

from rnnsearch.search import tables
from rnnsearch.search.avoided import Avoided, AvoidTable
from rnnsearch.search.constraints import Constraint, Prefixes
from rnnsearch.search.terms import Place, Terms
from rnnsearch.text.subwords import Subwords


class Asking(Protocol):
    """What a call asks of every sentence, as the request holds it (plain text): the
    start each output is forced to, one a sentence ("" for none; None: none), and the
    phrases no output may contain."""

    @property
    def prefixes(self) -> tuple[str, ...] | None: ...

    @property
    def avoid(self) -> tuple[str, ...]: ...


@dataclass(frozen=True)
class Wanted:
    """prefixes:      target pieces each output must start with, one list per sentence
    terms:         target pieces each output must contain, lists per sentence
    avoided:       the phrases no output may contain, as the vocabulary spells them
    kinds:         (V,) each target piece's kind (search.terms.piece_kinds), so that a
                   term is not run on into a longer word
    term_ends:     the source piece after each term's source words, lists per sentence
                   as `terms`: where the attention passes it, the term is begun"""

    prefixes: Sequence[Sequence[int]] | None = None
    terms: Sequence[Sequence[Sequence[int]]] | None = None
    avoided: AvoidTable | None = None
    kinds: torch.Tensor | None = None
    term_ends: Sequence[Sequence[int]] | None = None

    @classmethod
    def asked(
        cls,
        vocabulary: Subwords,
        call: Asking | None = None,
        *,
        terms: Sequence[Sequence[str]] | None = None,
        term_ends: Sequence[Sequence[int]] | None = None,
    ) -> Wanted | None:
        """What a call asks as text, in the target pieces of `vocabulary`: each sentence's
        prefix and the phrases no output may contain, as `call` asks them, and the targets
        of each sentence's terms (each once, with the source piece after each, as
        `term_ends`); None: nothing."""
        given = None if call is None else call.prefixes
        prefix_pieces = None if given is None else vocabulary.encode(list(given))
        term_pieces = None if terms is None else [tables.spelled(vocabulary, targets) for targets in terms]
        table = tables.avoid_table(vocabulary, call.avoid) if call is not None and call.avoid else None
        if prefix_pieces is None and term_pieces is None and table is None:
            return None
        kinds = None if term_pieces is None else tables.kinds(vocabulary)
        return cls(prefix_pieces, term_pieces, table, kinds, term_ends)

    def prefixed(self, sentence: int) -> bool:
        """Whether the output of `sentence` must start with a prefix (a blank input with
        one is searched; without, it gives an empty translation)."""
        return self.prefixes is not None and bool(self.prefixes[sentence])

    def share(self, sentences: Sequence[int]) -> Wanted:
        """What is asked of these sentences, in this order (one search's share of a call)."""
        return Wanted(
            None if self.prefixes is None else [self.prefixes[i] for i in sentences],
            None if self.terms is None else [self.terms[i] for i in sentences],
            self.avoided,
            self.kinds,
            None if self.term_ends is None else [self.term_ends[i] for i in sentences],
        )

    def written(self, outputs: Sequence[Sequence[Sequence[int]]]) -> list[list[list[Place | None]]]:
        """Where each output wrote each of its sentence's terms (`Terms.written`): for each
        sentence asked of, each of its outputs (pieces, as `outputs` lists them), the place
        of each term in `terms`' order, None where it is not written; [] where a sentence
        has no term."""
        searched = None if self.terms is None else Terms.of(self.terms, kinds=self.kinds)
        if searched is None:
            return [[[] for _ in sentence] for sentence in outputs]
        rows = [(n, pieces) for n, sentence in enumerate(outputs) for pieces in sentence]
        places = iter(searched.written(torch.tensor([n for n, _ in rows]), [pieces for _, pieces in rows]))
        return [[next(places) for _ in sentence] for sentence in outputs]

    def constraints(self) -> list[Constraint]:
        """The constraints of one search over the sentences asked of: the prefixes where
        any sentence has one, the terms where any has one, and the avoided phrases."""
        forced = None if self.prefixes is None else Prefixes.of(self.prefixes)
        written = None if self.terms is None else Terms.of(self.terms, kinds=self.kinds, ends=self.term_ends)
        avoided = None if self.avoided is None else Avoided(self.avoided)
        return [constraint for constraint in (forced, written, avoided) if constraint is not None]

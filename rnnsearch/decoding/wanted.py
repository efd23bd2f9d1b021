"""What a call asks of its outputs beyond the model's choice (`Wanted`), made into the
search's constraints (rnnsearch.search.constraints) in one place: each sentence's
prefix and terms, and the words no output may contain."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from rnnsearch.search.avoided import Avoided, AvoidTable
from rnnsearch.search.constraints import Constraint, Prefixes
from rnnsearch.search.terms import Terms


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

    def prefixed(self, sentence: int) -> bool:
        """Whether the output of `sentence` must start with a prefix (a blank input with
        one is searched; without, it gives an empty translation)."""
        return self.prefixes is not None and bool(self.prefixes[sentence])

    def of(self, sentences: Sequence[int]) -> Wanted:
        """What is asked of these sentences, in this order (one search's share of a call)."""
        return Wanted(
            None if self.prefixes is None else [self.prefixes[i] for i in sentences],
            None if self.terms is None else [self.terms[i] for i in sentences],
            self.avoided,
            self.kinds,
            None if self.term_ends is None else [self.term_ends[i] for i in sentences],
        )

    def constraints(self) -> list[Constraint]:
        """The constraints of one search over the sentences asked of: the prefixes where
        any sentence has one, the terms where any has one, and the avoided phrases."""
        forced = None if self.prefixes is None else Prefixes.of(self.prefixes)
        written = None if self.terms is None else Terms.of(self.terms, kinds=self.kinds, ends=self.term_ends)
        avoided = None if self.avoided is None else Avoided(self.avoided)
        return [constraint for constraint in (forced, written, avoided) if constraint is not None]

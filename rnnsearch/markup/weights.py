"""The soft word alignment placement reads (`PairWeights`): one pair's word weights, or
consecutive pairs' read as one, each target word's probability of being linked to an
element's source words (placing.py places elements by it)."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

import numpy as np

SURE = 1 - 1e-6
"""The greatest probability a weight is read as, so that no link is read as certain and
every span keeps a finite log-probability."""


@dataclass(frozen=True)
class WordWeights:
    """The soft word alignment of a pair, what `weights` placement reads.

    forward:  (target words × source words), each target word's weight on each source
              word (a row may fall short of 1: weight on NULL or on "</s>")
    backward: (source words × target words), a reverse model's weight of each source word
              on each target word, or None
    one_word: the weights an element of one source word is placed by, where they are
              read otherwise (placements.py: a module's jump table read looser); None:
              these
    one_word_peak: where given, an element of one source word goes around its likeliest
              target word and the words next to it at least this share as likely, not
              around the likeliest span of its links (placements.py: one direction's
              weights); None: that span
    """

    forward: np.ndarray
    backward: np.ndarray | None = None
    one_word: WordWeights | None = None
    one_word_peak: float | None = None

    def link_probabilities(self, first: int, stop: int) -> np.ndarray:
        """(target words,) the probability that each target word is linked to one of the
        source words first to stop − 1: each link's probability is its forward weight,
        or where there is a reverse model, the lesser of the two directions' weights (a
        link both must hold); a word is linked unless none of its links is (the links
        taken as independent). A target word whose weight lies on NULL is linked to no
        source word, and holds little for any element. One source word's are read from
        `one_word`, where given."""
        if self.one_word is not None and stop - first == 1:
            return self.one_word.link_probabilities(first, stop)
        links = self.forward[:, first:stop].astype(np.float64)
        if self.backward is not None:
            links = np.minimum(links, self.backward[first:stop].T)
        unlinked = np.log1p(-np.clip(links, 0.0, SURE)).sum(axis=1)
        return -np.expm1(unlinked)

    def window(self, first: int, stop: int) -> tuple[int, np.ndarray]:
        """The target words that source words first to stop − 1 may be linked to, as
        (the first's index, their `link_probabilities`): here every target word."""
        return 0, self.link_probabilities(first, stop)


@dataclass(frozen=True)
class JoinedWeights:
    """The word weights of consecutive pairs (a paragraph's sentences) read as one pair's:
    each pair's words follow the previous pair's, and no weight joins one pair's source
    words to another's target words. The pairs are kept apart, so that an element's words
    are weighed against the target words of their own pairs only: the memory and the time
    grow with the pairs' own sizes, not with the square of the whole."""

    parts: tuple[WordWeights, ...]

    @property
    def one_word_peak(self) -> float | None:
        """The parts' WordWeights.one_word_peak, which one placement gives them all."""
        return self.parts[0].one_word_peak if self.parts else None

    @cached_property
    def source_starts(self) -> list[int]:
        """Each pair's first source word, and after the last, their count."""
        return list(accumulate((part.forward.shape[1] for part in self.parts), initial=0))

    @cached_property
    def target_starts(self) -> list[int]:
        """Each pair's first target word, and after the last, their count."""
        return list(accumulate((part.forward.shape[0] for part in self.parts), initial=0))

    def window(self, first: int, stop: int) -> tuple[int, np.ndarray]:
        """The target words of the pairs holding source words first to stop − 1, as (the
        first's index, their `link_probabilities` for those source words)."""
        starts = self.source_starts
        low, high = bisect.bisect_right(starts, first) - 1, bisect.bisect_left(starts, stop)
        linked = [
            part.link_probabilities(max(first - start, 0), min(stop - start, part.forward.shape[1]))
            for part, start in zip(self.parts[low:high], starts[low:high], strict=True)
        ]
        return self.target_starts[low], np.concatenate(linked)


PairWeights = WordWeights | JoinedWeights
"""What `weights` placement reads: one pair's word weights, or consecutive pairs'."""

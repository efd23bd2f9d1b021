"""The soft word alignment placement reads (`PairWeights`): one pair's word weights, or
consecutive pairs' read as one, each target word's probability of being linked to an
element's source words, and the span those probabilities make likeliest
(`likeliest_hull`, `around_peak`), which placing.py places elements by."""

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


UNLINKED_INSIDE = 0.85
"""How likely a target word inside an element's span is still the element's where the
weights link it to none of its words (`likeliest_hull`): a function word or a reordered
modifier between its linked words stays in ("Type d'enregistrement"), but every such word
makes the span a little less likely, so that a weak link a sentence away does not stretch
it over the unlinked words between. Chosen on the translators' tags (BENCHMARKS.md, "A
span's unlinked words weigh against it")."""


def likeliest_hull(linked: np.ndarray) -> tuple[int, int] | None:
    """The (start, stop) of the span from the first to the last linked target word (what
    `links` placement takes) that is likeliest when each target word is linked with its
    probability in `linked`, independently of the others; None where most likely no word
    is linked. A span is as likely as its edge words being linked, every word outside it
    not, and each word inside it being linked or, where it is not, still the element's
    (`UNLINKED_INSIDE`): a weak link far from the others does not stretch it, and a word
    the weights hold is not lost for want of a hard link. Found in one pass over the
    words, keeping the likeliest start so far."""
    if not linked.size:
        return None
    linked = np.clip(linked.astype(np.float64), 1 - SURE, SURE)
    edge, outside = np.log(linked), np.log1p(-linked)
    inside = np.log(linked + (1 - linked) * UNLINKED_INSIDE)
    before = np.concatenate(([0.0], np.cumsum(outside)))  # before[k]: no word before k linked
    after = before[-1] - before[1:]  # after[k]: no word after k linked
    within = np.concatenate(([0.0], np.cumsum(inside)))  # within[k]: words before k inside a span
    starts = edge + before[:-1]  # a span's start edge and every word before it
    opened = starts - within[1:]  # a start, less the words up to it, so that within[k] adds those after it
    best_start = np.maximum.accumulate(opened)
    wider = np.full_like(starts, -np.inf)
    wider[1:] = best_start[:-1] + within[1:-1] + edge[1:] + after[1:]  # from the best earlier start to k
    alone = starts + after  # the single word k
    scores = np.maximum(wider, alone)
    stop = int(np.argmax(scores))
    if scores[stop] <= before[-1]:  # no word linked is at least as likely
        return None
    if alone[stop] >= wider[stop]:
        return stop, stop + 1
    return int(np.argmax(opened[:stop])), stop + 1


def around_peak(linked: np.ndarray, hull: tuple[int, int], share: float) -> tuple[int, int]:
    """Of the span `hull`, the run of words around its likeliest linked word (by `linked`)
    that are each at least `share` as likely: the word itself where its neighbours are
    less so ("le gouvernement a" holds "gouvernement"), all of a translation of several
    words as sure as it ("tandis que")."""
    start, stop = hull
    peak = start + int(np.argmax(linked[start:stop]))
    least = share * linked[peak]
    first, last = peak, peak + 1
    while first > start and linked[first - 1] >= least:
        first -= 1
    while last < stop and linked[last] >= least:
        last += 1
    return first, last

"""Two directions' word alignments combined into one: the heuristics of Koehn, Och &
Marcu (2003), "Statistical Phrase-Based Translation", as Koehn's *Statistical Machine
Translation* (2010, §4.5.3) gives them in pseudo-code.

A model aligns each word it writes to one source word, so a source→target model's links
are a function of the target word, and a target→source model's (read transposed) a
function of the source word. Each misses what the other catches; combining them is how
every statistical pipeline reads word alignments.

Links are (source word, target word) pairs, 0-based; both alignments must already be in
that orientation.

    intersect        links both directions have: high precision
    union            links either has: high recall
    grow-diag        the intersection, grown by neighbouring union links (the 8 around a
                     link, diagonals included) that align a word not yet aligned
    grow-diag-final  grow-diag, then any union link that aligns a word not yet aligned
                     (the forward direction's first, then the backward's)
    grow-diag-final-and
                     the same, but a final link must align two words not yet aligned

The growing visits words in order, source word then target word, and the neighbours in
Koehn's order, and sees the links it has added as it goes: that order is part of the
definition, since it decides which of two competing links comes first.

Soft combination (SOFT_METHODS) reads what each direction's links were taken from, its
word weights, instead of its argmax links (as Mask-Align, Chen et al. 2021, combines the
two directions' attention):

    soft             a link wherever the mean of the two directions' weights on it,
                     (w_fwd[t, s] + w_bwd[s, t]) / 2, reaches SOFT_THRESHOLD

A pair that both directions weigh highly is linked however many other words it has, and
one that only one direction picks, by a narrow argmax, is not.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable

import numpy as np

Link = tuple[int, int]
"""A word link, (source word, target word), both 0-based: the one definition every module
that reads or writes word alignments uses."""

NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


class _Growing:
    """An alignment being grown, with the words it aligns on each side."""

    def __init__(self, links: Iterable[Link]):
        self.links: set[Link] = set()
        self.sources: set[int] = set()
        self.targets: set[int] = set()
        for link in links:
            self.add(link)

    def add(self, link: Link) -> None:
        self.links.add(link)
        self.sources.add(link[0])
        self.targets.add(link[1])

    def grow_diag(self, union: set[Link]) -> None:
        """Add neighbouring union links that align a word not yet aligned, until none is left.

        Each pass visits the links in (source word, target word) order, a link added ahead
        of the one being visited included, as a scan over every pair of words would; it
        costs what the links cost, not the square of the sentence."""
        added = True
        while added:
            added = False
            ahead = sorted(self.links)
            while ahead:
                i, j = heapq.heappop(ahead)
                for di, dj in NEIGHBOURS:
                    new = (i + di, j + dj)
                    if new in union and new not in self.links and self._aligns_a_new_word(new, both=False):
                        self.add(new)
                        added = True
                        if new > (i, j):
                            heapq.heappush(ahead, new)

    def final(self, direction: set[Link], *, both: bool) -> None:
        """Add the direction's links that align a word not yet aligned (`both`: two such
        words), visiting them in (source word, target word) order."""
        for link in sorted(direction):
            if link not in self.links and self._aligns_a_new_word(link, both=both):
                self.add(link)

    def _aligns_a_new_word(self, link: Link, *, both: bool) -> bool:
        new_source, new_target = link[0] not in self.sources, link[1] not in self.targets
        return (new_source and new_target) if both else (new_source or new_target)


def _grown(forward: set[Link], backward: set[Link], final: str | None) -> set[Link]:
    growing = _Growing(forward & backward)
    growing.grow_diag(forward | backward)
    if final is not None:
        for direction in (forward, backward):
            growing.final(direction, both=final == "and")
    return growing.links


DEFAULT_METHOD = "grow-diag-final-and"  # the usual choice of statistical pipelines
METHODS: dict[str, Callable[[set[Link], set[Link]], set[Link]]] = {
    "intersect": lambda forward, backward: forward & backward,
    "union": lambda forward, backward: forward | backward,
    "grow-diag": lambda forward, backward: _grown(forward, backward, None),
    "grow-diag-final": lambda forward, backward: _grown(forward, backward, "or"),
    "grow-diag-final-and": lambda forward, backward: _grown(forward, backward, "and"),
}
"""Each heuristic, by the name the CLI and the statistical tools give it."""

SOFT_THRESHOLD = 0.5
"""The mean weight at which `soft` links two words: chosen on the first half of the
Hansards pairs against their human links, and reported on the other half (BENCHMARKS.md,
"Alignments of text the module never saw links for"). At 0.5 a link needs the two
directions' weights to sum to 1: both at least halfway, or one of them sure."""


def _soft_mean(forward: np.ndarray, backward: np.ndarray) -> set[Link]:
    mean = (forward + backward) / 2
    return {(int(source), int(target)) for target, source in zip(*np.nonzero(mean >= SOFT_THRESHOLD), strict=True)}


SOFT_METHODS: dict[str, Callable[[np.ndarray, np.ndarray], set[Link]]] = {"soft": _soft_mean}
"""Each soft combination, by name: from the forward direction's (target words × source
words) weights and the backward direction's read transposed (the same shape), the links."""

COMBINATIONS = (*METHODS, *SOFT_METHODS)
"""What a pair's two directions can be combined by where both directions' weights are at
hand (`align --reverse`, `Translator.align(reverse=…)`); links alone (eflomal's) take METHODS."""


def symmetrise(
    forward: Iterable[Link],
    backward: Iterable[Link],
    *,
    source_length: int,
    target_length: int,
    method: str = DEFAULT_METHOD,
) -> list[Link]:
    """One sentence pair's links from both directions, combined by `method`, sorted.

    `forward` comes from the source→target model, `backward` from the target→source one,
    both as (source word, target word); the pair has `source_length` and `target_length`
    words, and every link must fall within them.
    """
    if method not in METHODS:
        raise ValueError(f"unknown symmetrisation {method!r}; choose from {', '.join(METHODS)}")
    forward, backward = set(forward), set(backward)
    for i, j in forward | backward:
        if not (0 <= i < source_length and 0 <= j < target_length):
            raise ValueError(f"link {i}-{j} lies outside a pair of {source_length} and {target_length} words")
    return sorted(METHODS[method](forward, backward))


def symmetrise_weights(forward: np.ndarray, backward: np.ndarray, *, method: str) -> list[Link]:
    """One sentence pair's links from both directions' word weights, combined by the soft
    `method` (SOFT_METHODS), sorted: `forward` (target words × source words) of the
    source→target model, `backward` (source words × target words) of the target→source one."""
    if method not in SOFT_METHODS:
        raise ValueError(f"unknown soft combination {method!r}; choose from {', '.join(SOFT_METHODS)}")
    forward, backward = np.asarray(forward, dtype=np.float64), np.asarray(backward, dtype=np.float64).T
    if forward.shape != backward.shape:
        raise ValueError(f"the directions' weights differ in shape: {forward.shape} and {backward.shape} transposed")
    return sorted(SOFT_METHODS[method](forward, backward))

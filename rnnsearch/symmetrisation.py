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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

Link = tuple[int, int]

NEIGHBOURS = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


class _Growing:
    """An alignment being grown, with the words it aligns on each side."""

    def __init__(self, links: Iterable[Link], source_length: int, target_length: int):
        self.links: set[Link] = set()
        self.sources: set[int] = set()
        self.targets: set[int] = set()
        self.source_length, self.target_length = source_length, target_length
        for link in links:
            self.add(link)

    def add(self, link: Link) -> None:
        self.links.add(link)
        self.sources.add(link[0])
        self.targets.add(link[1])

    def every_pair(self) -> Iterable[Link]:
        return ((i, j) for i in range(self.source_length) for j in range(self.target_length))

    def grow_diag(self, union: set[Link]) -> None:
        """Add neighbouring union links that align a word not yet aligned, until none is left."""
        added = True
        while added:
            added = False
            for i, j in self.every_pair():
                if (i, j) not in self.links:
                    continue
                for di, dj in NEIGHBOURS:
                    new = (i + di, j + dj)
                    if new in union and new not in self.links and self._aligns_a_new_word(new, both=False):
                        self.add(new)
                        added = True

    def final(self, direction: set[Link], *, both: bool) -> None:
        """Add the direction's links that align a word not yet aligned (`both`: two such words)."""
        for link in self.every_pair():
            if link in direction and link not in self.links and self._aligns_a_new_word(link, both=both):
                self.add(link)

    def _aligns_a_new_word(self, link: Link, *, both: bool) -> bool:
        new_source, new_target = link[0] not in self.sources, link[1] not in self.targets
        return (new_source and new_target) if both else (new_source or new_target)


def _grown(forward: set[Link], backward: set[Link], lengths: tuple[int, int], final: str | None) -> set[Link]:
    growing = _Growing(forward & backward, *lengths)
    growing.grow_diag(forward | backward)
    if final is not None:
        for direction in (forward, backward):
            growing.final(direction, both=final == "and")
    return growing.links


DEFAULT_METHOD = "grow-diag-final-and"  # the usual choice of statistical pipelines
METHODS: dict[str, Callable[[set[Link], set[Link], tuple[int, int]], set[Link]]] = {
    "intersect": lambda forward, backward, lengths: forward & backward,
    "union": lambda forward, backward, lengths: forward | backward,
    "grow-diag": lambda forward, backward, lengths: _grown(forward, backward, lengths, None),
    "grow-diag-final": lambda forward, backward, lengths: _grown(forward, backward, lengths, "or"),
    "grow-diag-final-and": lambda forward, backward, lengths: _grown(forward, backward, lengths, "and"),
}
"""Each heuristic, by the name the CLI and the statistical tools give it."""


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
    return sorted(METHODS[method](forward, backward, (source_length, target_length)))

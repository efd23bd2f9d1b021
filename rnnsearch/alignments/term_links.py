"""Word links a translation was made to have: a term the search wrote because the user's
glossary asked for it is the translation of the source words it was found on, whatever
the weights say, so those are its target words' only links (and so the words that
place the source's markup on it: a bold source term gives a bold target term)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

TermLink = tuple[tuple[int, ...], tuple[int, ...]]
"""Source word indices and the target word indices written for them."""


def linked(
    weights: np.ndarray, pairs: list[tuple[int, int]], links: Sequence[TermLink]
) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """`weights` (target words × source words) and the (source, target) `pairs` with each
    link's target words linked to its source words alone, their weight spread evenly."""
    if not links:
        return weights, pairs
    weights = weights.copy()
    forced: set[tuple[int, int]] = set()
    for sources, targets in links:
        for target in targets:
            weights[target] = 0.0
            weights[target, list(sources)] = 1.0 / len(sources)
            forced.update((source, target) for source in sources)
    written = {target for _, targets in links for target in targets}
    return weights, sorted({pair for pair in pairs if pair[1] not in written} | forced)

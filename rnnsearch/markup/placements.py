"""Placements by name: how an element's words are found among the target's, by the word
links or by the alignment's weights (placing.py), and how those weights are read (one
direction's, two directions' lesser or mean, and a module's jump table at which strength).
`PLACEMENTS` is the one registry: the command's `--placement`, the API's and the server's
`placement` name its entries, and rnnsearch.markup.chosen_placement picks the default."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rnnsearch.alignments.counted_jumps import PLACING, Temper
from rnnsearch.markup.weights import WordWeights


@dataclass(frozen=True)
class Placement:
    """How an element's words are found in the target, by name (PLACEMENTS).

    by_weights: False: the words from the first to the last linked to one of its words;
                True: the span those links most probably have, read as probabilities
                from the alignment's weights (`WordWeights`, `likeliest_hull`)
    mean:       with two directions, a link's probability is the mean of their weights (a
                word either holds stays in), not the lesser (a link both must hold)
    temper:     how an alignment module's counted jump table is read (counted_jumps.py):
                None, as counted; else at that power and floor, which also gives the
                links the call writes
    """

    name: str
    by_weights: bool
    mean: bool = False
    temper: Temper | None = None

    def weights(self, forward: np.ndarray, backward: np.ndarray | None = None) -> WordWeights | None:
        """What this placement reads of a pair's word weights: `forward` (target words ×
        source words) and a reverse model's `backward` (source words × target words, or
        None); None where it places by the links alone."""
        if not self.by_weights:
            return None
        if backward is None:
            return WordWeights(forward)
        return WordWeights((forward + backward.T) / 2) if self.mean else WordWeights(forward, backward)

    def __str__(self) -> str:
        return self.name


PLACEMENTS = {
    placement.name: placement
    for placement in (
        Placement("links", by_weights=False),
        Placement("weights", by_weights=True),
        Placement("averaged", by_weights=True, mean=True),
        Placement("tempered", by_weights=True, mean=True, temper=PLACING),
    )
}
"""The placements by name: `links`; `weights` (two directions' lesser); `averaged` (two
directions' mean); `tempered`, `averaged` over a module's jump table read at the power and
floor that place translators' tags best (counted_jumps.PLACING). The defaults
(rnnsearch.markup.chosen_placement) and their measures are in docs/guides/markup.md."""

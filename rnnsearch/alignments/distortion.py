"""Word weights read with a contiguity prior: which source word each target word comes
from, given both what the rows say of that word alone and where its neighbours come from.

A row of word weights (words.py, `merge`) aligns each target word on its own: two source
words that both translate it (a repeated "the", "de" before two nouns) split its weight,
and nothing prefers the one next to where the word before it came from. Statistical
aligners settle this with a distortion model, the HMM of Vogel, Ney & Tillmann (1996)
that eflomal also uses: the source word a_i of target word i depends on a_{i-1} through a
jump distribution. Here the rows are its emissions and the jump prior is fixed:

    p(a_i = s | a_{i-1} = p) ∝ max(exp(−λ (|s − p| − 1)), φ)   for s ≠ p
                             ∝ κ                                  for s = p
    p(a_i = ∅ | a_{i-1} = p) = ν

with p = −1 before the first word. A jump to either neighbour costs nothing, a longer one
λ per word more, down to the floor φ, staying on the same source word costs κ (words
mostly move on), and ∅, "no source word", has probability ν and remembers p, so that the
word after a NULL word jumps from the last linked one (Och & Ney 2003). The prior is
symmetric: a jump back weighs what a jump ahead does, so no word order is preferred. The
floor bounds what any jump costs, so that a word the rows are sure of keeps its link
however far it jumps (a German verb at the end of its clause; `sure_link_posterior`).

The forward–backward algorithm gives each target word's posterior over the source words
and ∅, which replaces its row; the links are then read from it as before (words.py,
`hard_alignment`). `posteriors` computes those of many pairs together, padded into
chunks of like sizes, as `align` reads the pairs of a call. The prior decides what the
rows leave open, and the floor keeps it from overruling what they are sure of.
BENCHMARKS.md ("A contiguity prior at alignment time") has what it gains and how λ, κ,
ν and φ were chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

FLOOR = 1e-6  # the least emission: a word's row may put (almost) nothing on a source word or on ∅


class Jumps(Protocol):
    """What the forward–backward algorithm reads of a jump prior: the probability of ∅
    and, for a pair of `sources` words, that of each jump (`JumpPrior.moves`); a fixed
    prior (`JumpPrior`) or one counted from a module's links (counted_jumps.py)."""

    @property
    def null(self) -> float: ...

    def moves(self, sources: int) -> np.ndarray: ...


@dataclass(frozen=True)
class JumpPrior:
    """The jump prior: `decay` λ per word of a jump beyond the next one, `stay` κ, the
    weight of staying on the same source word, and `floor` φ, the least weight of any
    jump, each beside a neighbour's 1; `null` ν, the probability of ∅."""

    decay: float
    stay: float
    null: float
    floor: float

    def moves(self, sources: int) -> np.ndarray:
        """(sources + 1, sources): the probability of linking each source word s from each
        last linked word p, p = −1 (none yet) to sources − 1; each row sums to 1 − ν."""
        previous = np.arange(-1, sources)[:, None]
        jump = np.abs(np.arange(sources)[None, :] - previous)
        weights = np.where(jump == 0, self.stay, np.maximum(np.exp(-self.decay * (jump - 1.0)), self.floor))
        return weights / weights.sum(axis=1, keepdims=True) * (1.0 - self.null)


CONTIGUITY = JumpPrior(decay=0.5, stay=0.1, null=0.1, floor=0.05)
"""The prior the alignment module's word weights are read with (readings.py): of the
priors that keep a word the rows are 99% sure of on its word at any distance
(`sure_link_posterior` at least 1/2), the best on one half of the Hansards pairs against
their human links, reported on the other half (BENCHMARKS.md)."""


def sure_link_posterior(prior: Jumps, *, jump: int, sure: float = 0.99) -> float:
    """What `prior` leaves of a link the rows are `sure` of, `jump` words away: five target
    words whose rows link them for certain to source words 0, 1, −, 2, 3, the middle one's
    putting `sure` on word 3 + `jump` and the rest on word 2, where its neighbours would
    have it; its posterior on word 3 + `jump`. Below 1/2, the prior moves the link."""
    weights = np.zeros((5, 4 + jump))
    for target, source in ((0, 0), (1, 1), (3, 2), (4, 3)):
        weights[target, source] = 1.0
    weights[2, 3 + jump], weights[2, 2] = sure, 1.0 - sure
    linked, _ = posterior(weights, None, prior)
    return float(linked[2, 3 + jump])


def posterior(weights: np.ndarray, null: np.ndarray | None, prior: Jumps) -> tuple[np.ndarray, np.ndarray]:
    """Each target word's posterior over the source words (target words × source words)
    and over ∅ (target words,), from its row of `weights` and its mass on NULL (`null`;
    None: none) as emissions and `prior`'s jumps, by the forward–backward algorithm.

    A state is the word a target word links to, or ∅ together with the last linked word
    before it, so that a jump is always measured from a linked word; each step's forward
    mass is rescaled to sum to 1, and the backward pass divides by the same scales."""
    weights = np.asarray(weights, dtype=np.float64)
    if not weights.size:
        return weights, np.zeros(len(weights)) if null is None else np.asarray(null, dtype=np.float64)
    return _padded_posteriors([(weights, null)], prior)[0]


CHUNK = 256  # pairs whose posteriors are computed together: like sizes, padded to the largest


def posteriors(
    rows: Sequence[tuple[np.ndarray, np.ndarray | None]], prior: Jumps
) -> list[tuple[np.ndarray, np.ndarray]]:
    """`posterior` of each pair's (word weights, NULL mass), computed together: the pairs,
    sorted by size, are padded to one array a chunk at a time, so that the steps of the
    forward–backward algorithm run once for a chunk instead of once for each pair."""
    done = {k: posterior(weights, null, prior) for k, (weights, null) in enumerate(rows) if not np.size(weights)}
    sized = sorted((k for k in range(len(rows)) if k not in done), key=lambda k: np.shape(rows[k][0]))
    for start in range(0, len(sized), CHUNK):
        chunk = sized[start : start + CHUNK]
        done |= dict(zip(chunk, _padded_posteriors([rows[k] for k in chunk], prior), strict=True))
    return [done[k] for k in range(len(rows))]


def _padded_posteriors(
    rows: Sequence[tuple[np.ndarray, np.ndarray | None]], prior: Jumps
) -> list[tuple[np.ndarray, np.ndarray]]:
    """`posterior` of pairs of at least one target and one source word each, padded to
    one array. Padded source words emit nothing, so they are never linked; padded target
    words emit 1 for every source word and for ∅, so that each of their steps passes on
    all its mass (its scale is 1) and the backward pass reaches a pair's last target word
    as if it started there."""
    shapes = [np.shape(weights) for weights, _ in rows]
    count, targets, sources = len(rows), max(t for t, _ in shapes), max(s for _, s in shapes)
    emitted, emitted_null = np.ones((count, targets, sources)), np.ones((count, targets))
    moves = np.zeros((count, sources + 1, sources))
    for k, ((weights, null), (t, s)) in enumerate(zip(rows, shapes, strict=True)):
        emitted[k, :, s:] = 0.0
        emitted[k, :t, :s] = np.maximum(np.asarray(weights, dtype=np.float64), FLOOR)
        emitted_null[k, :t] = FLOOR if null is None else np.maximum(np.asarray(null, dtype=np.float64), FLOOR)
        moves[k, : s + 1, :s] = prior.moves(s)
    linked, unlinked, scales = (
        np.zeros(emitted.shape),
        np.zeros((count, targets, sources + 1)),
        np.zeros((count, targets)),
    )
    last = np.zeros((count, sources + 1))
    last[:, 0] = 1.0
    for i in range(targets):
        linked[:, i] = emitted[:, i] * np.einsum("np,nps->ns", last, moves)
        unlinked[:, i] = (emitted_null[:, i] * prior.null)[:, None] * last
        scales[:, i] = linked[:, i].sum(axis=1) + unlinked[:, i].sum(axis=1)
        linked[:, i] /= scales[:, i, None]
        unlinked[:, i] /= scales[:, i, None]
        last = unlinked[:, i].copy()
        last[:, 1:] += linked[:, i]
    after = np.ones((count, targets, sources + 1))
    for i in range(targets - 2, -1, -1):
        ahead = np.einsum("nps,ns->np", moves, emitted[:, i + 1] * after[:, i + 1, 1:])
        ahead += (prior.null * emitted_null[:, i + 1])[:, None] * after[:, i + 1]
        after[:, i] = ahead / scales[:, i + 1, None]
    word, nothing = linked * after[:, :, 1:], (unlinked * after).sum(axis=2)
    return [(word[k, :t, :s], nothing[k, :t]) for k, (t, s) in enumerate(shapes)]

"""A jump prior counted from an alignment module's own links, in place of the fixed
symmetric `CONTIGUITY` (distortion.py), so that the prior fits the word order of the
language pair the module learnt.

`CONTIGUITY` weighs a jump back as it weighs a jump ahead: it cannot know that French
adjectives follow their nouns or that German verbs close their clauses. The module's own
links of the text it learnt from can: once it is trained, it aligns the first pairs of
that text (read with `CONTIGUITY`), and for every linked target word after the first the
jump from the last source word linked before it to the first it links is counted
(`jump_counts`). The counts of jumps of −FARTHEST to FARTHEST words become a table
(`JumpTable.counted`): a jump of d words weighs its count over the count of +1, staying
(d = 0) its own count, any jump at least `FLOOR`, and ∅ keeps `CONTIGUITY`'s ν. The floor
keeps a link the rows are sure of wherever it jumps (`sure_link_posterior`: a counted
English→French table leaves 0.85 of a 99%-sure link 10 words away, 0.75 at 40).

The table is written beside the module's weights (rnnsearch/files/model_directory.py,
`aligner/jumps.json`, with the digest of the weights it was counted from) and read with
its rows wherever they are read (words.py). BENCHMARKS.md ("A jump prior counted from the
module's own links") has what it gains.

A table counted from nearly monotone text (captions) holds the rows of text that reorders
more (help text's reversed noun phrases: "Record Type" as "Type d'enregistrement") on the
monotone path. Markup is placed with the table read at a power below 1 (`Temper`,
`PLACING`): its jumps weigh more alike, and a higher floor keeps half of a sure link at any
distance. BENCHMARKS.md ("Tags where people put them, decided") has what it gains there
and what it costs on the Hansards' synthetic spans.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rnnsearch.alignments.distortion import CONTIGUITY, Jumps

FARTHEST = 12  # the longest jump counted, either way; longer ones weigh the floor
FLOOR = 0.02  # the least weight of any jump, beside +1's 1 (chosen in BENCHMARKS.md)
LEAST_JUMPS = 100  # fewer counted jumps make no table: the module reads with CONTIGUITY
HEAVIEST = 1e9
"""The largest weight a table holds: a jump counted this many times as often as +1 is far
beyond what the pairs a module counts from give (jobs/module_run.py, COUNTED_PAIRS), and 25
such weights still sum to a finite number."""


@dataclass(frozen=True)
class JumpTable:
    """A jump prior (as distortion.JumpPrior, `moves` and `null`) whose jumps of −FARTHEST
    to FARTHEST words weigh `weights` (+1's is 1), any jump at least `floor`, and whose ∅
    has probability `null`."""

    weights: tuple[float, ...]
    null: float = CONTIGUITY.null
    floor: float = FLOOR

    def __post_init__(self) -> None:
        check_weights(self.weights)

    @classmethod
    def counted(cls, counts: np.ndarray) -> JumpTable | None:
        """The table of `counts` (`jump_counts`), or None for fewer than LEAST_JUMPS
        jumps or none of +1, too few to say which way the language pair moves."""
        counts = np.asarray(counts, dtype=np.float64)
        if counts.sum() < LEAST_JUMPS or not counts[FARTHEST + 1]:
            return None
        return cls(tuple(float(w) for w in counts / counts[FARTHEST + 1]))

    def moves(self, sources: int) -> np.ndarray:
        """(sources + 1, sources): the probability of linking each source word s from each
        last linked word p, p = −1 (none yet) to sources − 1; each row sums to 1 − ν."""
        previous = np.arange(-1, sources)[:, None]
        jump = np.arange(sources)[None, :] - previous
        table = np.asarray(self.weights)
        counted = np.where(np.abs(jump) <= FARTHEST, table[np.clip(jump, -FARTHEST, FARTHEST) + FARTHEST], 0.0)
        weights = np.maximum(counted, self.floor)
        return weights / weights.sum(axis=1, keepdims=True) * (1.0 - self.null)


@dataclass(frozen=True)
class Temper:
    """How a counted table is read: each weight raised to `power`, any jump at least `floor`."""

    power: float
    floor: float

    def read(self, table: JumpTable) -> JumpTable:
        """`table` read at this power and floor (+1's weight stays 1)."""
        return JumpTable(tuple(weight**self.power for weight in table.weights), table.null, self.floor)


def prior_read(fixed: Jumps | None, counted: Jumps | None, temper: Temper | None = None) -> Jumps | None:
    """The jump prior rows are read with: none where what they come from has no `fixed`
    prior (the attention), else the table their module `counted` (read as `temper` says,
    where one is given), or failing one the `fixed` prior (AlignmentSource.prior)."""
    if fixed is None:
        return None
    if counted is None:
        return fixed
    return temper.read(counted) if temper is not None and isinstance(counted, JumpTable) else counted


PLACING = Temper(power=0.5, floor=0.04)
"""How markup placement reads a module's table (chosen on the translators' help segments
and the EUR-Lex dev set, BENCHMARKS.md): the power 0.5 lets reordered phrases keep their
words, the floor 0.04 keeps half of a link the rows are 99% sure of 40 words away."""

PLACING_ONE_WORD = Temper(power=0.25, floor=0.04)
"""How it reads the table for an element of one source word (a term, a label): looser
still, since one word's translation has no neighbours of its own to keep together, and
goes where the rows put it, an adjective's after its noun (chosen on the same dev sets:
BENCHMARKS.md, "One word, read looser")."""


def modules_table(counted: Sequence[Sequence[float] | None]) -> JumpTable | None:
    """The table rows are read with that are the mean of modules whose tables' weights
    are `counted` (an ensemble's): the mean of those weights; None where a module counted
    none, or where there is no module (their rows are then read with CONTIGUITY)."""
    if not counted or any(weights is None for weights in counted):
        return None
    return JumpTable(tuple(float(w) for w in np.mean(np.asarray(counted, dtype=np.float64), axis=0)))


def check_weights(weights: Sequence[float]) -> None:
    """Refuse a table's weights that are not 2·FARTHEST + 1 numbers from 0 to HEAVIEST
    with +1's 1: a ValueError that says which."""
    if len(weights) != 2 * FARTHEST + 1:
        raise ValueError(f"{len(weights)} jump weights, not {2 * FARTHEST + 1} (jumps of −{FARTHEST} to +{FARTHEST})")
    if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and 0 <= w <= HEAVIEST for w in weights):
        raise ValueError(f"jump weights must be numbers from 0 to {HEAVIEST:g}")
    if weights[FARTHEST + 1] != 1:
        raise ValueError(f"the weight of a jump of +1 is {weights[FARTHEST + 1]}, not 1")


def jump_counts(alignments: Iterable[Sequence[tuple[int, int]]]) -> np.ndarray:
    """How often each jump of −FARTHEST to FARTHEST words is made in `alignments` (each a
    pair's (source word, target word) links): from the last source word linked before a
    target word to the first it links, for each linked target word after the first."""
    counts = np.zeros(2 * FARTHEST + 1)
    for links in alignments:
        linked: dict[int, list[int]] = {}
        for source, target in links:
            linked.setdefault(target, []).append(source)
        targets = sorted(linked)
        for before, target in zip(targets, targets[1:]):
            jump = min(linked[target]) - max(linked[before])
            if abs(jump) <= FARTHEST:
                counts[jump + FARTHEST] += 1
    return counts

"""Placements by name: how an element's words are found among the target's, by the word
links or by the alignment's weights (placing.py), and how those weights are read (one
direction's, two directions' lesser or mean, and a module's jump table at which strength).
`PLACEMENTS` is the one registry: the command's `--placement`, the API's and the server's
`placement` name its entries, and rnnsearch.markup.chosen_placement picks the default."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from rnnsearch.alignments.counted_jumps import PLACING, PLACING_ONE_WORD, Temper
from rnnsearch.alignments.words import Attended, WordAlignment, align_translations, jump_prior
from rnnsearch.markup.weights import WordWeights

ONE_DIRECTION_PEAK = 0.8
"""With one direction's weights, an element of one source word (a term, a label) goes
around its likeliest target word and the words beside it at least this share as likely
(WordWeights.one_word_peak), not around the likeliest span of its links. A model's rows
read alone give a function word next to a term's translation ("le gouvernement a", "rester
stable") more than even odds of being its; the reverse direction's rows, averaged in with
two directions, do not. Chosen on the EUR-Lex glossary and help dev sets (BENCHMARKS.md,
"One word around its likeliest word, with one direction")."""


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
    one_word:   how the table is read for the weights an element of one source word is
                placed by; None: as `temper` says
    """

    name: str
    by_weights: bool
    mean: bool = False
    temper: Temper | None = None
    one_word: Temper | None = None

    def read(self, translations: Sequence[Attended], *, reading: str) -> list[Reading]:
        """Each translation's word alignment read as this placement reads a module's rows
        (`temper`), with the word weights of its rows read as `one_word` says where that
        reads them otherwise (None: where it does not, as for rows read without a table)."""
        aligned = align_translations(translations, reading=reading, temper=self.temper)
        one_word = self.one_word
        if (
            not self.by_weights
            or one_word is None
            or not any(
                jump_prior(translation, one_word) != jump_prior(translation, self.temper)
                for translation in translations
            )
        ):
            return [Reading(words) for words in aligned]
        by_word = align_translations(translations, reading=reading, temper=one_word)
        return [Reading(words, word.weights) for words, word in zip(aligned, by_word, strict=True)]

    def weights(self, forward: Reading, backward: Reading | None = None) -> WordWeights | None:
        """What this placement reads of a pair's readings (`read`): the `forward` model's,
        and a reverse model's `backward` (or None); None where it places by the links alone."""
        if not self.by_weights:
            return None
        whole = self._combined(forward.words.weights, None if backward is None else backward.words.weights)
        if backward is None:
            whole = replace(whole, one_word_peak=ONE_DIRECTION_PEAK)
        if forward.one_word is None and (backward is None or backward.one_word is None):
            return whole
        one_word = self._combined(forward.of_one_word, None if backward is None else backward.of_one_word)
        return replace(whole, one_word=one_word)

    def _combined(self, forward: np.ndarray, backward: np.ndarray | None) -> WordWeights:
        """`forward` (target words × source words) and a reverse model's `backward` (source
        words × target words, or None), taken together: their mean, or both kept where a
        link is the lesser of the two."""
        if backward is None:
            return WordWeights(forward)
        return WordWeights((forward + backward.T) / 2) if self.mean else WordWeights(forward, backward)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Reading:
    """One pair's word alignment as a placement reads it (`Placement.read`): its `words`,
    and the word weights an element of one source word is placed by where they are read
    otherwise (`one_word`, target words × source words; None: those of `words`)."""

    words: WordAlignment
    one_word: np.ndarray | None = None

    @property
    def of_one_word(self) -> np.ndarray:
        """The word weights an element of one source word is placed by."""
        return self.words.weights if self.one_word is None else self.one_word


PLACEMENTS = {
    placement.name: placement
    for placement in (
        Placement("links", by_weights=False),
        Placement("weights", by_weights=True),
        Placement("averaged", by_weights=True, mean=True),
        Placement("tempered", by_weights=True, mean=True, temper=PLACING, one_word=PLACING_ONE_WORD),
    )
}
"""The placements by name: `links`; `weights` (two directions' lesser); `averaged` (two
directions' mean); `tempered`, `averaged` over a module's jump table read at the power and
floor that place translators' tags best (counted_jumps.PLACING, and PLACING_ONE_WORD for an
element of one word). The defaults
(rnnsearch.markup.chosen_placement) and their measures are in docs/guides/markup.md."""

"""Repeated words: how often a translation says again what it already said, and the
reference does not.

Attention without memory of what it has covered translates a phrase twice ("running
across a white fence in front of a white fence"); coverage is meant to stop that. This
counts it, the same way for every system:

1. Hypothesis and reference are cut into tokens by sacreBLEU's 13a tokenizer (the one
   BLEU uses), lowercased, and only words are kept: tokens with a letter or digit.
2. For n = 1 and n = 2, an n-gram may occur in the hypothesis as often as in the
   reference, and at least once. Each occurrence past that, counted from the left,
   is a repetition.
3. A word is repeated when a repetition covers it. The figure is repeated words per
   100 hypothesis words, summed over a corpus.

So "a white fence in front of a white fence" against a reference with one "white
fence" and one "a" repeats three words ("a white fence", the second time); a
reference that says "a" twice lowers that to two.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

ORDERS = (1, 2)


@dataclass(frozen=True)
class Repetitions:
    """Repeated words over a corpus: `repeated` of `words` hypothesis words."""

    repeated: int
    words: int

    @property
    def per_100_words(self) -> float:
        """Repeated words per 100 hypothesis words (0 for no words)."""
        return 100 * self.repeated / self.words if self.words else 0.0


@cache
def _tokenizer():
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()


def words(text: str) -> list[str]:
    """`text`'s words as counted here: 13a tokens, lowercased, those with a letter or digit."""
    return [token for token in _tokenizer()(text.lower()).split() if any(c.isalnum() for c in token)]


def repeated_positions(hypothesis: Sequence[str], reference: Sequence[str]) -> set[int]:
    """The positions of `hypothesis`'s words (both lists already `words`) that a
    repetition covers: an occurrence of a 1- or 2-gram past the number of times the
    reference has it (at least one)."""
    positions: set[int] = set()
    for n in ORDERS:
        allowed = Counter(tuple(reference[k : k + n]) for k in range(len(reference) - n + 1))
        seen: Counter = Counter()
        for start in range(len(hypothesis) - n + 1):
            gram = tuple(hypothesis[start : start + n])
            seen[gram] += 1
            if seen[gram] > max(allowed[gram], 1):
                positions.update(range(start, start + n))
    return positions


def repetitions(hypotheses: Sequence[str], references: Sequence[str]) -> Repetitions:
    """The corpus's repeated words, each hypothesis against its reference."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    repeated = total = 0
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        said = words(hypothesis)
        repeated += len(repeated_positions(said, words(reference)))
        total += len(said)
    return Repetitions(repeated=repeated, words=total)

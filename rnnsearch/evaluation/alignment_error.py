"""Word alignments scored against human ones: the alignment error rate of Och & Ney (2003).

Human alignments mark each link as sure (S: the annotators agree it must be there) or
possible (P: it may be there); every sure link is also possible, S ⊆ P. For predicted
links A, summed over every sentence pair of a corpus:

    precision = |A ∩ P| / |A|
    recall    = |A ∩ S| / |S|
    AER       = 1 − (|A ∩ S| + |A ∩ P|) / (|A| + |S|)

A ratio whose denominator is 0 has nothing to be wrong about: precision with no
predicted link and recall with no sure link are 1, and so AER is 0 when there are
neither. Scores are reported in percent.

Gold files hold one line per sentence pair, in the order of the corpus: `i-j` for a
sure link and `ipj` or `i?j` for a possible one, i the source word and j the target
word, 0-based (the shared tasks' files are 1-based: `one_based=True`). An empty line is
a pair without links.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from rnnsearch.alignments.symmetrisation import Link
from rnnsearch.errors import UserError
from rnnsearch.text.corpus import stream_lines

_LINK = re.compile(r"(\d+)([-p?])(\d+)", re.ASCII)  # ASCII digits: int() reads "٣" as 3
MAX_WORD_DIGITS = 9
"""The most digits a word number may have: far more words than any sentence holds, and
few enough that a number is never too long for Python to read."""
_SHOWN = 40  # characters of a bad token an error shows


@dataclass(frozen=True)
class GoldLinks:
    """One sentence pair's human links; `possible` holds the sure ones too."""

    sure: frozenset[Link]
    possible: frozenset[Link]


@dataclass(frozen=True)
class AlignmentScore:
    """AER, precision and recall in percent, over `pairs` sentence pairs with `links`
    predicted links."""

    aer: float
    precision: float
    recall: float
    pairs: int
    links: int

    def __str__(self) -> str:
        return (
            f"AER {self.aer:.1f}  precision {self.precision:.1f}  recall {self.recall:.1f}  "
            f"({self.pairs:,} pairs, {self.links:,} links)"
        )

    def as_dict(self) -> dict[str, float | int]:
        return {
            "aer": round(self.aer, 2),
            "precision": round(self.precision, 2),
            "recall": round(self.recall, 2),
            "pairs": self.pairs,
            "links": self.links,
        }


def parse_gold_line(line: str, *, one_based: bool = False, where: str = "gold") -> GoldLinks:
    """The links of one gold line; a malformed token, or 0 in a 1-based file, is a
    UserError naming `where` and the token."""
    sure: set[Link] = set()
    possible: set[Link] = set()
    for token in line.split():
        match = _LINK.fullmatch(token)
        if match is None:
            raise UserError(f"{where}: {_shown(token)} is not a link; write i-j (sure) or ipj / i?j (possible)")
        if max(len(match.group(1)), len(match.group(3))) > MAX_WORD_DIGITS:
            raise UserError(f"{where}: {_shown(token)} has a word number of more than {MAX_WORD_DIGITS} digits")
        source, target = int(match.group(1)) - one_based, int(match.group(3)) - one_based
        if source < 0 or target < 0:
            raise UserError(f"{where}: {token!r} has a word 0, but the file is read as 1-based")
        possible.add((source, target))
        if match.group(2) == "-":
            sure.add((source, target))
    return GoldLinks(frozenset(sure), frozenset(possible))


def _shown(token: str) -> str:
    """A token as an error shows it: quoted, and cut short if it is long."""
    return repr(token) if len(token) <= _SHOWN else repr(token[:_SHOWN]) + f"… ({len(token):,} characters)"


def read_gold(path: str | Path, *, one_based: bool = False) -> list[GoldLinks]:
    """Every line of a gold file (plain or .gz), in order (see the module docstring for
    the format); a file that cannot be read is a UserError as for every corpus file."""
    return list(stream_gold(path, one_based=one_based))


def stream_gold(path: str | Path, *, one_based: bool = False) -> Iterator[GoldLinks]:
    """The lines of a gold file as `read_gold` reads them, one at a time, the file read a
    chunk at a time: what a command that compares them with pairs as they come uses."""
    lines = stream_lines(path)
    return (
        parse_gold_line(line, one_based=one_based, where=f"{path}: line {number}")
        for number, line in enumerate(lines, start=1)
    )


def check_within(gold: GoldLinks, source_words: int, target_words: int, *, where: str) -> None:
    """A UserError naming `where` and the link if a link falls outside a pair of
    `source_words` and `target_words` words."""
    for source, target in sorted(gold.possible):
        if source >= source_words or target >= target_words:
            raise UserError(
                f"{where}: link {source}-{target} (0-based) lies outside a pair of {source_words} source "
                f"and {target_words} target words"
            )


@dataclass
class AlignmentCounts:
    """The link counts an alignment error rate is made of, added up a pair at a time."""

    pairs: int = 0
    found: int = 0
    sure: int = 0
    matched_sure: int = 0
    matched_possible: int = 0

    def add(self, links: Iterable[Link], human: GoldLinks) -> None:
        """Count one sentence pair's predicted `links` against its `human` ones."""
        links = set(links)
        self.pairs += 1
        self.found += len(links)
        self.sure += len(human.sure)
        self.matched_sure += len(links & human.sure)
        self.matched_possible += len(links & human.possible)

    def score(self) -> AlignmentScore:
        """AER, precision and recall of the pairs counted so far."""
        return AlignmentScore(
            aer=100.0 * (1.0 - _ratio(self.matched_sure + self.matched_possible, self.found + self.sure)),
            precision=100.0 * _ratio(self.matched_possible, self.found),
            recall=100.0 * _ratio(self.matched_sure, self.sure),
            pairs=self.pairs,
            links=self.found,
        )


def alignment_error_rate(predicted: Sequence[Iterable[Link]], gold: Sequence[GoldLinks]) -> AlignmentScore:
    """AER, precision and recall of `predicted` links against `gold`, one entry per sentence
    pair, counted over the whole corpus."""
    if len(predicted) != len(gold):
        raise ValueError(f"{len(predicted)} predicted alignments but {len(gold)} gold ones")
    counts = AlignmentCounts()
    for links, human in zip(predicted, gold):
        counts.add(links, human)
    return counts.score()


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 1.0

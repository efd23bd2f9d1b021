"""What translation and the scoring of given pairs hand back: one `Translation` per
source sentence, one `PairScore` per given pair, and the `TermReport` of the glossary's
terms a translation (or a document) writes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from rnnsearch.alignments import display
from rnnsearch.alignments.distortion import Jumps
from rnnsearch.alignments.readings import ATTENTION, AlignmentSource
from rnnsearch.alignments.term_links import TermLink
from rnnsearch.alignments.words import WordAlignment


@dataclass(frozen=True)
class WrittenTerm:
    """One of the glossary's terms found in a source: its source and its target as the
    glossary gives them, how many times it was found there, and where the search wrote
    its target in the translation (the place's characters, start to end − 1, as the
    search's state of the term counted them; none: not written)."""

    source: str
    target: str
    found: int = 1
    where: tuple[tuple[int, int], ...] = ()

    @property
    def written(self) -> bool:
        return bool(self.where)

    def __str__(self) -> str:
        return f"{self.source!r} → {self.target!r}"


@dataclass(frozen=True)
class TermReport:
    """The glossary's terms found in a translation's source (one entry per target) and
    whether it writes each; the reports of many translations (a document, a run) summed
    by `total`."""

    terms: tuple[WrittenTerm, ...] = ()

    @property
    def found(self) -> int:
        return len(self.terms)

    @property
    def written(self) -> int:
        return sum(term.written for term in self.terms)

    @property
    def unwritten(self) -> tuple[WrittenTerm, ...]:
        return tuple(term for term in self.terms if not term.written)

    @staticmethod
    def total(reports: Iterable[TermReport]) -> TermReport:
        """The reports of many translations as one."""
        return TermReport(tuple(term for report in reports for term in report.terms))


@dataclass
class Translation:
    """One translation of one source sentence.

    alignment: (len(target_tokens), len(source_tokens)) weights α_ij; row i is the
    attention of target piece i over the source pieces, and sums to 1. None for the
    fixed-context baseline, which has no alignment model.
    alternatives: the rest of the n-best list, best first.
    source_word_counts: for each whitespace-separated word of `source`, how many of the
    model's words it is (`Subwords.word_counts`), so that word alignments count the
    text's words (rnnsearch.alignments.words); None for audio. target_word_counts: the same for
    a text the model did not write (a given pair's target), None for its own translation,
    whose words are those its pieces spell.
    marked_up: with `translate(…, markup=…)`, `text` with the markup of the marked-up
    input put back (rnnsearch.markup), where `source` is that input's text; None
    otherwise, and for an input whose markup was not well-formed, with lenient markup.
    read_from: what `alignment` is read from, an entry of ALIGNMENT_SOURCES: the attention
    (α) or the aligner (β, the rows of the model's alignment module, docs/model.md);
    its name is `alignment_from`.
    jumps: with the module's rows, the jump table the module counted from its own links
    (rnnsearch/alignments/counted_jumps.py), which its word weights are read with; None:
    read with the fixed prior of what `alignment` is (AlignmentSource.prior).
    words: with markup, the word alignment its markup was placed by (read from
    `alignment` as the call's `reading` says), computed once, so that the word links
    written beside the marked-up text (`translate --hard-alignments`) are those that
    placed its tags; None otherwise.
    term_links: the glossary's terms written in `text`, each the target words written for
    the source words it was found on, which word alignments link to those alone;
    terms: the glossary's terms found in `source` and where `text` writes each (only a
    prefix that leaves no room keeps one out): a TermReport.
    written_at: where the search wrote each term it was asked to write in this sentence
    (each target once, in the order the source first holds them): the characters of
    `text` it wrote, start to end − 1, as its constraint counted them; None: not written.
    """

    source: str
    text: str
    score: float
    source_tokens: list[str]
    target_tokens: list[str]
    alignment: np.ndarray | None
    alternatives: list[Translation] = field(default_factory=list)
    source_word_counts: list[int] | None = field(default=None, repr=False)
    target_word_counts: list[int] | None = field(default=None, repr=False)
    marked_up: str | None = None
    read_from: AlignmentSource = field(default=ATTENTION, repr=False)
    jumps: Jumps | None = field(default=None, repr=False)
    words: WordAlignment | None = field(default=None, repr=False)
    term_links: list[TermLink] = field(default_factory=list, repr=False)
    terms: TermReport = field(default_factory=TermReport, repr=False)
    written_at: tuple[tuple[int, int] | None, ...] = field(default=(), repr=False)

    @property
    def alignment_from(self) -> str:
        """What `alignment` is read from, by name: "attention" or "aligner"."""
        return self.read_from.name

    def _repr_html_(self) -> str:
        """Jupyter's view: the text and the alignment heatmap (alignments/display.py)."""
        return display.translation_html(self)


@dataclass
class PairScore:
    """How the model scores one given translation: `target` for `source`, teacher-forced.

    log_prob: log p(target | source), natural log: the sum of `token_log_probs`
    token_log_probs: log p(y_i | y_<i, source) of each target piece and then of </s>,
      one per entry of `target_tokens`
    alignment: (len(target_tokens), len(source_tokens)) weights α_ij, as Translation has
      them for the model's own output; None for the fixed-context baseline.
    source_word_counts, target_word_counts: as a Translation's, for `source` and `target`.
    read_from, jumps: what the alignment is read from, and the module's counted jump
      table, as a Translation's.
    """

    source: str
    target: str
    log_prob: float
    token_log_probs: list[float]
    source_tokens: list[str]
    target_tokens: list[str]
    alignment: np.ndarray | None
    source_word_counts: list[int] | None = field(default=None, repr=False)
    target_word_counts: list[int] | None = field(default=None, repr=False)
    read_from: AlignmentSource = field(default=ATTENTION, repr=False)
    jumps: Jumps | None = field(default=None, repr=False)

    @property
    def alignment_from(self) -> str:
        """What `alignment` is read from, by name, as a Translation's."""
        return self.read_from.name

    def _repr_html_(self) -> str:
        """Jupyter's view: the texts, the log-probability and the alignment heatmap (display.py)."""
        return display.pair_html(self)

    @property
    def tokens(self) -> int:
        """Target tokens scored: the pieces and </s>."""
        return len(self.token_log_probs)

    def as_translation(self) -> Translation:
        """The pair as a Translation of `source` whose text is `target` and whose score is
        `log_prob`, for what reads translations (alignment files, word alignments)."""
        return Translation(
            source=self.source,
            text=self.target,
            score=self.log_prob,
            source_tokens=self.source_tokens,
            target_tokens=self.target_tokens,
            alignment=self.alignment,
            read_from=self.read_from,
            jumps=self.jumps,
            source_word_counts=self.source_word_counts,
            target_word_counts=self.target_word_counts,
        )

"""Which of the glossary's terms a translation wrote, and for which source words: the
word links a term forces (rnnsearch.alignments.term_links), and the TermReport a
document's summary and the command's report sum. Where a term stands is where the search
wrote it (`Translation.written_at`), not a place found again in the text."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rnnsearch.alignments.term_links import TermLink
from rnnsearch.decoding.results import TermReport, Translation, WrittenTerm
from rnnsearch.text.glossary import Match


def note_terms(translation: Translation, matches: Sequence[Match]) -> None:
    """Every hypothesis of `translation` given the terms `matches` found in its source
    (each target asked of the search once, in the order first found): whether it writes
    each and where, and the words written linked to the source words of the match they
    were written for, the first (where the search begins a term: search/terms.py)."""
    source_words = _word_spans(translation.source)
    for hypothesis in [translation, *translation.alternatives]:
        target_words = _word_spans(hypothesis.text)
        links: list[TermLink] = []
        written: list[WrittenTerm] = []
        for (target, found), place in zip(_by_target(matches).items(), hypothesis.written_at, strict=True):
            where = () if place is None else (place,)
            written.append(WrittenTerm(found[0].term.source, target, len(found), where))
            if place is not None:
                first = found[0]
                links.append((_covered(source_words, first.start, first.end), _covered(target_words, *place)))
        hypothesis.term_links, hypothesis.terms = links, TermReport(tuple(written))


def _by_target(matches: Sequence[Match]) -> dict[str, list[Match]]:
    grouped: dict[str, list[Match]] = {}
    for match in matches:
        grouped.setdefault(match.term.target, []).append(match)
    return grouped


def _word_spans(text: str) -> list[tuple[int, int]]:
    """The characters of each whitespace-separated word of `text`."""
    return [(word.start(), word.end()) for word in re.finditer(r"\S+", text)]


def _covered(words: list[tuple[int, int]], start: int, end: int) -> tuple[int, ...]:
    """The indices of the words that characters start to end − 1 touch."""
    return tuple(k for k, (a, b) in enumerate(words) if a < end and start < b)

"""The search's tables of what a call asks, built from the call's plain data (a term's
target as text, an avoid list as phrases) for one vocabulary, and kept for the next call
that asks the same: a server's requests bring the same glossary and avoid list again and
again, and each table costs far more to build than to look up.

Kept per vocabulary (the target Subwords, whose pieces spell them): each term target's
pieces, each avoid list's table (search/avoided.py), and each piece's kind
(search/terms.py). The caches are bounded: a server that meets ever new glossaries keeps
the latest."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import torch

from rnnsearch.reserved import UNK
from rnnsearch.search.avoided import AvoidTable
from rnnsearch.search.terms import piece_kinds
from rnnsearch.text.subwords import Subwords

SPELLINGS_KEPT = 1 << 16
"""Term targets whose pieces are kept, over all vocabularies."""

AVOID_TABLES_KEPT = 8
"""Avoid lists whose tables are kept, over all vocabularies."""


def spelled(vocabulary: Subwords, targets: Sequence[str]) -> list[tuple[int, ...]]:
    """Each target in the vocabulary's pieces; () for one the pieces cannot spell (an
    unknown piece, or nothing at all), which a request refuses before it searches."""
    return [_spelling(vocabulary, target) for target in targets]


@functools.lru_cache(maxsize=SPELLINGS_KEPT)
def _spelling(vocabulary: Subwords, target: str) -> tuple[int, ...]:
    [pieces] = vocabulary.encode([target])
    return () if UNK in pieces else tuple(pieces)


@functools.lru_cache(maxsize=AVOID_TABLES_KEPT)
def avoid_table(vocabulary: Subwords, phrases: tuple[str, ...]) -> AvoidTable:
    """The table of the pieces that would complete each of `phrases`, for the vocabulary."""
    return AvoidTable.of(phrases, vocabulary.texts)


@functools.lru_cache(maxsize=4)
def kinds(vocabulary: Subwords) -> torch.Tensor:
    """(V,) each piece's kind (search.terms.piece_kinds), so that a term is not run on
    into a longer word; looked up by the vocabulary itself, not by hashing its pieces'
    texts again for every call."""
    return piece_kinds(vocabulary.texts)

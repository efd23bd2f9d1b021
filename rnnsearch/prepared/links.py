"""The word alignments of a training corpus, encoded beside its tokens.

A corpus that names `alignments` (one Pharaoh line per pair) has each line checked and
its word links placed on the pair's pieces (`guide.piece_links`) in the encoding
workers, with the tokens. The dataset then holds two more arrays:

    links            (target piece, source piece) positions of every kept pair's links,
                     one pair after another, in the dataset's length type
    links.offsets    int64: pair k's links are rows links[offsets[k]:offsets[k + 1]]

Every kept pair has its entry, so corpora with and without alignments mix: a pair of a
corpus without them, with an empty line, or whose pieces do not spell its words (counted
as unplaced) has no links.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress

import numpy as np

from rnnsearch.alignments.guide import piece_links
from rnnsearch.alignments.symmetrisation import Link
from rnnsearch.evaluation.alignment_error import check_within, parse_gold_line
from rnnsearch.text.corpus import LineChunk
from rnnsearch.text.subwords import Subwords


@dataclass
class EncodedLinks:
    """One chunk's kept pairs' piece links: (L, 2) rows, how many of them each pair has,
    and how many pairs with links had pieces that do not spell their words."""

    rows: np.ndarray
    counts: np.ndarray
    unplaced: int


def word_links(chunk: LineChunk) -> list[frozenset[Link]]:
    """Every line's word links, each checked to be links ("i-j") of the pair's words (its
    text split at whitespace); a line that is not is a UserError naming file and line."""
    assert chunk.links is not None
    checked = []
    for k, (line, source, target) in enumerate(zip(chunk.links, chunk.sources, chunk.targets, strict=True)):
        where = f"{chunk.links_path}: line {chunk.first_line + k}"
        gold = parse_gold_line(line, where=where)
        check_within(gold, len(source.split()), len(target.split()), where=where)
        checked.append(gold.possible)
    return checked


def encode_links(
    chunk: LineChunk,
    usable: Sequence[bool],
    keep: np.ndarray,
    ids: tuple[list[list[int]], list[list[int]]],
    subwords: tuple[Subwords, Subwords],
    dtype: str,
) -> EncodedLinks:
    """The piece links of the pairs of `chunk` that are `usable` (not blank) and then kept
    (`keep`, over the usable pairs, whose piece ids are `ids`), every line checked first."""
    links = list(compress(word_links(chunk), usable))
    texts = (list(compress(chunk.sources, usable)), list(compress(chunk.targets, usable)))
    placed, unplaced = [], 0
    for k in np.flatnonzero(keep).tolist():
        rows = None
        if links[k]:
            rows = piece_links(
                links[k],
                subwords[0].pieces(ids[0][k]),
                subwords[1].pieces(ids[1][k]),
                source_words=len(texts[0][k].split()),
                target_words=len(texts[1][k].split()),
            )
            unplaced += rows is None
        placed.append(np.zeros((0, 2), dtype=np.int64) if rows is None else rows)
    counts = np.fromiter(map(len, placed), dtype=np.int64, count=len(placed))
    rows = np.concatenate(placed) if placed else np.zeros((0, 2), dtype=np.int64)
    return EncodedLinks(rows.astype(dtype), counts, unplaced)

"""Word links of a training pair → the piece links that guide its attention.

A training corpus may carry word alignments, one Pharaoh line per pair ("i-j", i the
0-based source word, j the 0-based target word, words split at whitespace), typically
from a statistical aligner. The model attends over SentencePiece pieces, so each word
link (i, j) becomes a link between every piece of target word j and every piece of
source word i. Pieces are grouped into words by `alignment.group_words`, the rule the
word alignments read off α use; "<unk>" counts as a word on both sides, since a training
pair's text holds the word it stands for.

The guided-alignment loss (docs/model.md) turns a target piece's links into a
distribution over source pieces: uniform over the pieces it is linked to. A target piece
without links, "</s>", and a pair without links add nothing to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from rnnsearch.alignments.symmetrisation import Link
from rnnsearch.alignments.words import group_words


def _pieces_of_words(pieces: Sequence[str], words: int) -> list[list[int]] | None:
    """For each word, its piece positions; None if the pieces spell another number of words."""
    grouped = group_words(pieces, unknown_is_word=True)
    if len(grouped.texts) != words:
        return None
    members: list[list[int]] = [[] for _ in range(words)]
    for position, word in enumerate(grouped.of_piece):
        if word is not None:
            members[word].append(position)
    return members


def piece_links(
    links: Iterable[Link],
    source_pieces: Sequence[str],
    target_pieces: Sequence[str],
    *,
    source_words: int,
    target_words: int,
) -> np.ndarray | None:
    """(L, 2) sorted unique (target piece, source piece) positions linked by the word `links`
    of a pair of `source_words` and `target_words` whitespace-separated words.

    None when the pieces group into other numbers of words than the text splits into
    (the subword model's normalisation removed or joined a word): the links of such a
    pair cannot be placed and the caller counts it.
    """
    source = _pieces_of_words(source_pieces, source_words)
    target = _pieces_of_words(target_pieces, target_words)
    if source is None or target is None:
        return None
    pairs = {(t, s) for i, j in links for t in target[j] for s in source[i]}
    return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


def guide_entries(pairs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """A batch's guide as sparse entries: (L, 3) (pair, target piece, source piece), unique
    since each pair's `piece_links` are, and their (L,) weights, 1 / the number of links of
    that target piece, so each linked row of the guide is a distribution over source
    pieces. `pairs` holds each pair's `piece_links`, in batch order."""
    counts = np.fromiter((len(links) for links in pairs), dtype=np.int64, count=len(pairs))
    if not counts.sum():
        return np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.float32)
    links = np.concatenate([np.asarray(links, dtype=np.int64).reshape(-1, 2) for links in pairs])
    entries = np.column_stack([np.repeat(np.arange(len(pairs)), counts), links])
    row = entries[:, 0] * (int(entries[:, 1].max()) + 1) + entries[:, 1]  # (pair, target piece) as one number
    return entries, (1.0 / np.bincount(row)[row]).astype(np.float32)

"""Word-level alignments from the model's soft subword alignment, as Pharaoh "i-j" lines.

The model attends over SentencePiece pieces; people and alignment tools count words.
This module is the one place where a (target pieces × source pieces) matrix becomes a
(target words × source words) matrix and then a hard alignment.

Words. A piece that starts with "▁" starts a new word, every other piece continues the
current one, so the words are the whitespace-separated words of the text the pieces
decode to; for the `word` subword kind every piece starts with "▁" and is a word of its
own. Byte-fallback pieces ("<0xE2>") are decoded back to the characters they spell.
"</s>", "<s>" and "<pad>" belong to no word, so the end-of-sentence row and column that
the translator adds give no word index. "<unk>" differs by side: in a source it stands
for words the vocabulary lacks and counts as a word of its own; in a translation it is
dropped from the text (`Subwords.decode`), so it belongs to no word there and the target
words are exactly `translation.text.split()`. A word left with no characters (a lone "▁"
piece) is dropped as well.

Merging. weight(t, s) = the mean, over the pieces of target word t, of the summed
weight on the pieces of source word s. Summing over source pieces keeps the attention
a target piece pays to a whole source word; averaging over target pieces keeps each row
a distribution. Rows sum to at most 1: what falls short is the weight on "</s>".

Hard alignment. Each target word is aligned to the source word it weighs most (argmax,
the lowest index on a tie), the usual rule for reading alignments off attention. A
target word that puts no weight at all on a source word is left unaligned.

Pharaoh format. "i-j" pairs, i the 0-based source word and j the 0-based target word,
sorted, space-separated, one line per sentence; no words gives an empty line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rnnsearch.translator import Translation

WORD_START = "▁"
UNKNOWN = "<unk>"
NOT_WORDS = frozenset({"<pad>", "<s>", "</s>"})
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


@dataclass(frozen=True)
class Words:
    """The words of one side of a sentence.

    texts:    the words, readable ("▁" removed, byte pieces decoded)
    of_piece: for each piece, the index of its word in `texts`, or None
    """

    texts: list[str]
    of_piece: list[int | None]


@dataclass(frozen=True)
class WordAlignment:
    """The word-level alignment of one translation.

    weights: (len(target_words), len(source_words)) merged soft alignment
    pairs:   hard alignment as sorted (source word, target word) index pairs
    """

    source_words: list[str]
    target_words: list[str]
    weights: np.ndarray
    pairs: list[tuple[int, int]]

    def pharaoh(self) -> str:
        """The hard alignment as one Pharaoh line: "i-j" pairs, source index first."""
        return pharaoh(self.pairs)


def _piece_bytes(piece: str) -> bytes:
    """The text a piece contributes to its word, as UTF-8 bytes (so byte pieces can join it)."""
    byte = _BYTE_PIECE.fullmatch(piece)
    if byte:
        return bytes([int(byte.group(1), 16)])
    return piece.replace(WORD_START, "").encode("utf-8")


def group_words(pieces: Sequence[str], unknown_is_word: bool) -> Words:
    """Group SentencePiece pieces into whitespace-separated words (rules in the module docstring).

    unknown_is_word: whether "<unk>" is a word of its own (source side) or belongs to
    no word (target side, where decoding drops it).
    """
    spelled: list[bytes] = []
    of_piece: list[int | None] = []
    open_word = False
    for piece in pieces:
        if piece in NOT_WORDS or (piece == UNKNOWN and not unknown_is_word):
            of_piece.append(None)
            continue
        if piece == UNKNOWN or piece.startswith(WORD_START) or not open_word:
            spelled.append(b"")
            open_word = piece != UNKNOWN
        spelled[-1] += _piece_bytes(piece)
        of_piece.append(len(spelled) - 1)
    return _drop_empty_words(spelled, of_piece)


def _drop_empty_words(spelled: list[bytes], of_piece: list[int | None]) -> Words:
    """Remove words without characters and renumber the rest."""
    renumber: dict[int, int] = {}
    texts: list[str] = []
    for index, word in enumerate(spelled):
        if word:
            renumber[index] = len(texts)
            texts.append(word.decode("utf-8", errors="replace"))
    return Words(texts, [None if w is None else renumber.get(w) for w in of_piece])


def source_words(pieces: Sequence[str]) -> Words:
    """The words of a source sentence, "<unk>" counted as a word."""
    return group_words(pieces, unknown_is_word=True)


def target_words(pieces: Sequence[str]) -> Words:
    """The words of a translation, as in its decoded text ("<unk>" dropped)."""
    return group_words(pieces, unknown_is_word=False)


def _membership(words: Words) -> np.ndarray:
    """(pieces, words) 0/1 matrix: 1 where the piece belongs to the word."""
    member = np.zeros((len(words.of_piece), len(words.texts)))
    for piece, word in enumerate(words.of_piece):
        if word is not None:
            member[piece, word] = 1.0
    return member


def merge(alignment: np.ndarray, source: Words, target: Words) -> np.ndarray:
    """(target words, source words) weights: summed over source pieces, averaged over target pieces.

    Rows sum to at most 1 when the rows of `alignment` sum to 1.
    """
    weights = np.asarray(alignment, dtype=np.float64)
    expected = (len(target.of_piece), len(source.of_piece))
    if weights.shape != expected:
        raise ValueError(f"alignment has shape {weights.shape} but the pieces need {expected} (target × source)")
    target_member = _membership(target)
    counts = target_member.sum(axis=0)
    return (target_member / np.maximum(counts, 1.0)).T @ weights @ _membership(source)


def hard_alignment(weights: np.ndarray) -> list[tuple[int, int]]:
    """Sorted (source word, target word) pairs: each target word to its argmax source word.

    A target word whose row is all zero stays unaligned.
    """
    pairs = [(int(np.argmax(row)), target) for target, row in enumerate(weights) if row.size and row.max() > 0]
    return sorted(pairs)


def pharaoh(pairs: Sequence[tuple[int, int]]) -> str:
    """Pharaoh "i-j" text of (source, target) pairs, sorted and space-separated."""
    return " ".join(f"{source}-{target}" for source, target in sorted(pairs))


def align_words(source_tokens: Sequence[str], target_tokens: Sequence[str], alignment: np.ndarray) -> WordAlignment:
    """The word-level alignment of one hypothesis from its pieces and its piece alignment."""
    source, target = source_words(source_tokens), target_words(target_tokens)
    weights = merge(alignment, source, target)
    return WordAlignment(source.texts, target.texts, weights, hard_alignment(weights))


def align_translation(translation: Translation) -> WordAlignment:
    """The word-level alignment of a Translation (its chosen hypothesis, not the alternatives)."""
    if translation.alignment is None:
        raise ValueError("this translation has no alignment (model without an alignment model)")
    return align_words(translation.source_tokens, translation.target_tokens, translation.alignment)

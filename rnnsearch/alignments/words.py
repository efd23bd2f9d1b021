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

Text words. Outputs count the whitespace-separated words of the texts, `text.split()`,
and the subword model's normalisation can make its words differ from these: it removes a
lone zero-width space or byte-order mark, and splits a word at a zero-width space inside
it. A text the model encoded (a source, a given target) therefore comes with, for each
of its words, how many of the model's words it became (`Subwords.word_counts`): 0 for a
removed word, which is then aligned to nothing, 2 or more for a split one, whose parts
count as that one word. A text the model wrote (its translation) is its pieces decoded,
so it needs no counts: its words must be the ones its pieces spell. Where the counts do
not add up to the words the pieces spell (consecutive unknown words that the `word`
subword kind joins into one "<unk>"), or a decoded text's words are not its pieces'
words, the pieces cannot be placed on the text's words: the pair's WordAlignment is
marked `placed=False` and has no links, never links shifted onto other words.

Merging. weight(t, s) = the mean, over the pieces of target word t, of the summed
weight on the pieces of source word s (which row of α stands for each target piece is
readings.py's). Summing over source pieces keeps the attention a target piece pays to a
whole source word; averaging over target pieces keeps each row a distribution. Rows sum
to at most 1: what falls short is the weight on "</s>".

Neighbours. Where the rows come from a source with a jump prior (the alignment module's,
AlignmentSource.prior), each target word's weights and its mass on NULL are then
replaced by its posteriors given its neighbours' (rnnsearch/alignments/distortion.py). A
module that counted its own jumps (counted_jumps.py) hands its table with its rows
(`Attended.jumps`), read in its place (looser where a caller gives a `Temper`).

Hard alignment. Each target word is aligned to the source word it weighs most (argmax,
the lowest index on a tie), the usual rule for reading alignments off attention. A
target word that puts no weight at all on a source word is left unaligned. The rows of
an alignment module with the NULL option (model/aligner.py) fall short of 1 by their mass
on NULL, no source word: a target word whose pieces put more mass there, on average,
than on any one source word is left unaligned too.

Terms. The target words a glossary's term was written as are linked to the source words
it was found on alone (term_links.py). Pharaoh format: "i-j" pairs, i the 0-based source
word and j the 0-based target word, sorted, space-separated, a line per sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from rnnsearch.alignments import display
from rnnsearch.alignments.counted_jumps import Temper, prior_read
from rnnsearch.alignments.distortion import Jumps, posteriors
from rnnsearch.alignments.readings import ATTENTION, DEFAULT_READING, AlignmentSource, check_reading, reading_rows
from rnnsearch.alignments.symmetrisation import SOFT_METHODS, symmetrise, symmetrise_weights
from rnnsearch.alignments.term_links import TermLink, linked
from rnnsearch.reserved import WORD_START

UNKNOWN = "<unk>"
NOT_WORDS = frozenset({"<pad>", "<s>", "</s>"})
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


class Attended(Protocol):
    """What a word alignment is read from: both sides' texts, pieces and α, and how many
    of the model's words each text word became, as a Translation (rnnsearch.Translation)
    or a scored pair (`PairScore.as_translation()`) holds them; `alignment` is None for a
    model without an alignment model; `jumps`, where it is not None, the jump prior its
    module counted from its own links, read in place of its source's (AlignmentSource.prior);
    `term_links`, the words its search was made to write for source words (term_links.py)."""

    source: str
    text: str
    source_tokens: list[str]
    target_tokens: list[str]
    alignment: np.ndarray | None
    read_from: AlignmentSource
    source_word_counts: list[int] | None
    target_word_counts: list[int] | None
    jumps: Jumps | None
    term_links: list[TermLink]


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

    weights: (len(target_words), len(source_words)) merged soft alignment (the module's
             read with its jump prior: each word's posterior given its neighbours')
    pairs:   hard alignment as sorted (source word, target word) index pairs
    placed:  False when the model's pieces could not be placed on the texts' words (see
             the module docstring): weights are then zero and there are no pairs
    marked_up: with `align(…, markup=…)`, the target with the marked-up source's markup
             put back by these links (rnnsearch.markup); None otherwise, and for a
             source whose markup was not well-formed, with lenient markup
    read_from: what the weights were read from (an entry of ALIGNMENT_SOURCES)
    """

    source_words: list[str]
    target_words: list[str]
    weights: np.ndarray
    pairs: list[tuple[int, int]]
    placed: bool = True
    marked_up: str | None = None
    read_from: AlignmentSource = field(default=ATTENTION, repr=False)

    @property
    def alignment_from(self) -> str:
        """What the weights were read from, by name, as a Translation's."""
        return self.read_from.name

    def pharaoh(self) -> str:
        """The hard alignment as one Pharaoh line: "i-j" pairs, source index first."""
        return pharaoh(self.pairs)

    def _repr_html_(self) -> str:
        """Jupyter's view: the merged weights as a heatmap, the links outlined (display.py)."""
        return display.word_alignment_html(self)


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
    placed = [(piece, word) for piece, word in enumerate(words.of_piece) if word is not None]
    if placed:
        pieces, word_indices = zip(*placed, strict=True)
        member[list(pieces), list(word_indices)] = 1.0
    return member


def merge(alignment: np.ndarray, source: Words, target: Words) -> np.ndarray:
    """(target words, source words) weights: summed over source pieces, averaged over target pieces.

    Rows sum to at most 1 when the rows of `alignment` sum to 1.
    """
    weights = np.asarray(alignment, dtype=np.float64)
    expected = (len(target.of_piece), len(source.of_piece))
    if weights.shape != expected:
        raise ValueError(f"alignment has shape {weights.shape} but the pieces need {expected} (target × source)")
    return _target_means(target).T @ weights @ _membership(source)


def _target_means(target: Words) -> np.ndarray:
    """(pieces, words): each target word's pieces weighed 1 / its number of pieces, so that
    rows of pieces times it are averaged over each word's pieces."""
    target_member = _membership(target)
    return target_member / np.maximum(target_member.sum(axis=0), 1.0)


def hard_alignment(weights: np.ndarray, null: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Sorted (source word, target word) pairs: each target word to its argmax source word.

    A target word whose row is all zero stays unaligned, and so does one whose mass on
    NULL (`null`, one per target word; None: none) exceeds its weight on every source word.
    """
    weights = np.asarray(weights)
    if not weights.size:
        return []
    best = weights.max(axis=1)
    linked = (best > 0) & (best >= (0.0 if null is None else np.asarray(null)))
    return sorted(zip(weights.argmax(axis=1)[linked].tolist(), np.flatnonzero(linked).tolist(), strict=True))


def null_mass(alignment: np.ndarray, target: Words) -> np.ndarray:
    """Each target word's mass on NULL: the mean, over its pieces, of what their rows of
    `alignment` (target pieces × source pieces and "</s>") fall short of 1."""
    missing = np.clip(1.0 - np.asarray(alignment, dtype=np.float64).sum(axis=1), 0.0, None)
    return missing @ _target_means(target)


def pharaoh(pairs: Sequence[tuple[int, int]]) -> str:
    """Pharaoh "i-j" text of (source, target) pairs, sorted and space-separated."""
    return " ".join(f"{source}-{target}" for source, target in sorted(pairs))


def transposed_pharaoh(line: str) -> str:
    """A Pharaoh line read the other way round, as the reverse direction counts its words:
    each "i-j" becomes "j-i", sorted."""
    links = sorted((int(target), int(source)) for source, target in (link.split("-") for link in line.split()))
    return pharaoh(links)


def on_text_words(words: Words, text: str, counts: Sequence[int] | None) -> Words | None:
    """`words`, the model's words of one side, renumbered as the whitespace-separated words
    of `text`, given how many model words each text word became (`counts`, see the module
    docstring; None: one each, the words being the text's own); None when they cannot be."""
    texts = text.split()
    if counts is None:
        return words if words.texts == texts else None
    if len(counts) != len(texts) or sum(counts) != len(words.texts):
        return None
    text_word = [k for k, count in enumerate(counts) for _ in range(count)]
    return Words(texts, [None if word is None else text_word[word] for word in words.of_piece])


def align_words(
    source_tokens: Sequence[str], target_tokens: Sequence[str], alignment: np.ndarray, *, reading: str = DEFAULT_READING
) -> WordAlignment:
    """The word-level alignment of one hypothesis from its pieces and its piece alignment
    (one row per target piece, "</s>" included), each piece read as `reading` says; the
    words are the ones the pieces spell."""
    return _aligned(source_words(source_tokens), target_words(target_tokens), alignment, reading)


def _aligned(source: Words, target: Words, alignment: np.ndarray, reading: str) -> WordAlignment:
    """The word alignment of `alignment`'s rows read as `reading`, as the rows give it."""
    weights, _ = _word_weights(source, target, alignment, reading, null=False)
    return WordAlignment(source.texts, target.texts, weights, hard_alignment(weights))


def _word_weights(
    source: Words, target: Words, alignment: np.ndarray, reading: str, *, null: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """The word weights of `alignment`'s rows read as `reading`, and with `null` each
    target word's mass on NULL, their shortfall from 1 (AlignmentSource.null_mass)."""
    rows = reading_rows(alignment, reading)
    return merge(rows, source, target), null_mass(rows, target) if null else None


@dataclass
class _Weighed:
    """A translation's words and word weights, before the jump prior reads them."""

    source: Words
    target: Words
    weights: np.ndarray
    unaligned: np.ndarray | None
    read_from: AlignmentSource

    def aligned(self, terms: Sequence[TermLink] = ()) -> WordAlignment:
        """Its word alignment: the NULL rule's links (`hard_alignment`), but for the `terms` it wrote."""
        weights, links = linked(self.weights, hard_alignment(self.weights, self.unaligned), terms)
        aligned = WordAlignment(self.source.texts, self.target.texts, weights, links)
        return replace(aligned, read_from=self.read_from)


def align_translation(
    translation: Attended, *, reading: str = DEFAULT_READING, temper: Temper | None = None
) -> WordAlignment:
    """The word-level alignment of a Translation's chosen hypothesis over its texts'
    whitespace-separated words (the module docstring), read with its `jump_prior`."""
    return align_translations([translation], reading=reading, temper=temper)[0]


def jump_prior(translation: Attended, temper: Temper | None = None) -> Jumps | None:
    """The jump prior a translation's word weights are read with (counted_jumps.prior_read)."""
    return prior_read(translation.read_from.prior, translation.jumps, temper)


def align_translations(
    translations: Sequence[Attended], *, reading: str = DEFAULT_READING, temper: Temper | None = None
) -> list[WordAlignment]:
    """`align_translation` of each translation; where all are read with one prior, as the
    pairs of one call are, its posteriors are computed together."""
    priors = {jump_prior(translation, temper) for translation in translations}
    if len(priors) > 1:
        return [align_translation(translation, reading=reading, temper=temper) for translation in translations]
    prior = priors.pop() if priors else None
    return read_translations(translations, reading=reading, prior=prior)


def read_translation(translation: Attended, *, reading: str, prior: Jumps | None) -> WordAlignment:
    """`align_translation` with the jump prior `prior` (None: the word weights as the rows
    give them), whatever its rows come from: to compare priors on the same rows."""
    return read_translations([translation], reading=reading, prior=prior)[0]


def read_translations(translations: Sequence[Attended], *, reading: str, prior: Jumps | None) -> list[WordAlignment]:
    """`read_translation` of each translation, the prior's posteriors computed together
    (distortion.posteriors)."""
    for source in {translation.read_from.name: translation.read_from for translation in translations}.values():
        check_reading(reading, source)  # once per call and source, not per translation
    read = [_weighed(translation, reading) for translation in translations]
    weighed = [each for each in read if isinstance(each, _Weighed)]
    if prior is not None:
        rows = [(each.weights, each.unaligned) for each in weighed]
        for each, (weights, unaligned) in zip(weighed, posteriors(rows, prior), strict=True):
            each.weights, each.unaligned = weights, unaligned
    pairs = zip(read, translations, strict=True)
    return [each.aligned(t.term_links) if isinstance(each, _Weighed) else each for each, t in pairs]


def _weighed(translation: Attended, reading: str) -> _Weighed | WordAlignment:
    """A translation's word weights, or the marked alignment of one whose pieces cannot be
    placed on its words (`_unplaced`)."""
    if translation.alignment is None:
        raise ValueError("this translation has no alignment (model without an alignment model)")
    read_from = translation.read_from
    source, target = source_words(translation.source_tokens), target_words(translation.target_tokens)
    on_source = on_text_words(source, translation.source, translation.source_word_counts)
    on_target = on_text_words(target, translation.text, translation.target_word_counts)
    if on_source is None or on_target is None:
        unplaced = _unplaced(translation.source.split(), translation.text.split())
        return replace(unplaced, read_from=read_from)
    weights, unaligned = _word_weights(on_source, on_target, translation.alignment, reading, null=read_from.null_mass)
    return _Weighed(on_source, on_target, weights, unaligned, read_from)


def _unplaced(source: list[str], target: list[str]) -> WordAlignment:
    """The marked alignment of a pair whose pieces cannot be placed on its words: no links."""
    return WordAlignment(source, target, np.zeros((len(target), len(source))), [], placed=False)


def combine(forward: WordAlignment, backward: WordAlignment, *, method: str) -> WordAlignment:
    """`forward`'s alignment with its links replaced by both directions' combined by
    `method` (a heuristic over their links, or a soft combination of their weights;
    symmetrisation.COMBINATIONS); `backward` aligns the same pair the other way round (its
    source words are `forward`'s target words)."""
    if (backward.target_words, backward.source_words) != (forward.source_words, forward.target_words):
        raise ValueError(
            f"the reverse model reads other words than the forward one ({len(backward.target_words)} and "
            f"{len(backward.source_words)} against {len(forward.source_words)} and {len(forward.target_words)})"
        )
    if not (forward.placed and backward.placed):
        return _unplaced(forward.source_words, forward.target_words)
    if method in SOFT_METHODS:
        return replace(forward, pairs=symmetrise_weights(forward.weights, backward.weights, method=method))
    links = symmetrise(
        forward.pairs,
        [(source, target) for target, source in backward.pairs],
        source_length=len(forward.source_words),
        target_length=len(forward.target_words),
        method=method,
    )
    return replace(forward, pairs=links)

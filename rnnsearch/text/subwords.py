"""SentencePiece subwords: trained on the training data, stored in the model directory.

Ids 0–3 are reserved for padding, unknown, begin- and end-of-sentence in every
vocabulary. Unigram and BPE models use byte fallback, so unseen characters become
byte pieces instead of <unk> and survive detokenisation. The `word` kind splits on
whitespace only (for pre-tokenised text) and keeps words seen at least
`min_frequency` times.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections import Counter
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import sentencepiece as spm

from rnnsearch.errors import UserError
from rnnsearch.reserved import BOS, EOS, PAD, SPECIAL_PIECES, UNK, WORD_START

__all__ = ["BOS", "EOS", "PAD", "RESERVED_PIECES", "SPECIAL_PIECES", "UNK", "Subwords", "train_subwords"]

RESERVED_PIECES = len(SPECIAL_PIECES) + 256  # unigram and bpe: the special pieces and a byte piece per byte value
# SentencePiece's refusal of a vocabulary without room for every character: "... <asked> vs <needed>"
_TOO_FEW_PIECES = re.compile(r"Vocabulary size is smaller than required_chars\. \d+ vs (\d+)")


class Subwords:
    """One SentencePiece model: text ↔ piece ids, and ids → readable pieces."""

    def __init__(self, model_bytes: bytes):
        self.model_bytes = model_bytes
        self.digest = hashlib.sha256(model_bytes).hexdigest()  # what a model's weights record of it
        self._processor = spm.SentencePieceProcessor(model_proto=model_bytes)

    @classmethod
    def load(cls, path: str | Path) -> Subwords:
        """The subword model in `path`; a missing, empty or corrupt file is a one-line error.

        An empty file needs its own check: SentencePiece takes it for a model without pieces.
        """
        try:
            model_bytes = Path(path).read_bytes()
        except FileNotFoundError:
            raise UserError(f"{path}: subword model missing from the model directory") from None
        if not model_bytes:
            raise UserError(f"{path}: empty file, not a SentencePiece model (truncated or corrupt?)")
        try:
            return cls(model_bytes)
        except RuntimeError:
            raise UserError(f"{path}: not a SentencePiece model (corrupt file?)") from None

    def __reduce__(self) -> tuple[type[Subwords], tuple[bytes]]:
        """Pickled as the model's bytes, so that a worker process can be sent one."""
        return Subwords, (self.model_bytes,)

    def __len__(self) -> int:
        return self._processor.get_piece_size()

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        return self._processor.encode(list(texts), out_type=int)

    def decode(self, ids: Sequence[int]) -> str:
        return self._processor.decode([i for i in ids if i > EOS])

    def spans(self, ids: Sequence[int]) -> list[tuple[int, int]]:
        """Where each of `ids` stands in `decode(ids)`: its (start, end) characters, the
        space a word start writes left out; a piece that writes nothing there (a special
        piece, a byte piece before the last of its character's, a lone word start)
        stands where the text before it ends, start == end. SentencePiece says where each piece's bytes
        fall as it decodes them, so the places hold wherever it normalises the text."""
        kept = [k for k, i in enumerate(ids) if i > EOS]
        decoded = self._processor.decode_ids_as_proto([ids[k] for k in kept])
        text = decoded.text
        char_of = _char_offsets(text)
        places = {k: (char_of[piece.begin], char_of[piece.end]) for k, piece in zip(kept, decoded.pieces, strict=True)}
        spans, at = [], 0
        for k in range(len(ids)):
            start, end = places.get(k, (at, at))
            while start < end and text[start].isspace():
                start += 1
            spans.append((start, end))
            at = end
        return spans

    def pieces(self, ids: Sequence[int]) -> list[str]:
        return [self._processor.id_to_piece(int(i)) for i in ids]

    @cached_property
    def texts(self) -> tuple[str, ...]:
        """Each piece as the text it writes, a word start as a space: "" for the special
        pieces and for a byte piece of a character longer than one byte (a part of one)."""
        texts = []
        for v in range(len(self)):
            piece = self._processor.id_to_piece(v)
            if v < len(SPECIAL_PIECES) or self._processor.is_unknown(v) or self._processor.is_control(v):
                texts.append("")
            elif self._processor.is_byte(v):
                code = int(piece[3:-1], 16)
                texts.append(chr(code) if code < 128 else "")
            else:
                texts.append(piece.replace(WORD_START, " "))
        return tuple(texts)

    def word_counts(self, text: str) -> list[int]:
        """For each whitespace-separated word of `text`, how many words its pieces form:
        1 as a rule, 0 where normalisation removes the word (a lone zero-width space or
        byte-order mark), 2 or more where it splits one (a zero-width space between two
        letters). Word alignments count the text's words through these (rnnsearch.alignments.words)."""
        words = text.split()
        if not words:
            return []
        return [sum(1 for part in normal.split(WORD_START) if part) for normal in self._processor.normalize(words)]


def _char_offsets(text: str) -> list[int]:
    """For each byte offset of `text` in UTF-8 (and its end), the character it falls in."""
    offsets = []
    for k, character in enumerate(text):
        offsets.extend([k] * len(character.encode("utf-8")))
    offsets.append(len(text))
    return offsets


def text_source(subwords: Subwords | None, owner: object) -> Subwords:
    """The source subword model of `owner` (a model directory, a checkpoint), which reads
    text; one that reads audio has none, and is refused in one line naming it."""
    if subwords is None:
        raise UserError(f"{owner}: reads audio, not text, so it has no source subword model")
    return subwords


def _word_vocabulary_size(texts: Sequence[str], min_frequency: int) -> int:
    counts = Counter(word for text in texts for word in text.split())
    return len(SPECIAL_PIECES) + sum(1 for n in counts.values() if n >= min_frequency)


def train_subwords(texts: Sequence[str], kind: str, vocab_size: int, min_frequency: int = 1) -> Subwords:
    """Train a SentencePiece model of `kind` (unigram, bpe or word) on `texts`.

    A unigram or bpe `vocab_size` without room for every character of `texts` is a
    UserError naming subwords.vocab_size and the size the text needs; one without room
    beyond the reserved pieces is refused before any training.
    """
    if kind != "word" and vocab_size <= RESERVED_PIECES:
        raise UserError(
            f"subwords.vocab_size: {vocab_size} is too small: a {kind} vocabulary reserves {RESERVED_PIECES} "
            f"pieces ({len(SPECIAL_PIECES)} special, {RESERVED_PIECES - len(SPECIAL_PIECES)} bytes) and needs "
            "one more per character of the text"
        )
    model = io.BytesIO()
    options: dict[str, Any] = dict(
        sentence_iterator=iter(texts),
        model_writer=model,
        model_type=kind,
        pad_id=PAD,
        unk_id=UNK,
        bos_id=BOS,
        eos_id=EOS,
        character_coverage=1.0,
        hard_vocab_limit=False,
        num_threads=2,
        minloglevel=2,
    )
    if kind == "word":
        options.update(
            vocab_size=min(vocab_size, _word_vocabulary_size(texts, min_frequency)),
            normalization_rule_name="identity",
        )
    else:
        options.update(vocab_size=vocab_size, byte_fallback=True, max_sentence_length=1 << 16)
    try:
        spm.SentencePieceTrainer.train(**options)
    except RuntimeError as error:
        needed = _TOO_FEW_PIECES.search(str(error))
        if needed is None:
            raise
        raise UserError(
            f"subwords.vocab_size: {vocab_size} is too small for the training text, which needs at least "
            f"{needed[1]} pieces: one for each of its characters and {RESERVED_PIECES} reserved"
        ) from None
    return Subwords(model.getvalue())

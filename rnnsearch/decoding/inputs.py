"""What the encoder reads: the one registry of input kinds.

An input kind says how a source reaches the encoder and how it is shown beside an
alignment: how checked sources become padded tensors for search, how long each is,
and what labels the columns of its alignment. Text is subword pieces, in one or
more source sides (an ensemble whose members cut the source differently); speech
is feature vectors, one per stacked frame. The translator (and through it the
server and the CLI) and validation ask the input kind instead of branching on it:
how given inputs become sources, which of them are blank, and whether a call that
needs text (or audio) can run at all. Each kind of data (rnnsearch.kinds) makes its
input kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, cast

import torch

from rnnsearch.errors import UserError
from rnnsearch.text.batches import Pieces, Source, side_tensors, source_tensors, vector_tensors
from rnnsearch.text.corpus import is_blank
from rnnsearch.text.subwords import Subwords

END = "</s>"
"""The label of the source's last column: the end-of-sentence piece the encoder reads."""


def check_source_lengths(
    ids: Sequence[Sequence[int]], limit: int, origin: str | None = None, *, first_line: int = 1
) -> None:
    """Refuse the first source of more than `limit` (search.max_source_length) pieces, by line number:
    the search neither cuts nor skips a source. `origin` names the file; without it, the input.
    `first_line` is the number of ids[0], for input read a chunk at a time."""
    for line, pieces in enumerate(ids, start=first_line):
        if len(pieces) > limit:
            where = f"{origin}:{line}" if origin else f"input line {line}"
            raise UserError(f"{where}: {len(pieces)} subword pieces, more than search.max_source_length = {limit}")


class TextInput:
    """Sources as subword pieces: one list of ids per text, or with several source sides
    a tuple of them, side 0 first; alignments are over side 0's pieces."""

    seconds_per_column = None

    def __init__(self, sides: Sequence[Subwords]):
        self.sides = list(sides)

    def sources(
        self, texts: Sequence[str], *, limit: int, origin: str | None = None, first_line: int = 1
    ) -> list[Source]:
        """The texts in the pieces of every source side, each checked against `limit`
        (search.max_source_length, see check_source_lengths): piece ids per text, or with
        several sides a tuple of them, side 0 first."""
        sides = [subwords.encode(list(texts)) for subwords in self.sides]
        for ids in sides:
            check_source_lengths(ids, limit, origin, first_line=first_line)
        if len(sides) == 1:
            return list(sides[0])
        return [tuple(readings) for readings in zip(*sides)]  # a tuple: one reading per side

    @staticmethod
    def blank(texts: Sequence[str]) -> list[bool]:
        """Which texts are empty or white space: their translation is empty."""
        return [is_blank(text) for text in texts]

    def pieces(self, texts: Sequence[str]) -> list[int]:
        """How many source pieces each text is, in the side that cuts it into the most:
        the count search.max_source_length bounds."""
        sides = [subwords.encode(list(texts)) for subwords in self.sides]
        return [max(len(ids) for ids in pieces) for pieces in zip(*sides)]

    def require_text(self, use: str) -> None:
        """Text is what this kind reads, through its source subword models: without one
        (None, as a speech model has) the model reads audio, and `use` says what it takes."""
        if any(side is None for side in self.sides):
            raise UserError(f"this model reads audio, not text: {use}")

    @staticmethod
    def require_audio(what: str) -> None:
        """Refuse a call that needs a model reading audio (`what`: the input it was given)."""
        raise UserError(f"this model reads text, not {what}")

    def tensors(self, sources: Sequence[Source]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Padded ids (N, S), or (N, S, sides) with several sides; their lengths and side 0's (N,)."""
        if len(self.sides) > 1:
            return side_tensors(cast(Sequence[Sequence[Pieces]], sources))
        src, src_lengths = source_tensors(cast(Sequence[Pieces], sources))
        return src, src_lengths, src_lengths

    @staticmethod
    def length(source: Source) -> int:
        """Side 0's pieces, the length search sorts by."""
        return len(source[0] if isinstance(source, tuple) else source)

    def word_counts(self, text: str) -> list[int]:
        """How many of side 0's words each whitespace-separated word of `text` is
        (`Subwords.word_counts`): what word alignments count source words by."""
        return self.sides[0].word_counts(text)

    def labels(self, source: Source) -> list[str]:
        """Side 0's pieces and </s>."""
        return self.sides[0].pieces(cast(Sequence[int], source[0] if isinstance(source, tuple) else source)) + [END]


class SpeechInput:
    """Sources as feature vectors (frames, size) of spoken audio."""

    def __init__(self, seconds_per_column: float):
        """`seconds_per_column`: the audio each input vector stands for."""
        self.seconds_per_column = seconds_per_column
        self.sides: list[Subwords] = []  # a recording has no source subword model

    @staticmethod
    def sources(
        vectors: Sequence[torch.Tensor], *, limit: int, origin: str | None = None, first_line: int = 1
    ) -> list[torch.Tensor]:
        """The feature vectors as they are: search reads them whole (`limit` and the
        line numbers are for text)."""
        return list(vectors)

    @staticmethod
    def blank(vectors: Sequence[torch.Tensor]) -> list[bool]:
        """Which inputs have no vectors: their transcription is empty."""
        return [len(x) == 0 for x in vectors]

    @staticmethod
    def require_text(use: str) -> None:
        """Refuse a call that needs a model reading text; `use` says what the model takes instead."""
        raise UserError(f"this model reads audio, not text: {use}")

    @staticmethod
    def require_audio(what: str) -> None:
        """Audio (and the feature vectors made from it) is what this kind reads."""

    @staticmethod
    def pieces(texts: Sequence[str]) -> list[int]:
        """Refused: a recording is not cut into pieces."""
        raise UserError("this model reads audio, not text: it has no source pieces")

    @staticmethod
    def tensors(sources: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Padded vectors (N, S, size), their lengths (N,) twice."""
        src, src_lengths = vector_tensors(sources)
        return src, src_lengths, src_lengths

    @staticmethod
    def length(source: torch.Tensor) -> int:
        return len(source)

    @staticmethod
    def word_counts(name: str) -> None:
        """None: a recording has no words to align (see TextInput.word_counts)."""
        return None

    def labels(self, source: torch.Tensor) -> list[str]:
        """Each input vector's start time in seconds."""
        return [f"{j * self.seconds_per_column:.2f}s" for j in range(len(source))]


class InputKind(Protocol):
    """What the encoder reads, as decoding asks it; an input (a text, a recording's
    vectors) becomes a source (piece ids, the vectors), and sources become tensors."""

    @property
    def seconds_per_column(self) -> float | None:
        """The audio one encoder input stands for; None for text."""
        ...

    @property
    def sides(self) -> list[Subwords]:
        """The source subword models, side 0 first; none for audio."""
        ...

    def sources(
        self, inputs: Sequence[Any], *, limit: int, origin: str | None = None, first_line: int = 1
    ) -> list[Any]: ...

    def blank(self, inputs: Sequence[Any]) -> list[bool]: ...

    def require_text(self, use: str) -> None: ...

    def require_audio(self, what: str) -> None: ...

    def tensors(self, sources: Sequence[Any]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]: ...

    def length(self, source: Any) -> int: ...

    def word_counts(self, text: str) -> list[int] | None: ...

    def labels(self, source: Any) -> list[str]: ...

    def pieces(self, texts: Sequence[str]) -> list[int]: ...

"""What the encoder reads: the one registry of input kinds.

An input kind says how a source reaches the encoder and how it is shown beside an
alignment: how checked sources become padded tensors for search, how long each is,
and what labels the columns of its alignment. Text is subword pieces, in one or
more source sides (an ensemble whose members cut the source differently); speech
is feature vectors, one per stacked frame. The translator, and through it the
server, the CLI and validation, asks its input kind instead of branching on it.
Adding an input kind means adding one class here and one entry in INPUTS.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from rnnsearch.config import Config
from rnnsearch.text.batches import Source, side_tensors, source_tensors, vector_tensors
from rnnsearch.text.subwords import Subwords

END = "</s>"
"""The label of the source's last column: the end-of-sentence piece the encoder reads."""


class TextInput:
    """Sources as subword pieces: one list of ids per text, or with several source sides
    a tuple of them, side 0 first; alignments are over side 0's pieces."""

    kind = "text"
    seconds_per_column = None

    def __init__(self, config: Config, sides: Sequence[Subwords]):
        self.sides = list(sides)

    def tensors(self, sources: Sequence[Source]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Padded ids (N, S), or (N, S, sides) with several sides; their lengths and side 0's (N,)."""
        if len(self.sides) > 1:
            return side_tensors(sources)
        src, src_lengths = source_tensors(sources)
        return src, src_lengths, src_lengths

    @staticmethod
    def length(source: Source) -> int:
        """Side 0's pieces, the length search sorts by."""
        return len(source[0] if isinstance(source, tuple) else source)

    def labels(self, source: Source) -> list[str]:
        """Side 0's pieces and </s>."""
        return self.sides[0].pieces(source[0] if isinstance(source, tuple) else source) + [END]


class SpeechInput:
    """Sources as feature vectors (frames, size) of spoken audio."""

    kind = "speech"

    def __init__(self, config: Config, sides: Sequence[None]):
        """`sides` holds None: speech has no source subword models."""
        from rnnsearch.speech.corpus import seconds_per_vector  # the audio stack, for speech models only

        self.seconds_per_column = seconds_per_vector(config.data)

    @staticmethod
    def tensors(sources: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Padded vectors (N, S, size), their lengths (N,) twice."""
        src, src_lengths = vector_tensors(sources)
        return src, src_lengths, src_lengths

    @staticmethod
    def length(source: torch.Tensor) -> int:
        return len(source)

    def labels(self, source: torch.Tensor) -> list[str]:
        """Each input vector's start time in seconds."""
        return [f"{j * self.seconds_per_column:.2f}s" for j in range(len(source))]


INPUTS = {"text": TextInput, "speech": SpeechInput}


def input_kind(config: Config, sides: Sequence[Subwords | None]) -> TextInput | SpeechInput:
    """The input kind of a model with this config, given its source subword models by
    side (None for speech): the one place that tells the kinds apart."""
    return INPUTS["speech" if config.speech else "text"](config, sides)

"""Transcribing speech: recordings, WAV files or the feature vectors made from them in,
one Translation each, named for the output."""

from __future__ import annotations

from collections.abc import Iterable
from typing import cast

import numpy as np
import torch

from rnnsearch.arguments import checked_list, checked_strings
from rnnsearch.config.data import DataSection, SpokenDigitsConfig
from rnnsearch.decoding.decoding import Decoding
from rnnsearch.decoding.results import Translation
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError
from rnnsearch.search.rules import Cancelled


class Transcription(Decoding):
    """The Translator's transcription (`transcribe`, `transcribe_files`,
    `translate_vectors`), done here over the decoding it is."""

    data: DataSection  # the model's data section: how audio becomes vectors, at what sample rate

    def transcribe(
        self,
        audio: Iterable[np.ndarray],
        names: Iterable[str],
        beam_size: int | None = None,
        n_best: int = 1,
        cancelled: Cancelled | None = None,
    ) -> list[Translation]:
        """Recognise recordings (mono float samples at the model's sample rate), in order,
        named for the output; `cancelled` as for `translate`."""
        from rnnsearch.speech.utterances import audio_inputs

        self.input_kind.require_audio("audio")
        audio = checked_list(audio, "audio", example="a list of 1-D numpy arrays")
        for index, samples in enumerate(audio):
            if not isinstance(samples, np.ndarray) or samples.ndim != 1:
                raise ArgumentTypeError(f"audio[{index}]: expected a 1-D numpy array of samples")
        names = _names(names, len(audio))
        beam_size, n_best = self.widths(beam_size, n_best)
        vectors = audio_inputs(audio, cast(SpokenDigitsConfig, self.data))  # the section of the kind that reads audio
        return self.translate_vectors(vectors, names, beam_size, n_best, cancelled)

    def transcribe_files(
        self, paths: Iterable[str], beam_size: int | None = None, n_best: int = 1
    ) -> list[Translation]:
        """Recognise WAV files; a file at another sample rate, or not a WAV, is a one-line error."""
        from rnnsearch.speech.audio import read_wav

        self.input_kind.require_audio("audio")
        paths = checked_strings(paths, "paths", example='a list such as ["one.wav"]', unicode=False)
        beam_size, n_best = self.widths(beam_size, n_best)
        audio = [read_wav(path, expected_rate=self.data.sample_rate)[0] for path in paths]
        return self.transcribe(audio, paths, beam_size, n_best, None)

    def translate_vectors(
        self,
        inputs: Iterable[torch.Tensor],
        names: Iterable[str],
        beam_size: int | None = None,
        n_best: int = 1,
        cancelled: Cancelled | None = None,
    ) -> list[Translation]:
        """Decode encoder inputs that are already feature vectors (frames, size), e.g. a
        validation set, in order."""
        self.input_kind.require_audio("feature vectors")
        inputs = checked_list(inputs, "inputs", example="a list of (frames, size) tensors")
        size = self.data.vector_size
        for index, vectors in enumerate(inputs):
            tensor = isinstance(vectors, torch.Tensor) and vectors.is_floating_point()
            if not (tensor and vectors.dim() == 2 and vectors.size(1) == size):
                raise ArgumentTypeError(f"inputs[{index}]: expected a float tensor of shape (frames, {size})")
        names = _names(names, len(inputs))
        options = self.options(beam_size, n_best, cancelled)
        return self.decode(names, inputs, options)


def _names(names: object, count: int) -> list[str]:
    """The names of `count` inputs, one str each."""
    names = checked_strings(names, "names", example="a list of one str per input", unicode=False)
    if len(names) != count:
        raise ArgumentValueError(f"names: {len(names)} names for {count} inputs")
    return names

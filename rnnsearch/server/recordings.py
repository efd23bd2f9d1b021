"""A speech model's requests: recordings sent as base64-encoded WAV files, read back to
their samples and checked against the server's longest recording."""

from __future__ import annotations

import base64
import binascii

import numpy as np
from fastapi import HTTPException

from rnnsearch.errors import UserError
from rnnsearch.speech.audio import read_wav_bytes


def read_audio(items: list[str], max_seconds: float, sample_rate: int) -> list[np.ndarray]:
    """The samples of base64-encoded WAV files, each at `sample_rate` and at most `max_seconds` long.

    A data URL's "data:audio/wav;base64," prefix is skipped, as browsers write one.
    """
    audio = []
    for index, item in enumerate(items):
        name = f"audio.{index}"
        if item.startswith("data:") and ";base64," in item:
            item = item.split(";base64,", 1)[1]
        try:
            data = base64.b64decode(item, validate=True)
        except (binascii.Error, ValueError) as error:
            raise UserError(f"{name}: not base64 ({error})") from None
        samples, _ = read_wav_bytes(data, name, expected_rate=sample_rate)
        seconds = len(samples) / sample_rate
        if seconds > max_seconds:
            raise HTTPException(413, f"{name}: {seconds:.2f} s of audio, more than the server's {max_seconds:g} s")
        audio.append(samples)
    return audio

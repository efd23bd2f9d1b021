"""Reading PCM WAV audio into float samples, from a file or from uploaded bytes.

Only the standard library's `wave` module is used: the data sets and uploads this
project handles are plain PCM, and a codec library would add a native dependency
for formats the model cannot use anyway. 8-bit (unsigned) and 16-bit (signed)
samples are supported; several channels are averaged into one (mono), since the
features are computed from a single signal.

Every problem is a one-line UserError naming the file, so a bad upload or a broken
recording never shows a traceback.
"""

from __future__ import annotations

import io
import wave
from pathlib import Path
from typing import BinaryIO

import numpy as np

from rnnsearch.errors import UserError

# Sample width in bytes → (numpy dtype, offset of silence, full scale).
_FORMATS = {1: ("u1", 128.0, 128.0), 2: ("<i2", 0.0, 32768.0)}


def read_wav(path: str | Path, expected_rate: int | None = None) -> tuple[np.ndarray, int]:
    """Samples of a PCM WAV file as float32 in [-1, 1], and the sample rate in Hz.

    With `expected_rate`, a file at any other rate is an error rather than audio the
    features would silently misread.
    """
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            return _decode(handle, str(path), expected_rate)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a WAV file") from None
    except OSError as error:
        raise UserError(f"{path}: cannot read ({error.strerror})") from None


def read_wav_bytes(data: bytes, name: str, expected_rate: int | None = None) -> tuple[np.ndarray, int]:
    """The same as `read_wav` for a WAV file held in memory (an upload, an archive member).

    `name` is what error messages call the file.
    """
    return _decode(io.BytesIO(data), name, expected_rate)


def _decode(handle: BinaryIO, name: str, expected_rate: int | None) -> tuple[np.ndarray, int]:
    try:
        with wave.open(handle, "rb") as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            raw = wav.readframes(wav.getnframes())
    except EOFError:
        raise UserError(f"{name}: not a WAV file (too short for a WAV header)") from None
    except wave.Error as error:
        raise UserError(f"{name}: not a PCM WAV file ({error})") from None
    except RuntimeError:  # the wave module's chunk reader, for a chunk size that does not fit
        raise UserError(f"{name}: not a PCM WAV file (a chunk's size does not fit the file)") from None
    if width not in _FORMATS:
        raise UserError(f"{name}: {8 * width}-bit samples are not supported; expected 8- or 16-bit PCM")
    if expected_rate is not None and rate != expected_rate:
        raise UserError(f"{name}: sample rate {rate} Hz, expected {expected_rate} Hz")
    frames = len(raw) // (width * channels)
    if frames == 0:
        raise UserError(f"{name}: no audio samples")
    return _to_float(raw[: frames * width * channels], width, channels), rate


def _to_float(raw: bytes, width: int, channels: int) -> np.ndarray:
    """Interleaved integer PCM → mono float32; a truncated last frame was cut by the caller."""
    dtype, offset, scale = _FORMATS[width]
    samples = (np.frombuffer(raw, dtype=dtype).astype(np.float32) - offset) / scale
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1, dtype=np.float32)
    return samples

"""Log-mel filterbank features, frame stacking, and an on-disk cache of features.

Features are computed with librosa (torchaudio has no release that loads beside the
pinned torch): a Hann-windowed power spectrum every `hop_ms`, over `window_ms`,
mapped to `bins` mel bands and taken in decibels. The decibels are clipped 80 dB
below the utterance's loudest point, so digital silence (exact zeros, common in
uploaded files) gives a finite floor instead of dominating the statistics. With
`normalise="utterance"` every bin is then shifted and scaled to mean 0 and standard
deviation 1 over the utterance, which removes the recording's level and channel.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import librosa
import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file, save_file

from rnnsearch.files.atomic import replacing
from rnnsearch.speech.digits import Utterance

NORMALISATIONS = ("utterance", "none")
TOP_DB = 80.0
_CACHE_FORMAT = 1


@dataclass(frozen=True)
class FeatureSettings:
    """How features are computed; the cache key is made of these, so every field matters."""

    sample_rate: int = 8000
    bins: int = 40
    window_ms: float = 25.0
    hop_ms: float = 10.0
    normalise: Literal["utterance", "none"] = "utterance"

    def __post_init__(self) -> None:
        if self.normalise not in NORMALISATIONS:
            raise ValueError(f"unknown normalise {self.normalise!r}; choose from {', '.join(NORMALISATIONS)}")

    @property
    def hop_length(self) -> int:
        return round(self.sample_rate * self.hop_ms / 1000)

    @property
    def window_length(self) -> int:
        return round(self.sample_rate * self.window_ms / 1000)


def log_mel(samples: np.ndarray, sample_rate: int, settings: FeatureSettings) -> np.ndarray:
    """Log-mel features of mono samples: float32, shape (frames, bins), one frame per hop.

    There are 1 + len(samples) // hop_length frames: each is centred on its hop, the
    signal padded with zeros at both ends.
    """
    if sample_rate != settings.sample_rate:
        raise ValueError(f"samples at {sample_rate} Hz, but features are set up for {settings.sample_rate} Hz")
    window = settings.window_length
    power = librosa.feature.melspectrogram(
        y=np.asarray(samples, dtype=np.float32),
        sr=sample_rate,
        n_fft=1 << (window - 1).bit_length(),
        hop_length=settings.hop_length,
        win_length=window,
        n_mels=settings.bins,
        center=True,
        pad_mode="constant",
    )
    features = librosa.power_to_db(power, ref=1.0, amin=1e-10, top_db=TOP_DB).T.astype(np.float64)
    if settings.normalise == "utterance":
        features = (features - features.mean(axis=0)) / np.maximum(features.std(axis=0), 1e-5)
    return np.ascontiguousarray(features, dtype=np.float32)


def utterance_features(utterances: Sequence[Utterance], settings: FeatureSettings) -> list[np.ndarray]:
    """`log_mel` of every utterance, in order."""
    return [log_mel(u.samples, u.sample_rate, settings) for u in utterances]


def stack_frames(features: np.ndarray, k: int) -> np.ndarray:
    """Concatenate every k consecutive frames into one, shortening the input k times.

    Shape (frames, bins) → (ceil(frames / k), k * bins). The tail is padded by
    repeating the last frame, a neutral value whatever the normalisation.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    frames, bins = features.shape
    missing = -frames % k
    if missing:
        features = np.concatenate([features, np.repeat(features[-1:], missing, axis=0)])
    return features.reshape(-1, k * bins)


def cached_features(
    utterances: Sequence[Utterance], settings: FeatureSettings, cache_dir: str | Path
) -> list[np.ndarray]:
    """`utterance_features`, stored in `cache_dir` so that the next call reads instead of computing.

    The file name is a hash of the settings and of every utterance's samples: the
    content itself, so a change in how utterances are built, or a different archive,
    can never return stale features. An unreadable or inconsistent cache file is
    computed again and replaced. Files are written atomically, so concurrent runs
    and interruptions leave either no file or a whole one.
    """
    path = Path(cache_dir) / f"logmel-{_cache_key(utterances, settings)}.safetensors"
    stored = _read_cache(path, len(utterances), settings.bins)
    if stored is not None:
        return stored
    features = utterance_features(utterances, settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_cache(path, features, settings)
    return features


def _cache_key(utterances: Sequence[Utterance], settings: FeatureSettings) -> str:
    digest = hashlib.sha256(json.dumps({"format": _CACHE_FORMAT, **asdict(settings)}, sort_keys=True).encode())
    for utterance in utterances:
        samples = np.ascontiguousarray(utterance.samples, dtype=np.float32)
        digest.update(f"{utterance.sample_rate}:{len(samples)}:".encode())
        digest.update(samples.tobytes())
    return digest.hexdigest()[:32]


def _write_cache(path: Path, features: list[np.ndarray], settings: FeatureSettings) -> None:
    lengths = np.array([len(f) for f in features], dtype=np.int64)
    stacked = np.concatenate(features) if features else np.zeros((0, settings.bins), dtype=np.float32)
    metadata = {"settings": json.dumps(asdict(settings), sort_keys=True)}
    with replacing(path) as temporary:
        save_file({"features": stacked, "lengths": lengths}, temporary, metadata=metadata)


def _read_cache(path: Path, count: int, bins: int) -> list[np.ndarray] | None:
    """The cached features, or None if the file is missing, unreadable or does not fit."""
    try:
        tensors = load_file(path)
    except (FileNotFoundError, SafetensorError, OSError, ValueError):
        return None
    stacked, lengths = tensors.get("features"), tensors.get("lengths")
    if stacked is None or lengths is None or len(lengths) != count or stacked.ndim != 2:
        return None
    if stacked.shape[1] != bins or int(lengths.sum()) != len(stacked) or (lengths < 0).any():
        return None
    return np.split(stacked, np.cumsum(lengths)[:-1]) if count else []

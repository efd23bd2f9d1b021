"""Spoken digits as model input: utterances → cached log-mel features → stacked vectors.

The one place where a `SpokenDigitsConfig` turns into encoder inputs, for training,
validation, testing and for audio a user brings (a WAV file, an upload).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from rnnsearch.config.data import FeatureConfig, SpokenDigitsConfig
from rnnsearch.speech.digits import SAMPLE_RATE, Utterance, make_utterances
from rnnsearch.speech.features import FeatureSettings, cached_features, log_mel, stack_frames

PART_SIZES = {"train": "train_utterances", "validation": "valid_utterances", "test": "test_utterances"}


def feature_settings(features: FeatureConfig) -> FeatureSettings:
    return FeatureSettings(
        sample_rate=SAMPLE_RATE,
        bins=features.bins,
        window_ms=features.window_ms,
        hop_ms=features.hop_ms,
        normalise=features.normalise,
    )


def utterances(data: SpokenDigitsConfig, part: str) -> list[Utterance]:
    """The config's utterances of `part` (train, validation or test), deterministic from its seed."""
    count = getattr(data, PART_SIZES[part])
    return make_utterances(data.split, part, count, data.seed, min_digits=data.min_digits, max_digits=data.max_digits)


def encoder_inputs(features: Sequence[np.ndarray], config: FeatureConfig) -> list[torch.Tensor]:
    """Stacked feature frames, one (vectors, bins × stack) float tensor per utterance."""
    return [torch.from_numpy(np.ascontiguousarray(stack_frames(f, config.stack))) for f in features]


def part_inputs(data: SpokenDigitsConfig, part: str) -> tuple[list[torch.Tensor], list[str]]:
    """Encoder inputs and digit strings of one part; features come from the cache when they can."""
    spoken = utterances(data, part)
    features = cached_features(spoken, feature_settings(data.features), data.cache_dir)
    return encoder_inputs(features, data.features), [u.text for u in spoken]


def audio_inputs(audio: Sequence[np.ndarray], data: SpokenDigitsConfig) -> list[torch.Tensor]:
    """Encoder inputs of recordings at the FSDD sample rate (callers check the rate)."""
    settings = feature_settings(data.features)
    return encoder_inputs([log_mel(samples, SAMPLE_RATE, settings) for samples in audio], data.features)


def seconds_per_vector(data: SpokenDigitsConfig) -> float:
    """How much audio one encoder input vector covers: the hop times the stacking."""
    return data.features.hop_ms * data.features.stack / 1000

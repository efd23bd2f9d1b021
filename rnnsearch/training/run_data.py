"""What a training run learns from: its training pairs, its validation pairs and the
validation set as the translator takes it. Each kind of data makes its own
(`rnnsearch.kinds`, `prepare_corpus`): text prepared on disk once and mapped, spoken
digits' features in memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Protocol

import torch

from rnnsearch.config import Config
from rnnsearch.decoding.inputs import InputKind
from rnnsearch.files.metrics_log import MetricsRow
from rnnsearch.text.batches import InMemoryPairs, PairSource
from rnnsearch.text.subwords import Subwords
from rnnsearch.training.distributed import World

PREPARATION_TIMEOUT = timedelta(days=7)  # how long other ranks wait for rank 0 to prepare the training data


@dataclass
class Corpus:
    """Training and validation pairs, and the validation set as the translator takes it:
    texts, or feature vectors for speech."""

    train: PairSource
    valid: InMemoryPairs
    valid_sources: list[str] | list[torch.Tensor]
    valid_references: list[str]


def encode_validation(
    sources: list[str], targets: list[str], src_subwords: Subwords, tgt_subwords: Subwords, max_length: int
) -> InMemoryPairs:
    """Piece-id pairs of the validation set for its loss; blank and over-long pairs are left out."""
    pairs = [
        (s, t)
        for s, t in zip(src_subwords.encode(sources), tgt_subwords.encode(targets))
        if 0 < len(s) <= max_length and 0 < len(t) <= max_length
    ]
    return InMemoryPairs(pairs)


class CorpusKind(Protocol):
    """What training asks of its kind of data, which the trainer is given (a kind of
    `rnnsearch.kinds`): training never tells the kinds apart itself."""

    def input(self, config: Config, sides: Sequence[Subwords | None]) -> InputKind:
        """What the encoder reads, for the validation's translations."""

    def prepare_corpus(
        self, config: Config, model_dir: Path, resume: bool, world: World
    ) -> tuple[Corpus, Subwords | None, Subwords]:
        """The run's corpus and its source and target subword models."""

    def validation_scores(self, hypotheses: list[str], references: list[str]) -> MetricsRow:
        """The scores a validation logs."""

    def scores_line(self, row: MetricsRow, suffix: str = "") -> str:
        """Those scores in the trainer's validation line."""

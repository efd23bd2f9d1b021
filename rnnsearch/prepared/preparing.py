"""Preparing a config's training data: the subword models learnt (or given), the corpus
encoded into arrays, and the manifest written last; or the data already there reused
while it still serves the config.

A directory without a manifest is no dataset: preparing deletes the old manifest
first, writes each array to a temporary renamed into place, and writes the manifest
last, so a kill or a full disk at any moment leaves nothing a training run accepts.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from rnnsearch.config import Config
from rnnsearch.config.data import DataConfig, files_section
from rnnsearch.errors import UserError
from rnnsearch.files import atomic
from rnnsearch.prepared.manifest import (
    FORMAT,
    MANIFEST,
    SRC_SUBWORDS,
    TGT_SUBWORDS,
    inputs,
    read_manifest,
    settings,
    stale_reason,
    subword_settings,
)
from rnnsearch.prepared.reading import load_subwords
from rnnsearch.prepared.sampling import sample, train_vocabularies
from rnnsearch.prepared.streaming import say
from rnnsearch.prepared.workers import Encoder, smallest_type, worker_count
from rnnsearch.prepared.writing import FilterReport, write_arrays
from rnnsearch.text.subwords import Subwords


def prepare(
    config: Config, directory: Path, subwords: tuple[Subwords, Subwords] | None = None, *, reason: str = ""
) -> tuple[Subwords, Subwords]:
    """Build the prepared dataset of `config` in `directory`, and return its subword models.

    With `subwords` (a resumed or fine-tuning run), the data is encoded with them; otherwise they are
    trained on a sample of the corpus first. `reason` (why it is built) is reported.
    """
    say(f"preparing the training data in {directory}" + (f": {reason}" if reason else ""))
    (directory / MANIFEST).unlink(missing_ok=True)
    data, trained = files_section(config.data), subwords is None
    if subwords is None:
        subwords = _learn_subwords(config)
    directory.mkdir(parents=True, exist_ok=True)
    atomic.remove_temporaries(directory)
    for name, model in zip((SRC_SUBWORDS, TGT_SUBWORDS), subwords):
        atomic.atomic_write(directory / name, model.model_bytes)
    encoder = Encoder(
        subwords,
        max_length=data.max_length,
        max_ratio=data.max_length_ratio,
        token_type=smallest_type(max(len(subwords[0]), len(subwords[1])) - 1),
        length_type=smallest_type(data.max_length),
    )
    workers = worker_count(data.workers, data.train_corpora)
    reports, sizes, digests = write_arrays(data.train_corpora, directory, encoder, workers=workers)
    _require_kept(reports, data)
    manifest = {
        "format": FORMAT,
        "inputs": inputs(data.train_corpora),
        "settings": {**settings(data), **(subword_settings(config.subwords) if trained else {})},
        "subwords": [s.digest for s in subwords],
        "pairs": sum(r.kept for r in reports),
        "token_type": encoder.token_type,
        "length_type": encoder.length_type,
        "file_sizes": sizes,
        "file_digests": digests,
        "filtered": [{"corpus": c.src, **vars(r)} for c, r in zip(data.train_corpora, reports)],
    }
    atomic.atomic_write(directory / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
    return subwords


def _learn_subwords(config: Config) -> tuple[Subwords, Subwords]:
    """Subword models learnt from a sample of the training corpora, saying how long it took."""
    started = time.monotonic()
    sources, targets = sample(config.data.train_corpora, config.subwords.sample_sentences)
    sampled = time.monotonic()
    subwords = train_vocabularies(config.subwords, sources, targets)
    say(
        f"subwords learnt from {len(sources):,} pairs in {time.monotonic() - sampled:.1f} s, "
        f"after {sampled - started:.1f} s of reading and sampling"
    )
    return subwords


def _require_kept(reports: list[FilterReport], data: DataConfig) -> None:
    """Refuse a dataset whose every pair was over the length limits."""
    if not any(r.kept for r in reports):
        limits = f"data.max_length = {data.max_length} pieces" + (
            f" or data.max_length_ratio = {data.max_length_ratio}" if data.max_length_ratio else ""
        )
        raise UserError(f"{data.train_corpora[0].src}: no usable training pairs (each is over {limits})")


def ensure_prepared(
    config: Config, directory: Path, subwords: tuple[Subwords, Subwords] | None = None
) -> tuple[Subwords, Subwords]:
    """The subword models of the prepared data in `directory`, built first if it is
    missing or stale (saying why), reused otherwise (saying so)."""
    reason = stale_reason(directory, config, subwords)
    if reason is None:
        manifest = read_manifest(directory) or {}  # not stale: there is one
        say(f"training data: {manifest['pairs']:,} prepared pairs in {directory}, reused")
        return subwords or load_subwords(directory)
    return prepare(config, directory, subwords, reason=reason)

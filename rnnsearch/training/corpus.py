"""What a training run learns from: its corpus prepared (the training pairs encoded to
disk once, or spoken digits' features), mapped, and the validation set checked and
encoded, before the loop starts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import torch

from rnnsearch import model_directory
from rnnsearch.config import Config
from rnnsearch.errors import UserError
from rnnsearch.inputs import check_source_lengths
from rnnsearch.prepared import PreparedPairs, ensure_prepared, prepared_dir
from rnnsearch.text.batches import InMemoryPairs, PairSource
from rnnsearch.text.corpus import read_parallel, require_usable_pairs
from rnnsearch.text.subwords import Subwords, train_subwords
from rnnsearch.training import checkpoint
from rnnsearch.training.console import say
from rnnsearch.training.distributed import SINGLE_PROCESS, World

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


def prepare_corpus(
    config: Config, model_dir: Path, resume: bool, world: World = SINGLE_PROCESS
) -> tuple[Corpus, Subwords | None, Subwords]:
    """Check the validation set, prepare the training data on disk (or reuse it) and map it.

    Rank 0 prepares, while the other ranks wait, then every rank maps the same files. A
    resumed run encodes with its model directory's subword models, a fine-tuning run
    with those of the model it starts from.
    """
    if config.speech:
        return _prepare_speech(config, model_dir, resume, world)
    data = config.data
    valid_sources, valid_references = read_parallel(data.valid.src, data.valid.tgt)
    require_usable_pairs(valid_sources, valid_references, data.valid.src, data.valid.tgt, purpose="validation")
    given = _given_subwords(config, model_dir, resume)
    directory = prepared_dir(config, model_dir)
    if world.is_main:
        subwords = ensure_prepared(config, directory, given)
        if not resume:
            model_directory.save_model_files(model_dir, config, *subwords)
    world.barrier(PREPARATION_TIMEOUT)
    train = PreparedPairs(directory)
    src_subwords, tgt_subwords = given or train.subwords
    # each validation greedily translates the sources: one the search would refuse is found now, not then
    check_source_lengths(src_subwords.encode(valid_sources), config.search.max_source_length, str(data.valid.src))
    valid = encode_validation(valid_sources, valid_references, src_subwords, tgt_subwords, data.max_length)
    if not len(valid):  # validation loss is per target token: it needs one pair at least
        raise UserError(
            f"{data.valid.src}: no usable validation pairs (each is blank or longer than "
            f"data.max_length = {data.max_length} pieces)"
        )
    return Corpus(train, valid, valid_sources, valid_references), src_subwords, tgt_subwords


def _given_subwords(config: Config, model_dir: Path, resume: bool) -> tuple[Subwords | None, Subwords] | None:
    """The subword models a run must encode its data with: its own when resumed, those of
    train.init_from when fine-tuning, else None (learnt from the data)."""
    if resume:
        return model_directory.load_model_files(model_dir)[1:]
    if config.train.init_from:
        return checkpoint.init_from_subwords(config.train.init_from, config.model, data_kind=config.data.kind)
    return None


def _prepare_speech(config: Config, model_dir: Path, resume: bool, world: World) -> tuple[Corpus, None, Subwords]:
    """Spoken digits: feature vectors in, digit pieces out; only the target has subwords.

    Rank 0 computes the features first, so the other ranks find them in the cache.
    """
    from rnnsearch.speech.corpus import part_inputs

    if world.is_main:
        sources, targets = part_inputs(config.data, "train")
        valid_sources, valid_references = part_inputs(config.data, "validation")
        if not resume:
            tgt_subwords = _speech_subwords(config, targets)
            model_directory.save_model_files(model_dir, config, None, tgt_subwords)
    world.barrier()
    if not world.is_main:
        sources, targets = part_inputs(config.data, "train")
        valid_sources, valid_references = part_inputs(config.data, "validation")
    if resume or not world.is_main:
        _, _, tgt_subwords = model_directory.load_model_files(model_dir)
    limit = config.data.max_length
    train = [(s, t) for s, t in zip(sources, tgt_subwords.encode(targets)) if len(s) <= limit and len(t) <= limit]
    valid = list(zip(valid_sources, tgt_subwords.encode(valid_references)))
    if world.is_main:
        say(f"training data: {len(train)} spoken digit strings ({len(sources) - len(train)} over max_length)")
    corpus = Corpus(InMemoryPairs(train), InMemoryPairs(valid), valid_sources, valid_references)
    return corpus, None, tgt_subwords


def _speech_subwords(config: Config, targets: list[str]) -> Subwords:
    """The digit pieces of a new speech run: those of train.init_from, else learnt from the targets."""
    if config.train.init_from:
        return checkpoint.init_from_subwords(config.train.init_from, config.model, data_kind=config.data.kind)[1]
    options = config.subwords
    return train_subwords(targets, options.kind, options.vocab_size, options.min_frequency)

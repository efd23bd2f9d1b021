"""Teacher-forced log-probabilities and alignments of given (source, target) pairs.

Where search finds a target, the forced pass is handed one: the decoder reads <s> y_1 … y_n and
is asked, at every position, the probability of the next given piece, y_1 … y_n and
then </s>. Its log-probabilities are those the training loss sums (without label
smoothing), and its attention weights α are the alignment of that target, row i the
weights of target piece i over the source pieces and </s>, as search reports them for
its own output.

Pairs are batched as validation batches them (length-bucketed, under a budget of padded
tokens), and the results are returned in the order of the pairs.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rnnsearch import kernels
from rnnsearch.model.aligner import Normalising
from rnnsearch.model.linear import CHUNK_ELEMENTS
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.reserved import PAD
from rnnsearch.text.batches import Batch, InMemoryPairs, Pieces, epoch_batches, make_batch


@dataclass(frozen=True)
class ForcedPair:
    """The teacher-forced pass over one pair.

    log_probs: (n + 1,) float32, log p(y_i | y_<i, x) of the n target pieces and </s>
    alignment: (n + 1, source pieces + 1) float32 weights α, or None without an alignment model
    """

    log_probs: np.ndarray
    alignment: np.ndarray | None


@torch.no_grad()
def teacher_forced(
    model: RNNSearch,
    pairs: Sequence[tuple[Pieces, Pieces]],
    max_sentences: int,
    bf16: bool = False,
    *,
    from_module: bool = False,
) -> list[ForcedPair]:
    """The teacher-forced pass over every (source ids, target ids) pair, in the order given.

    `from_module` takes each pair's alignment from the model's alignment module (β, the
    rows of target pieces it aligns) instead of its attention (α).

    Batches hold `max_sentences` pairs of like lengths (search.batch_sentences, the
    sentences inference runs together). The model runs as it is (call it in eval mode, or
    dropout changes the numbers); `bf16` runs it under bfloat16 autocast, as search does
    with precision bf16, while the log-probabilities are always normalised in fp32.
    """
    results: dict[int, ForcedPair] = {}
    known = _normaliser_table(model) if from_module else None
    for batch, indices in _batches(model, pairs, max_sentences, bf16):
        log_probs, weights = _batch_log_probs(model, batch, known)
        for row, index in enumerate(indices):
            results[index] = _unpadded(log_probs, weights, batch, row)
    return [results[index] for index in range(len(pairs))]  # every pair is in one batch


@torch.no_grad()
def module_alignments(
    model: RNNSearch, pairs: Sequence[tuple[Pieces, Pieces]], max_sentences: int, bf16: bool = False
) -> list[np.ndarray]:
    """The alignment module's rows β of every (source ids, target ids) pair, in the order
    given, `max_sentences` pairs a batch: for a translation search has already scored,
    so the output layer, which only the log-probabilities need, is not run."""
    results: dict[int, np.ndarray] = {}
    known = _normaliser_table(model)
    for batch, indices in _batches(model, pairs, max_sentences, bf16):
        readout, weights, state = model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
        assert weights is not None, "a model with a module attends"
        rows = model.aligner_rows(
            batch.src, state, readout, weights, batch.tgt_out, Normalising(known=known)
        ).alignment()
        for row, index in enumerate(indices):
            length, source_length = int((batch.tgt_out[row] != PAD).sum()), int(batch.src_lengths[row])
            results[index] = rows[row, :length, :source_length].float().cpu().numpy()
    return [results[index] for index in range(len(pairs))]  # every pair is in one batch


def _normaliser_table(model: RNNSearch) -> torch.Tensor:
    """The module's lexical normalisers known so far (Aligner.normaliser_table), which
    the batches of a pass read and add to."""
    if model.aligner is None:
        raise ValueError("this model has no alignment module")
    return model.aligner.normaliser_table(model.encoder.embedding.weight)


def _batches(
    model: RNNSearch, pairs: Sequence[tuple[Pieces, Pieces]], max_sentences: int, bf16: bool
) -> Iterator[tuple[Batch, list[int]]]:
    """The pairs' length-bucketed batches of `max_sentences` on the model's device and the
    indices of their pairs, each used under the search kernels (and bfloat16 autocast
    with `bf16`)."""
    device = next(model.parameters()).device
    with kernels.use(kernels.choose(device, purpose="search")):
        for indices in epoch_batches(InMemoryPairs(pairs), sys.maxsize, max_sentences, seed=0, epoch=0):
            batch = make_batch([pairs[i] for i in indices]).to(device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
                yield batch, indices.tolist()


def mean_forced(passes: Sequence[Sequence[ForcedPair]], aligned: Sequence[int]) -> list[ForcedPair]:
    """An ensemble's teacher-forced pass from its members' (`passes[m]`, pair by pair): the
    mean of their token log-probabilities, as ensemble search scores a token, and the mean
    alignment of the `aligned` members (None when there are none)."""
    combined = []
    for pair in zip(*passes, strict=True):
        log_probs = np.asarray(np.mean([forced.log_probs for forced in pair], axis=0, dtype=np.float32))
        alignment = None
        if aligned:
            alignment = np.asarray(np.mean([pair[m].alignment for m in aligned], axis=0, dtype=np.float32))
        combined.append(ForcedPair(log_probs, alignment))
    return combined


def _batch_log_probs(
    model: RNNSearch, batch: Batch, known: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """log p of every decoder output (B, T), 0 at padding, and the weights α, or β where
    the module's normalisers `known` so far are given (B, T, S), or None.

    The vocabulary projection runs on real target positions only, a chunk of rows at a
    time, so no (B · T, V) tensor of logits is ever held whole.
    """
    readout, weights, state = model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
    if known is not None:
        assert weights is not None, "a model with a module attends"
        weights = model.aligner_rows(
            batch.src, state, readout, weights, batch.tgt_out, Normalising(known=known)
        ).alignment()
    real = batch.tgt_out != PAD
    rows, targets = readout[real], batch.tgt_out[real]
    chosen = torch.empty(len(targets), dtype=torch.float32, device=rows.device)
    step = max(1, CHUNK_ELEMENTS // model.decoder.output_layer.out_features)
    for start in range(0, len(targets), step):
        logits = model.logits(rows[start : start + step]).float()
        wanted = targets[start : start + step].unsqueeze(1)
        chosen[start : start + step] = logits.log_softmax(dim=-1).gather(1, wanted).squeeze(1)
    log_probs = torch.zeros(batch.tgt_out.shape, dtype=torch.float32, device=rows.device)
    log_probs[real] = chosen
    return log_probs, weights


def _unpadded(log_probs: torch.Tensor, weights: torch.Tensor | None, batch: Batch, row: int) -> ForcedPair:
    """One row of a batch without its padding: its target positions and source positions."""
    length = int((batch.tgt_out[row] != PAD).sum())
    source_length = int(batch.src_lengths[row])
    alignment = None if weights is None else weights[row, :length, :source_length].float().cpu().numpy()
    return ForcedPair(log_probs[row, :length].cpu().numpy(), alignment)

"""The frozen translation's teacher-forced passes, kept from one epoch to the next.

`train-aligner` trains the alignment module alone: the translation's weights are frozen
and it runs without dropout, so a pair's teacher-forced pass (the readout t_i, the
attention α_i and the annotations h_j: all the module reads) is the same at every epoch,
and computing it is most of a step's time (BENCHMARKS.md, "The frozen passes kept").
`FrozenPasses` computes each pair's pass once and keeps it, so that from the second
epoch on a step runs the module alone.

A pair's kept pass is always the one computed in its batch of the run's first epoch,
whichever step first needs it, so that a run resumed at any step keeps the passes that
a run that went through kept, and trains as it would have, bit for bit. In the first
epoch a step's batch is that batch, so its pass is the one the step would compute.

The passes kept are the first pairs' of the corpus, as many as train.frozen_passes_gib
holds (divided between the two models where two directions' modules train together);
the rest are computed with each step, in a batch of their own, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
import torch

from rnnsearch.config.train import TrainConfig
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.text.batches import Batch, PairSource, Pieces, epoch_batches, make_batch

GIB = 2**30
FLOAT_BYTES = 4


@dataclass(frozen=True)
class KeptSource:
    """The source side of a batch's kept passes as the alignment module reads it (the
    fields of a DecoderState that it reads): h_j (B, S, A), 0 at padding, and the padding."""

    annotations: torch.Tensor
    padding: torch.Tensor


Forced = tuple[torch.Tensor, torch.Tensor, KeptSource]
"""A batch's teacher-forced pass as the alignment module's terms read it: readout (B, T, l),
α (B, T, S) and the source side; 0 at every padded position."""


class FrozenPasses:
    """The kept teacher-forced passes of `model` (frozen, in eval mode) on `pairs` (read
    the other way round, target as source, where `swapped`: a reverse model's), within
    `budget` bytes; the first epoch's batches are `options`' (train.batch_tokens, …)."""

    def __init__(
        self, model: RNNSearch, pairs: PairSource, options: TrainConfig, *, budget: float, swapped: bool = False
    ):
        self.model, self.pairs, self.swapped = model, pairs, swapped
        self.first_epoch = epoch_batches(pairs, options.batch_tokens, options.max_batch_sentences, options.seed, 0)
        sizes = np.diff(self.first_epoch.bounds)
        self.place = np.empty(len(pairs), dtype=np.int64)  # each pair's batch, by its place in first_epoch.order
        self.place[self.first_epoch.order] = np.repeat(np.arange(len(sizes)), sizes)
        readout, annotation = model.decoder.output_layer.in_features, model.encoder.annotation_size
        sources = pairs.source_lengths.astype(np.int64) + 1  # </s> on both sides; lengths may be uint16
        targets = pairs.target_lengths.astype(np.int64) + 1
        if swapped:
            sources, targets = targets, sources
        pair_bytes = FLOAT_BYTES * (targets * readout + targets * sources + sources * annotation)
        self.kept_pairs = int(np.searchsorted(np.cumsum(pair_bytes, dtype=np.float64), budget, side="right"))
        self.kept_bytes = float(pair_bytes[: self.kept_pairs].sum())
        self.passes: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def _batch(self, indices: np.ndarray) -> Batch:
        """The pairs at `indices` as a batch on the model's device, swapped where the model reads them so."""
        chosen = [self.pairs[int(i)] for i in indices]
        if self.swapped:
            chosen = [(target, cast(Pieces, source)) for source, target in chosen]
        return make_batch(chosen).to(next(self.model.parameters()).device)

    @torch.no_grad()
    def _pass(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, KeptSource]:
        """The frozen model's teacher-forced pass of `batch`."""
        readout, weights, state = self.model.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
        return readout, cast(torch.Tensor, weights), KeptSource(state.annotations, state.padding)

    def forced(self, indices: np.ndarray, batch: Batch) -> Forced | None:
        """The pass of `batch`, the pairs at `indices`: the kept passes of those kept,
        computed for the others; None where none of its pairs is kept, for the step to
        compute as it would without keeping."""
        indices = np.asarray(indices)
        if not (indices < self.kept_pairs).any():
            return None
        self._keep_missing(indices)
        fresh = indices[indices >= self.kept_pairs]
        passes = {}
        if fresh.size:
            passes = dict(zip(fresh.tolist(), self._split(fresh, self._pass(self._batch(fresh))), strict=True))
        chosen = [self.passes[i] if i < self.kept_pairs else passes[i] for i in indices.tolist()]
        return _padded(chosen, batch)

    def _keep_missing(self, indices: np.ndarray) -> None:
        """Compute and keep the passes of the kept pairs of `indices` not yet kept, each in its first-epoch batch."""
        missing = [i for i in indices.tolist() if i < self.kept_pairs and i not in self.passes]
        first = self.first_epoch
        for place in sorted({int(self.place[i]) for i in missing}):
            members = first.order[first.bounds[place] : first.bounds[place + 1]]
            for index, kept in zip(
                members.tolist(), self._split(members, self._pass(self._batch(members))), strict=True
            ):
                if index < self.kept_pairs:
                    self.passes[index] = kept

    def _split(self, indices: np.ndarray, forced: Forced) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """Each pair's readout (T_k, l), α (T_k, S_k) and annotations (S_k, A) of a batch's
        pass, copied out of the batch's tensors so that keeping them keeps nothing else."""
        readout, weights, source = forced
        sources, targets = self.pairs.source_lengths[indices] + 1, self.pairs.target_lengths[indices] + 1
        if self.swapped:
            sources, targets = targets, sources
        return [
            (readout[row, :t].clone(), weights[row, :t, :s].clone(), source.annotations[row, :s].clone())
            for row, (s, t) in enumerate(zip(sources.tolist(), targets.tolist(), strict=True))
        ]


def _padded(passes: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]], batch: Batch) -> Forced:
    """The batch's pass from its pairs' passes, 0 at every padded position."""
    count, targets, sources = len(passes), batch.tgt_out.size(1), batch.src.size(1)
    readout_width, annotation_width = passes[0][0].size(-1), passes[0][2].size(-1)
    first = passes[0][0]
    readout = first.new_zeros((count, targets, readout_width))
    weights = first.new_zeros((count, targets, sources))
    annotations = first.new_zeros((count, sources, annotation_width))
    for row, (pair_readout, pair_weights, pair_annotations) in enumerate(passes):
        t, s = pair_weights.shape
        readout[row, :t] = pair_readout
        weights[row, :t, :s] = pair_weights
        annotations[row, :s] = pair_annotations
    padding = torch.arange(sources, device=batch.src.device).unsqueeze(0) >= batch.src_lengths.unsqueeze(1)
    return readout, weights, KeptSource(annotations, padding)

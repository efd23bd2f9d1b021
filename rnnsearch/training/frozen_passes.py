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

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch

from rnnsearch.config.train import TrainConfig
from rnnsearch.model.seq2seq import RNNSearch, SourceSide
from rnnsearch.text.batches import Batch, PairSource, Pieces, epoch_batches, make_batch

GIB = 2**30
FLOAT_BYTES = 4
OFFSET_BYTES = 3 * 8  # where a kept pair's readout, α and annotations start in the stores


@dataclass(frozen=True)
class KeptSource:
    """The source side of a batch's kept passes as the alignment module reads it (the
    fields of a DecoderState that it reads): h_j (B, S, A), 0 at padding, and the padding."""

    annotations: torch.Tensor
    padding: torch.Tensor


Forced = tuple[torch.Tensor, torch.Tensor, KeptSource]
"""A batch's teacher-forced pass as the alignment module's terms read it: readout (B, T, l),
α (B, T, S) and the source side; 0 at every padded position."""

TeacherForced = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor | None, SourceSide]
]
"""What computes a batch's pass from its src, src_lengths and tgt_in: `RNNSearch.teacher_forced`,
or on a GPU the same replayed as CUDA graphs (graphed_loss.GraphedPass)."""

PairPass = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
"""One pair's pass: its readout (T_k, l), α (T_k, S_k) and annotations (S_k, A)."""


class FrozenPasses:
    """The kept teacher-forced passes of `model` (frozen, in eval mode) on `pairs` (read
    the other way round, target as source, where `swapped`: a reverse model's), within
    `budget` bytes; the first epoch's batches are `options`' (train.batch_tokens, …); a
    batch's pass is computed by `teacher_forced` (None: the model's own).

    The kept pairs' passes lie in three stores, one row of the readout or the
    annotations per piece and α flat, allocated once, so that a kept pair costs its
    floats and three offsets and no object of its own."""

    def __init__(
        self,
        model: RNNSearch,
        pairs: PairSource,
        options: TrainConfig,
        *,
        budget: float,
        swapped: bool = False,
        teacher_forced: TeacherForced | None = None,
    ):
        self.model, self.pairs, self.swapped = model, pairs, swapped
        self.teacher_forced = teacher_forced or model.teacher_forced
        self.first_epoch = epoch_batches(pairs, options.batch_tokens, options.max_batch_sentences, options.seed, 0)
        sizes = np.diff(self.first_epoch.bounds)
        self.place = np.empty(len(pairs), dtype=np.int64)  # each pair's batch, by its place in first_epoch.order
        self.place[self.first_epoch.order] = np.repeat(np.arange(len(sizes)), sizes)
        readout, annotation = model.decoder.output_layer.in_features, model.encoder.annotation_size
        self.sources, self.targets = self._lengths()
        pair_bytes = (
            FLOAT_BYTES * (self.targets * readout + self.targets * self.sources + self.sources * annotation)
            + OFFSET_BYTES
        )
        self.kept_pairs = int(np.searchsorted(np.cumsum(pair_bytes, dtype=np.float64), budget, side="right"))
        self.kept_bytes = float(pair_bytes[: self.kept_pairs].sum())
        kept = slice(0, self.kept_pairs)
        self.target_start = _starts(self.targets[kept])
        self.source_start = _starts(self.sources[kept])
        self.weight_start = _starts(self.targets[kept] * self.sources[kept])
        device = next(model.parameters()).device
        self.readouts = torch.empty((int(self.target_start[-1]), readout), device=device)
        self.weights = torch.empty(int(self.weight_start[-1]), device=device)
        self.annotations = torch.empty((int(self.source_start[-1]), annotation), device=device)
        self.held = np.zeros(self.kept_pairs, dtype=bool)

    def _lengths(self) -> tuple[np.ndarray, np.ndarray]:
        """Each pair's source and target length as the model reads it, </s> on both sides,
        in int64: a prepared corpus's lengths are uint16, whose products would wrap."""
        sources = self.pairs.source_lengths.astype(np.int64) + 1
        targets = self.pairs.target_lengths.astype(np.int64) + 1
        return (targets, sources) if self.swapped else (sources, targets)

    def _batch(self, indices: np.ndarray) -> Batch:
        """The pairs at `indices` as a batch on the model's device, swapped where the model reads them so."""
        chosen = [self.pairs[int(i)] for i in indices]
        if self.swapped:
            chosen = [(target, cast(Pieces, source)) for source, target in chosen]
        return make_batch(chosen).to(next(self.model.parameters()).device)

    @torch.no_grad()
    def _pass(self, indices: np.ndarray) -> list[PairPass]:
        """The frozen model's teacher-forced pass of the pairs at `indices`, as one batch, pair by pair."""
        batch = self._batch(indices)
        readout, weights, state = self.teacher_forced(batch.src, batch.src_lengths, batch.tgt_in)
        assert weights is not None, "a model with a module attends"
        attention = weights
        return [
            (readout[row, :t], attention[row, :t, :s], state.annotations[row, :s])
            for row, (s, t) in enumerate(
                zip(self.sources[indices].tolist(), self.targets[indices].tolist(), strict=True)
            )
        ]

    def forced(self, indices: np.ndarray, batch: Batch) -> Forced | None:
        """The pass of `batch`, the pairs at `indices`: the kept passes of those kept,
        computed for the others; None where none of its pairs is kept, for the step to
        compute as it would without keeping."""
        indices = np.asarray(indices)
        if not (indices < self.kept_pairs).any():
            return None
        self._keep_missing(indices)
        fresh = indices[indices >= self.kept_pairs]
        if not fresh.size:
            return self._gathered(indices, batch)
        computed = dict(zip(fresh.tolist(), self._pass(fresh), strict=True))
        return _padded([computed[i] if i in computed else self._kept(i) for i in indices.tolist()], batch)

    def _keep_missing(self, indices: np.ndarray) -> None:
        """Compute and keep the passes of the kept pairs of `indices` not yet kept, each in its first-epoch batch."""
        missing = [i for i in indices.tolist() if i < self.kept_pairs and not self.held[i]]
        first = self.first_epoch
        for place in sorted({int(self.place[i]) for i in missing}):
            members = first.order[first.bounds[place] : first.bounds[place + 1]]
            for index, (readout, weights, source) in zip(members.tolist(), self._pass(members), strict=True):
                if index < self.kept_pairs:
                    self.readouts[self.target_start[index] : self.target_start[index + 1]] = readout
                    self.weights[self.weight_start[index] : self.weight_start[index + 1]] = weights.flatten()
                    self.annotations[self.source_start[index] : self.source_start[index + 1]] = source
                    self.held[index] = True

    def _gathered(self, indices: np.ndarray, batch: Batch) -> Forced:
        """The pass of `batch`, whose pairs (at `indices`) are all kept, in one gather from
        each store (a copy per pair would be three per pair, each a kernel on a GPU); 0 at
        every padded position."""
        sources, targets = self.sources[indices][:, None], self.targets[indices][:, None]
        source_real = np.arange(batch.src.size(1)) < sources  # (B, S)
        target_real = np.arange(batch.tgt_out.size(1)) < targets  # (B, T)
        weight_real = target_real[:, :, None] & source_real[:, None, :]
        weight_at = self.weight_start[indices][:, None, None] + (
            np.arange(target_real.shape[1])[None, :, None] * sources[:, :, None] + np.arange(source_real.shape[1])
        )
        readout = self._gather(
            self.readouts, self.target_start[indices][:, None] + np.arange(target_real.shape[1]), target_real
        )
        weights = self._gather(self.weights, weight_at, weight_real)
        annotations = self._gather(
            self.annotations, self.source_start[indices][:, None] + np.arange(source_real.shape[1]), source_real
        )
        padding = torch.from_numpy(~source_real).to(batch.src.device)
        return readout, weights, KeptSource(annotations, padding)

    def _gather(self, store: torch.Tensor, at: np.ndarray, real: np.ndarray) -> torch.Tensor:
        """The rows (or values) of `store` at `at` where `real`, 0 elsewhere."""
        device = store.device
        values = store[torch.from_numpy(np.where(real, at, 0)).to(device)]
        mask = torch.from_numpy(real).to(device)
        return values.where(mask.view(*mask.shape, *([1] * (values.dim() - mask.dim()))), 0.0)

    def _kept(self, index: int) -> PairPass:
        """The kept pass of pair `index`, as views of the stores."""
        targets, sources = int(self.targets[index]), int(self.sources[index])
        return (
            self.readouts[self.target_start[index] : self.target_start[index + 1]],
            self.weights[self.weight_start[index] : self.weight_start[index + 1]].view(targets, sources),
            self.annotations[self.source_start[index] : self.source_start[index + 1]],
        )


def _starts(sizes: np.ndarray) -> np.ndarray:
    """Where each of consecutive blocks of `sizes` starts, then the total."""
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _padded(passes: list[PairPass], batch: Batch) -> Forced:
    """The batch's pass from its pairs' passes, 0 at every padded position."""
    count, targets, sources = len(passes), batch.tgt_out.size(1), batch.src.size(1)
    first = passes[0][0]
    readout = first.new_zeros((count, targets, first.size(-1)), dtype=torch.float32)
    weights = first.new_zeros((count, targets, sources), dtype=torch.float32)
    annotations = first.new_zeros((count, sources, passes[0][2].size(-1)), dtype=torch.float32)
    for row, (pair_readout, pair_weights, pair_annotations) in enumerate(passes):
        t, s = pair_weights.shape
        readout[row, :t] = pair_readout
        weights[row, :t, :s] = pair_weights
        annotations[row, :s] = pair_annotations
    padding = torch.arange(sources, device=batch.src.device).unsqueeze(0) >= batch.src_lengths.unsqueeze(1)
    return readout, weights, KeptSource(annotations, padding)

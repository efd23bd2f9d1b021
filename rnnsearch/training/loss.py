"""Label-smoothed cross-entropy over real target positions only."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rnnsearch.text.batches import Batch
from rnnsearch.text.subwords import PAD


def sequence_loss(model, batch: Batch, label_smoothing: float) -> tuple[torch.Tensor, int]:
    """Summed loss over the batch's target tokens, and how many there are.

    The vocabulary projection, the costliest layer, is applied to real (unpadded)
    positions only; padding therefore contributes neither loss nor work.
    """
    readout, _ = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, l)
    real = batch.tgt_out != PAD
    logits = model.logits(readout[real])  # (N, V)
    loss = F.cross_entropy(logits.float(), batch.tgt_out[real], label_smoothing=label_smoothing, reduction="sum")
    return loss, int(real.sum())

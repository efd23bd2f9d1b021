"""Label-smoothed cross-entropy over real target positions only."""

from __future__ import annotations

import torch

from rnnsearch.text.batches import Batch
from rnnsearch.text.subwords import PAD


class SmoothedCrossEntropy(torch.autograd.Function):
    """Summed label-smoothed cross-entropy of logits (N, V) against targets (N,).

    loss_n = (1 - ε) · (−log p(y_n)) + ε · mean_v(−log p(v)), as torch's
    cross_entropy(label_smoothing=ε) defines it. Forward keeps only the row
    log-normalisers; backward writes the gradient softmax − smoothed one-hot in one
    pass. Over an 8k vocabulary this saves the full-size intermediate tensors
    (zero-filled gradients, a second smoothing term) that dominate the loss's cost.
    """

    @staticmethod
    def forward(ctx, logits: torch.Tensor, targets: torch.Tensor, smoothing: float) -> torch.Tensor:
        log_normaliser = torch.logsumexp(logits, dim=1, keepdim=True)  # (N, 1)
        nll = log_normaliser.squeeze(1) - logits.gather(1, targets.unsqueeze(1)).squeeze(1)
        uniform = log_normaliser.squeeze(1) - logits.mean(dim=1)
        ctx.save_for_backward(logits, log_normaliser, targets)
        ctx.smoothing = smoothing
        return ((1.0 - smoothing) * nll + smoothing * uniform).sum()

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        logits, log_normaliser, targets = ctx.saved_tensors
        smoothing = ctx.smoothing
        grad = torch.exp(logits - log_normaliser)  # softmax
        grad.sub_(smoothing / logits.size(1))
        grad.scatter_add_(1, targets.unsqueeze(1), torch.full_like(log_normaliser, smoothing - 1.0))
        return grad.mul_(grad_output), None, None


def sequence_loss(model, batch: Batch, label_smoothing: float) -> tuple[torch.Tensor, int]:
    """Summed loss over the batch's target tokens, and how many there are.

    The vocabulary projection, the costliest layer, is applied to real (unpadded)
    positions only; padding therefore contributes neither loss nor work.
    """
    readout, _ = model(batch.src, batch.src_lengths, batch.tgt_in)  # (B, T, l)
    real = batch.tgt_out != PAD
    logits = getattr(model, "module", model).logits(readout[real]).float()  # (N, V); `module` under DDP
    loss = SmoothedCrossEntropy.apply(logits, batch.tgt_out[real], label_smoothing)
    return loss, int(real.sum())

"""The affine maps of the model, y = x Wᵀ + b, computed by the kernel set in use."""

from __future__ import annotations

import torch
from torch import nn

from rnnsearch import kernels

CHUNK_ELEMENTS = 1 << 22
"""Logits computed at once where an output layer runs over many rows (the loss, a given
pair's log-probabilities, the alignment module's normaliser): 16 MiB of fp32, so a chunk
stays in cache."""


class Linear(nn.Linear):
    """`nn.Linear` (same parameters, same state-dict keys) whose product is the active
    kernel set's: `F.linear` by reference, a packed oneDNN product in CPU search."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return kernels.linear(x, self.weight, self.bias)

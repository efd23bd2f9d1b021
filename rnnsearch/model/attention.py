"""From energies to the context: masked softmax → weights α_ij → context c_i.

`FixedContext` is the baseline without an alignment model: one context for all
target positions, so the decoder code is the same for both.
"""

from __future__ import annotations

import torch
from torch import nn


def masked_softmax(energies: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
    """Softmax over source positions with padding weighted exactly 0.

    energies (B, S), padding (B, S) True at padded positions. Padding is filled with
    the most negative finite float rather than -inf, so exp() gives exactly 0 there
    while a row with no real position stays finite instead of turning into NaN.
    """
    lowest = torch.finfo(energies.dtype).min
    return energies.masked_fill(padding, lowest).softmax(dim=-1)


class Attention(nn.Module):
    """Soft attention of Bahdanau et al. (2015), eqs. (5) and (6), around a score."""

    def __init__(self, score: nn.Module):
        super().__init__()
        self.score = score

    def keys(self, annotations: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        return self.score.keys(annotations)

    def forward(
        self, query: torch.Tensor, keys: torch.Tensor, annotations: torch.Tensor, padding: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """query (B, D), keys (B, S, n), annotations (B, S, 2H), padding (B, S)
        → context c (B, 2H), weights α (B, S)."""
        energies = self.score(query, keys).float()  # e_ij, in fp32 under autocast too
        weights = masked_softmax(energies, padding)  # α_ij
        context = torch.bmm(weights.unsqueeze(1).to(annotations.dtype), annotations).squeeze(1)  # c_i
        return context, weights


class FixedContext(nn.Module):
    """c = [→h_Tx ; ←h_1] at every target position: the fixed-length encoder summary of
    Cho et al. (2014), the bottleneck that RNNsearch removes (MODEL.md §1)."""

    def keys(self, annotations: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        """(B, S, 2H) → the summary (B, 2H): forward state at the last word, backward at the first."""
        half = annotations.size(2) // 2
        last = (~padding).sum(1) - 1  # (B,)
        forward_last = annotations[torch.arange(annotations.size(0), device=annotations.device), last, :half]
        return torch.cat([forward_last, annotations[:, 0, half:]], dim=1)

    def forward(
        self, query: torch.Tensor, keys: torch.Tensor, annotations: torch.Tensor, padding: torch.Tensor
    ) -> tuple[torch.Tensor, None]:
        """The same context c (B, 2H) whatever the step; there are no weights to return."""
        return keys, None

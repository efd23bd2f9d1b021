"""Alignment models a(s, h_j) → energies e_ij: the one registry of scores.

Each score splits its work in two: `keys(annotations)` runs once per batch and holds
everything that depends on the source only; `forward(query, keys)` runs once per
target step. Adding a score means adding one class here and one registry entry.
"""

from __future__ import annotations

import torch
from torch import nn


class AdditiveScore(nn.Module):
    """e_ij = v_aᵀ tanh(W_a s + U_a h_j), Bahdanau et al. (2015), eq. (6) and A.1.2."""

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int):
        super().__init__()
        self.query_layer = nn.Linear(query_size, hidden_size, bias=False)  # W_a
        self.key_layer = nn.Linear(annotation_size, hidden_size)  # U_a (with the bias)
        self.v = nn.Linear(hidden_size, 1, bias=False)  # v_a

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """(B, S, 2H) → U_a h_j: (B, S, n)."""
        return self.key_layer(annotations)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """query s (B, D), keys (B, S, n) → energies e (B, S)."""
        hidden = torch.tanh(keys + self.query_layer(query).unsqueeze(1))  # (B, S, n)
        return self.v(hidden).squeeze(2)


SCORES: dict[str, type[nn.Module]] = {
    "additive": AdditiveScore,
}

"""Alignment models a(s, h_j) → energies e_ij: the one registry of scores.

Each score splits its work in two: `keys(annotations)` runs once per batch and holds
everything that depends on the source only; `forward(query, keys)` scores T target
positions at once, query (B, T, D) → energies (B, T, S): T = 1 in a step-by-step
decoder, the whole target when the queries are known in advance. Adding a score means
adding one class here and one entry in SCORES; the config schema (settings.py), the
model builder (seq2seq.py) and the tests read the registry.

The query s is s_{i-1} in the Bahdanau wiring and s_i in Luong's (docs/model.md §3, §4).

Coverage (docs/model.md §3, "Coverage"): a score whose `reads_coverage` is True can
also read C_{i-1,j} = Σ_{k<i} α_kj, the attention each source position has received
before target position i, as `coverage` (B, T, S). Only the additive score has a place
for it (Tu et al. 2016); the config refuses coverage with any other.
"""

from __future__ import annotations

import math
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from rnnsearch import kernels
from rnnsearch.model.linear import Linear


class AttentionScore(nn.Module):
    """What every score a(s, h_j) is to the attention that reads it: its keys, computed
    once per batch from the annotations (`keys`), the energies e of queries against
    them (`forward`), and whether it reads the coverage C (`reads_coverage`)."""

    reads_coverage: ClassVar[bool] = False

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class AdditiveScore(AttentionScore):
    """e_ij = v_aᵀ tanh(W_a s + U_a h_j): Bahdanau et al. (2015), eq. (6) and A.1.2.

    With coverage, e_ij = v_aᵀ tanh(W_a s + U_a h_j + V_a C_{i-1,j}), V_a ∈ R^{n×1}: Tu
    et al. (2016)'s linguistic coverage. Without it the score has no V_a, so models
    trained without coverage keep their parameters.
    """

    reads_coverage = True

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int, *, coverage: bool = False):
        super().__init__()
        self.query_layer = Linear(query_size, hidden_size, bias=False)  # W_a
        self.key_layer = Linear(annotation_size, hidden_size)  # U_a (with the bias)
        self.v = nn.Linear(hidden_size, 1, bias=False)  # v_a
        self.coverage_layer = nn.Linear(1, hidden_size, bias=False) if coverage else None  # V_a

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """(B, S, 2H) → U_a h_j: (B, S, n)."""
        return self.key_layer(annotations)

    def forward(self, query: torch.Tensor, keys: torch.Tensor, coverage: torch.Tensor | None = None) -> torch.Tensor:
        """query s (B, T, D), keys (B, S, n), coverage C (B, T, S) where the score has V_a →
        energies e (B, T, S)."""
        queries = self.query_layer(query)  # W_a s: (B, T, n)
        if coverage is not None and self.coverage_layer is not None:  # U_a h_j + V_a C_{i-1,j}: (B, T, S, n)
            keys = keys.unsqueeze(1) + coverage.unsqueeze(-1).to(keys.dtype) * self.coverage_layer.weight[:, 0]
        fast = kernels.active().additive_energies
        if fast is not None:
            return fast(queries, keys, self.v.weight[0])
        per_position = keys.unsqueeze(1) if coverage is None else keys  # (B, 1 or T, S, n)
        hidden = torch.tanh(per_position + queries.unsqueeze(2))  # tanh(W_a s_i + U_a h_j [+ V_a C_{i-1,j}])
        return self.v(hidden).squeeze(-1)


class GeneralScore(AttentionScore):
    """e_ij = sᵀ W_a h_j (bilinear): Luong et al. (2015), "general". W_a h_j is a key."""

    reads_coverage = False

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int):
        super().__init__()
        self.key_layer = Linear(annotation_size, query_size, bias=False)  # W_a

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        return self.key_layer(annotations)  # (B, S, D)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return torch.bmm(query, keys.transpose(1, 2))


class DotScore(AttentionScore):
    """e_ij = sᵀ h_j: Luong et al. (2015), "dot".

    When s and h_j differ in size, h_j is first projected to the size of s (a learned
    linear map, once per batch); with equal sizes there are no parameters at all.
    """

    reads_coverage = False

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int):
        super().__init__()
        self.size = query_size
        self.key_layer = (
            nn.Identity() if annotation_size == query_size else Linear(annotation_size, query_size, bias=False)
        )

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        return self.key_layer(annotations)  # (B, S, D)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return torch.bmm(query, keys.transpose(1, 2))


class ScaledDotScore(DotScore):
    """e_ij = sᵀ h_j / √n, the Transformer's scaling (Vaswani et al. 2017), n = size of s."""

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return super().forward(query, keys) / math.sqrt(self.size)


class CosineScore(DotScore):
    """e_ij = cos(s, h_j): content-based addressing (Graves et al. 2014), in [−1, 1]."""

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        return F.normalize(super().keys(annotations), dim=-1)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return super().forward(F.normalize(query, dim=-1), keys)


class LocationScore(AttentionScore):
    """α_i = softmax(W_a s): Luong et al. (2015), "location".

    The energies depend on the decoder state alone, one per source position up to
    `hidden_size` positions (the config's attention.size); the softmax is masked to
    the real source length like every other score.
    """

    reads_coverage = False

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int):
        super().__init__()
        self.positions = Linear(query_size, hidden_size)  # W_a

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        if annotations.size(1) > self.positions.out_features:
            raise ValueError(
                f"location attention covers {self.positions.out_features} source positions, got {annotations.size(1)}"
            )
        return annotations.new_empty(annotations.size(0), annotations.size(1), 0)  # (B, S, 0): nothing to cache

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return self.positions(query)[..., : keys.size(1)]


SCORES: dict[str, type[AttentionScore]] = {
    "additive": AdditiveScore,
    "general": GeneralScore,
    "dot": DotScore,
    "scaled_dot": ScaledDotScore,
    "cosine": CosineScore,
    "location": LocationScore,
}

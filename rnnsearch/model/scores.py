"""Alignment models a(s, h_j) → energies e_ij: the one registry of scores.

Each score splits its work in two: `keys(annotations)` runs once per batch and holds
everything that depends on the source only; `forward(query, keys)` scores T target
positions at once, query (B, T, D) → energies (B, T, S): T = 1 in a step-by-step
decoder, the whole target when the queries are known in advance. Adding a score means
adding one class here and one entry in SCORES; the config schema, the model builder
(seq2seq.py) and the tests read the registry.

The query s is s_{i-1} in the Bahdanau wiring and s_i in Luong's (docs/model.md §3, §4).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from rnnsearch.model.activations import tanh_
from rnnsearch.model.linear import Linear


class AdditiveScore(nn.Module):
    """e_ij = v_aᵀ tanh(W_a s + U_a h_j): Bahdanau et al. (2015), eq. (6) and A.1.2."""

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int):
        super().__init__()
        self.query_layer = Linear(query_size, hidden_size, bias=False)  # W_a
        self.key_layer = Linear(annotation_size, hidden_size)  # U_a (with the bias)
        self.v = nn.Linear(hidden_size, 1, bias=False)  # v_a

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        """(B, S, 2H) → U_a h_j: (B, S, n)."""
        return self.key_layer(annotations)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """query s (B, T, D), keys (B, S, n) → energies e (B, T, S)."""
        if torch.onnx.is_in_onnx_export():
            return _additive_energies_as_one_product(self.query_layer(query), keys, self.v.weight[0])
        return _AdditiveEnergies.apply(self.query_layer(query), keys, self.v.weight[0])


def _additive_hidden(queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """tanh(W_a s_i + U_a h_j) for every i, j: (B, T, n) and (B, S, n) → (B, T, S, n)."""
    return tanh_(keys.unsqueeze(1) + queries.unsqueeze(2))


def _additive_energies_as_one_product(queries: torch.Tensor, keys: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """v_aᵀ tanh(W_a s_i + U_a h_j) with every (i, j) as a row of one (B·T·S, n) × (n, 1)
    product: the form an exported graph takes, since ONNX Runtime multiplies a 4-D tensor
    by a vector far more slowly than one matrix by another (BENCHMARKS.md, "ONNX Runtime
    packages")."""
    hidden = _additive_hidden(queries, keys)
    return torch.matmul(hidden.flatten(0, -2), v.unsqueeze(1)).view(hidden.shape[:-1])


def _additive_energies_from_sigmoid(queries: torch.Tensor, keys: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """v_aᵀ tanh(x) as 2 v_aᵀ σ(2x) − Σ v_a, x = W_a s_i + U_a h_j: (B, T, S).

    The same energies as with tanh (tanh(x) = 2σ(2x) − 1), which on the CPU is itself
    computed from sigmoid, but the (B, T, S, n) tensor, the largest of a decoder step,
    is passed over three times instead of five. Kept to fp32: in bf16 the product with
    v_a would be rounded at the scale of Σ v_a σ, which can be far larger than the
    energies themselves.
    """
    hidden = torch.add(keys.unsqueeze(1), queries.unsqueeze(2)).mul_(2).sigmoid_()
    return torch.matmul(hidden, v * 2).sub_(v.sum())


class _AdditiveEnergies(torch.autograd.Function):
    """e = v_aᵀ tanh(W_a s + U_a h_j) from W_a s (B, T, n), U_a h_j (B, S, n) and v_a (n).

    The backward pass recomputes the tanh instead of keeping it: in training that is a
    (B, S, n) tensor for every target position, the largest thing the decoder loop
    would otherwise hold until the backward pass.
    """

    @staticmethod
    def forward(ctx, queries: torch.Tensor, keys: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(queries, keys, v)
        if queries.device.type == "cpu" and queries.dtype == torch.float32:
            return _additive_energies_from_sigmoid(queries, keys, v)
        return torch.matmul(_additive_hidden(queries, keys), v.to(queries.dtype))

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        queries, keys, v = ctx.saved_tensors
        hidden = _additive_hidden(queries, keys)
        grad = grad.to(hidden.dtype)
        grad_v = torch.matmul(grad.reshape(1, -1), hidden.reshape(-1, hidden.size(-1))).squeeze(0)
        grad_hidden = (
            hidden.square_().neg_().add_(1).mul_(grad.unsqueeze(-1)).mul_(v.to(hidden.dtype))
        )  # ∂e/∂(pre-tanh)
        return grad_hidden.sum(2), grad_hidden.sum(1), grad_v.to(v.dtype)


class GeneralScore(nn.Module):
    """e_ij = sᵀ W_a h_j (bilinear): Luong et al. (2015), "general". W_a h_j is a key."""

    def __init__(self, query_size: int, annotation_size: int, hidden_size: int):
        super().__init__()
        self.key_layer = Linear(annotation_size, query_size, bias=False)  # W_a

    def keys(self, annotations: torch.Tensor) -> torch.Tensor:
        return self.key_layer(annotations)  # (B, S, D)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return torch.bmm(query, keys.transpose(1, 2))


class DotScore(nn.Module):
    """e_ij = sᵀ h_j: Luong et al. (2015), "dot".

    When s and h_j differ in size, h_j is first projected to the size of s (a learned
    linear map, once per batch); with equal sizes there are no parameters at all.
    """

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


class LocationScore(nn.Module):
    """α_i = softmax(W_a s): Luong et al. (2015), "location".

    The energies depend on the decoder state alone, one per source position up to
    `hidden_size` positions (the config's attention.size); the softmax is masked to
    the real source length like every other score.
    """

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


SCORES: dict[str, type[nn.Module]] = {
    "additive": AdditiveScore,
    "general": GeneralScore,
    "dot": DotScore,
    "scaled_dot": ScaledDotScore,
    "cosine": CosineScore,
    "location": LocationScore,
}

"""Fast forms of the additive score's energies e_ij = v_aᵀ tanh(W_a s_i + U_a h_j).

The reference is `AdditiveScore.forward` (model/scores.py). These take the score's two
halves, queries W_a s_i (B, T, n) and keys U_a h_j (B, S, n), with v_a (n), and return
the energies (B, T, S). With coverage the keys differ by target position, U_a h_j +
V_a C_{i-1,j} (B, T, S, n), and are taken in that form.
"""

from __future__ import annotations

import torch

from rnnsearch.kernels.sigmoid_tanh import tanh_


def _per_position(keys: torch.Tensor) -> torch.Tensor:
    """Keys (B, S, n) shared by every target position, or (B, T, S, n) of each, → a form
    that adds to queries (B, T, 1, n)."""
    return keys.unsqueeze(1) if keys.dim() == 3 else keys


def _hidden(queries: torch.Tensor, keys: torch.Tensor, tanh=torch.Tensor.tanh_) -> torch.Tensor:
    """tanh(W_a s_i + U_a h_j) for every i, j: (B, T, n) and (B, [T,] S, n) → (B, T, S, n)."""
    return tanh(_per_position(keys) + queries.unsqueeze(2))


def as_one_product(queries: torch.Tensor, keys: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Every (i, j) as a row of one (B·T·S, n) × (n, 1) product: the form an exported
    graph takes, since ONNX Runtime multiplies a 4-D tensor by a vector far more slowly
    than one matrix by another (BENCHMARKS.md, "ONNX Runtime packages")."""
    hidden = _hidden(queries, keys)
    return torch.matmul(hidden.flatten(0, -2), v.unsqueeze(1)).view(hidden.shape[:-1])


def from_sigmoid(queries: torch.Tensor, keys: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """v_aᵀ tanh(x) as 2 v_aᵀ σ(2x) − Σ v_a, x = W_a s_i + U_a h_j.

    The same energies as with tanh (tanh(x) = 2σ(2x) − 1, see sigmoid_tanh.py), but the
    (B, T, S, n) tensor, the largest of a decoder step, is passed over three times
    instead of five. Kept to fp32: in bf16 the product with v_a would be rounded at the
    scale of Σ v_a σ, which can be far larger than the energies themselves.
    """
    hidden = torch.add(_per_position(keys), queries.unsqueeze(2)).mul_(2).sigmoid_()
    return torch.matmul(hidden, v * 2).sub_(v.sum())


def recomputed_on_cpu(queries: torch.Tensor, keys: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The energies with a backward pass that recomputes the tanh; forward in the sigmoid
    form in fp32, with the sigmoid-form tanh otherwise."""
    return _Recomputed.apply(queries, keys, v, True)


def recomputed(queries: torch.Tensor, keys: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The energies with a backward pass that recomputes the tanh, with torch.tanh."""
    return _Recomputed.apply(queries, keys, v, False)


class _Recomputed(torch.autograd.Function):
    """e = v_aᵀ tanh(W_a s + U_a h_j), whose backward pass recomputes the tanh instead of
    keeping it: in training that is a (B, S, n) tensor for every target position, the
    largest thing the decoder loop would otherwise hold until the backward pass."""

    @staticmethod
    def forward(ctx, queries: torch.Tensor, keys: torch.Tensor, v: torch.Tensor, cpu: bool) -> torch.Tensor:
        ctx.save_for_backward(queries, keys, v)
        ctx.tanh = tanh_ if cpu else torch.Tensor.tanh_
        if cpu and queries.dtype == torch.float32:
            return from_sigmoid(queries, keys, v)
        return torch.matmul(_hidden(queries, keys, ctx.tanh), v.to(queries.dtype))

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, None]:
        queries, keys, v = ctx.saved_tensors
        hidden = _hidden(queries, keys, ctx.tanh)
        grad = grad.to(hidden.dtype)
        grad_v = torch.matmul(grad.reshape(1, -1), hidden.reshape(-1, hidden.size(-1))).squeeze(0)
        grad_hidden = (
            hidden.square_().neg_().add_(1).mul_(grad.unsqueeze(-1)).mul_(v.to(hidden.dtype))
        )  # ∂e/∂(pre-tanh)
        grad_keys = grad_hidden.sum(1) if keys.dim() == 3 else grad_hidden
        return grad_hidden.sum(2), grad_keys, grad_v.to(v.dtype), None

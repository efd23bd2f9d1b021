"""tanh, computed the fast way on the CPU.

On the CPU, torch.tanh runs several times slower than torch.sigmoid (BENCHMARKS.md,
"Where the time goes, and how close to the machine's ceiling"), and the additive score applies tanh to a
(B, T, S, n) tensor at every decoder step: in decoding it was the largest cost after
the matrix products. tanh(x) = 2σ(2x) − 1 is an identity, so the same function is
computed from sigmoid, to within 2e-7 absolute (float rounding near 0). The CPU kernel
sets use it (kernels/__init__.py); other devices and exported ONNX graphs, whose runtime
has a fast tanh of its own, keep torch.tanh.
"""

from __future__ import annotations

import torch


def tanh(x: torch.Tensor) -> torch.Tensor:
    """tanh(x) in a new tensor, differentiable."""
    if x.requires_grad and torch.is_grad_enabled():
        return _SigmoidTanh.apply(x)
    return _sigmoid_tanh(x)


def tanh_(x: torch.Tensor) -> torch.Tensor:
    """tanh(x) written over x, for a temporary that nothing else reads; differentiable."""
    if x.requires_grad and torch.is_grad_enabled():
        return _SigmoidTanhInPlace.apply(x)
    return _sigmoid_tanh_(x)


def _sigmoid_tanh(x: torch.Tensor) -> torch.Tensor:
    """2σ(2x) − 1 in one new tensor."""
    return torch.mul(x, 2).sigmoid_().mul_(2).sub_(1)


def _sigmoid_tanh_(x: torch.Tensor) -> torch.Tensor:
    """x ← 2σ(2x) − 1, in place."""
    return x.mul_(2).sigmoid_().mul_(2).sub_(1)


class _SigmoidTanh(torch.autograd.Function):
    """Saves only the output, like torch.tanh: d tanh(x)/dx = 1 − tanh(x)²."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        y = _sigmoid_tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


class _SigmoidTanhInPlace(_SigmoidTanh):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.mark_dirty(x)
        y = _sigmoid_tanh_(x)
        ctx.save_for_backward(y)
        return y

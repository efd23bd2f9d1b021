"""Affine maps y = x Wᵀ + b, with weights packed for oneDNN on the CPU.

On the CPU PyTorch multiplies fp32 matrices with MKL, which runs this model's products
(tens to hundreds of rows against a 1536 × 512 or 8,000 × 256 weight) well below the
machine's rate. oneDNN, given the weight reordered once into its own blocked layout,
runs the same products 1.2–2.5× faster. Packing costs about as much as one product, so
it pays where a weight is used many times while it stays the same: at every decoder
step of a search, and at every target position of one training step's forward and
backward passes.

Those are the scopes that pack: `with packed_weights():` around a search or a training
step's forward and backward passes. Inside one, each weight is packed on first use and
the packed copy is dropped when the scope ends, so no optimizer step (fused Adam writes
to the weights without moving their version counters) can leave a stale copy behind.
Outside any scope, and for small weights, autocast, other dtypes or CUDA, `linear` is
`F.linear`.

In training the forward products and the gradient of x (by the packed Wᵀ) take this
path; the gradient of W, a sum over rows, stays a plain matrix product.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

ROWS_HINT = 64  # the row count oneDNN chooses its weight layout for; any count works
MIN_PACKED_ELEMENTS = 1 << 17  # below about 512 × 256, packing (~0.1 ms) and oneDNN's
# per-call overhead (~20 µs) cost more than the faster product saves

_ONEDNN = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
_scope = threading.local()  # .packed: {weight's identity: (weight, packed)} inside a scope, else absent


@contextmanager
def packed_weights() -> Iterator[None]:
    """Pack the weights of the products inside, none of which may change until it ends;
    a scope opened inside another shares its packed weights."""
    if _in_scope():
        yield
        return
    _scope.packed = {}
    try:
        yield
    finally:
        _scope.packed = None


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """x (…, in) → (…, out): x Wᵀ + b, as `F.linear`; `weight` may be a view such as a
    block of columns of a larger matrix."""
    if not _packable(x, weight):
        return F.linear(x, weight, bias)
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (x, weight, bias)):
        rows = _PackedLinear.apply(x.reshape(-1, x.size(-1)), weight, bias)  # (N, out): not a view, so
        return rows.view(*x.shape[:-1], -1)  # the caller may change it in place
    return _packed_product(x, weight, bias)


def _packed_product(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return torch.ops.mkldnn._linear_pointwise(x, packed_weight(weight), bias, "none", [], "")


def packed_weight(weight: torch.Tensor) -> torch.Tensor:
    """The oneDNN copy of `weight` for the current scope, packed on first use. The entry
    keeps the weight alive, so no other tensor can take its address while the scope lasts."""
    key = (weight.data_ptr(), tuple(weight.shape), weight.stride(), weight._version)
    entry = _scope.packed.get(key)
    if entry is None:
        entry = (weight, torch.ops.mkldnn._reorder_linear_weight(weight.contiguous(), ROWS_HINT))
        _scope.packed[key] = entry
    return entry[1]


def _in_scope() -> bool:
    return getattr(_scope, "packed", None) is not None


def _packable(x: torch.Tensor, weight: torch.Tensor) -> bool:
    return (
        _ONEDNN
        and _in_scope()
        and torch.backends.mkldnn.enabled
        and x.device.type == "cpu"
        and weight.numel() >= MIN_PACKED_ELEMENTS
        and x.dtype == weight.dtype == torch.float32
        and not torch.is_autocast_enabled("cpu")
        and x.dim() >= 2
        and x.numel() > 0
    )


class _PackedLinear(torch.autograd.Function):
    """x Wᵀ + b for x (N, in), with packed products forward and for ∂x (by the packed Wᵀ);
    ∂W sums over the N rows, where a plain matrix product is as fast."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return _packed_product(x, weight, bias)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, weight = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:  # by the packed Wᵀ when the backward pass runs inside the scope
            grad_x = _packed_product(grad, weight.t(), None) if _in_scope() else grad.mm(weight)
        grad_weight = grad.t().mm(x) if ctx.needs_input_grad[1] else None
        grad_bias = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_weight, grad_bias


class Linear(nn.Linear):
    """`nn.Linear` (same parameters, same state-dict keys) whose products use the packed
    weight inside a `packed_weights()` scope."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.weight, self.bias)

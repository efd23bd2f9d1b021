"""Affine maps y = x Wᵀ + b with weights packed for oneDNN: the CPU search kernel's products.

On the CPU PyTorch multiplies fp32 matrices with MKL, which runs the decoder's small
products (tens to hundreds of rows against a 1536 × 512 or 8,000 × 256 weight) well
below the machine's rate. oneDNN, given the weight reordered once into its own blocked
layout, runs the same products faster (BENCHMARKS.md, "Packed oneDNN weights"). Packing costs about as much as one
product, so it pays where a weight is used many times while it stays the same: at
every decoder step of a search.

`with packed_weights():` opens such a scope (using the CPU search kernels opens one). Inside
it, each weight is packed on first use, and the packed copy is dropped when the scope
ends, so no later write to the weights (fused Adam changes them without moving their
version counters) can leave a stale copy behind. Under bfloat16 autocast the packed
copy is bfloat16 and the product is the one autocast's `F.linear` computes, bit for bit,
only faster (oneDNN there too, but with the weight converted and reordered at every
call; BENCHMARKS.md, "Fewer rows and fewer passes in search"). Outside any scope,
under autograd, and for small weights, few rows, other dtypes or CUDA, `linear` is
`F.linear`, the reference.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F

ROWS_HINT = 64  # the row count oneDNN chooses its weight layout for; any count works
ROW_MULTIPLE = 32  # rows are padded to a multiple of this: oneDNN compiles and caches code
# for every row count it sees, and a search sees hundreds: unpadded, that code held much memory
# (BENCHMARKS.md, "Packed oneDNN weights")
MIN_PACKED_ROWS = 16  # fewer rows (one sentence, or one beam): MKL, with no packing to pay
# for and no padding, so a single translation is no slower
MIN_PACKED_ELEMENTS = 1 << 17  # below about 512 × 256, packing and oneDNN's per-call
# overhead cost more than the faster product saves (BENCHMARKS.md, "Packed oneDNN weights")

_ONEDNN = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
_ONEDNN_BF16 = _ONEDNN and torch.ops.mkldnn._is_mkldnn_bf16_supported()
_scope = threading.local()  # .packed: {weight's identity: (weight, packed)} inside a scope


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
    count = x.numel() // x.size(-1) if x.dim() > 1 else 0  # rows
    dtype = _packed_dtype(x, weight) if count >= MIN_PACKED_ROWS else None
    if dtype is None:
        return F.linear(x, weight, bias)
    rows = x.reshape(count, -1).to(dtype)
    if count % ROW_MULTIPLE:
        rows = F.pad(rows, (0, 0, 0, -count % ROW_MULTIPLE))
    bias = None if bias is None else bias.to(dtype)
    products = torch.ops.mkldnn._linear_pointwise(rows, packed_weight(weight, dtype), bias, "none", [], "")
    return products[:count].view(*x.shape[:-1], -1)


def packed_weight(weight: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The oneDNN copy of `weight` in `dtype` for the current scope, packed on first use.
    The entry keeps the weight alive, so no other tensor can take its address while the
    scope lasts."""
    key = (weight.data_ptr(), tuple(weight.shape), weight.stride(), weight._version, dtype)
    entry = _scope.packed.get(key)
    if entry is None:
        entry = (weight, torch.ops.mkldnn._reorder_linear_weight(weight.to(dtype).contiguous(), ROWS_HINT))
        _scope.packed[key] = entry
    return entry[1]


def _in_scope() -> bool:
    return getattr(_scope, "packed", None) is not None


def _packed_dtype(x: torch.Tensor, weight: torch.Tensor) -> torch.dtype | None:
    """The dtype of the packed product: float32, or bfloat16 under bfloat16 autocast;
    None where the product is not packed."""
    if not (
        _ONEDNN
        and _in_scope()
        and not torch.is_grad_enabled()
        and torch.backends.mkldnn.enabled
        and x.device.type == "cpu"
        and weight.numel() >= MIN_PACKED_ELEMENTS
        and weight.dtype == torch.float32
    ):
        return None
    if not torch.is_autocast_enabled("cpu"):
        return torch.float32 if x.dtype == torch.float32 else None
    bfloat16 = _ONEDNN_BF16 and torch.get_autocast_dtype("cpu") == torch.bfloat16
    return torch.bfloat16 if bfloat16 and x.dtype in (torch.float32, torch.bfloat16) else None

"""The speed machinery, and the one place that chooses it.

The model (rnnsearch/model/) computes what docs/model.md states, with torch's own
operations: torch.tanh, F.linear, e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j), the decoder's
step loop. That is the reference, and it is what runs unless a kernel set says
otherwise. A kernel set replaces some of those computations with faster forms of the
same arithmetic, each tested against the reference:

    sigmoid_tanh.py   tanh(x) = 2σ(2x) − 1: on the CPU torch.tanh is several times slower
    additive.py       the additive energies with fewer passes, or as one product for ONNX
    fused_decoder.py  the paper's training loop with a hand-written backward pass
    packed.py         products with weights packed once for oneDNN while searching
    capture.py        what capturing a CUDA graph asks of the process

`choose` picks the set for a device and a purpose (training, search, export) once, and
`use` makes it the active one for the code inside: the trainer opens one for training,
every search and every scoring run its own, the exporter one for its graphs. The model
reads the active set where a replaceable computation runs (`kernels.tanh(x)`,
`kernels.linear(…)`, `kernels.active().additive_energies`), so whatever runs is named
here, and the first use of each set is logged ("kernels: cpu-train — …"). Where a set
gives no form (None), the model computes its reference.

Whether training and search replay their steps as CUDA graphs (training/graphed_loss.py,
which replays the training loss's own function; the fixed-shape search,
search/fixed_shape.py, which follows the search package's rules) is chosen here too,
as part of the set.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Literal

import torch
import torch.nn.functional as F

from rnnsearch.kernels import additive, fused_decoder, packed, sigmoid_tanh

Purpose = Literal["train", "search", "export"]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Kernels:
    """One choice of computations.

    name, description   what the log says
    tanh, tanh_          tanh in a new tensor, or written over a temporary nothing else reads
    linear               x Wᵀ + b as `F.linear(x, weight, bias)`
    log_softmax          log-softmax over the last dimension of a search step's logits,
                         which nothing else reads
    additive_energies    (W_a s (B, T, n), U_a h_j (B, S, n), v_a (n)) → e (B, T, S), or None
    attentive_gru        the fused training loop of the paper's decoder, or None
    packs_weights        whether products pack their weights for the scope of `use`
    cuda_graphs          whether training and search replay fixed shapes as CUDA graphs
    """

    name: str
    description: str
    tanh: Callable[[torch.Tensor], torch.Tensor] = torch.tanh
    tanh_: Callable[[torch.Tensor], torch.Tensor] = torch.Tensor.tanh_
    linear: Callable[..., torch.Tensor] = F.linear
    log_softmax: Callable[[torch.Tensor], torch.Tensor] = lambda logits: logits.log_softmax(dim=-1)
    additive_energies: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] | None = None
    attentive_gru: Callable[..., tuple[torch.Tensor, torch.Tensor, torch.Tensor]] | None = None
    packs_weights: bool = False
    cuda_graphs: bool = False


def _log_softmax_in_place(logits: torch.Tensor) -> torch.Tensor:
    """Normalised in place: a second (R, V) tensor at every step, the largest of a beam
    search step, slowed beam search on the CPU (BENCHMARKS.md, "Fewer rows and fewer
    passes in search")."""
    if torch.is_grad_enabled():
        return logits.log_softmax(dim=-1)
    return torch.log_softmax(logits, dim=-1, out=logits)


REFERENCE = Kernels("reference", "torch's own operations, as the model states them")
CPU_TRAINING = Kernels(
    "cpu-train",
    "sigmoid-form tanh, additive energies recomputed in the backward pass, fused Bahdanau GRU loop",
    tanh=sigmoid_tanh.tanh,
    tanh_=sigmoid_tanh.tanh_,
    additive_energies=additive.recomputed_on_cpu,
    attentive_gru=fused_decoder.attentive_gru,
)
CPU_TRAINING_BF16 = replace(
    CPU_TRAINING,
    name="cpu-train-bf16",
    description="sigmoid-form tanh, additive energies recomputed in the backward pass",
    attentive_gru=None,
)
CPU_SEARCH = Kernels(
    "cpu-search",
    "sigmoid-form tanh and additive energies, packed oneDNN products, in-place log-softmax",
    tanh=sigmoid_tanh.tanh,
    tanh_=sigmoid_tanh.tanh_,
    linear=packed.linear,
    log_softmax=_log_softmax_in_place,
    additive_energies=additive.recomputed_on_cpu,
    packs_weights=True,
)
ACCELERATOR = Kernels(
    "accelerator",
    "torch's operations, additive energies recomputed in the backward pass",
    additive_energies=additive.recomputed,
)
CUDA_GRAPHS = replace(
    ACCELERATOR,
    name="cuda-graphs",
    description="fixed shapes replayed as CUDA graphs, additive energies recomputed in the backward pass",
    cuda_graphs=True,
)
ONNX_EXPORT = Kernels(
    "onnx-export",
    "torch's operations, the additive energies as one product for ONNX Runtime",
    additive_energies=additive.as_one_product,
)


def choose(
    device: torch.device | str, *, purpose: Purpose, precision: str = "fp32", cuda_graphs: bool = True
) -> Kernels:
    """The kernel set for `purpose` on `device` in `precision` (fp32 or bf16);
    `cuda_graphs` False keeps a CUDA device's steps eager."""
    kind = torch.device(device).type
    if purpose == "export":
        return ONNX_EXPORT
    if kind == "cpu":
        if purpose == "search":
            return CPU_SEARCH
        return CPU_TRAINING if precision == "fp32" else CPU_TRAINING_BF16
    graphs = kind == "cuda" and cuda_graphs and (purpose == "search" or precision == "fp32")
    return CUDA_GRAPHS if graphs else ACCELERATOR


_active: contextvars.ContextVar[Kernels] = contextvars.ContextVar("kernels", default=REFERENCE)
_announced: set[str] = set()


@contextmanager
def use(kernels: Kernels) -> Iterator[Kernels]:
    """Make `kernels` the active set inside; a set used inside another replaces it until it ends."""
    if kernels.name not in _announced:
        _announced.add(kernels.name)
        log.info("kernels: %s — %s", kernels.name, kernels.description)
    token = _active.set(kernels)
    try:
        if kernels.packs_weights:
            with packed.packed_weights():
                yield kernels
        else:
            yield kernels
    finally:
        _active.reset(token)


def active() -> Kernels:
    """The set in use here: REFERENCE outside any `use`."""
    return _active.get()


def tanh(x: torch.Tensor) -> torch.Tensor:
    """tanh(x) in a new tensor."""
    return _active.get().tanh(x)


def tanh_(x: torch.Tensor) -> torch.Tensor:
    """tanh(x) written over x, a temporary that nothing else reads."""
    return _active.get().tanh_(x)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """x Wᵀ + b; `weight` may be a view such as a block of columns of a larger matrix."""
    return _active.get().linear(x, weight, bias)


def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    """log softmax over the last dimension of logits that nothing else reads."""
    return _active.get().log_softmax(logits)

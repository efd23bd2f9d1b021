"""From energies to the context: masked softmax → weights α_ij → context c_i.

`FixedContext` is the baseline without an alignment model: one context for all
target positions, so the decoder code is the same for both.

With coverage (docs/model.md §3) the score also reads C_{i-1,j} = Σ_{k<i} α_kj, the
attention each source position has received before target position i; the decoder
state carries it from step to step (state.py) and the wirings add each step's α_i.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from rnnsearch.model.scores import AttentionScore
    from rnnsearch.model.state import DecoderState


def masked_softmax(energies: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
    """Softmax over source positions with padding weighted exactly 0.

    energies (…, S), padding broadcastable to it, True at padded positions. Padding is filled with
    the most negative finite float rather than -inf, so exp() gives exactly 0 there
    while a row with no real position stays finite instead of turning into NaN.
    """
    lowest = torch.finfo(energies.dtype).min
    return energies.masked_fill(padding, lowest).softmax(dim=-1)


class Attention(nn.Module):
    """Soft attention of Bahdanau et al. (2015), eqs. (5) and (6), around a score."""

    def __init__(self, score: AttentionScore):
        super().__init__()
        self.score = score

    @property
    def covers(self) -> bool:
        """Whether the score reads the coverage C (it then holds V_a)."""
        return getattr(self.score, "coverage_layer", None) is not None

    def source_side(self, annotations: torch.Tensor, padding: torch.Tensor) -> dict[str, torch.Tensor | None]:
        """What every step reuses, computed once per batch: the score's keys (B, S, n)."""
        return {"keys": self.score.keys(annotations), "fixed_context": None}

    def forward(
        self, query: torch.Tensor, source: DecoderState, coverage: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """query (B, D) for one target position or (B, T, D) for T at once, the source side
        of `source` (B sentences: keys, annotations h_j, padding) and, where the score
        covers, each query's C_{i-1} (B, [T,] S) → context c (B, [T,] A), weights α (B, [T,] S)."""
        one_position = query.dim() == 2
        queries = query.unsqueeze(1) if one_position else query
        keys = source.keys
        assert keys is not None, "held wherever a score attends"
        if coverage is None:
            energies = self.score(queries, keys)
        else:
            energies = self.score(queries, keys, coverage.unsqueeze(1) if one_position else coverage)
        energies = energies.float()  # e_ij: (B, T, S), in fp32 under autocast too
        weights = masked_softmax(energies, source.padding.unsqueeze(1))  # α_ij
        context = torch.bmm(weights.to(source.annotations.dtype), source.annotations)  # c_i: (B, T, A)
        if one_position:
            return context.squeeze(1), weights.squeeze(1)
        return context, weights


class FixedContext(nn.Module):
    """c = [→h_Tx ; ←h_1] (or →h_Tx for a unidirectional encoder) at every target
    position: the fixed-length encoder summary of Cho et al. (2014), the bottleneck
    that RNNsearch removes (docs/model.md §1)."""

    covers = False  # no alignment model, nothing to cover (the config refuses coverage here)

    def __init__(self, bidirectional: bool):
        super().__init__()
        self.bidirectional = bidirectional

    def source_side(self, annotations: torch.Tensor, padding: torch.Tensor) -> dict[str, torch.Tensor | None]:
        """The fixed context c (B, A), once per batch: the encoder's summary of the
        source, the forward state at the last word and the backward state at the first."""
        return {"keys": None, "fixed_context": self.summary(annotations, padding)}

    def summary(self, annotations: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
        """(B, S, A) → c (B, A)."""
        last = (~padding).sum(1) - 1  # (B,)
        at_last = annotations[torch.arange(annotations.size(0), device=annotations.device), last]
        if not self.bidirectional:
            return at_last
        half = annotations.size(2) // 2
        return torch.cat([at_last[:, :half], annotations[:, 0, half:]], dim=1)

    def forward(
        self, query: torch.Tensor, source: DecoderState, coverage: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, None]:
        """The same context c (B, [T,] A) whatever the position; there are no weights to
        return, and no coverage to read."""
        context = source.fixed_context
        assert context is not None, "the baseline's state always holds it"
        if query.dim() == 3:
            return context.unsqueeze(1).expand(-1, query.size(1), -1), None
        return context, None

"""Several trained models searching as one: the mean of their log-probabilities at every step.

At step i every member m computes its own log p_m(y_i | y_<i, x) from its own decoder
state; the ensemble's distribution is

    log p(y_i | y_<i, x) = (1/M) Σ_m log p_m(y_i | y_<i, x)

(a normalised product of the members' distributions, which is not itself normalised),
and search ranks hypotheses by the sum of these over the output. The members share
one target vocabulary, so they step on the same previous token; each reads the source
through its own encoder and, where the members' source subword models differ, its own
pieces of it.

The alignment an ensemble reports is the mean of the members' α over the same source
pieces: those of the *reference* member (the first with an alignment model) and of
every other member with an alignment model that reads the source in the same pieces.
A member without an alignment model, or with other source pieces, still votes on
every token but not on the alignment.

An `Ensemble` offers what search uses of a model (`encode`, `step`, `has_alignment`),
and its `EnsembleState` the row operations search applies to a decoder state, so the
batched greedy and beam searches run an ensemble unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import torch
from torch import nn

from rnnsearch.model.decoder import DecoderState
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.reserved import PAD


@dataclass(frozen=True)
class EnsembleState:
    """The members' decoder states, one per member, on the same rows.

    `padding` is the reference member's: the source positions of the alignment.
    """

    members: tuple[DecoderState, ...]
    reference: int

    @property
    def padding(self) -> torch.Tensor:
        return self.members[self.reference].padding

    def select(self, rows: torch.Tensor) -> EnsembleState:
        return self._each(lambda state: state.select(rows))

    def without(self, ended: torch.Tensor) -> tuple[EnsembleState, torch.Tensor]:
        """As DecoderState.without: every member retires the same rows in the same way."""
        results = [state.without(ended) for state in self.members]
        return EnsembleState(tuple(state for state, _ in results), self.reference), results[0][1]

    def tile_beams(self, k: int) -> EnsembleState:
        return self._each(lambda state: state.tile_beams(k))

    def reorder_beams(self, rows: torch.Tensor) -> EnsembleState:
        return self._each(lambda state: state.reorder_beams(rows))

    def extend(self, other: EnsembleState) -> EnsembleState:
        states = tuple(ours.extend(theirs) for ours, theirs in zip(self.members, other.members, strict=True))
        return EnsembleState(states, self.reference)

    def _each(self, operation) -> EnsembleState:
        return EnsembleState(tuple(operation(state) for state in self.members), self.reference)


class Ensemble(nn.Module):
    """Members that decode together; see the module's docstring.

    sides[m] is the source side member m reads. With one side, `encode` takes the
    source as a single model does; with several, src is (B, S, sides) piece ids, side g
    in src[:, :, g], each padded with <pad> and ending in </s>.
    """

    def __init__(self, members: Sequence[RNNSearch], sides: Sequence[int]):
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one member")
        if len(sides) != len(members):
            raise ValueError(f"{len(sides)} source sides given for {len(members)} members")
        self.members = nn.ModuleList(members)
        self.sides = list(sides)
        aligned = [m for m, member in enumerate(members) if member.has_alignment]
        self.reference = aligned[0] if aligned else 0
        self.aligned = [m for m in aligned if self.sides[m] == self.sides[self.reference]]

    @property
    def has_alignment(self) -> bool:
        """True when some member has an alignment model."""
        return bool(self.aligned)

    @property
    def graphs(self) -> str | None:
        """The exported members' graphs, joined ("fp32", "fp32+int8"); None when PyTorch runs every member."""
        exported = sorted({member.graphs for member in self.models if member.graphs is not None})
        return "+".join(exported) or None

    @property
    def parameter_count(self) -> int:
        """Every member's trained weights."""
        return sum(member.parameter_count for member in self.models)

    @property
    def side_count(self) -> int:
        return max(self.sides) + 1

    @property
    def models(self) -> Sequence[RNNSearch]:
        """The members, as the models they are (an ONNX Runtime package's model stands in
        for an RNNSearch, with the same `encode` and `step`); not copied, as every step reads them."""
        return cast(Sequence[RNNSearch], self.members)

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> EnsembleState:
        """Every member's initial state over its own annotations of the source."""
        if self.side_count == 1:
            states = tuple(member.encode(src, src_lengths) for member in self.models)
            return EnsembleState(states, self.reference)
        sides = [_side(src, g) for g in range(self.side_count)]
        states = tuple(member.encode(*sides[side]) for member, side in zip(self.models, self.sides))
        return EnsembleState(states, self.reference)

    def step(
        self, prev_tokens: torch.Tensor, state: EnsembleState, scored: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, EnsembleState, torch.Tensor | None]:
        """One search step of every member: the mean of their log p(y_i) (of the `scored`
        rows only, if given), their next states, the mean α_i of the aligned members."""
        steps = [member.step(prev_tokens, s, scored) for member, s in zip(self.models, state.members)]
        log_probs = mean([log_p for log_p, _, _ in steps])
        aligned = [weights for m in self.aligned if (weights := steps[m][2]) is not None]  # an aligned member gives α
        weights = mean(aligned) if aligned else None
        return log_probs, EnsembleState(tuple(s for _, s, _ in steps), self.reference), weights


def side_numbers(source_models: Sequence[object], has_alignment: Sequence[bool]) -> list[int]:
    """The source side each member reads, from what identifies its source subword model
    (equal values: the same pieces): members with the same model share a side, and the
    reference member's side (the first member with an alignment model) is side 0."""
    reference = has_alignment.index(True) if True in has_alignment else 0
    order = [source_models[reference]]
    for model in source_models:
        if model not in order:
            order.append(model)
    return [order.index(model) for model in source_models]


def mean(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """The element-wise mean of equally shaped tensors; a single tensor is returned as it is,
    so an ensemble of one decodes exactly as its member."""
    if len(tensors) == 1:
        return tensors[0]
    total = tensors[0].float().clone()
    for tensor in tensors[1:]:
        total += tensor
    return total.div_(len(tensors))


def _side(src: torch.Tensor, side: int) -> tuple[torch.Tensor, torch.Tensor]:
    """One side's ids (B, S') out of the stacked sources, cut to its longest source, and its lengths."""
    ids = src[:, :, side]
    lengths = (ids != PAD).sum(1)
    return ids[:, : int(lengths.max())], lengths

"""The decoder's state between steps: what a step reads and writes, per row (a sentence,
or one hypothesis of a beam), and the row operations search applies to it. Its own
module, below the alignment model, the wirings and the decoder, which all read it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import torch

from rnnsearch.model.recurrent import layer_state

RECURRENT = ("state", "memory", "feed", "coverage")
"""A DecoderState's fields with a row per hypothesis, in the order it takes them."""

SOURCE_SIDE = ("annotations", "keys", "fixed_context", "padding")
"""A DecoderState's fields with a row per sentence, shared by its beam, after RECURRENT."""


@dataclass(frozen=True)
class DecoderState:
    """Everything a decoder step needs; rows are sentences, or sentence × beam.

    state       s_{i-1}, every layer     (R, L, D)
    memory      LSTM cells, or None      (R, L, D)
    feed        h̃_{i-1} for input feeding, or None  (R, l)
    coverage    C_{i-1,j} = Σ_{k<i} α_kj, the attention each source position has had
                before step i, or None without coverage  (R, S); 0 at padding
    annotations h_j                      (R/K, S, A)
    keys        the score's source side, precomputed once per batch (e.g. U_a h_j),
                (R/K, S, n); None for the fixed-context baseline
    fixed_context  the fixed-context baseline's c, the same at every step (R/K, A);
                None with an alignment model
    padding                              (R/K, S)  True at padded source positions
    beam        K: the consecutive rows that share one sentence's source side. The K
                hypotheses of a beam read the same h_j, so it is held once per
                sentence, not copied K times (and copied again whenever rows move).
    """

    state: torch.Tensor
    memory: torch.Tensor | None
    feed: torch.Tensor | None
    coverage: torch.Tensor | None
    annotations: torch.Tensor
    keys: torch.Tensor | None
    fixed_context: torch.Tensor | None
    padding: torch.Tensor
    beam: int = 1

    @classmethod
    def from_fields(cls, fields: Iterable[torch.Tensor | None], *, beam: int = 1) -> DecoderState:
        """A state of `beam` from its tensors in the order of `fields()`: RECURRENT, then SOURCE_SIDE."""
        values: dict[str, Any] = dict(zip((*RECURRENT, *SOURCE_SIDE), fields, strict=True))
        return cls(**values, beam=beam)

    @classmethod
    def from_names(cls, tensors: Mapping[str, torch.Tensor | None], *, beam: int = 1) -> DecoderState:
        """A state of `beam` from its tensors by field name (a field not given: None)."""
        return cls.from_fields((tensors.get(name) for name in (*RECURRENT, *SOURCE_SIDE)), beam=beam)

    @property
    def top(self) -> torch.Tensor:
        """The last layer's state (R, D): the query of the alignment model."""
        return layer_state(self.state, -1)

    def select(self, rows: torch.Tensor) -> DecoderState:
        """The state of the given rows, in that order (retiring rows); with beams, rows
        come in whole blocks of K, and the source side follows their sentences."""
        sources = rows if self.beam == 1 else rows.view(-1, self.beam)[:, 0] // self.beam
        return DecoderState.from_fields(
            [*(_rows(t, rows) for t in self.recurrent()), *(_rows(t, sources) for t in self.source_side())],
            beam=self.beam,
        )

    def without(self, ended: torch.Tensor) -> tuple[DecoderState, torch.Tensor]:
        """The state without the rows where `ended` (R,) is True, and for each row kept the
        index it had before; one row per sentence (no beams).

        The last rows move into the places that free up, so retiring a few rows copies
        only the rows that move, where `select` copies every row that stays. The move is
        made in place: the state's tensors must not be read through any other reference.
        """
        if self.beam != 1:
            raise ValueError("rows can only be retired one by one without beams")
        ended = ended.cpu()
        count = int((~ended).sum())
        holes = ended[:count].nonzero().squeeze(1)
        movers = (~ended[count:]).nonzero().squeeze(1) + count
        order = torch.arange(count)
        order[holes] = movers
        if holes.numel() > 0:
            holes, movers = holes.to(self.padding.device), movers.to(self.padding.device)
            for tensor in self.fields():
                if tensor is not None:
                    tensor.index_copy_(0, holes, tensor.index_select(0, movers))
        kept = (None if tensor is None else tensor[:count] for tensor in self.fields())
        return DecoderState.from_fields(kept, beam=1), order

    def tile_beams(self, k: int) -> DecoderState:
        """K rows for every sentence, sharing its source side: the start of a beam search."""
        if self.beam != 1:
            raise ValueError("the state is already tiled into beams")
        tiled = (None if t is None else t.repeat_interleave(k, dim=0) for t in self.recurrent())
        return DecoderState.from_fields([*tiled, *self.source_side()], beam=k)

    def reorder_beams(self, rows: torch.Tensor) -> DecoderState:
        """Reorder the recurrent part only: for beams of one sentence, rows that trade
        places share the same source side, so annotations, keys and padding stay put."""
        return replace(
            self,
            state=self.state.index_select(0, rows),
            memory=_rows(self.memory, rows),
            feed=_rows(self.feed, rows),
            coverage=_rows(self.coverage, rows),
        )

    def extend(self, other: DecoderState) -> DecoderState:
        """These rows followed by `other`'s, for sentences that join a batch in flight.

        Both source sides are cut or padded to the longest real source among the rows;
        padded positions are masked, so every row attends exactly as it did before.
        """
        if other.beam != self.beam:
            raise ValueError(f"cannot join states of beam {self.beam} and {other.beam}")
        length = int(torch.cat([(~self.padding).sum(1), (~other.padding).sum(1)]).max())
        first, second = self.with_source_length(length), other.with_source_length(length)
        return DecoderState.from_fields(
            (_joined(a, b) for a, b in zip(first.fields(), second.fields())), beam=self.beam
        )

    def with_source_length(self, length: int) -> DecoderState:
        """The same rows with the source side and the coverage cut or padded to `length`
        positions; padded positions are masked (and covered 0), so every row attends as before."""
        return replace(
            self,
            coverage=None if self.coverage is None else _source_length(self.coverage, length, 0.0),
            annotations=_source_length(self.annotations, length, 0.0),
            keys=None if self.keys is None else _source_length(self.keys, length, 0.0),
            padding=_source_length(self.padding, length, True),
        )

    def recurrent(self) -> tuple[torch.Tensor | None, ...]:
        """The rows' own tensors, one row per hypothesis (RECURRENT)."""
        return tuple(getattr(self, name) for name in RECURRENT)

    def source_side(self) -> tuple[torch.Tensor | None, ...]:
        """The tensors a beam's rows share, one row per sentence (SOURCE_SIDE)."""
        return tuple(getattr(self, name) for name in SOURCE_SIDE)

    def fields(self) -> tuple[torch.Tensor | None, ...]:
        """Every tensor, in the order DecoderState takes them: the recurrent part, then the source side."""
        return *self.recurrent(), *self.source_side()


def _rows(tensor: torch.Tensor | None, rows: torch.Tensor) -> torch.Tensor | None:
    return None if tensor is None else tensor.index_select(0, rows)


def _source_length(tensor: torch.Tensor, length: int, fill: float | bool) -> torch.Tensor:
    """(R, S, …) → (R, length, …): cut, or padded with `fill`."""
    if tensor.size(1) >= length:
        return tensor[:, :length]
    extra = tensor.new_full((tensor.size(0), length - tensor.size(1), *tensor.shape[2:]), fill)
    return torch.cat([tensor, extra], dim=1)


def _joined(first: torch.Tensor | None, second: torch.Tensor | None) -> torch.Tensor | None:
    """One field of two states' rows, one after the other: both hold it, or neither."""
    if first is None or second is None:
        if first is not second:
            raise ValueError("cannot join a state that holds a field with one that does not")
        return None
    return torch.cat([first, second])

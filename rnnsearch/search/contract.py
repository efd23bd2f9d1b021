"""What search asks of a model and of its decoder state, in code (docs/architecture.md,
"What search asks of a model"). `RNNSearch`, `Ensemble` and `OnnxModel` satisfy these
Protocols, so each search is written once for all three, and the translator holds any
of them as a `SearchModule`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, Self, TypeVar

import torch
from torch import nn


class SearchState(Protocol):
    """A decoder state as search handles it: rows that finish are retired, beams are
    tiled and reordered, sentences join a batch in flight."""

    beam: int
    padding: torch.Tensor

    def select(self, rows: torch.Tensor) -> Self:
        """The state of the given rows, in that order."""
        ...

    def without(self, ended: torch.Tensor) -> tuple[Self, torch.Tensor]:
        """The state without the rows where `ended`, and the index each kept row had."""
        ...

    def tile_beams(self, k: int) -> Self:
        """K rows for every sentence, sharing its source side."""
        ...

    def reorder_beams(self, rows: torch.Tensor) -> Self:
        """The recurrent part reordered within the beams."""
        ...

    def extend(self, other: Self) -> Self:
        """These rows followed by `other`'s."""
        ...


StateT = TypeVar("StateT", bound=SearchState)
"""The state a model's steps pass on: `DecoderState`, or an ensemble's members' together."""


class SearchModel(Protocol[StateT]):
    """A model as search calls it: encode the sources once, then one step at a time, on
    its own kind of state."""

    @property
    def has_alignment(self) -> bool:
        """Whether step gives an alignment row (False for the fixed-context baseline)."""
        ...

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> StateT:
        """The initial decoder state of the sources."""
        ...

    def step(
        self, prev_tokens: torch.Tensor, state: StateT, scored: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, StateT, torch.Tensor | None]:
        """Log-probabilities (of the `scored` rows), the next state and α (or None)."""
        ...


class SearchModule(SearchModel[StateT], Protocol[StateT]):
    """A SearchModel as the translator holds it: a torch module too (its weights, its
    train and eval modes), which says what runs it and how many weights it has."""

    training: bool

    @property
    def graphs(self) -> str | None:
        """The weights of the exported graphs that run it (fp32 or int8); None: PyTorch runs it."""
        ...

    @property
    def parameter_count(self) -> int:
        """The trained weights of the model (of every member of an ensemble)."""
        ...

    def parameters(self, recurse: bool = True) -> Iterator[nn.Parameter]: ...

    def eval(self) -> Self: ...

    def train(self, mode: bool = True) -> Self: ...

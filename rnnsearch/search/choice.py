"""Which search runs a call: eager or fixed-shape, greedy or beam, chosen in one place.

On a GPU, launching a step's kernels costs more than running them: there the kernel
set for search asks for CUDA graphs, and the search keeps fixed shapes and replays each
step as a graph (search/fixed_shape.py). Its graphs hold one model's state and no
per-sentence constraints; ensembles, exported packages and constrained calls (prefixes)
search eagerly, as on the CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import torch

from rnnsearch import kernels
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.search.beam import beam_search
from rnnsearch.search.constraints import Constraint
from rnnsearch.search.contract import SearchModel
from rnnsearch.search.fixed_shape import fixed_shape_beam_search, fixed_shape_greedy_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import Hypothesis, SearchOptions


class Search(Protocol):
    """What every search is called with, and what it returns: each sentence's n-best list.
    `constraints` go to the eager searches, the only ones chosen with them."""

    def __call__(
        self,
        model: SearchModel,
        src: torch.Tensor,
        src_lengths: torch.Tensor,
        *,
        max_lengths: torch.Tensor,
        options: SearchOptions,
        constraints: Sequence[Constraint] = (),
    ) -> list[list[Hypothesis]]: ...


def choose_search(model: SearchModel, device: torch.device, options: SearchOptions, *, constrained: bool) -> Search:
    """The search for `model` on `device` with these options: beam search for a beam of
    more than one, greedy search otherwise, in fixed shapes where the device's search
    kernels replay CUDA graphs and the model and the call allow it (`constrained`: whether
    the call has per-sentence constraints, constraints.py)."""
    graphs = kernels.choose(device, purpose="search").cuda_graphs
    fixed = graphs and isinstance(model, RNNSearch) and not constrained
    if options.beam_size == 1:
        return fixed_shape_greedy_search if fixed else greedy_search
    return fixed_shape_beam_search if fixed else beam_search

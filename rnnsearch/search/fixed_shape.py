"""Greedy and beam search in fixed shapes, so that a GPU replays each step as a CUDA graph.

On a GPU one decoder step for 64 sentences is a chain of some 50 small kernels, and
launching them takes longer than running them; the searches in `greedy` and `beam`
also read every step's result back to the host, to retire finished sentences.
Here a batch of sentences keeps its shape until every one of them is done: finished
rows go on stepping with their results ignored, and whatever a step decides (the next
tokens, which hypotheses ended, the histories) stays on the device. One step is
captured as a CUDA graph once per batch shape and then replayed; the host looks at
the device only every `CHECK_EVERY` steps, to see whether the batch is done.

The results are those of `greedy_search` and `beam_search`: the same rules, step for
step, on the same rows. On the CPU the same code runs without capture, which is how
the tests compare the two.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import torch

from rnnsearch.kernels.capture import garbage_collector_paused
from rnnsearch.model.decoder import DecoderState
from rnnsearch.reserved import BOS, EOS
from rnnsearch.search.beam import accept, top_extensions
from rnnsearch.search.constraints import Constraint
from rnnsearch.search.contract import SearchModel
from rnnsearch.search.rules import (
    GREEDY,
    Cancelled,
    Hypothesis,
    SearchOptions,
    check,
    constrained_step,
    finished,
    with_search_kernels,
)

CHECK_EVERY = 8
"""Steps replayed between two looks at whether a batch is done."""

SOURCE_MULTIPLE = 16
"""Source lengths are padded up to a multiple of this, so that batches share graphs."""

WARM_UP_STEPS = 2
"""Eager steps before a capture, so that libraries set themselves up outside the graph."""


@torch.no_grad()
@with_search_kernels
def fixed_shape_greedy_search(
    model: SearchModel,
    src: torch.Tensor,
    src_lengths: torch.Tensor,
    *,
    max_lengths: torch.Tensor,
    options: SearchOptions = GREEDY,
    constraints: Sequence[Constraint] = (),
) -> list[list[Hypothesis]]:
    """`greedy_search`'s results, `options.in_flight` sentences (default: all) at a time
    in the order given; `options.cancelled` is asked every `CHECK_EVERY` steps. Takes no
    `constraints` (choice.py searches a constrained call eagerly)."""
    _unconstrained(constraints)
    return [
        hypotheses
        for loop, lengths in _searched_batches(model, src, src_lengths, max_lengths, options, beams=False)
        for hypotheses in loop.hypotheses(lengths, options)
    ]


@torch.no_grad()
@with_search_kernels
def fixed_shape_beam_search(
    model: SearchModel,
    src: torch.Tensor,
    src_lengths: torch.Tensor,
    *,
    max_lengths: torch.Tensor,
    options: SearchOptions,
    constraints: Sequence[Constraint] = (),
) -> list[list[Hypothesis]]:
    """`beam_search`'s results, `options.in_flight` sentences (default: all) at a time in
    the order given; `options.cancelled` is asked every `CHECK_EVERY` steps. Takes no
    `constraints`, as greedy."""
    _unconstrained(constraints)
    return [
        hypotheses
        for loop, lengths in _searched_batches(model, src, src_lengths, max_lengths, options, beams=True)
        for hypotheses in loop.hypotheses(lengths, options)
    ]


def _unconstrained(constraints: Sequence[Constraint]) -> None:
    """Refuse per-sentence constraints: a graph holds no state of theirs."""
    if constraints:
        raise ValueError("the fixed-shape searches take no per-sentence constraints; search eagerly")


def _searched_batches(
    model,
    src: torch.Tensor,
    src_lengths: torch.Tensor,
    max_lengths: torch.Tensor,
    options: SearchOptions,
    *,
    beams: bool,
) -> Iterator[tuple[_Loop, list[int]]]:
    """Each batch's loop once it has run (beams of options.beam_size, or greedy), with the
    batch's source lengths; the loop's tensors hold the batch until the next one is loaded."""
    longest = int(max_lengths.max())
    make = _BeamLoop if beams else _GreedyLoop
    loops = _Loops(lambda start: make(model, start, longest), src.device)
    for batch in _batches(src.size(0), options.in_flight):
        start = _start(model, src, src_lengths, batch)
        if beams:
            start = start.tile_beams(options.beam_size)
        loop = loops.get(start)
        loop.load(start, max_lengths[batch].to(src.device))
        loop.run(int(max_lengths[batch].max()), options.cancelled)
        yield loop, src_lengths[batch].tolist()


def _batches(count: int, in_flight: int | None) -> list[torch.Tensor]:
    size = in_flight or count
    return [torch.arange(first, min(count, first + size)) for first in range(0, count, size)]


def _start(model, src: torch.Tensor, src_lengths: torch.Tensor, batch: torch.Tensor) -> DecoderState:
    """The batch's initial decoder state, its source side padded to a multiple of
    SOURCE_MULTIPLE positions (no further than the longest source of the search)."""
    index = batch.to(src.device)
    lengths = src_lengths[index]
    longest = int(lengths.max())
    state = model.encode(src[index, :longest], lengths)
    return state.with_source_length(min(src.size(1), -(-longest // SOURCE_MULTIPLE) * SOURCE_MULTIPLE))


class _Loop:
    """The tensors of one batch shape, updated in place by `step`: what a CUDA graph needs."""

    def __init__(self, model, start: DecoderState, longest: int):
        self.model = model
        self.state = DecoderState.from_fields(
            (None if t is None else t.clone() for t in start.fields()), beam=start.beam
        )
        self.position = torch.zeros(1, dtype=torch.long, device=start.padding.device)
        self.max_lengths = torch.zeros(start.padding.size(0), dtype=torch.long, device=start.padding.device)
        self.longest = longest
        self.with_alignments = model.has_alignment
        self.graph: torch.cuda.CUDAGraph | None = None  # `step`, captured, on a GPU

    def load(self, start: DecoderState, max_lengths: torch.Tensor) -> None:
        """Begin a batch of the same shape: its initial state, and the output steps allowed
        to each sentence."""
        for buffer, value in zip(self.state.fields(), start.fields()):
            if buffer is not None and value is not None:  # a shape's states hold the same fields
                buffer.copy_(value)
        self.position.zero_()
        self.max_lengths.copy_(max_lengths)

    def step(self) -> None:
        """One search step for every row; reads nothing back to the host."""
        raise NotImplementedError

    def hypotheses(self, src_lengths: list[int], options: SearchOptions) -> list[list[Hypothesis]]:
        """Each sentence's results, once the batch is done."""
        raise NotImplementedError

    def done(self) -> bool:
        """Whether every sentence of the batch is done; waits for the device."""
        raise NotImplementedError

    def run(self, steps: int, cancelled: Cancelled | None) -> None:
        """Up to `steps` steps, fewer once every row is done."""
        taken = 0
        while taken < steps:
            check(cancelled)
            for _ in range(min(CHECK_EVERY, steps - taken)):
                self.step() if self.graph is None else self.graph.replay()
            taken += CHECK_EVERY
            if self.done():
                return

    def _advance_state(self, state: DecoderState) -> None:
        """Take the recurrent part of the next state; the source side never changes."""
        for buffer, value in zip(self.state.recurrent(), state.recurrent()):
            if buffer is not None and value is not None:
                buffer.copy_(value)


class _GreedyLoop(_Loop):
    def __init__(self, model, start: DecoderState, longest: int):
        super().__init__(model, start, longest)
        rows, device = start.padding.size(0), start.padding.device
        self.prev = torch.zeros(rows, dtype=torch.long, device=device)
        self.tokens = torch.zeros(rows, longest, dtype=torch.long, device=device)
        self.log_prob = torch.zeros(rows, device=device)
        self.lengths = torch.zeros(rows, dtype=torch.long, device=device)  # 0 until </s>
        width = start.padding.size(1)
        self.alignments = torch.zeros(rows, longest, width, device=device) if self.with_alignments else None

    def load(self, start: DecoderState, max_lengths: torch.Tensor) -> None:
        super().load(start, max_lengths)
        self.prev.fill_(BOS)
        self.log_prob.zero_()
        self.lengths.zero_()

    def step(self) -> None:
        at_limit = self.max_lengths <= self.position + 1
        log_probs, state, weights = constrained_step(
            self.model, self.prev, self.state, at_limit=at_limit, on_device=True
        )
        best_log_prob, best = log_probs.max(dim=-1)
        running = self.lengths == 0
        self.tokens.index_copy_(1, self.position, best.unsqueeze(1))
        if self.alignments is not None and weights is not None:  # a model with alignments gives α
            self.alignments.index_copy_(1, self.position, weights.float().unsqueeze(1))
        self.log_prob += best_log_prob.masked_fill(~running, 0.0)
        self.lengths.copy_(torch.where(running & (best == EOS), self.position + 1, self.lengths))
        self.prev.copy_(best)
        self._advance_state(state)
        self.position += 1

    def done(self) -> bool:
        return bool((self.lengths > 0).all())

    def hypotheses(self, src_lengths: list[int], options: SearchOptions) -> list[list[Hypothesis]]:
        steps = int(self.position)  # read back only the columns written
        tokens, log_probs, lengths = self.tokens[:, :steps].tolist(), self.log_prob.tolist(), self.lengths.tolist()
        alignments = None if self.alignments is None else _host_copy(self.alignments[:, :steps])
        return [
            [
                finished(
                    tokens[row][: lengths[row]],
                    log_probs[row],
                    None if alignments is None else alignments[row, : lengths[row], : src_lengths[row]],
                    options,
                )
            ]
            for row in range(len(src_lengths))
        ]


class _BeamLoop(_Loop):
    """K rows per sentence, as in `beam_search`. A sentence closes one of its K slots with
    every hypothesis that ends, so it finishes at most K: each is copied to that slot's
    place in the `finished_*` tensors (place K takes the writes of rows that did not end)."""

    def __init__(self, model, start: DecoderState, longest: int):
        super().__init__(model, start, longest)
        k, device = start.beam, start.padding.device
        sentences, width = start.padding.shape
        self.k = k
        self.sentences = torch.arange(sentences, device=device)
        self.prev = torch.zeros(sentences * k, dtype=torch.long, device=device)
        self.log_prob = torch.zeros(sentences, k, device=device)  # -inf: no live hypothesis in the slot
        self.open_slots = torch.zeros(sentences, dtype=torch.long, device=device)
        self.history = torch.zeros(sentences * k, longest, dtype=torch.long, device=device)
        self.finished_tokens = torch.zeros(sentences, k + 1, longest, dtype=torch.long, device=device)
        self.finished_log_prob = torch.zeros(sentences, k + 1, device=device)
        self.finished_length = torch.zeros(sentences, k + 1, dtype=torch.long, device=device)
        self.weights_history = self.finished_alignments = None
        if self.with_alignments:
            self.weights_history = torch.zeros(sentences * k, longest, width, device=device)
            self.finished_alignments = torch.zeros(sentences, k + 1, longest, width, device=device)

    def load(self, start: DecoderState, max_lengths: torch.Tensor) -> None:
        super().load(start, max_lengths)
        self.prev.fill_(BOS)
        self.log_prob.fill_(-math.inf)
        self.log_prob[:, 0] = 0.0
        self.open_slots.fill_(self.k)

    def step(self) -> None:
        k, sentences = self.k, self.sentences
        force_end = (self.max_lengths <= self.position + 1).unsqueeze(1).expand(-1, k).reshape(-1)
        log_probs, state, weights = constrained_step(
            self.model, self.prev, self.state, at_limit=force_end, on_device=True
        )
        top_log_prob, parent_beam, token = top_extensions(self.log_prob, log_probs, k)
        ends, live_log_prob = accept(top_log_prob, token, self.open_slots)
        parents = (parent_beam + sentences.unsqueeze(1) * k).view(-1)
        history = self.history.index_select(0, parents)
        history.index_copy_(1, self.position, token.view(-1, 1))
        self.history.copy_(history)
        slot = torch.where(ends, (k - self.open_slots).unsqueeze(1) + ends.cumsum(1) - 1, k)
        place = (sentences.unsqueeze(1).expand_as(slot), slot)
        self.finished_tokens.index_put_(place, history.view(len(sentences), k, -1))
        self.finished_log_prob.index_put_(place, top_log_prob)
        self.finished_length.index_put_(place, (self.position + 1).expand_as(slot))
        if self.weights_history is not None and self.finished_alignments is not None and weights is not None:
            weights_history = self.weights_history.index_select(0, parents)
            weights_history.index_copy_(1, self.position, weights.float().index_select(0, parents).unsqueeze(1))
            self.weights_history.copy_(weights_history)
            self.finished_alignments.index_put_(
                place, weights_history.view(len(sentences), k, *weights_history.shape[1:])
            )
        self.open_slots -= ends.sum(1)
        self.log_prob.copy_(live_log_prob)
        self.prev.copy_(token.view(-1))
        self._advance_state(state.reorder_beams(parents))
        self.position += 1

    def done(self) -> bool:
        return bool(((self.open_slots == 0) | ~torch.isfinite(self.log_prob).any(1)).all())

    def hypotheses(self, src_lengths: list[int], options: SearchOptions) -> list[list[Hypothesis]]:
        """Every sentence's finished hypotheses in the order they ended, as `beam_search`
        collects them, then ranked."""
        k, steps = self.k, int(self.position)  # read back only the slots and columns written
        closed = (k - self.open_slots).tolist()
        tokens, log_probs = self.finished_tokens[:, :k, :steps].tolist(), self.finished_log_prob.tolist()
        lengths = self.finished_length.tolist()
        alignments = None
        if self.finished_alignments is not None:
            alignments = _host_copy(self.finished_alignments[:, :k, :steps])
        results = []
        for sentence, source_length in enumerate(src_lengths):
            found = []
            for slot in range(closed[sentence]):
                length, total = lengths[sentence][slot], log_probs[sentence][slot]
                alignment = None if alignments is None else alignments[sentence, slot, :length, :source_length]
                found.append(finished(tokens[sentence][slot][:length], total, alignment, options))
            results.append(sorted(found, key=lambda h: h.score, reverse=True)[: options.n_best])
        return results


class _Loops:
    """The loops of one search, one per batch shape; on a GPU each with its step captured
    as a CUDA graph, all drawing on one memory pool (they never run at the same time)."""

    def __init__(self, make: Callable[[DecoderState], _Loop], device: torch.device):
        self.make = make
        self.cuda = device.type == "cuda"
        self.loops: dict[tuple[int, ...], _Loop] = {}
        self.pool = torch.cuda.graph_pool_handle() if self.cuda else None

    def get(self, start: DecoderState) -> _Loop:
        """The loop for `start`'s shape, made (and captured) on first use."""
        shape = (*start.state.shape, *start.padding.shape)
        if shape not in self.loops:
            loop = self.make(start)
            if self.cuda:
                loop.graph = self._capture(loop, start)
            self.loops[shape] = loop
        return self.loops[shape]

    def _capture(self, loop: _Loop, start: DecoderState) -> torch.cuda.CUDAGraph:
        """Warm up on a side stream, as CUDA graph capture asks, then record one step. The
        warm-up moves the loop's tensors on; `load` sets them again before each batch."""
        device = start.padding.device
        loop.load(start, torch.full((start.padding.size(0),), loop.longest, device=device))
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            for _ in range(min(WARM_UP_STEPS, loop.longest)):
                loop.step()
        torch.cuda.current_stream(device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with garbage_collector_paused(), torch.cuda.graph(graph, pool=self.pool):
            loop.step()
        return graph


def _host_copy(tensor: torch.Tensor) -> torch.Tensor:
    """A copy on the host, also where the tensor already lives there: the loop overwrites
    its tensors with the next batch, while hypotheses keep views of this copy."""
    return tensor.to("cpu", copy=True)

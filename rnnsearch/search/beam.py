"""Beam search over sentences × beams, with a shrinking beam as in the paper's search.

Each sentence has K slots. At every step the K best one-token extensions of its live
hypotheses compete; of them, the best `open slots` are accepted. An accepted
extension ending in </s> is finished and closes its slot for good, so the beam of
that sentence shrinks by one (Bahdanau et al.'s GroundHog search does the same). A
sentence is done when every slot is closed, so no hypothesis is cut short because
a better-scoring one happened to end first, and finished hypotheses are never
extended. At the length limit only </s> is allowed. The final ranking uses
length-normalised scores; with K = 1 this is greedy search.

Sentences are decoded `in_flight` at a time, as in greedy search: a done sentence
leaves at once, and when a quarter of the places are free the next sentences join.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from rnnsearch.reserved import BOS, EOS
from rnnsearch.search.arrivals import Arrivals
from rnnsearch.search.constraints import Constraint, Places, RowConstraints
from rnnsearch.search.contract import SearchModel, SearchState
from rnnsearch.search.rules import (
    CHUNK,
    Hypothesis,
    SearchOptions,
    check,
    chunk_maxima,
    constrained_step,
    finished,
    with_search_kernels,
)


@torch.no_grad()
@with_search_kernels
def beam_search(
    model: SearchModel,
    src: torch.Tensor,
    src_lengths: torch.Tensor,
    *,
    max_lengths: torch.Tensor,
    options: SearchOptions,
    constraints: Sequence[Constraint] = (),
) -> list[list[Hypothesis]]:
    """The `options.n_best` highest-scoring finished hypotheses of every sentence, best
    first, in the order of `src`, from beams of `options.beam_size`. `max_lengths` and
    `constraints` as for greedy search: each of a beam's K rows keeps its own state of
    every constraint (a prefix: while a sentence is inside it, its one live hypothesis
    takes the prefix's pieces)."""
    k, device = options.beam_size, src.device
    n_best, cancelled = options.n_best, options.cancelled
    beams = _Beams(k, device, model.has_alignment, RowConstraints(constraints, device) if constraints else None)
    ended: list[list[Hypothesis]] = [[] for _ in range(src.size(0))]
    arrivals = Arrivals(model, src, src_lengths, options.in_flight or src.size(0))
    state: SearchState | None = None
    while arrivals.remaining > 0 or beams.size > 0:
        check(cancelled)
        if joining := arrivals.due(beams.size):
            newcomers, new = arrivals.take(joining)
            new = new.tile_beams(k)  # K rows each, one source side
            state = new if state is None else state.extend(new)
            beams.join(newcomers, state.padding.size(1))
        assert state is not None, "a batch in flight has a state"
        scored = beams.live_rows()
        force_end = (max_lengths[beams.sentences] <= beams.positions + 1).repeat_interleave(k).to(device)
        force_end = force_end if scored is None else force_end[scored]
        log_probs, state, weights = constrained_step(  # (L, V), …, (R, S)
            model, beams.prev, state, scored, at_limit=force_end, constrained=beams.masks()
        )
        state = beams.advance(log_probs, scored, weights, state, ended, src_lengths, options)
    return [sorted(hypotheses, key=lambda h: h.score, reverse=True)[:n_best] for hypotheses in ended]


class _Beams:
    """The hypotheses in flight: K rows per sentence, sentence after sentence.

    Rows that join later share the history tensors; a sentence's columns start at its
    `offset`, the history's width when it joined.
    """

    def __init__(self, k: int, device: torch.device, with_alignments: bool, constraints: RowConstraints | None):
        self.k, self.device, self.constraints = k, device, constraints
        self.sentences = torch.zeros(0, dtype=torch.long)  # (b,) the sentence of each block of K rows
        self.positions = torch.zeros(0, dtype=torch.long)  # (b,) output position of each sentence
        self.offsets = torch.zeros(0, dtype=torch.long)  # (b,) its first history column
        self.open_slots = torch.zeros(0, dtype=torch.long)  # (b,)
        self.log_prob = torch.zeros(0, k, device=device)  # (b, K); -inf: no live hypothesis in the slot
        self.prev = torch.zeros(0, dtype=torch.long, device=device)  # (R,)
        self.history = torch.zeros(0, 0, dtype=torch.long, device=device)  # (R, t)
        self.weights_history = torch.zeros(0, 0, 0, device=device) if with_alignments else None  # (R, t, S)

    @property
    def size(self) -> int:
        """Sentences in flight."""
        return self.sentences.numel()

    def join(self, sentences: torch.Tensor, source_length: int) -> None:
        """Open K slots for each new sentence, one live hypothesis to start with; drop
        history columns no sentence in flight reads any more."""
        start = int(self.offsets.min()) if self.size else self.history.size(1)
        self.history, self.offsets = self.history[:, start:], self.offsets - start
        new, rows, width = len(sentences), len(sentences) * self.k, self.history.size(1)
        self.sentences = torch.cat([self.sentences, sentences])
        self.positions = torch.cat([self.positions, torch.zeros(new, dtype=torch.long)])
        self.offsets = torch.cat([self.offsets, torch.full((new,), width)])
        self.open_slots = torch.cat([self.open_slots, torch.full((new,), self.k)])
        start_log_prob = torch.full((new, self.k), -math.inf, device=self.device)
        start_log_prob[:, 0] = 0.0
        self.log_prob = torch.cat([self.log_prob, start_log_prob])
        self.prev = torch.cat([self.prev, torch.full((rows,), BOS, dtype=torch.long, device=self.device)])
        self.history = torch.cat([self.history, self.history.new_zeros(rows, width)])
        if self.constraints is not None:
            self.constraints.join(sentences, rows_each=self.k)
        if self.weights_history is not None:
            old = _source_width(self.weights_history[:, start:], source_length)
            self.weights_history = torch.cat([old, old.new_zeros(rows, width, source_length)])

    def masks(self) -> tuple[RowConstraints, Places] | None:
        """The call's constraints, if any, and where each of the K rows of every sentence stands."""
        if self.constraints is None:
            return None
        at = Places(self.sentences.repeat_interleave(self.k), self.positions.repeat_interleave(self.k))
        return self.constraints, at

    def live_rows(self) -> torch.Tensor | None:
        """The rows whose slot holds a live hypothesis, or None when all do. The others
        (slots closed by </s>, and all but one at a sentence's first step) need no
        next-token distribution."""
        live = torch.isfinite(self.log_prob).view(-1)
        return None if bool(live.all()) else live.nonzero().squeeze(1)

    def advance(self, log_probs, scored, weights, state, ended, src_lengths, options):
        """Extend every beam by one token, record finished hypotheses, retire done sentences;
        returns the decoder state reordered to match. log_probs are the `scored` rows'."""
        k, device = self.k, self.device
        top_log_prob, parent_beam, token = top_extensions(self.log_prob, log_probs, k, scored)  # (b, K) each
        ends, live_log_prob = accept(top_log_prob, token, self.open_slots.to(device))
        parents = (parent_beam + torch.arange(self.size, device=device).unsqueeze(1) * k).view(-1)
        if self.weights_history is not None:
            step_weights = weights.float().index_select(0, parents).unsqueeze(1)
            self.weights_history = torch.cat([self.weights_history.index_select(0, parents), step_weights], 1)
        self.history = torch.cat([self.history.index_select(0, parents), token.view(-1, 1)], 1)
        if self.constraints is not None:
            self.constraints.select(parents)
            self.constraints.advance(token.view(-1))
        self.positions += 1
        for block, beam in ends.nonzero().tolist():
            row, sentence, offset = block * k + beam, int(self.sentences[block]), int(self.offsets[block])
            total = float(top_log_prob[block, beam])
            alignment = None
            if self.weights_history is not None:
                history = self.weights_history[row : row + 1, offset:]
                alignment = _source_width(history, int(src_lengths[sentence]))[0].cpu()
            ended[sentence].append(finished(self.history[row, offset:].tolist(), total, alignment, options))
        self.open_slots -= ends.sum(1).cpu()
        self.log_prob = live_log_prob
        self.prev = token.view(-1)
        state = state.reorder_beams(parents)
        alive = torch.isfinite(self.log_prob).any(1).cpu() & (self.open_slots > 0)
        if bool(alive.all()):
            return state
        return state.select(self._keep(alive.nonzero().squeeze(1)))

    def _keep(self, blocks: torch.Tensor) -> torch.Tensor:
        """Keep these sentences' blocks only; returns their rows."""
        rows = (blocks.unsqueeze(1) * self.k + torch.arange(self.k)).view(-1).to(self.device)
        self.sentences, self.positions = self.sentences[blocks], self.positions[blocks]
        self.offsets, self.open_slots = self.offsets[blocks], self.open_slots[blocks]
        self.log_prob = self.log_prob[blocks.to(self.device)]
        self.prev, self.history = self.prev[rows], self.history[rows]
        if self.weights_history is not None:
            self.weights_history = self.weights_history[rows]
        if self.constraints is not None:
            self.constraints.select(rows)
        return rows


def accept(
    top_log_prob: torch.Tensor, token: torch.Tensor, open_slots: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The beam's rule for its k best extensions (b, k), best first, of sentences with
    `open_slots` (b,) slots still open: the first `open_slots` finite ones are accepted;
    those that end in </s> finish and close a slot each, the others stay live. Returns
    which extensions finish (b, k), and the live hypotheses' log-probabilities, -inf in
    the slots without one. Reads nothing back to the host."""
    rank = torch.arange(top_log_prob.size(1), device=top_log_prob.device)
    accepted = (rank < open_slots.unsqueeze(1)) & torch.isfinite(top_log_prob)
    ends = accepted & (token == EOS)
    return ends, torch.where(accepted & ~ends, top_log_prob, -math.inf)


def top_extensions(
    log_prob: torch.Tensor, log_probs: torch.Tensor, k: int, scored: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The k best one-token extensions of every sentence's K hypotheses, best first.

    log_prob (b, K) scores the hypotheses, log_probs (b·K, V) their next tokens; returns
    the scores log_prob[s, j] + log_probs[s·K + j, w], the hypotheses j they extend and
    the tokens w, each (b, k). With `scored` (L,), log_probs (L, V) are those rows' only,
    and every other hypothesis must score -inf.

    Picks the k chunks of CHUNK columns with the highest maxima first, then the best
    k within them. That loses nothing: were one of the k best extensions in another
    chunk, the k chunks picked would each hold a better one. On the CPU a top-k over
    all K·V columns took several times longer (`bench/topk.py`; BENCHMARKS.md,
    "Choosing beam search's extensions chunk by chunk").
    """
    vocab = log_probs.size(1)
    sentences, beam = log_prob.shape
    maxima = chunk_maxima(log_probs)  # (b·K, ⌈V / CHUNK⌉)
    chunks = maxima.size(1)
    if scored is not None:
        maxima = maxima.new_full((sentences * beam, chunks), -math.inf).index_copy_(0, scored, maxima)
    best_chunks = (maxima + log_prob.view(-1, 1)).view(sentences, -1).topk(k, dim=1).indices  # (b, k)
    parent, chunk = best_chunks // chunks, best_chunks % chunks
    columns = chunk.unsqueeze(-1) * CHUNK + torch.arange(CHUNK, device=log_probs.device)  # (b, k, CHUNK)
    beyond = columns >= vocab  # past the end in a partial last chunk: scored -inf, never accepted
    columns = columns.clamp(max=vocab - 1)
    row = parent + torch.arange(sentences, device=log_probs.device).unsqueeze(1) * beam
    if scored is not None:  # row → its place among the scored rows; -inf hypotheses read any
        place = torch.zeros(sentences * beam, dtype=torch.long, device=log_probs.device)
        row = place.index_copy_(0, scored, torch.arange(scored.numel(), device=log_probs.device))[row]
    scores = log_probs[row.unsqueeze(-1), columns] + log_prob.gather(1, parent).unsqueeze(-1)
    if vocab % CHUNK:
        scores = scores.masked_fill(beyond, -math.inf)
    top, position = scores.view(sentences, -1).topk(k, dim=1)
    return top, parent.gather(1, position // CHUNK), columns.view(sentences, -1).gather(1, position)


def _source_width(weights_history: torch.Tensor, length: int) -> torch.Tensor:
    """(R, t, S) → (R, t, length); the cut columns are padding, weighted 0."""
    if weights_history.size(2) >= length:
        return weights_history[:, :, :length]
    extra = weights_history.new_zeros(*weights_history.shape[:2], length - weights_history.size(2))
    return torch.cat([weights_history, extra], dim=2)

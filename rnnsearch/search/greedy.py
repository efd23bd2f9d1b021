"""Greedy search: the most probable next token at every step, many sentences at once.

Sentences are decoded `in_flight` at a time. One that emits </s> leaves at once, and
when a quarter of the places are free the next sentences join, so the matrix
products keep working on full batches instead of on the few long sentences left at
the end of a batch. Each sentence's output is the same whether it is decoded alone
or together with others.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from rnnsearch.reserved import BOS, EOS
from rnnsearch.search.arrivals import Arrivals
from rnnsearch.search.constraints import Constraint, Places, RowConstraints
from rnnsearch.search.contract import SearchModel
from rnnsearch.search.rules import (
    CHUNK,
    GREEDY,
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
def greedy_search(
    model: SearchModel,
    src: torch.Tensor,
    src_lengths: torch.Tensor,
    *,
    max_lengths: torch.Tensor,
    options: SearchOptions = GREEDY,
    constraints: Sequence[Constraint] = (),
) -> list[list[Hypothesis]]:
    """One hypothesis per sentence, in the order of `src`, searched as `options` say
    (their beam size and n-best aside). `max_lengths` (N,) are the output steps allowed
    to each sentence, </s> included (`max_output_lengths`). `constraints` (constraints.py,
    such as `Prefixes`) narrow what each sentence's rows may take; max_lengths must leave
    them the room they need (`least_lengths`)."""
    count, device = src.size(0), src.device
    cancelled = options.cancelled
    longest = int(max_lengths.max())
    tokens = torch.zeros(count, longest, dtype=torch.long)
    alignments = torch.zeros(count, longest, src.size(1)) if model.has_alignment else None
    log_probs_sum = torch.zeros(count)
    lengths = torch.zeros(count, dtype=torch.long)
    rows = torch.zeros(0, dtype=torch.long)  # the sentence of each row in flight
    positions = torch.zeros(0, dtype=torch.long)  # each row's output position
    prev = torch.zeros(0, dtype=torch.long, device=device)
    constrained = RowConstraints(constraints, device) if constraints else None
    arrivals, state = Arrivals(model, src, src_lengths, options.in_flight or count), None
    while arrivals.remaining > 0 or rows.numel() > 0:
        check(cancelled)
        if joining := arrivals.due(rows.numel()):
            newcomers, new = arrivals.take(joining)
            state = new if state is None else state.extend(new)
            rows, positions = torch.cat([rows, newcomers]), torch.cat([positions, torch.zeros_like(newcomers)])
            prev = torch.cat([prev, torch.full((len(newcomers),), BOS, dtype=torch.long, device=device)])
            if constrained is not None:
                constrained.join(newcomers)
        at_limit = (max_lengths[rows] <= positions + 1).to(device)
        masks = None if constrained is None else (constrained, Places(rows, positions))
        log_probs, state, weights = constrained_step(model, prev, state, at_limit=at_limit, constrained=masks)
        best_log_prob, best = row_maxima(log_probs)
        tokens[rows, positions] = best.cpu()
        if alignments is not None and weights is not None:  # a model with alignments gives them at every step
            alignments[rows, positions, : weights.size(1)] = weights.float().cpu()
        log_probs_sum[rows] += best_log_prob.cpu()
        positions += 1
        ended = (best == EOS).cpu()
        lengths[rows[ended]] = positions[ended]
        if constrained is not None:
            constrained.advance(best)
        if bool(ended.any()):
            state, order = state.without(ended)
            rows, positions, best = rows[order], positions[order], best[order.to(device)]
            if constrained is not None:
                constrained.select(order)
        prev = best
    return _results(tokens, lengths, log_probs_sum, alignments, src_lengths, options)


def _results(
    tokens: torch.Tensor,
    lengths: torch.Tensor,
    log_probs: torch.Tensor,
    alignments: torch.Tensor | None,
    src_lengths: torch.Tensor,
    options: SearchOptions,
) -> list[list[Hypothesis]]:
    """Each sentence's one hypothesis: its first `lengths` tokens (</s> included), their
    summed log-probability and its alignment rows over its source."""
    return [
        [
            finished(
                tokens[b, : lengths[b]].tolist(),
                float(log_probs[b]),
                None if alignments is None else alignments[b, : lengths[b], : src_lengths[b]],
                options,
            )
        ]
        for b in range(tokens.size(0))
    ]


def row_maxima(scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The maximum of every row of `scores` (R, V) and its first column, as `max(dim=1)`.

    Finds the chunk of CHUNK columns that holds each row's maximum first, from the
    chunks' maxima, then the column within it. On the CPU, `max` with indices over a
    whole vocabulary is not vectorised and took several times as long (BENCHMARKS.md,
    "Fewer rows and fewer passes in search").
    """
    first = chunk_maxima(scores).argmax(1, keepdim=True) * CHUNK
    candidates = (first + torch.arange(CHUNK, device=scores.device)).clamp_(max=scores.size(1) - 1)
    best, position = scores.gather(1, candidates).max(1, keepdim=True)
    return best.squeeze(1), candidates.gather(1, position).squeeze(1)

"""Greedy search: the most probable next token at every step, all sentences at once."""

from __future__ import annotations

import torch

from rnnsearch.search import Hypothesis, normalised, restrict
from rnnsearch.text.subwords import BOS, EOS


@torch.no_grad()
def greedy_search(
    model, src: torch.Tensor, src_lengths: torch.Tensor, max_lengths: torch.Tensor, length_penalty: float
) -> list[list[Hypothesis]]:
    """One hypothesis per sentence. Sentences that emit </s> leave the batch at once."""
    batch, source_len = src.shape[:2]
    longest = int(max_lengths.max())
    state = model.encode(src, src_lengths)
    tokens = torch.zeros(batch, longest, dtype=torch.long)
    alignments = torch.zeros(batch, longest, source_len)
    log_probs_sum = torch.zeros(batch)
    lengths = torch.zeros(batch, dtype=torch.long)
    rows = torch.arange(batch)  # sentence of each active row
    prev = torch.full((batch,), BOS, dtype=torch.long, device=src.device)
    for step in range(longest):
        log_probs, state, weights = model.step(prev, state)
        log_probs = restrict(log_probs, (max_lengths[rows] <= step + 1).to(log_probs.device))
        best_log_prob, best = log_probs.max(dim=-1)
        tokens[rows, step] = best.cpu()
        if weights is not None:
            alignments[rows, step] = weights.float().cpu()
        log_probs_sum[rows] += best_log_prob.cpu()
        ended = (best == EOS).cpu()
        lengths[rows[ended]] = step + 1
        if bool(ended.any()):
            keep = (~ended).nonzero().squeeze(1)
            rows = rows[keep]
            state = state.select(keep.to(src.device))
            best = best[keep.to(src.device)]
        if rows.numel() == 0:
            break
        prev = best
    return [
        [
            Hypothesis(
                tokens=tokens[b, : lengths[b] - 1].tolist(),
                log_prob=float(log_probs_sum[b]),
                score=normalised(float(log_probs_sum[b]), int(lengths[b]), length_penalty),
                alignment=alignments[b, : lengths[b], : src_lengths[b]] if model.has_alignment else None,
            )
        ]
        for b in range(batch)
    ]

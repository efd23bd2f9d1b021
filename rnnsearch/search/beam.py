"""Beam search over sentences × beams, with a shrinking beam as in the paper's search.

Each sentence has K slots. At every step the K best one-token extensions of its live
hypotheses compete; of them, the best `open slots` are accepted. An accepted
extension ending in </s> is finished and closes its slot for good, so the beam of
that sentence shrinks by one (Bahdanau et al.'s GroundHog search does the same). A
sentence is done when every slot is closed, so no hypothesis is cut short because
a better-scoring one happened to end first, and finished hypotheses are never
extended. At the length limit only </s> is allowed. Done sentences leave the batch.
The final ranking uses length-normalised scores; with K = 1 this is greedy search.
"""

from __future__ import annotations

import math

import torch

from rnnsearch.search import Hypothesis, normalised, restrict
from rnnsearch.text.subwords import BOS, EOS


@torch.no_grad()
def beam_search(
    model,
    src: torch.Tensor,
    src_lengths: torch.Tensor,
    max_lengths: torch.Tensor,
    length_penalty: float,
    beam_size: int,
    n_best: int = 1,
) -> list[list[Hypothesis]]:
    """The `n_best` highest-scoring finished hypotheses of every sentence, best first."""
    device = src.device
    batch, k = src.size(0), beam_size
    state = model.encode(src, src_lengths).select(torch.arange(batch, device=device).repeat_interleave(k))
    sentences = torch.arange(batch)  # active sentences, in row-block order
    open_slots = torch.full((batch,), k)
    log_prob = torch.full((batch, k), -math.inf, device=device)
    log_prob[:, 0] = 0.0  # one live hypothesis to start with
    history = torch.empty(batch * k, 0, dtype=torch.long, device=device)  # (R, t)
    weights_history = torch.empty(batch * k, 0, src.size(1), device=device)  # (R, t, S)
    prev = torch.full((batch * k,), BOS, dtype=torch.long, device=device)
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]

    for step in range(int(max_lengths.max())):
        log_probs, state, weights = model.step(prev, state)  # (R, V), …, (R, S)
        force_end = (max_lengths[sentences] <= step + 1).repeat_interleave(k).to(device)
        log_probs = restrict(log_probs, force_end)
        vocab = log_probs.size(1)
        candidates = (log_prob.view(-1, 1) + log_probs).view(-1, k * vocab)  # (b, K·V)
        top_log_prob, top_index = candidates.topk(k, dim=1)  # (b, K)
        parent_beam, token = top_index // vocab, top_index % vocab
        rank = torch.arange(k, device=device).unsqueeze(0)
        accepted = (rank < open_slots.to(device).unsqueeze(1)) & torch.isfinite(top_log_prob)
        ends = accepted & (token == EOS)
        parents = (parent_beam + torch.arange(len(sentences), device=device).unsqueeze(1) * k).view(-1)
        if weights is not None:
            step_weights = weights.float().index_select(0, parents).unsqueeze(1)
            weights_history = torch.cat([weights_history.index_select(0, parents), step_weights], 1)
        history = torch.cat([history.index_select(0, parents), token.view(-1, 1)], 1)

        for block, beam in ends.nonzero().tolist():
            row, sentence = block * k + beam, int(sentences[block])
            total = float(top_log_prob[block, beam])
            finished[sentence].append(
                Hypothesis(
                    tokens=history[row, :-1].tolist(),
                    log_prob=total,
                    score=normalised(total, step + 1, length_penalty),
                    alignment=weights_history[row, :, : src_lengths[sentence]].cpu() if model.has_alignment else None,
                )
            )
        open_slots -= ends.sum(1).cpu()
        log_prob = torch.where(accepted & ~ends, top_log_prob, -math.inf)
        prev = token.view(-1)

        state = state.reorder_beams(parents)
        alive = torch.isfinite(log_prob).any(1).cpu() & (open_slots > 0)
        if not bool(alive.all()):
            keep_blocks = alive.nonzero().squeeze(1)
            keep_rows = (keep_blocks.unsqueeze(1) * k + torch.arange(k)).view(-1).to(device)
            sentences, open_slots = sentences[keep_blocks], open_slots[keep_blocks]
            log_prob = log_prob[keep_blocks.to(device)]
            state, prev = state.select(keep_rows), prev[keep_rows]
            history, weights_history = history[keep_rows], weights_history[keep_rows]
        if sentences.numel() == 0:
            break
    return [sorted(hypotheses, key=lambda h: h.score, reverse=True)[:n_best] for hypotheses in finished]

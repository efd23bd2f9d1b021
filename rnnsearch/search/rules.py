"""The rules every search follows, eager or fixed-shape, greedy or beam: its options,
what a finished hypothesis is and how it ranks, which tokens are forbidden at a step,
the output length allowed, and cancellation."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from rnnsearch import kernels
from rnnsearch.config.search import SearchConfig
from rnnsearch.errors import ArgumentValueError
from rnnsearch.reserved import BOS, EOS, PAD
from rnnsearch.search.constraints import Places, RowConstraints
from rnnsearch.search.contract import SearchModel, StateT

Cancelled = Callable[[], bool]
"""Asked before every decoder step; True stops the search with SearchCancelled."""


class SearchCancelled(Exception):
    """The caller no longer wants the result (a server request that timed out or went away)."""


def with_search_kernels(search: Callable) -> Callable:
    """`search(model, src, …)` run with the search kernels of `src`'s device, chosen once
    as it starts (kernels/__init__.py)."""

    @functools.wraps(search)
    def run(model, src: torch.Tensor, *args, **kwargs):
        with kernels.use(kernels.choose(src.device, purpose="search")):
            return search(model, src, *args, **kwargs)

    return run


@dataclass(frozen=True)
class SearchOptions:
    """How a search runs, the same for all its sentences.

    beam_size       K hypotheses per sentence (greedy search: 1)
    n_best          how many finished hypotheses each sentence returns, best first (≤ K)
    length_penalty  α of the score log p / |y|^α that ranks hypotheses (0: raw log p)
    coverage_penalty
                    β of GNMT's coverage penalty added to that score (0: none; see `score`)
    in_flight       sentences decoded together (None: all); sentences join in the order
                    given, so sorting them by length keeps the padding low
    cancelled       asked before every step (a fixed-shape search: every few steps)
    """

    beam_size: int = 1
    n_best: int = 1
    length_penalty: float = 1.0
    coverage_penalty: float = 0.0
    in_flight: int | None = None
    cancelled: Cancelled | None = None

    def __post_init__(self):
        if self.beam_size < 1 or not 1 <= self.n_best <= self.beam_size:
            raise ValueError(f"a beam of {self.beam_size} cannot return {self.n_best} hypotheses")


def search_options(
    settings: SearchConfig, *, beam_size: int, n_best: int, cancelled: Cancelled | None = None
) -> SearchOptions:
    """The options of one search call: its beam size and n-best count (checked by the
    caller), and the rest from the model's search section, `settings`: the one place a
    search setting becomes a search option."""
    return SearchOptions(
        beam_size=beam_size,
        n_best=n_best,
        length_penalty=settings.length_penalty,
        coverage_penalty=settings.coverage_penalty,
        in_flight=settings.batch_sentences,
        cancelled=cancelled,
    )


def checked_n_best(n_best: int, beam_size: int) -> None:
    """Refuse more hypotheses than the beam holds, naming n_best, as every caller words it."""
    if n_best > beam_size:
        raise ArgumentValueError(f"n_best: {n_best} is more than the beam size {beam_size}")


GREEDY = SearchOptions()
"""One hypothesis per sentence, scored with length penalty 1, every sentence in flight at once."""


def check(cancelled: Cancelled | None) -> None:
    """Raise SearchCancelled if the caller has given up on the search."""
    if cancelled is not None and cancelled():
        raise SearchCancelled


@dataclass
class Hypothesis:
    """One output for one sentence.

    tokens:    target ids, </s> excluded
    log_prob:  log p(tokens, </s> | x)
    score:     log_prob / (len(tokens) + 1) ** length_penalty, plus the coverage penalty
               when one is set (`score`): what search ranks by
    alignment: (len(tokens) + 1, source length with </s>) weights α_ij; the last row is </s>'s.
               None for a model without an alignment model.
    """

    tokens: list[int]
    log_prob: float
    score: float
    alignment: torch.Tensor | None


def finished(
    with_end: list[int], log_prob: float, alignment: torch.Tensor | None, options: SearchOptions
) -> Hypothesis:
    """The hypothesis whose output, </s> included, is `with_end`: every search builds its
    results here, so that all rank by the same score."""
    return Hypothesis(
        tokens=with_end[:-1],
        log_prob=log_prob,
        score=score(log_prob, len(with_end), alignment, options),
        alignment=alignment,
    )


def score(log_prob: float, length: int, alignment: torch.Tensor | None, options: SearchOptions) -> float:
    """What search ranks finished hypotheses by: log p(y | x) / |y|^α, |y| counting </s>,
    plus, with a coverage penalty β > 0, GNMT's cp = β Σ_j log(min(Σ_i α_ij, 1)) (Wu et
    al. 2016). The sum runs over the source words j, not over </s> (the last column of
    `alignment`, which a translation need not attend to); a word whose attention
    underflows to 0 counts as the smallest positive float's logarithm, not −∞."""
    total = normalised(log_prob, length, options.length_penalty)
    if options.coverage_penalty and alignment is not None:
        total += options.coverage_penalty * coverage_log(alignment)
    return total


def coverage_log(alignment: torch.Tensor) -> float:
    """Σ_j log(min(Σ_i α_ij, 1)) over the source words of one hypothesis's alignment
    (its rows i, its columns j with </s> last): 0 when every word got a weight of 1 in
    total, more negative the less attention some word received."""
    attention = alignment[:, :-1].double().sum(0)
    tiny = torch.finfo(torch.float32).tiny
    return float(attention.clamp(min=tiny, max=1.0).log().sum())


def normalised(log_prob: float, length: int, length_penalty: float) -> float:
    """Length normalisation score / |y|^α (α = 0: raw log-probability)."""
    return log_prob / length**length_penalty


def max_output_lengths(src_lengths: torch.Tensor, ratio: float, extra: int) -> torch.Tensor:
    """Output steps allowed per sentence, </s> included: ⌈ratio · source words⌉ + extra, at least 1."""
    words = (src_lengths - 1).float()
    return (torch.ceil(words * ratio).long() + extra).clamp(min=1)


CHUNK = 64
"""Vocabulary columns per chunk in `chunk_maxima`."""


def chunk_maxima(scores: torch.Tensor) -> torch.Tensor:
    """(R, V) → the maximum of every CHUNK consecutive columns (R, ⌈V / CHUNK⌉), the last
    chunk possibly shorter. Searches look for their best tokens among the chunks with
    the highest maxima first: on the CPU `amax` is vectorised, where `max` with indices
    and `topk` over all V columns are not."""
    columns = scores.size(1)
    whole = columns - columns % CHUNK
    maxima = scores[:, :whole].unflatten(1, (-1, CHUNK)).amax(2)
    if whole < columns:
        maxima = torch.cat([maxima, scores[:, whole:].amax(1, keepdim=True)], 1)
    return maxima


def constrained_step(
    model: SearchModel[StateT],
    prev: torch.Tensor,
    state: StateT,
    scored: torch.Tensor | None = None,
    *,
    at_limit: torch.Tensor,
    constrained: tuple[RowConstraints, Places] | None = None,
    on_device: bool = False,
) -> tuple[torch.Tensor, StateT, torch.Tensor | None]:
    """One decoder step under the rules every search follows: the model's log-probabilities
    of each row's next piece (of the `scored` rows), its next state and α, with what
    `restrict` forbids forbidden (rows `at_limit` must end), and then what the call's
    per-sentence constraints forbid (`constrained`: them, and where every row stands;
    constraints.py). Greedy, beam and both fixed-shape searches step through here alone,
    so a rule is written once."""
    log_probs, state, weights = model.step(prev, state, scored)
    log_probs = restrict(log_probs, at_limit, on_device=on_device)
    if constrained is not None:
        constraints, at = constrained
        log_probs = constraints.mask(log_probs, at, scored, weights)
    return log_probs, state, weights


def restrict(log_probs: torch.Tensor, force_end: torch.Tensor, *, on_device: bool = False) -> torch.Tensor:
    """Forbid <pad> and <s> everywhere, and anything but </s> on rows that must end now.
    The allowed tokens keep their log-probabilities.

    `on_device` reads nothing back to the host, as a CUDA graph needs: the rows that must
    end are masked in one pass over every row, where otherwise only those rows are written.
    """
    log_probs[:, PAD] = -math.inf
    log_probs[:, BOS] = -math.inf
    if on_device:
        return log_probs.masked_fill(force_end.unsqueeze(1) & _not_end(log_probs.size(1), log_probs.device), -math.inf)
    if bool(force_end.any()):
        eos = log_probs[force_end, EOS]
        log_probs[force_end] = -math.inf
        log_probs[force_end, EOS] = eos
    return log_probs


@functools.cache
def _not_end(vocab: int, device: torch.device) -> torch.Tensor:
    """(V,) True for every token but </s>: made once per vocabulary and device, not at
    every step (and before a CUDA graph is captured, by the eager steps that precede it)."""
    return torch.arange(vocab, device=device) != EOS

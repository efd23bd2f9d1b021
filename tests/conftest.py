"""Shared fixtures: tiny models with random weights, small enough to reason about."""

from __future__ import annotations

import os
import sys

import pytest
import torch

from rnnsearch.model.seq2seq import RNNSearch, build_aligner, build_model
from rnnsearch.model.settings import AttentionConfig, DecoderConfig, EncoderConfig, ModelConfig


def _keep_each_worker_to_its_own_cores() -> None:
    """Under pytest-xdist (`make test` runs one worker per core), each worker, and every
    process it starts, keeps to a share of the cores of its own. PyTorch sizes its thread
    pool by the cores it may use, and so does the trainer: two workers that each spread
    over every core would make both wait on the other's threads."""
    worker, workers = os.environ.get("PYTEST_XDIST_WORKER"), os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    cores = sorted(os.sched_getaffinity(0))
    if worker is None or workers is None or int(workers) > len(cores):
        return
    share = cores[int(worker.removeprefix("gw")) :: int(workers)]
    os.sched_setaffinity(0, share)
    torch.set_num_threads(len(share))


_keep_each_worker_to_its_own_cores()


def tiny_model(
    vocab: int = 12,
    seed: int = 0,
    readout: str | None = None,
    score: str = "additive",
    encoder: dict | None = None,
    decoder: dict | None = None,
    coverage: bool = False,
) -> RNNSearch:
    """A randomly initialised model whose output distributions are far from uniform.

    score "none" gives the fixed-context baseline; `encoder` and `decoder` override
    those config sections (cell, layers, wiring, …); readout None is the wiring's own;
    `coverage` makes the attention read the coverage C.
    """
    torch.manual_seed(seed)
    size = 32 if score == "location" else 8
    config = ModelConfig(
        embedding_size=8,
        encoder=EncoderConfig(hidden_size=8, **(encoder or {})),
        attention="none" if score == "none" else AttentionConfig(score=score, size=size, coverage=coverage),
        decoder=DecoderConfig(**{"hidden_size": 16, "readout": readout, "readout_size": 8, **(decoder or {})}),
        dropout=0.0,
    )
    model = build_model(config, vocab, vocab)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(3.0)
    return model.eval()


def tiny_model_with_module(vocab: int = 12, *, seed: int = 0, null: bool = False, **settings) -> RNNSearch:
    """`tiny_model` (its other `settings`) with an alignment module of size 8 whose weights
    are random: a fresh module starts from a uniform lexicon and the attention as its
    prior, which would hide what it reads."""
    model = tiny_model(vocab, seed=seed, **settings)
    torch.manual_seed(seed + 1)
    model.aligner = build_aligner(model, size=8, null=null)
    with torch.no_grad():
        for parameter in model.aligner.parameters():
            parameter.normal_(std=0.5)
    return model


def random_sources(count: int, vocab: int, seed: int, min_len: int = 1, max_len: int = 9) -> list[list[int]]:
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(min_len, max_len + 1, (count,), generator=generator)
    return [torch.randint(4, vocab, (int(n),), generator=generator).tolist() for n in lengths]


@pytest.fixture
def model() -> RNNSearch:
    return tiny_model()


def assert_same_hypotheses(expected, found) -> None:
    """Two searches' n-best lists agree: tokens exactly; scores, log-probabilities and
    alignments within float tolerance. A log-probability sums one term per token, so
    its tolerance grows with its size: products over different numbers of rows may
    round differently."""
    for reference, hypotheses in zip(expected, found, strict=True):
        assert [h.tokens for h in hypotheses] == [h.tokens for h in reference]
        assert [h.score for h in hypotheses] == pytest.approx([h.score for h in reference], abs=1e-5)
        assert [h.log_prob for h in hypotheses] == pytest.approx([h.log_prob for h in reference], rel=1e-6, abs=1e-5)
        for h, r in zip(hypotheses, reference):
            assert (h.alignment is None) == (r.alignment is None)
            if r.alignment is not None:
                assert h.alignment.shape == r.alignment.shape
                assert torch.allclose(h.alignment, r.alignment, atol=1e-6)


def python_calls(work) -> int:
    """The Python and C function calls `work()` makes: a count of steps, the same on every machine."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        work()
    finally:
        sys.setprofile(None)
    return calls

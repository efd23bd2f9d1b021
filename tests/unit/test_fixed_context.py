"""The baseline without an alignment model: one encoder summary for every target word."""

import pytest
import torch

from rnnsearch.config.search import SearchConfig
from rnnsearch.decoding.decoding import Decoding
from rnnsearch.errors import UserError
from rnnsearch.search.beam import beam_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import source_tensors
from tests.conftest import random_sources, tiny_model


def test_context_is_last_forward_and_first_backward_state():
    model = tiny_model(score="none")
    sources = random_sources(6, 12, seed=1, min_len=2)
    src, lengths = source_tensors(sources)
    with torch.no_grad():
        annotations, _ = model.encoder(src, lengths)
        state = model.encode(src, lengths)
    half = annotations.size(2) // 2
    for b, n in enumerate(lengths.tolist()):
        alone_src, alone_lengths = source_tensors([sources[b]])
        with torch.no_grad():
            _, final = model.encoder.rnn(model.encoder.embedding(alone_src))
        assert torch.allclose(state.fixed_context[b, :half], annotations[b, n - 1, :half])
        assert torch.allclose(state.fixed_context[b, half:], annotations[b, 0, half:])
        assert torch.allclose(state.fixed_context[b], torch.cat([final[-2, 0], final[-1, 0]]), atol=1e-6)


def test_the_baseline_reports_no_alignment():
    model = tiny_model(score="none")
    src, lengths = source_tensors(random_sources(4, 12, seed=2))
    with torch.no_grad():
        _, alignments = model(src, lengths, torch.randint(4, 12, (4, 3)))
    assert alignments is None and not model.has_alignment


def test_search_works_without_alignments_and_beam_one_equals_greedy():
    model = tiny_model(score="none", seed=3)
    src, lengths = source_tensors(random_sources(8, 12, seed=3))
    limits = max_output_lengths(lengths, 1.5, 3)
    greedy = greedy_search(model, src, lengths, max_lengths=limits)
    beam = beam_search(model, src, lengths, max_lengths=limits, options=SearchOptions())
    wide = beam_search(model, src, lengths, max_lengths=limits, options=SearchOptions(beam_size=4, n_best=2))
    assert [g[0].tokens for g in greedy] == [b[0].tokens for b in beam]
    assert all(h.alignment is None for nbest in greedy + wide for h in nbest)
    assert all(len(nbest) == 2 for nbest in wide)


def test_a_coverage_penalty_without_an_alignment_model_is_refused_in_one_line():
    search = SearchConfig(coverage_penalty=1.0)
    with pytest.raises(UserError, match=r"^search.coverage_penalty needs the attention weights.*attention: none\)$"):
        Decoding(tiny_model(score="none"), None, None, search).options(beam_size=4, n_best=1)
    assert Decoding(tiny_model(), None, None, search).options(beam_size=4, n_best=1).coverage_penalty == 1.0

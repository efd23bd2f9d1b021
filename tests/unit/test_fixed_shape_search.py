"""The fixed-shape searches, which a GPU replays as CUDA graphs, run here without capture
and must give what the eager searches give (tests/integration/test_cuda.py replays them)."""

from dataclasses import replace

import pytest
import torch

from rnnsearch.search.beam import beam_search
from rnnsearch.search.fixed_shape import CHECK_EVERY, fixed_shape_beam_search, fixed_shape_greedy_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchCancelled, SearchOptions, max_output_lengths
from rnnsearch.text.batches import source_tensors
from rnnsearch.text.subwords import BOS, EOS, PAD
from tests.conftest import assert_same_hypotheses, random_sources, tiny_model

DECODERS = {
    "bahdanau-gru": {},
    "luong-input-feeding-lstm": {"wiring": "luong", "input_feeding": True, "cell": "lstm"},
    "bahdanau-lstm-2-layers": {"cell": "lstm", "layers": 2},
}
ATTENTIONS = {
    "additive": {},
    "additive-coverage": {"coverage": True},
    "location": {"score": "location"},
    "none": {"score": "none"},
}
SEARCHES = {
    "greedy": (greedy_search, fixed_shape_greedy_search, SearchOptions()),
    "beam": (beam_search, fixed_shape_beam_search, SearchOptions(beam_size=4, n_best=3)),
    "beam-coverage-penalty": (
        beam_search,
        fixed_shape_beam_search,
        SearchOptions(beam_size=4, n_best=3, coverage_penalty=0.4),
    ),
}


@pytest.mark.parametrize("search", SEARCHES.values(), ids=SEARCHES.keys())
@pytest.mark.parametrize("attention", ATTENTIONS.values(), ids=ATTENTIONS.keys())
@pytest.mark.parametrize("decoder", DECODERS.values(), ids=DECODERS.keys())
@pytest.mark.parametrize("in_flight", [None, 7])
def test_fixed_shape_searches_equal_the_eager_searches(search, attention, decoder, in_flight):
    """With 7 in flight, five batches of one shape reuse one loop's tensors, and a last
    one of 5 gets its own: what the earlier batches returned must survive the later ones.
    The coverage, padded with the source side, moves on with the recurrent state."""
    eager, fixed, options = search
    model = tiny_model(vocab=20, seed=4, decoder=decoder, **attention)
    src, lengths = source_tensors(sorted(random_sources(40, 20, seed=9, max_len=15), key=len, reverse=True))
    limits = max_output_lengths(lengths, 1.5, 3)
    options = replace(options, in_flight=in_flight)
    expected = eager(model, src, lengths, max_lengths=limits, options=options)
    assert_same_hypotheses(expected, fixed(model, src, lengths, max_lengths=limits, options=options))


@pytest.mark.parametrize("search", SEARCHES.values(), ids=SEARCHES.keys())
def test_fixed_shape_searches_end_every_output_at_its_limit_without_specials(search):
    _, fixed, options = search
    model = tiny_model(seed=4)
    with torch.no_grad():
        model.decoder.output_layer.bias[EOS] = -100.0  # the model never wants to stop
    src, lengths = source_tensors(random_sources(10, 12, seed=9))
    limits = max_output_lengths(lengths, 1.0, 2)
    for nbest, limit in zip(fixed(model, src, lengths, max_lengths=limits, options=options), limits, strict=True):
        for hypothesis in nbest:
            assert len(hypothesis.tokens) + 1 == int(limit)
            assert not {PAD, BOS, EOS} & set(hypothesis.tokens)


@pytest.mark.parametrize("search", SEARCHES.values(), ids=SEARCHES.keys())
def test_a_cancelled_fixed_shape_search_stops_within_a_round_of_steps(model, search):
    _, fixed, options = search
    asked = []

    def cancelled():
        asked.append(True)
        return len(asked) > 1

    src, lengths = source_tensors(random_sources(10, 12, seed=5, min_len=CHECK_EVERY, max_len=CHECK_EVERY + 4))
    with pytest.raises(SearchCancelled):
        limits = max_output_lengths(lengths, 1.5, 3)
        fixed(model, src, lengths, max_lengths=limits, options=replace(options, cancelled=cancelled))
    assert len(asked) == 2  # one round of CHECK_EVERY steps ran; the second was not started

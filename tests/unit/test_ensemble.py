"""Ensembles inside batched greedy and beam search: the mean of the members' log-probabilities."""

import pytest
import torch

from rnnsearch.model.ensemble import Ensemble, side_numbers
from rnnsearch.search.beam import beam_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import side_tensors, source_tensors
from rnnsearch.text.subwords import BOS
from tests.conftest import assert_same_hypotheses, random_sources, tiny_model

VOCAB = 20


def search(model, sources, beam_size, n_best=1, in_flight=None, sides=False):
    if sides:
        src, lengths, side_zero = side_tensors(sources)
    else:
        src, lengths = source_tensors(sources)
        side_zero = lengths
    limits = max_output_lengths(side_zero, 1.5, 3)
    if beam_size == 1:
        return greedy_search(model, src, lengths, max_lengths=limits, options=SearchOptions(in_flight=in_flight))
    options = SearchOptions(beam_size=beam_size, n_best=n_best, in_flight=in_flight)
    return beam_search(model, src, lengths, max_lengths=limits, options=options)


def assert_identical(expected, found) -> None:
    """Exactly the same hypotheses: tokens, scores, log-probabilities and alignments, bit for bit."""
    for reference, hypotheses in zip(expected, found, strict=True):
        assert [h.tokens for h in hypotheses] == [h.tokens for h in reference]
        assert [h.score for h in hypotheses] == [h.score for h in reference]
        assert [h.log_prob for h in hypotheses] == [h.log_prob for h in reference]
        for h, r in zip(hypotheses, reference):
            assert torch.equal(h.alignment, r.alignment)


@pytest.mark.parametrize("coverage", [False, True], ids=["", "coverage"])
@pytest.mark.parametrize(("beam_size", "n_best"), [(1, 1), (4, 3)])
def test_an_ensemble_of_one_decodes_exactly_as_its_member(beam_size, n_best, coverage):
    model = tiny_model(vocab=VOCAB, seed=1, coverage=coverage)
    sources = random_sources(30, VOCAB, seed=3, max_len=12)
    alone = search(model, sources, beam_size, n_best, in_flight=8)
    assert_identical(alone, search(Ensemble([model], [0]), sources, beam_size, n_best, in_flight=8))


@pytest.mark.parametrize("beam_size", [1, 4])
def test_an_ensemble_of_a_model_with_itself_gives_its_translations(beam_size):
    model = tiny_model(vocab=VOCAB, seed=1)
    sources = random_sources(30, VOCAB, seed=4, max_len=12)
    alone = search(model, sources, beam_size, n_best=beam_size, in_flight=8)
    doubled = search(Ensemble([model, model], [0, 0]), sources, beam_size, n_best=beam_size, in_flight=8)
    assert_identical(alone, doubled)


def test_every_step_scores_the_mean_of_the_members_log_probabilities_and_alignments():
    first, second = tiny_model(vocab=VOCAB, seed=1), tiny_model(vocab=VOCAB, seed=2, score="general")
    ensemble = Ensemble([first, second], [0, 0])
    src, lengths = source_tensors(random_sources(5, VOCAB, seed=5))
    prev = torch.full((5,), BOS)
    with torch.no_grad():
        log_probs, state, weights = ensemble.step(prev, ensemble.encode(src, lengths))
        own = [model.step(prev, model.encode(src, lengths)) for model in (first, second)]
    assert torch.allclose(log_probs, (own[0][0] + own[1][0]) / 2, atol=1e-6)
    assert torch.allclose(weights, (own[0][2] + own[1][2]) / 2, atol=1e-6)
    assert torch.allclose(state.members[1].state, own[1][1].state)


@pytest.mark.parametrize("coverage", [False, True], ids=["", "coverage"])
@pytest.mark.parametrize("beam_size", [1, 4])
def test_ensemble_translations_do_not_depend_on_how_many_sentences_decode_together(beam_size, coverage):
    """With coverage, one member carries C in its state and the other none."""
    ensemble = Ensemble([tiny_model(vocab=VOCAB, seed=1, coverage=coverage), tiny_model(vocab=VOCAB, seed=2)], [0, 0])
    sources = random_sources(64, VOCAB, seed=7, max_len=8)
    reference = search(ensemble, sources, beam_size, in_flight=64)
    for in_flight in (1, 7):
        assert_same_hypotheses(reference, search(ensemble, sources, beam_size, in_flight=in_flight))


def test_members_of_different_quality_make_a_different_search_than_either():
    first, second = tiny_model(vocab=VOCAB, seed=1), tiny_model(vocab=VOCAB, seed=2)
    sources = random_sources(40, VOCAB, seed=8, max_len=12)
    outputs = [[h[0].tokens for h in search(m, sources, 1)] for m in (first, second, Ensemble([first, second], [0, 0]))]
    assert outputs[2] != outputs[0] and outputs[2] != outputs[1]


def test_a_member_reading_its_own_source_pieces_steps_on_them():
    """Side 1 holds other ids for the same sentences: the second member encodes those,
    the first its own, and the alignment is the first member's alone."""
    first, second = tiny_model(vocab=VOCAB, seed=1), tiny_model(vocab=VOCAB, seed=2)
    zero, one = random_sources(6, VOCAB, seed=9, max_len=5), random_sources(6, VOCAB, seed=10, max_len=11)
    ensemble = Ensemble([first, second], [0, 1])
    src, lengths, _ = side_tensors(list(zip(zero, one)))
    prev = torch.full((6,), BOS)
    with torch.no_grad():
        log_probs, _, weights = ensemble.step(prev, ensemble.encode(src, lengths))
        a = first.step(prev, first.encode(*source_tensors(zero)))
        b = second.step(prev, second.encode(*source_tensors(one)))
    assert torch.allclose(log_probs, (a[0] + b[0]) / 2, atol=1e-6)
    assert torch.allclose(weights, a[2], atol=1e-6)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_ensembles_over_two_source_sides_do_not_depend_on_batch_size(beam_size):
    ensemble = Ensemble([tiny_model(vocab=VOCAB, seed=1), tiny_model(vocab=VOCAB, seed=2)], [0, 1])
    sources = list(zip(random_sources(64, VOCAB, seed=11, max_len=6), random_sources(64, VOCAB, seed=12, max_len=9)))
    reference = search(ensemble, sources, beam_size, in_flight=64, sides=True)
    for in_flight in (1, 7):
        assert_same_hypotheses(reference, search(ensemble, sources, beam_size, in_flight=in_flight, sides=True))
    for source, hypotheses in zip(sources, reference):
        assert hypotheses[0].alignment.shape[1] >= len(source[0]) + 1


def test_the_alignment_comes_from_members_with_an_alignment_model_on_the_reference_side():
    baseline = tiny_model(vocab=VOCAB, seed=1, score="none")
    attentive = tiny_model(vocab=VOCAB, seed=2)
    assert side_numbers([b"x", b"y"], [False, True]) == [1, 0]
    assert side_numbers([b"x", b"y", b"x"], [True, True, True]) == [0, 1, 0]
    ensemble = Ensemble([baseline, attentive], [1, 0])
    assert ensemble.has_alignment and ensemble.reference == 1 and ensemble.aligned == [1]
    assert not Ensemble([baseline], [0]).has_alignment

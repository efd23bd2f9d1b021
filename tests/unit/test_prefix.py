"""Forced target prefixes in batched greedy and beam search."""

import pytest
import torch

from rnnsearch.decoding.forced import teacher_forced
from rnnsearch.model.ensemble import Ensemble
from rnnsearch.search.beam import beam_search
from rnnsearch.search.constraints import Prefixes
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.text.batches import source_tensors
from rnnsearch.text.subwords import BOS, EOS
from tests.conftest import assert_same_hypotheses, random_sources, tiny_model

VOCAB = 20


def search(model, sources, prefixes, beam_size, n_best=1, in_flight=None):
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 1.5, 3)
    forced = Prefixes.of(prefixes)
    constraints = [] if forced is None else [forced]
    if forced is not None:
        limits = torch.maximum(limits, forced.least_lengths)
    if beam_size == 1:
        options = SearchOptions(in_flight=in_flight)
        return greedy_search(model, src, lengths, max_lengths=limits, options=options, constraints=constraints)
    options = SearchOptions(beam_size=beam_size, n_best=n_best, in_flight=in_flight)
    return beam_search(model, src, lengths, max_lengths=limits, options=options, constraints=constraints)


def random_prefixes(count: int, seed: int, longest: int = 6) -> list[list[int]]:
    """Prefixes of 0 to `longest` pieces; about a third of the sentences have none."""
    generator = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, longest + 1, (count,), generator=generator) * (
        torch.rand(count, generator=generator) > 0.3
    )
    return [torch.randint(EOS + 1, VOCAB, (int(n),), generator=generator).tolist() for n in lengths]


@pytest.mark.parametrize(("beam_size", "n_best"), [(1, 1), (4, 4)])
def test_every_output_starts_with_its_prefix(beam_size, n_best):
    model = tiny_model(vocab=VOCAB, seed=1)
    sources, prefixes = random_sources(40, VOCAB, seed=2, max_len=10), random_prefixes(40, seed=3, longest=20)
    for prefix, hypotheses in zip(prefixes, search(model, sources, prefixes, beam_size, n_best)):
        assert hypotheses
        for h in hypotheses:
            assert h.tokens[: len(prefix)] == prefix
            assert h.alignment.shape[0] == len(h.tokens) + 1  # the prefix's rows too


@pytest.mark.parametrize("cut", [None, 1, 3])
def test_the_greedy_output_as_prefix_leaves_the_translation_unchanged(cut):
    model = tiny_model(vocab=VOCAB, seed=1)
    sources = random_sources(30, VOCAB, seed=4, max_len=10)
    free = search(model, sources, [[]] * len(sources), 1)
    prefixes = [h[0].tokens[:cut] for h in free]
    assert_same_hypotheses(free, search(model, sources, prefixes, 1))


@pytest.mark.parametrize("beam_size", [1, 4])
def test_a_prefixed_output_scores_what_the_model_gives_it(beam_size):
    """Forcing changes the choices, never the model's probabilities: an output's
    log-probability and alignment, prefix included, are those of teacher forcing."""
    model = tiny_model(vocab=VOCAB, seed=2)
    sources, prefixes = random_sources(20, VOCAB, seed=5, max_len=10), random_prefixes(20, seed=6)
    found = [h[0] for h in search(model, sources, prefixes, beam_size)]
    forced = teacher_forced(model, [(s, h.tokens) for s, h in zip(sources, found)], max_sentences=64)
    for h, f in zip(found, forced):
        assert h.log_prob == pytest.approx(float(f.log_probs.sum()), abs=1e-4)
        assert torch.allclose(h.alignment, torch.from_numpy(f.alignment), atol=1e-5)


@pytest.mark.parametrize("beam_size", [1, 4])
@pytest.mark.parametrize("ensemble", [False, True], ids=["model", "ensemble"])
def test_prefixed_translations_do_not_depend_on_batch_size(beam_size, ensemble):
    model = tiny_model(vocab=VOCAB, seed=1)
    if ensemble:
        model = Ensemble([model, tiny_model(vocab=VOCAB, seed=2)], [0, 0])
    sources, prefixes = random_sources(64, VOCAB, seed=6, max_len=8), random_prefixes(64, seed=7)
    reference = search(model, sources, prefixes, beam_size, in_flight=64)
    for in_flight in (1, 7):
        assert_same_hypotheses(reference, search(model, sources, prefixes, beam_size, in_flight=in_flight))


def test_a_prefix_longer_than_the_length_limit_is_kept_whole():
    model = tiny_model(vocab=VOCAB, seed=3)
    prefix = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
    (hypothesis,) = search(model, [[4]], [prefix], 1)[0]
    assert hypothesis.tokens[: len(prefix)] == prefix and BOS not in hypothesis.tokens


def test_no_prefix_is_no_constraint():
    assert Prefixes.of([[], []]) is None
    prefixes = Prefixes.of([[5], []])
    assert prefixes.prefixes.tolist() == [[5], [-1]] and prefixes.least_lengths.tolist() == [2, 1]


class EachPieceOnce:
    """A constraint written against the protocol alone (search/constraints.py), whose
    state is the whole history of its row: no piece may be taken twice."""

    on_device = False

    def __init__(self, count: int, vocab: int):
        self.least_lengths, self.vocab = torch.ones(count, dtype=torch.long), vocab

    def start(self, sentences):
        return torch.zeros(len(sentences), self.vocab, dtype=torch.bool)

    @staticmethod
    def mask(log_probs, state, at):
        state = state.to(log_probs.device).clone()
        state[:, EOS] = False  # a row may always end
        return log_probs.masked_fill(state, float("-inf"))

    @staticmethod
    def advance(state, tokens):
        taken = state.clone()
        taken[torch.arange(len(tokens)), tokens] = True
        return taken


@pytest.mark.parametrize(("beam_size", "n_best"), [(1, 1), (4, 4)])
def test_a_constraint_with_a_state_follows_its_rows_through_beams_and_batches(beam_size, n_best):
    """A new per-sentence input needs nothing of search but the protocol: its state is
    kept in step with the rows as they join, are reordered within beams and retire, and
    it composes with prefixes."""
    model = tiny_model(vocab=6, seed=4)  # few pieces: unconstrained outputs repeat them
    sources, prefixes = random_sources(24, 6, seed=8, max_len=8), [[4, 5] if i % 3 else [] for i in range(24)]
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 1.5, 3)
    options = SearchOptions(beam_size=beam_size, n_best=n_best)
    run = greedy_search if beam_size == 1 else beam_search
    free = run(model, src, lengths, max_lengths=limits, options=options)
    assert any(len(set(h[0].tokens)) < len(h[0].tokens) for h in free)

    def constrained(in_flight):
        constraints = [Prefixes.of(prefixes), EachPieceOnce(len(sources), 6)]
        chosen = SearchOptions(beam_size=beam_size, n_best=n_best, in_flight=in_flight)
        return run(model, src, lengths, max_lengths=limits, options=chosen, constraints=constraints)

    found = constrained(None)
    for prefix, hypotheses in zip(prefixes, found):
        for h in hypotheses:
            assert h.tokens[: len(prefix)] == prefix
            assert len(set(h.tokens)) == len(h.tokens), h.tokens
    assert_same_hypotheses(found, constrained(5))

"""Terms each output must contain (search/terms.py's `Terms`), through greedy and
beam search: every term written whole, in any batch, beside prefixes, and a sentence
without terms searched as if none had any."""

from __future__ import annotations

import math

import pytest
import torch

from rnnsearch.search.beam import beam_search
from rnnsearch.search.constraints import Places, Prefixes
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.search.terms import Terms
from rnnsearch.text.batches import source_tensors
from tests.conftest import assert_same_hypotheses, random_sources, tiny_model

VOCAB = 14


def contains(tokens: list[int], term: list[int]) -> bool:
    return any(tokens[k : k + len(term)] == term for k in range(len(tokens) - len(term) + 1))


def searched(terms, *, beam_size: int, in_flight: int | None = None, prefixes=None):
    model = tiny_model(vocab=VOCAB, seed=5)
    sources = random_sources(len(terms), VOCAB, seed=9, max_len=7)
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 1.0, 1)
    constraints = [] if prefixes is None else [Prefixes.of(prefixes)]
    constraint = Terms.of(terms)
    if constraint is not None:
        limits = torch.maximum(limits, constraint.least_lengths)
        constraints.append(constraint.within(limits))
    options = SearchOptions(beam_size=beam_size, n_best=beam_size, in_flight=in_flight)
    run = greedy_search if beam_size == 1 else beam_search
    return run(model, src, lengths, max_lengths=limits, options=options, constraints=[c for c in constraints if c])


TERMS = [
    [[5, 6]],
    [],
    [[7], [8, 9, 10]],
    [[5, 6], [6, 5]],  # overlapping pieces
    [[11, 11, 11]],  # a term of one piece repeated
    [],
    [[4, 12], [12]],  # one inside another
    [[9, 9], [9, 9]],  # the same term twice
]


@pytest.mark.parametrize("beam_size", [1, 4])
def test_every_output_contains_every_term_of_its_sentence(beam_size):
    for terms, hypotheses in zip(TERMS, searched(TERMS, beam_size=beam_size), strict=True):
        for hypothesis in hypotheses:
            assert all(contains(hypothesis.tokens, term) for term in terms), (terms, hypothesis.tokens)


@pytest.mark.parametrize("beam_size", [1, 4])
def test_a_sentence_without_terms_is_searched_as_if_no_sentence_had_any(beam_size):
    found = searched(TERMS, beam_size=beam_size)
    free = searched([[] for _ in TERMS], beam_size=beam_size)
    for terms, constrained, alone in zip(TERMS, found, free, strict=True):
        if not terms:
            assert_same_hypotheses([alone], [constrained])
    assert any(a[0].tokens != c[0].tokens for t, a, c in zip(TERMS, free, found, strict=True) if t)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_terms_do_not_depend_on_the_batch_and_compose_with_prefixes(beam_size):
    prefixes = [[13] if k % 2 else [] for k in range(len(TERMS))]
    whole = searched(TERMS, beam_size=beam_size, prefixes=prefixes)
    assert_same_hypotheses(whole, searched(TERMS, beam_size=beam_size, prefixes=prefixes, in_flight=3))
    for prefix, terms, hypotheses in zip(prefixes, TERMS, whole, strict=True):
        for hypothesis in hypotheses:
            assert hypothesis.tokens[: len(prefix)] == prefix
            assert all(contains(hypothesis.tokens, term) for term in terms)


def test_no_term_is_no_constraint_and_a_term_is_bound_to_the_limits_before_it_runs():
    assert Terms.of([[], []]) is None
    constraint = Terms.of([[[5, 6]]])
    assert constraint is not None and constraint.least_lengths.tolist() == [3]
    at = Places(torch.tensor([0]), torch.tensor([0]))
    with pytest.raises(ValueError, match="within"):
        constraint.mask(torch.zeros(1, VOCAB), constraint.start(torch.tensor([0])), at)


def test_a_row_may_not_end_before_its_terms_continues_a_term_it_began_and_starts_one_in_time():
    from rnnsearch.reserved import EOS

    constraint = Terms.of([[[5, 6]]]).within(torch.tensor([6]))  # pieces at positions 0 to 4, </s> at 5
    state = constraint.start(torch.tensor([0]))

    def allowed(state: torch.Tensor, position: int) -> list[int]:
        masked = constraint.mask(torch.zeros(1, VOCAB), state, Places(torch.tensor([0]), torch.tensor([position])))
        return torch.isfinite(masked[0]).nonzero().squeeze(1).tolist()

    assert EOS not in allowed(state, 0) and 5 in allowed(state, 0) and 7 in allowed(state, 0)
    assert allowed(state, 3) == [5]  # two steps left before </s>, for the two pieces it needs
    begun = constraint.advance(state, torch.tensor([5]))
    assert allowed(begun, 1) == [6]
    met = constraint.advance(begun, torch.tensor([6]))
    assert len(allowed(met, 2)) == VOCAB
    assert allowed(constraint.advance(begun, torch.tensor([7])), 2) != [6]  # a term left unfinished begins again


def test_a_term_just_written_is_not_run_on_into_a_longer_word():
    from rnnsearch.search.terms import ATTACHED, CONTINUES

    kinds = torch.zeros(VOCAB, dtype=torch.long)
    kinds[[6, 9, 10]] = CONTINUES  # pieces that continue the word before them
    kinds[12] = ATTACHED  # punctuation attached to it
    constraint = Terms.of([[[5, 6]]], kinds=kinds).within(torch.tensor([8]))
    at = Places(torch.tensor([0]), torch.tensor([2]))

    def allowed(state: torch.Tensor) -> list[int]:
        return torch.isfinite(constraint.mask(torch.zeros(1, VOCAB), state, at)[0]).nonzero().squeeze(1).tolist()

    state = constraint.advance(constraint.start(torch.tensor([0])), torch.tensor([5]))
    assert allowed(state) == [6]  # inside the term, its next piece though it continues a word
    met = constraint.advance(state, torch.tensor([6]))
    assert not {6, 9, 10} & set(allowed(met)) and {11, 12} <= set(allowed(met))
    assert not {9, 10} & set(allowed(constraint.advance(met, torch.tensor([12]))))  # "hound`s" neither
    assert {9, 10} <= set(allowed(constraint.advance(met, torch.tensor([11]))))


def test_a_row_that_would_end_begins_its_term_and_one_that_may_begin_it_is_drawn_to():
    from rnnsearch.reserved import EOS
    from rnnsearch.search.terms import TERM_BONUS

    constraint = Terms.of([[[5, 6], [8]]]).within(torch.tensor([20]))
    state = constraint.start(torch.tensor([0]))
    at = Places(torch.tensor([0]), torch.tensor([3]))
    log_probs = torch.full((1, VOCAB), -3.0)
    masked = constraint.mask(log_probs.clone(), state, at)[0]
    assert masked[5] == masked[8] == -3.0 + TERM_BONUS and masked[7] == -3.0 and masked[EOS] == -math.inf
    ending = log_probs.clone()
    ending[0, EOS] = -0.1  # the model would end here, its terms unwritten
    assert torch.isfinite(constraint.mask(ending, state, at)[0]).nonzero().squeeze(1).tolist() == [5]


def test_a_term_another_term_runs_on_into_a_longer_word_is_unmet_and_written_as_a_word_later():
    """Herr → "man" (piece 5) and Chef → "manager" (5, then 6, which continues the word):
    inside "manager" the row must take 6, so "man" is no word of its own there; it is
    unmet again, the row may not end, and once written as a word ("man" then a new word)
    it stays met whatever follows."""
    from rnnsearch.reserved import EOS
    from rnnsearch.search.terms import CONTINUES

    kinds = torch.zeros(VOCAB, dtype=torch.long)
    kinds[6] = CONTINUES
    constraint = Terms.of([[[5], [5, 6]]], kinds=kinds).within(torch.tensor([10]))
    at = Places(torch.tensor([0]), torch.tensor([3]))

    def allowed(state: torch.Tensor) -> list[int]:
        return torch.isfinite(constraint.mask(torch.zeros(1, VOCAB), state, at)[0]).nonzero().squeeze(1).tolist()

    state = constraint.advance(constraint.start(torch.tensor([0])), torch.tensor([5]))
    assert allowed(state) == [6]  # inside "manager"
    state = constraint.advance(state, torch.tensor([6]))
    assert EOS not in allowed(state) and 5 in allowed(state)  # "man" was run on: unmet again
    state = constraint.advance(state, torch.tensor([5]))
    assert 6 not in allowed(state)  # "man" stands as a word: it may not be run on now
    state = constraint.advance(state, torch.tensor([7]))
    assert EOS in allowed(state) and EOS in allowed(constraint.advance(state, torch.tensor([6])))


def test_a_row_whose_attention_has_passed_a_term_s_source_words_begins_it_there():
    """Where the step's attention weighs a piece after a term's source words most, and the
    row has written as many pieces as come before their end, it begins the term there
    rather than write on to where it would end; while its attention is on them, or in its
    first steps (often on the source's end), it writes on; with no source known, as ever."""
    from rnnsearch.reserved import EOS

    def allowed(constraint: Terms, position: int, focus: int) -> list[int]:
        attention = torch.zeros(1, 6)
        attention[0, focus] = 1.0
        at = Places(torch.tensor([0]), torch.tensor([position]), attention)
        masked = constraint.mask(torch.zeros(1, VOCAB), constraint.start(torch.tensor([0])), at)[0]
        return torch.isfinite(masked).nonzero().squeeze(1).tolist()

    placed = Terms.of([[[5, 6]]], ends=[[3]])
    assert placed is not None
    placed = placed.within(torch.tensor([20]))
    assert allowed(placed, 3, 3) == [5] and allowed(placed, 4, 5) == [5]
    assert len(allowed(placed, 3, 2)) == VOCAB - 1 and len(allowed(placed, 1, 5)) == VOCAB - 1  # all but </s>
    unplaced = Terms.of([[[5, 6]]])
    assert unplaced is not None
    assert EOS not in allowed(unplaced.within(torch.tensor([20])), 3, 3)
    assert len(allowed(unplaced.within(torch.tensor([20])), 3, 3)) == VOCAB - 1


def test_where_a_term_was_written_is_where_the_search_s_state_met_it():
    """Herr → "man" (5) and Chef → "manager" (5, 6): in "manager man ." the first 5 is run
    on, so "man" is met at its second writing, where a search of the text for its pieces
    would find the first; a term an output never writes has no place, and a sentence
    without terms none at all."""
    from rnnsearch.search.terms import CONTINUES

    kinds = torch.zeros(VOCAB, dtype=torch.long)
    kinds[6] = CONTINUES
    constraint = Terms.of([[[5], [5, 6]], [[8, 9]]], kinds=kinds)
    outputs = [[5, 6, 5, 7], [7, 5, 6, 7], [8, 9, 4], [4, 8, 7]]
    places = constraint.written(torch.tensor([0, 0, 1, 1]), outputs)
    assert places == [[(2, 3), (0, 2)], [None, (1, 3)], [(0, 2)], [None]]


def test_searched_outputs_say_where_each_term_stands_in_their_pieces():
    for terms, hypotheses in zip(TERMS, searched(TERMS, beam_size=3), strict=True):
        constraint = Terms.of([terms])
        if constraint is None:
            continue
        places = constraint.written(torch.zeros(len(hypotheses), dtype=torch.long), [h.tokens for h in hypotheses])
        for hypothesis, placed in zip(hypotheses, places, strict=True):
            assert [hypothesis.tokens[start:end] for start, end in placed] == terms

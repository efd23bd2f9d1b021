"""Repeated words, counted as `rnnsearch.evaluation.repetition` defines them."""

import pytest

from rnnsearch.evaluation.repetition import repeated_positions, repetitions, words


def test_a_phrase_said_twice_counts_its_second_time():
    hypothesis = "A tennis player is running across a white fence in front of a white fence."
    reference = "A tennis player runs in front of a white fence."
    said = words(hypothesis)
    assert said[-3:] == ["a", "white", "fence"]
    # "a white fence" the second time; the reference has each of those words once.
    assert repeated_positions(said, words(reference)) == {len(said) - 3, len(said) - 2, len(said) - 1}


def test_what_the_reference_repeats_is_no_repetition():
    hypothesis = "a man and a woman"
    assert repeated_positions(words(hypothesis), words("a man talks to a woman")) == set()
    assert repeated_positions(words(hypothesis), words("the man and the woman")) == {3}


def test_a_repeated_bigram_counts_both_its_words_even_when_each_word_may_repeat():
    # "de la" twice against a reference with "de" and "la" twice each, but "de la" once.
    reference = "il parle de la mer et de sa maison la nuit"
    assert repeated_positions(words("de la mer et de la plage"), words(reference)) == {4, 5}


def test_punctuation_and_case_do_not_count():
    assert words("Snow, snow!") == ["snow", "snow"]
    counted = repetitions(["Snow, snow!", "A dog ."], ["Snow falls.", "A dog runs."])
    assert (counted.repeated, counted.words) == (1, 4)
    assert counted.per_100_words == pytest.approx(25.0)


def test_a_corpus_without_words_has_none_repeated():
    assert repetitions(["", "..."], ["a", "b"]).per_100_words == 0.0


def test_hypotheses_and_references_must_pair_up():
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        repetitions(["a", "b"], ["a"])

"""Words no output may contain (search/avoided.py): never written whole, whatever pieces
spell them and in any case, through greedy and beam search, beside terms that win."""

from __future__ import annotations

import re

import pytest
import torch

from rnnsearch.search.avoided import Avoided, AvoidTable
from rnnsearch.search.beam import beam_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.search.rules import SearchOptions, max_output_lengths
from rnnsearch.search.terms import Terms
from rnnsearch.text.batches import source_tensors
from tests.conftest import random_sources, tiny_model

TEXTS = ("", "", "", "", " dog", " do", "g", " D", "o", "gs", " a", ".", "DOG", " hot")
"""The vocabulary's pieces as text: "dog" spelled five ways, "dogs" and "hotdog" beside it."""
DOG = re.compile(r"(?<!\w)dog(?!\w)", re.IGNORECASE)


def written(tokens: list[int]) -> str:
    return "".join(TEXTS[t] for t in tokens)


def searched(*, beam_size: int, avoided: list[str], terms=None) -> list[list[str]]:
    model = tiny_model(vocab=len(TEXTS), seed=3)
    sources = random_sources(12, len(TEXTS), seed=4, max_len=8)
    src, lengths = source_tensors(sources)
    limits = max_output_lengths(lengths, 2.0, 3)
    constraints = [] if not avoided else [Avoided(AvoidTable.of(avoided, TEXTS))]
    if terms is not None:
        constraint = Terms.of(terms)
        limits = torch.maximum(limits, constraint.least_lengths)
        constraints.insert(0, constraint.within(limits))
    options = SearchOptions(beam_size=beam_size, n_best=beam_size)
    run = greedy_search if beam_size == 1 else beam_search
    found = run(model, src, lengths, max_lengths=limits, options=options, constraints=constraints)
    return [[written(h.tokens) for h in hypotheses] for hypotheses in found]


@pytest.mark.parametrize("beam_size", [1, 4])
def test_an_avoided_word_is_never_written_whatever_pieces_spell_it(beam_size):
    free = [text for texts in searched(beam_size=beam_size, avoided=[]) for text in texts]
    assert any(DOG.search(text) for text in free), free  # the model writes it when free to
    avoiding = [text for texts in searched(beam_size=beam_size, avoided=["Dog"]) for text in texts]
    assert not any(DOG.search(text) for text in avoiding), avoiding


def forbidden_after(avoided: Avoided, tokens: list[int]) -> list[int]:
    state = avoided.start(torch.tensor([0]))
    for token in tokens:
        state = avoided.advance(state, torch.tensor([token]))
    return torch.isinf(avoided.mask(torch.zeros(1, len(TEXTS)), state, None)[0]).nonzero().squeeze(1).tolist()


def test_a_longer_word_that_holds_an_avoided_one_may_be_written():
    avoided = Avoided(AvoidTable.of(["dog"], TEXTS))
    assert forbidden_after(avoided, []) == [4, 12]  # " dog", and "DOG" at the text's start
    assert forbidden_after(avoided, [13]) == [4]  # " hot" then "DOG": "hotDOG"
    assert forbidden_after(avoided, [5]) == [4, 6]  # " do" then "g", not "gs"
    assert forbidden_after(avoided, [7, 8]) == [4, 6]  # " D", "o"
    assert forbidden_after(avoided, [10, 11]) == [4, 12]  # " a." then "DOG"


def test_a_term_that_holds_an_avoided_word_is_still_written():
    for texts in searched(beam_size=3, avoided=["dog"], terms=[[[13, 4]]] * 12):
        assert all(" hot dog" in text for text in texts), texts


def test_the_table_finds_each_piece_that_would_complete_a_phrase():
    table = AvoidTable.of(
        ["New  York", "C++"], (" new", " york", " yo", "rk", " New", "rks", "(york", " c++", "c", "++")
    )
    assert table.always == (7,)  # " c++" holds a phrase whose first character is no word's
    assert table.continuing["new"] == (1,) and table.continuing["new yo"] == (3,)
    assert table.continuing["c"] == (9,) and "" not in table.continuing
    avoided = Avoided(table)
    state = avoided.advance(avoided.start(torch.tensor([0])), torch.tensor([4]))  # " New"
    masked = avoided.mask(torch.zeros(1, 10), state, None)
    assert torch.isinf(masked[0]).nonzero().squeeze(1).tolist() == [1, 7]


def test_the_table_is_the_one_every_prefix_of_every_phrase_gives_and_grows_linearly_with_phrases():
    """Only the prefixes whose rest a piece can hold are tried; the table is the one trying
    every prefix gives, and long phrases add keys in proportion to their number."""
    import random

    from rnnsearch.search.avoided import _starting, _vocabulary
    from rnnsearch.text.glossary import folded, word_character

    rng = random.Random(5)
    letters = "abc ."
    texts = tuple(" " * (k % 2) + "".join(rng.choice(letters) for _ in range(rng.randint(1, 4))) for k in range(60))
    phrases = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 30))) for _ in range(200)]
    table = AvoidTable.of(phrases, texts)
    _, ordered, starts = _vocabulary(texts)
    expected: dict[str, set[int]] = {}
    for phrase in sorted({folded(" ".join(p.split())) for p in phrases} - {""}):
        for k in range(1 if not word_character(phrase[0]) else 0, len(phrase)):
            expected.setdefault(phrase[:k], set()).update(_starting(phrase[k:], ordered, starts))
    assert table.continuing == {key: tuple(sorted(found)) for key, found in expected.items() if found}
    many = AvoidTable.of([f"{k:04d} " + "x" * 190 for k in range(400)], texts)
    assert len(many.continuing) <= 400 * max(len(text) for text in texts)

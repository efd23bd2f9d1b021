"""The symmetrisation heuristics of Koehn et al. (2003) on small alignments worked out by
hand. Links are (source word, target word)."""

from __future__ import annotations

import numpy as np
import pytest

from rnnsearch.alignments import symmetrisation
from rnnsearch.alignments.symmetrisation import (
    COMBINATIONS,
    METHODS,
    SOFT_METHODS,
    symmetrise,
    symmetrise_weights,
)

# Both directions agree on 0-0 and 1-1; each adds a link far from those, on source word
# 4: forward 4-3, backward 4-4.
FORWARD = {(0, 0), (1, 1), (4, 3)}
BACKWARD = {(0, 0), (1, 1), (4, 4)}


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("intersect", [(0, 0), (1, 1)]),
        ("union", [(0, 0), (1, 1), (4, 3), (4, 4)]),
        # 4-3 and 4-4 neighbour no link of the intersection, so nothing grows.
        ("grow-diag", [(0, 0), (1, 1)]),
        # final: forward's 4-3 aligns new words; then backward's 4-4 aligns target word 4, new.
        ("grow-diag-final", [(0, 0), (1, 1), (4, 3), (4, 4)]),
        # final-and: 4-4 would align target 4, new, but source 4 is aligned by 4-3 by then.
        ("grow-diag-final-and", [(0, 0), (1, 1), (4, 3)]),
    ],
)
def test_each_heuristic_on_a_pair_worked_out_by_hand(method, expected):
    assert symmetrise(FORWARD, BACKWARD, source_length=5, target_length=5, method=method) == expected


def test_the_final_step_takes_the_forward_direction_first():
    swapped = symmetrise(BACKWARD, FORWARD, source_length=5, target_length=5, method="grow-diag-final-and")
    assert swapped == [(0, 0), (1, 1), (4, 4)]


def test_grow_diag_follows_a_diagonal_link_by_link_within_one_sweep():
    """From 0-0 alone, 1-1 is a diagonal neighbour aligning new words, and once added, 2-2 is
    one of its own: the sweep sees the links it adds."""
    forward = {(0, 0), (1, 1), (2, 2)}
    assert symmetrise(forward, {(0, 0)}, source_length=3, target_length=3, method="grow-diag") == sorted(forward)


def test_grow_diag_adds_no_neighbour_whose_words_are_both_aligned():
    """0-1 neighbours 0-0 and 1-1, but source 0 and target 1 are aligned already."""
    forward, backward = {(0, 0), (1, 1), (2, 2)}, {(0, 0), (0, 1), (1, 1), (2, 2)}
    for method in ("grow-diag", "grow-diag-final", "grow-diag-final-and"):
        assert symmetrise(forward, backward, source_length=3, target_length=3, method=method) == sorted(forward)
    assert (0, 1) in symmetrise(forward, backward, source_length=3, target_length=3, method="union")


def test_grow_diag_takes_a_union_link_next_to_the_intersection_that_aligns_a_new_word():
    """Source word 2 is aligned by the forward direction only, at 2-1, next to 1-1 (below
    it); the backward direction aligns target word 3 only, at 1-3, two columns from any link."""
    forward, backward = {(0, 0), (1, 1), (2, 1)}, {(0, 0), (1, 1), (1, 3)}
    grown = symmetrise(forward, backward, source_length=3, target_length=4, method="grow-diag")
    assert grown == [(0, 0), (1, 1), (2, 1)]
    final = symmetrise(forward, backward, source_length=3, target_length=4, method="grow-diag-final")
    assert final == [(0, 0), (1, 1), (1, 3), (2, 1)]


def test_empty_directions_give_nothing_and_bad_input_is_refused():
    for method in METHODS:
        assert symmetrise([], [], source_length=2, target_length=2, method=method) == []
    with pytest.raises(ValueError, match="unknown symmetrisation 'diag'"):
        symmetrise([], [], source_length=1, target_length=1, method="diag")
    with pytest.raises(ValueError, match="link 2-0 lies outside a pair of 2 and 3 words"):
        symmetrise([(2, 0)], [], source_length=2, target_length=3)


def test_growing_costs_what_the_links_cost_not_the_square_of_the_sentence():
    """Two 100,000-word sentences: a scan over every pair of words would visit 10^10 pairs;
    the growing visits the links alone, so this is instant where that would not end."""
    forward = [(k, k) for k in range(0, 100_000, 1000)]
    backward = forward + [(k + 1, k) for k in range(0, 100_000, 1000)]
    for method in ("grow-diag", "grow-diag-final", "grow-diag-final-and"):
        links = symmetrise(forward, backward, source_length=100_000, target_length=100_000, method=method)
        assert links == sorted(backward)
    assert symmetrise([], [], source_length=100_000, target_length=100_000) == []


def test_soft_links_where_the_directions_mean_weight_reaches_the_threshold(monkeypatch):
    """Forward (target words × source words) and backward (source words × target words),
    worked out by hand with a threshold of 0.4: target 0 is source 0 in both (mean 0.9);
    target 1 picks source 2 narrowly forward (0.55), but backward hardly weighs it (0.05):
    mean 0.3, no link, though grow-diag-final-and keeps the forward argmax; source 1 and
    target 1 weigh each other 0.45 and 0.6 (mean 0.525): a link, which the forward argmax
    does not make."""
    monkeypatch.setattr(symmetrisation, "SOFT_THRESHOLD", 0.4)
    forward = np.array([[0.9, 0.05, 0.05], [0.0, 0.45, 0.55]])
    backward = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.05]])
    assert symmetrise_weights(forward, backward, method="soft") == [(0, 0), (1, 1)]
    argmax_forward = {(0, 0), (2, 1)}
    argmax_backward = {(0, 0), (1, 1), (2, 0)}
    hard = symmetrise(argmax_forward, argmax_backward, source_length=3, target_length=2, method="grow-diag-final-and")
    assert (2, 1) in hard


def test_soft_combination_refuses_directions_of_other_shapes():
    with pytest.raises(ValueError, match="differ in shape"):
        symmetrise_weights(np.zeros((2, 3)), np.zeros((2, 3)), method="soft")
    with pytest.raises(ValueError, match="unknown soft combination"):
        symmetrise_weights(np.zeros((2, 3)), np.zeros((3, 2)), method="intersect")


def test_every_combination_is_a_heuristic_or_a_soft_one_by_a_name_of_its_own():
    assert set(COMBINATIONS) == set(METHODS) | set(SOFT_METHODS)
    assert not set(METHODS) & set(SOFT_METHODS)

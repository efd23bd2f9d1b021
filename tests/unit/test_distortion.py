import itertools
from dataclasses import replace

import numpy as np
import pytest

from rnnsearch.alignments.distortion import CONTIGUITY, FLOOR, JumpPrior, posterior, posteriors, sure_link_posterior
from rnnsearch.alignments.readings import ALIGNMENT_SOURCES
from rnnsearch.alignments.words import hard_alignment

NULL = -1


def enumerated(weights: np.ndarray, null: np.ndarray, prior: JumpPrior) -> tuple[np.ndarray, np.ndarray]:
    """The posteriors by the definition: every sequence of links (a source word or NULL per
    target word) weighed by its jumps and emissions, summed."""
    targets, sources = weights.shape
    moves = prior.moves(sources)
    linked, unlinked, total = np.zeros_like(weights), np.zeros(targets), 0.0
    for path in itertools.product([NULL, *range(sources)], repeat=targets):
        probability, last = 1.0, -1
        for i, link in enumerate(path):
            if link == NULL:
                probability *= prior.null * max(null[i], FLOOR)
            else:
                probability *= moves[last + 1, link] * max(weights[i, link], FLOOR)
                last = link
        total += probability
        for i, link in enumerate(path):
            if link == NULL:
                unlinked[i] += probability
            else:
                linked[i, link] += probability
    return linked / total, unlinked / total


@pytest.mark.parametrize("seed", range(3))
def test_forward_backward_gives_the_posteriors_of_every_path_summed(seed):
    rng = np.random.default_rng(seed)
    rows = rng.dirichlet(np.ones(4), size=4)  # 3 source words and NULL
    weights, null = rows[:, :3], rows[:, 3]
    prior = JumpPrior(decay=0.7, stay=0.2, null=0.15, floor=0.3)
    linked, unlinked = posterior(weights, null, prior)
    expected_linked, expected_unlinked = enumerated(weights, null, prior)
    np.testing.assert_allclose(linked, expected_linked, atol=1e-12)
    np.testing.assert_allclose(unlinked, expected_unlinked, atol=1e-12)
    np.testing.assert_allclose(linked.sum(axis=1) + unlinked, 1.0)


@pytest.mark.parametrize("prior", [CONTIGUITY, JumpPrior(decay=1.0, stay=0.3, null=0.05, floor=0.0)])
def test_posteriors_computed_together_are_each_pairs_own(prior):
    """Pairs of every size, empty sides and pairs without NULL mass among them, padded
    into chunks of like sizes: each gets the posteriors it gets alone."""
    rng = np.random.default_rng(4)
    rows = []
    for k in range(300):  # more than one chunk
        targets, sources = rng.integers(0, 9, size=2)
        weights = rng.dirichlet(np.full(sources, 0.5), size=targets) * 0.9 if sources else np.zeros((targets, 0))
        rows.append((weights, None if k % 3 == 0 else rng.uniform(0.0, 0.3, size=targets)))
    for (weights, null), (linked, unlinked) in zip(rows, posteriors(rows, prior), strict=True):
        alone, alone_null = posterior(weights, null, prior)
        np.testing.assert_allclose(linked, alone, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(unlinked, alone_null, rtol=1e-12, atol=1e-15)


def test_an_undecided_word_goes_where_its_neighbours_make_a_contiguous_alignment():
    weights = np.array([[1.0, 0, 0, 0], [0, 0.45, 0, 0.55], [0, 0, 1.0, 0]])
    assert hard_alignment(weights) == [(0, 0), (2, 2), (3, 1)]  # read alone, the middle word jumps away
    linked, unlinked = posterior(weights, np.zeros(3), CONTIGUITY)
    assert hard_alignment(linked, unlinked) == [(0, 0), (1, 1), (2, 2)]


def test_a_sure_word_keeps_its_link_however_far_it_jumps():
    """The floor bounds what a jump costs: a word the rows are 99% sure of keeps its link
    at any distance (a German verb at the end of its clause), which the decay alone does not."""
    assert all(sure_link_posterior(CONTIGUITY, jump=jump) > 0.5 for jump in range(1, 61))
    unfloored = replace(CONTIGUITY, floor=0.0)
    assert sure_link_posterior(unfloored, jump=8) < 0.5
    assert sure_link_posterior(CONTIGUITY, jump=8, sure=0.6) < 0.5  # a word it is unsure of goes next door


def test_the_prior_weighs_a_jump_back_as_a_jump_ahead():
    """No word order is preferred: from word p to s as from the mirror of p to the mirror of
    s, and a word between two links to the same word is as likely either side of it."""
    moves = CONTIGUITY.moves(5)
    np.testing.assert_allclose(moves[1:, :], moves[1:, :][::-1, ::-1])
    centred = np.zeros((3, 3))
    centred[0, 1] = centred[2, 1] = 1.0
    centred[1] = [0.5, 0.0, 0.5]
    middle, _ = posterior(centred, np.zeros(3), CONTIGUITY)
    assert middle[1, 0] == pytest.approx(middle[1, 2])
    assert middle[1, 0] > 0.45


def test_a_word_the_rows_put_on_null_stays_unlinked_and_the_next_jumps_from_the_last_link():
    weights = np.array([[1.0, 0, 0], [0.05, 0.05, 0.0], [0, 0.5, 0.5]])
    null = np.array([0.0, 0.9, 0.0])
    linked, unlinked = posterior(weights, null, CONTIGUITY)
    assert unlinked[1] > linked[1].max()
    assert linked[2, 1] > linked[2, 2]  # one word on from source word 0, the last linked
    assert hard_alignment(linked, unlinked) == [(0, 0), (1, 2)]


def test_only_the_alignment_modules_weights_are_read_with_the_prior():
    assert ALIGNMENT_SOURCES["aligner"].prior == CONTIGUITY
    assert ALIGNMENT_SOURCES["attention"].prior is None


def test_empty_sides_are_returned_as_they_are():
    linked, unlinked = posterior(np.zeros((0, 3)), None, CONTIGUITY)
    assert linked.shape == (0, 3) and unlinked.shape == (0,)


def test_every_source_combines_two_directions_by_default_as_a_known_combination():
    from rnnsearch.alignments.symmetrisation import COMBINATIONS

    assert all(source.combination in COMBINATIONS for source in ALIGNMENT_SOURCES.values())
    assert ALIGNMENT_SOURCES["aligner"].combination == "soft"  # the measured best with the prior

"""A jump table counted from a module's own links: what is counted, how the counts become
a prior that the forward–backward algorithm reads like the fixed one, how an ensemble's
tables combine, and how the table is kept beside the module's weights."""

import json
import logging
from dataclasses import replace

import numpy as np
import pytest
import torch

from rnnsearch.alignments.counted_jumps import (
    FARTHEST,
    LEAST_JUMPS,
    PLACING,
    JumpTable,
    jump_counts,
    modules_table,
)
from rnnsearch.alignments.distortion import posterior, sure_link_posterior
from rnnsearch.alignments.readings import ALIGNMENT_SOURCES
from rnnsearch.alignments.words import align_translation, jump_prior, read_translation
from rnnsearch.decoding.results import Translation
from rnnsearch.errors import UserError
from rnnsearch.files import model_directory
from tests.unit.test_distortion import enumerated


def counts_of(jumps: dict[int, int]) -> np.ndarray:
    counts = np.zeros(2 * FARTHEST + 1)
    for jump, count in jumps.items():
        counts[jump + FARTHEST] = count
    return counts


FORWARD = JumpTable.counted(counts_of({-1: 10, 0: 5, 1: 100, 2: 30, 3: 4}))
"""A table of a language pair that mostly moves ahead: −1 weighs 0.1 of +1."""


def test_each_linked_word_counts_the_jump_from_the_last_word_linked_before_it():
    links = [(0, 0), (1, 1), (3, 2), (4, 2), (2, 4), (2 + FARTHEST + 1, 5), (0, 6)]
    counts = jump_counts([links, [(5, 0)]])
    # +1 (0→1), +2 (1→3), −2 (from 4, the last of word 2's, to 2; word 3 has no link), then
    # FARTHEST + 1 and −(FARTHEST + 3), too far to count; a pair of one linked word counts nothing
    assert counts_of({1: 1, 2: 1, -2: 1}).tolist() == counts.tolist()


def test_a_table_weighs_each_jump_by_its_count_beside_the_count_of_plus_one():
    assert FORWARD is not None
    weights = np.asarray(FORWARD.weights)
    assert weights[FARTHEST + 1] == 1.0 and weights[FARTHEST - 1] == pytest.approx(0.1)
    assert weights[FARTHEST] == pytest.approx(0.05) and weights[FARTHEST + 2] == pytest.approx(0.3)
    moves = FORWARD.moves(30)
    np.testing.assert_allclose(moves.sum(axis=1), 1.0 - FORWARD.null)
    # from word 3: a jump of −3 and one of 20 (never counted, beyond FARTHEST) both weigh the floor
    assert moves[4, 0] == pytest.approx(moves[4, 23]) and moves[4, 0] < moves[4, 2] < moves[4, 4]


def test_too_few_jumps_or_none_of_plus_one_make_no_table():
    assert JumpTable.counted(counts_of({1: LEAST_JUMPS - 1})) is None
    assert JumpTable.counted(counts_of({1: LEAST_JUMPS})) is not None
    assert JumpTable.counted(counts_of({-1: 10 * LEAST_JUMPS})) is None


def test_the_forward_backward_algorithm_reads_a_counted_table_as_its_paths_define():
    rng = np.random.default_rng(5)
    rows = rng.dirichlet(np.ones(5), size=4)  # 4 source words and NULL
    weights, null = rows[:, :4], rows[:, 4]
    assert FORWARD is not None
    linked, unlinked = posterior(weights, null, FORWARD)
    expected_linked, expected_unlinked = enumerated(weights, null, FORWARD)  # type: ignore[arg-type]
    np.testing.assert_allclose(linked, expected_linked, atol=1e-12)
    np.testing.assert_allclose(unlinked, expected_unlinked, atol=1e-12)


def test_a_counted_table_still_keeps_a_link_the_rows_are_sure_of_far_away():
    assert FORWARD is not None
    assert sure_link_posterior(FORWARD, jump=40) > 0.5


def module_translation(jumps: JumpTable | None) -> Translation:
    """Target word "y" after "x", which is surely on source word b: its row leans to a (a
    jump back) over c (a jump ahead)."""
    rows = np.array([[0.0, 1.0, 0.0, 0.0], [0.55, 0.0, 0.45, 0.0], [0.0, 0.0, 0.0, 1.0]], dtype=np.float32)
    pieces = (["▁a", "▁b", "▁c", "</s>"], ["▁x", "▁y", "</s>"])
    return Translation("a b c", "x y", 0.0, *pieces, rows, read_from=ALIGNMENT_SOURCES["aligner"], jumps=jumps)


def test_a_translation_is_read_with_its_modules_table_and_without_one_with_contiguity():
    """CONTIGUITY weighs both neighbours alike, so the row decides (a); a table of a pair
    that seldom jumps back moves "y" to c."""
    assert align_translation(module_translation(None)).pairs == [(0, 1), (1, 0)]
    assert align_translation(module_translation(FORWARD)).pairs == [(1, 0), (2, 1)]
    attention = replace(
        module_translation(FORWARD), read_from=ALIGNMENT_SOURCES["attention"]
    )  # read as its rows give it
    assert align_translation(attention).pairs == read_translation(attention, reading="output", prior=None).pairs


def test_an_ensembles_modules_are_read_with_the_mean_of_their_tables_and_any_without_one_with_contiguity():
    assert FORWARD is not None
    back = JumpTable.counted(counts_of({-1: 300, 1: 100}))
    assert back is not None
    mean = modules_table([FORWARD.weights, back.weights])
    assert mean is not None
    assert mean.weights[FARTHEST - 1] == pytest.approx((0.1 + 3.0) / 2)
    assert modules_table([FORWARD.weights]) == FORWARD
    assert modules_table([FORWARD.weights, None]) is None
    assert modules_table([]) is None


def written_module(folder, value: float) -> str:
    folder.mkdir(exist_ok=True)
    path = folder / model_directory.ALIGNER_WEIGHTS
    model_directory.write_tensors(path, {"aligner.w": torch.full((2,), value)}, {"size": 2})
    digest = model_directory.stored_digest(path)
    assert digest is not None
    return digest


def test_a_table_is_read_back_only_beside_the_weights_it_was_counted_from(tmp_path, caplog):
    assert FORWARD is not None
    digest = written_module(tmp_path, 1.0)
    model_directory.write_jumps(tmp_path, FORWARD, pairs=3, jumps=149)
    record = json.loads((tmp_path / model_directory.ALIGNER_JUMPS).read_text())
    assert (record["module"], record["pairs"], record["jumps"]) == (digest, 3, 149)
    assert model_directory.read_jumps(tmp_path, digest) == FORWARD.weights
    retrained = written_module(tmp_path, 2.0)
    with caplog.at_level(logging.WARNING):
        assert model_directory.read_jumps(tmp_path, retrained) is None
    assert "counted from other weights" in caplog.text
    assert model_directory.read_jumps(tmp_path / "none", retrained) is None


@pytest.mark.parametrize(
    "record, said",
    [
        ("{", "corrupt jump table"),
        ('{"module": "x"}', "weights"),
        ('{"module": "x", "weights": [1, 2]}', "2 jump weights"),
        ('{"module": "x", "weights": ' + json.dumps([0.5] * (2 * FARTHEST + 1)) + "}", "not 1"),
        # weights this large summed to infinity, and every alignment came back empty
        ('{"module": "x", "weights": ' + json.dumps([1e308] * (2 * FARTHEST + 1)) + "}", "from 0 to 1e"),
        ('{"module": "x", "weights": ' + json.dumps([True] * (2 * FARTHEST + 1)) + "}", "numbers"),
        ('{"module": "x", "weights": ' + "[" * 200_000 + "]" * 200_000 + "}", "nested too deep"),
    ],
)
def test_a_corrupt_table_is_refused_in_one_line_naming_its_file(tmp_path, record, said):
    (tmp_path / model_directory.ALIGNER_JUMPS).write_text(record)
    with pytest.raises(UserError, match=said) as refused:
        model_directory.read_jumps(tmp_path, "x")
    assert str(tmp_path / model_directory.ALIGNER_JUMPS) in str(refused.value)
    assert "\n" not in str(refused.value)


def test_markup_placement_reads_a_table_looser_so_a_row_sure_enough_of_a_jump_back_keeps_it():
    """ "y" leans 0.8 to a, a jump back: the table as counted (−1 weighs 0.1 of +1) moves it
    to c; read as markup placement reads it (PLACING: −1 weighs 0.1 ** 0.5 of +1, any jump
    at least 0.04) the row's choice stands. A prior that is no counted table is read as it is."""
    assert FORWARD is not None
    looser = PLACING.read(FORWARD)
    assert looser.weights[FARTHEST - 1] == pytest.approx(0.1**0.5) and looser.weights[FARTHEST + 1] == 1.0
    assert looser.floor == PLACING.floor and looser.null == FORWARD.null
    rows = np.array([[0.0, 1.0, 0.0, 0.0], [0.8, 0.0, 0.2, 0.0], [0.0, 0.0, 0.0, 1.0]], dtype=np.float32)
    leaning = replace(module_translation(FORWARD), alignment=rows)
    assert align_translation(leaning).pairs == [(1, 0), (2, 1)]
    assert align_translation(leaning, temper=PLACING).pairs == [(0, 1), (1, 0)]
    assert jump_prior(leaning, PLACING) == looser
    assert jump_prior(replace(leaning, jumps=None), PLACING) is ALIGNMENT_SOURCES["aligner"].prior


def test_tempered_placement_reads_one_word_s_rows_looser_still_and_reads_once_without_a_table():
    """`tempered` reads a module's rows with its table at PLACING for its links and spans,
    and at PLACING_ONE_WORD for the weights an element of one source word is placed by:
    there a jump back that the rows lean to weighs more. Rows read without a counted table
    (the attention's, a module with none) read the same either way, and are read once."""
    from rnnsearch.alignments.counted_jumps import PLACING_ONE_WORD
    from rnnsearch.markup import PLACEMENTS

    rows = np.array([[0.0, 1.0, 0.0, 0.0], [0.6, 0.0, 0.4, 0.0], [0.0, 0.0, 0.0, 1.0]], dtype=np.float32)
    leaning = replace(module_translation(FORWARD), alignment=rows)
    tempered = PLACEMENTS["tempered"]
    read = tempered.read([leaning], reading="output")[0]
    phrase = align_translation(leaning, temper=PLACING)
    assert read.words.pairs == phrase.pairs and np.array_equal(read.words.weights, phrase.weights)
    assert read.one_word is not None
    assert np.array_equal(read.one_word, align_translation(leaning, temper=PLACING_ONE_WORD).weights)
    assert read.one_word[1, 0] > read.words.weights[1, 0]  # the jump back, held more firmly
    weights = tempered.weights(read)
    assert np.allclose(weights.link_probabilities(0, 1), read.one_word[:, 0], atol=1e-6)
    assert np.allclose(
        weights.link_probabilities(0, 2), tempered.weights(replace(read, one_word=None)).link_probabilities(0, 2)
    )
    assert tempered.read([replace(leaning, jumps=None)], reading="output")[0].one_word is None
    assert PLACEMENTS["averaged"].read([leaning], reading="output")[0].one_word is None

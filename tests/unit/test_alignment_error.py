"""The alignment error rate of Och & Ney (2003), with precision and recall, on hand-made
sure/possible sets and on random ones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rnnsearch.errors import UserError
from rnnsearch.evaluation.alignment_error import (
    GoldLinks,
    alignment_error_rate,
    check_within,
    parse_gold_line,
    read_gold,
    stream_gold,
)


def gold(sure: set, possible: set = frozenset()) -> GoldLinks:
    return GoldLinks(frozenset(sure), frozenset(sure | possible))


def test_one_pair_worked_out_by_hand():
    """S = {0-0, 1-1}, P = S ∪ {1-2}, A = {0-0, 1-2, 2-2}: |A∩S| = 1, |A∩P| = 2, |A| = 3,
    |S| = 2, so AER = 1 − 3/5, precision 2/3, recall 1/2."""
    score = alignment_error_rate([{(0, 0), (1, 2), (2, 2)}], [gold({(0, 0), (1, 1)}, {(1, 2)})])
    assert score.aer == pytest.approx(40.0)
    assert score.precision == pytest.approx(200 / 3)
    assert score.recall == pytest.approx(50.0)
    assert (score.pairs, score.links) == (1, 3)
    assert str(score) == "AER 40.0  precision 66.7  recall 50.0  (1 pairs, 3 links)"


def test_a_corpus_sums_its_counts_rather_than_averaging_its_pairs():
    """Pair 1 is perfect with 1 link, pair 2 all wrong with 3: summed, |A∩S| = |A∩P| = 1 of
    |A| = 4 and |S| = 2, so AER = 1 − 2/6; a mean over pairs would say 50."""
    predicted = [{(0, 0)}, {(0, 1), (1, 0), (2, 2)}]
    score = alignment_error_rate(predicted, [gold({(0, 0)}), gold({(0, 0)})])
    assert score.aer == pytest.approx(100 * (1 - 2 / 6))
    assert score.precision == pytest.approx(25.0)
    assert score.recall == pytest.approx(50.0)


def test_pairs_without_links_count_for_nothing_and_nothing_at_all_is_no_error():
    with_empty = alignment_error_rate([set(), {(0, 0)}, set()], [gold(set()), gold({(0, 0)}), gold(set())])
    assert (with_empty.aer, with_empty.precision, with_empty.recall, with_empty.pairs) == (0.0, 100.0, 100.0, 3)
    nothing = alignment_error_rate([set()], [gold(set())])
    assert (nothing.aer, nothing.precision, nothing.recall, nothing.links) == (0.0, 100.0, 100.0, 0)
    missed = alignment_error_rate([set()], [gold({(0, 0)})])
    assert (missed.aer, missed.precision, missed.recall) == (100.0, 100.0, 0.0)


def test_a_link_predicted_twice_counts_once():
    assert alignment_error_rate([[(0, 0), (0, 0)]], [gold({(0, 0)})]).links == 1


def test_different_numbers_of_pairs_are_refused():
    with pytest.raises(ValueError, match="2 predicted alignments but 1 gold"):
        alignment_error_rate([set(), set()], [gold(set())])


@pytest.mark.parametrize(
    ("line", "one_based", "sure", "possible_only"),
    [
        ("", False, set(), set()),
        ("0-0 1-2", False, {(0, 0), (1, 2)}, set()),
        ("0-0 1p2 2?3", False, {(0, 0)}, {(1, 2), (2, 3)}),
        ("1-1  2p3\t", True, {(0, 0)}, {(1, 2)}),
        ("3-1 3p1", False, {(3, 1)}, set()),  # sure and possible at once: sure
    ],
)
def test_gold_lines_parse_sure_and_possible_links(line, one_based, sure, possible_only):
    assert parse_gold_line(line, one_based=one_based) == gold(sure, possible_only)


@pytest.mark.parametrize(
    ("line", "one_based", "fragments"),
    [
        ("0-0 1_2", False, ("'1_2'", "not a link", "i-j")),
        ("0-0 1-", False, ("'1-'", "not a link")),
        ("a-b", False, ("'a-b'",)),
        ("-1-2", False, ("'-1-2'",)),
        ("1-1 0-3", True, ("'0-3'", "word 0", "1-based")),
        ("0-0 " + "7" * 4301 + "-1", False, ("'7777", "… (4,303 characters)", "more than 9 digits")),
        ("0-0 1234567890-1", False, ("'1234567890-1'", "more than 9 digits")),
        ("0-0 " + "x" * 100, False, ("… (100 characters)", "not a link")),
        ("0-0 ٣-٣", False, ("'٣-٣'", "not a link")),  # other digits: int() would read them as 3
        ("0-0 １p２", False, ("'１p２'", "not a link")),
    ],
)
def test_a_malformed_gold_token_is_one_line_naming_where_and_the_token(line, one_based, fragments):
    with pytest.raises(UserError) as raised:
        parse_gold_line(line, one_based=one_based, where="g.txt: line 7")
    message = str(raised.value)
    assert message.startswith("g.txt: line 7: ") and "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_a_gold_file_is_read_line_by_line_and_its_errors_name_the_line(tmp_path):
    path = tmp_path / "enfr.gold"
    path.write_text("1-1 2p2\n\n3?1\n", encoding="utf-8")
    assert read_gold(path, one_based=True) == [gold({(0, 0)}, {(1, 1)}), gold(set()), gold(set(), {(2, 0)})]
    path.write_text("1-1\n2x2\n", encoding="utf-8")
    with pytest.raises(UserError, match=f"^{path}: line 2: '2x2' is not a link"):
        read_gold(path)
    path.write_bytes(b"1-1\n\xff\n")
    with pytest.raises(UserError, match=f"^{path}:2: not valid UTF-8"):
        read_gold(path)
    with pytest.raises(UserError, match="missing.gold: no such file"):
        read_gold(tmp_path / "missing.gold")


def test_a_gold_file_streams_a_line_at_a_time(tmp_path):
    """The lines come as they are asked for: a bad line further on is not even read."""
    path = tmp_path / "enfr.gold"
    path.write_text("1-1\n2-2\nnot links\n", encoding="utf-8")
    lines = stream_gold(path, one_based=True)
    assert [next(lines), next(lines)] == [gold({(0, 0)}), gold({(1, 1)})]
    with pytest.raises(UserError, match=f"^{path}: line 3: 'not' is not a link"):
        next(lines)
    with pytest.raises(UserError, match="missing.gold: no such file"):
        stream_gold(tmp_path / "missing.gold")


def test_links_outside_the_pair_are_named():
    check_within(gold({(2, 3)}), 3, 4, where="x")
    for links, message in (({(3, 0)}, "link 3-0"), ({(0, 4)}, "link 0-4")):
        with pytest.raises(UserError, match=f"^x: {message} \\(0-based\\) lies outside a pair of 3 source and 4"):
            check_within(gold(set(), links), 3, 4, where="x")


links = st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12)


@given(st.lists(st.tuples(links, links, links), min_size=1, max_size=5))
def test_random_sets_keep_the_definitions(corpus):
    """On random sets: AER within [0, 100]; a prediction of exactly S scores 0; and AER is
    the |A|- and |S|-weighted mean of the errors of precision and recall, which follows
    from its definition: 1 − AER = (|A|·precision + |S|·recall) / (|A| + |S|)."""
    predicted = [a for a, _, _ in corpus]
    gold_links = [gold(s, p) for _, s, p in corpus]
    score = alignment_error_rate(predicted, gold_links)
    assert 0.0 <= score.aer <= 100.0
    found, sure = sum(len(a) for a in predicted), sum(len(g.sure) for g in gold_links)
    if found + sure:
        weighted = (found * score.precision + sure * score.recall) / (found + sure)
        assert 100.0 - score.aer == pytest.approx(weighted)
    perfect = alignment_error_rate([g.sure for g in gold_links], gold_links)
    assert (perfect.aer, perfect.recall) == (0.0, 100.0)

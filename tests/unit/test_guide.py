from pathlib import Path

import numpy as np
import pytest

from rnnsearch.alignments.guide import guide_entries, piece_links
from rnnsearch.text.corpus import read_lines
from rnnsearch.text.subwords import train_subwords

DATA = Path(__file__).resolve().parents[2] / "data" / "multi30k"


def test_multi_piece_words_link_every_piece_to_every_piece():
    # source words: "▁un" "▁chat|on" "▁noir" ; target words: "▁a" "▁black" "▁kit|ten"
    source = ["▁un", "▁chat", "on", "▁noir", "</s>"]
    target = ["▁a", "▁black", "▁kit", "ten"]
    links = piece_links({(0, 0), (1, 2), (2, 1)}, source, target, source_words=3, target_words=3)
    assert links.tolist() == [[0, 0], [1, 3], [2, 1], [2, 2], [3, 1], [3, 2]]


def test_unknown_pieces_are_words_on_both_sides():
    source = ["▁der", "<unk>", "▁hund"]
    target = ["▁the", "<unk>", "▁dog"]
    links = piece_links({(1, 1), (2, 2)}, source, target, source_words=3, target_words=3)
    assert links.tolist() == [[1, 1], [2, 2]]


def test_a_word_the_pieces_lose_makes_the_pair_unplaceable():
    # the text had three target words, but normalisation left two
    assert piece_links({(0, 0)}, ["▁a"], ["▁b", "▁c"], source_words=1, target_words=3) is None
    assert piece_links({(0, 0)}, ["▁a", "▁b"], ["▁c"], source_words=1, target_words=1) is None


def test_no_links_give_no_piece_links():
    links = piece_links(set(), ["▁a"], ["▁b"], source_words=1, target_words=1)
    assert links.shape == (0, 2)


def test_links_follow_a_real_subword_model_word_for_word():
    texts = [line for line in read_lines(DATA / "train.de.gz")[:2000]]
    subwords = train_subwords(texts, "unigram", 800)
    sentence = "Ein Schneemobilfahrer fährt durch tiefen Neuschnee."
    pieces = subwords.pieces(subwords.encode([sentence])[0])
    words = sentence.split()
    assert len(pieces) > len(words)  # some word is cut into several pieces
    diagonal = {(k, k) for k in range(len(words))}
    links = piece_links(diagonal, pieces, pieces, source_words=len(words), target_words=len(words))
    spelled: dict[int, str] = {}
    for target, source in links.tolist():
        spelled.setdefault(target, pieces[source])
    # every target piece is linked only to pieces of its own word, and to all of them
    rebuilt = ["".join(pieces[s] for t, s in links.tolist() if t == first) for first in sorted(spelled)]
    assert [word.lstrip("▁") for word in dict.fromkeys(rebuilt)] == words


def test_guide_entries_make_each_linked_row_a_distribution():
    first = np.array([[0, 0], [0, 1], [2, 1]])
    second = np.zeros((0, 2), dtype=np.int64)
    third = np.array([[1, 3]])
    entries, weights = guide_entries([first, second, third])
    assert entries.tolist() == [[0, 0, 0], [0, 0, 1], [0, 2, 1], [2, 1, 3]]
    assert weights.tolist() == pytest.approx([0.5, 0.5, 1.0, 1.0])


def test_a_batch_without_links_has_no_entries():
    entries, weights = guide_entries([np.zeros((0, 2), dtype=np.int64)] * 2)
    assert entries.shape == (0, 3) and weights.shape == (0,)

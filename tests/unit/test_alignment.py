import ast
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import rnnsearch
from rnnsearch.alignments.readings import ALIGNMENT_SOURCES, READINGS, check_reading, reading_rows
from rnnsearch.alignments.words import (
    align_translation,
    align_words,
    group_words,
    hard_alignment,
    merge,
    null_mass,
    on_text_words,
    pharaoh,
    source_words,
    target_words,
)
from rnnsearch.decoding.results import Translation
from rnnsearch.text.corpus import read_lines
from rnnsearch.text.subwords import train_subwords

DATA = Path(__file__).resolve().parents[2] / "data" / "multi30k"


def test_unigram_pieces_group_into_words_and_eos_has_none():
    pieces = ["▁Ein", "▁Hund", "▁", "l", "ä", "u", "f", "t", ".", "</s>"]
    words = source_words(pieces)
    assert words.texts == ["Ein", "Hund", "läuft."]
    assert words.of_piece == [0, 1, 2, 2, 2, 2, 2, 2, 2, None]


def test_bpe_pieces_group_into_words():
    words = target_words(["▁Ein", "▁H", "und", "▁spielt", "</s>"])
    assert words.texts == ["Ein", "Hund", "spielt"]
    assert words.of_piece == [0, 1, 1, 2, None]


def test_byte_pieces_continue_their_word_and_decode_to_characters():
    pieces = ["▁", "D", "er", "▁", "<0xE2>", "<0x82>", "<0xAC>", "u", "r", "o", "▁", "<0xF0>", "<0x9F>", "<0x92>"]
    pieces += ["<0xA1>", "<0x21>", "</s>"]
    words = source_words(pieces)
    assert words.texts == ["Der", "€uro", "💡!"]
    assert words.of_piece == [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, None]


def test_word_kind_tokens_are_words_and_unknown_counts_only_on_the_source_side():
    pieces = ["▁Ein", "▁Hund", "<unk>", "▁im", "▁Schnee", "</s>"]
    assert source_words(pieces).texts == ["Ein", "Hund", "<unk>", "im", "Schnee"]
    assert source_words(pieces).of_piece == [0, 1, 2, 3, 4, None]
    assert target_words(pieces).texts == ["Ein", "Hund", "im", "Schnee"]
    assert target_words(pieces).of_piece == [0, 1, None, 2, 3, None]


def test_unknown_inside_a_target_word_does_not_split_it():
    assert target_words(["▁Hun", "<unk>", "d", "</s>"]).texts == ["Hund"]


def test_a_first_piece_without_word_start_still_starts_a_word():
    assert target_words(["er", "▁lacht", "</s>"]).of_piece == [0, 1, None]


def test_lone_word_start_pieces_make_no_word():
    assert target_words(["▁Ein", "▁", "</s>"]).of_piece == [0, None, None]
    assert target_words(["▁", "▁", "</s>"]).texts == []
    assert group_words([], unknown_is_word=True).texts == []


@pytest.fixture(scope="module")
def german() -> list[str]:
    return read_lines(DATA / "train.de.gz")[:300]


@pytest.mark.parametrize("kind", ["unigram", "bpe", "word"])
def test_target_words_are_the_words_of_the_decoded_text(german, kind):
    subwords = train_subwords(german, kind, 400)
    sentences = ["Ein Hund läuft durch den Schnee.", "Der €uro kostet ½ Preis 💡!", "Qzx  unbekannt", "x"]
    for ids in subwords.encode(sentences + german[:50]):
        assert target_words(subwords.pieces(ids) + ["</s>"]).texts == subwords.decode(ids).split()


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_source_words_count_the_words_of_the_input(german, kind):
    subwords = train_subwords(german, kind, 400)
    sentences = german[250:300] + ["Der €uro kostet 💡 Preis !"]
    for sentence, ids in zip(sentences, subwords.encode(sentences)):
        assert len(source_words(subwords.pieces(ids) + ["</s>"]).texts) == len(sentence.split())


# Characters that normalisation removes or turns into a word break, or that str.split()
# and SentencePiece disagree on: a zero-width space, a byte-order mark, a word joiner, a
# soft hyphen, the information separator str.split() breaks at, a non-breaking space.
AWKWARD = ["\u200b", "\ufeff", "\u2060", "\u00ad", "\x1c", "\u00a0"]


def awkward_sentence(rng: random.Random, words: list[str]) -> str:
    """Words with awkward characters between them, alone or inside words."""
    parts = []
    for word in rng.sample(words, rng.randint(1, 8)):
        if rng.random() < 0.3:
            cut = rng.randint(0, len(word))
            word = word[:cut] + rng.choice(AWKWARD) + word[cut:]
        parts.append(word)
        if rng.random() < 0.3:
            parts.append(rng.choice(AWKWARD))
    return " ".join(parts)


def text_word_of_bytes(text: str, survives: Callable[[str], bool]) -> dict[int, int]:
    """Byte offset in `text` (UTF-8) → index of the `text.split()` word it lies in, for
    the bytes of the characters that `survives` says normalisation keeps."""
    owner, offset, word, inside = {}, 0, -1, False
    for character in text:
        starts = not character.isspace()
        if starts and not inside:
            word += 1
        inside = starts
        for _ in character.encode("utf-8"):
            if starts and survives(character):
                owner[offset] = word
            offset += 1
    return owner


@pytest.mark.parametrize("kind", ["unigram", "bpe"])
def test_source_pieces_land_on_the_words_of_the_text_whatever_normalisation_drops(german, kind):
    """Property: each source piece that spells characters is placed on the text word that
    SentencePiece itself says those characters came from (its byte offsets into the
    input), for sentences with zero-width and other characters the model drops or splits at."""
    subwords = train_subwords(german, kind, 400)
    rng = random.Random(7)
    vocabulary = sorted({word for line in german[:50] for word in line.split()})
    checked = unplaced = 0
    for _ in range(300):
        text = awkward_sentence(rng, vocabulary)
        pieces = subwords._processor.encode(text, out_type="proto").pieces
        words = on_text_words(
            source_words([piece.piece for piece in pieces] + ["</s>"]), text, subwords.word_counts(text)
        )
        owner = text_word_of_bytes(text, lambda character: bool(subwords._processor.normalize(character)))
        spelled = [sorted({owner[b] for b in range(piece.begin, piece.end) if b in owner}) for piece in pieces]
        # A character str.split() breaks at but normalisation removes joins two words into
        # one of the model's (pieces from one "▁" to the next): such a pair cannot be
        # placed, and only such a pair.
        model_words: list[set[int]] = []
        for piece, owners in zip(pieces, spelled, strict=True):
            if piece.piece.startswith("▁") or not model_words:
                model_words.append(set())
            model_words[-1].update(owners)
        joined = any(len(owners) > 1 for owners in model_words)
        assert (words is None) == joined, text
        if joined:
            unplaced += 1
            continue
        assert words.texts == text.split()
        for k, piece in enumerate(pieces):
            if piece.piece.replace("▁", "") and spelled[k]:
                assert words.of_piece[k] == spelled[k][0], (text, k, piece.piece)
                checked += 1
    assert checked > 1000 and 0 < unplaced < 100


def test_unplaceable_pieces_give_no_links_rather_than_shifted_ones():
    """The word kind joins consecutive unknown words into one <unk>: one model word for two
    text words, which cannot be placed, so the pair is marked and has no links."""
    translation = Translation(
        source="Qzx Qzy Hund",
        text="dog",
        score=0.0,
        source_tokens=["<unk>", "▁Hund", "</s>"],
        target_tokens=["▁dog", "</s>"],
        alignment=np.array([[0.1, 0.8, 0.1], [0.0, 0.0, 1.0]]),
        source_word_counts=[1, 1, 1],
        target_word_counts=[1],
    )
    aligned = align_translation(translation)
    assert not aligned.placed and aligned.pairs == []
    assert aligned.source_words == ["Qzx", "Qzy", "Hund"] and aligned.weights.shape == (1, 3)
    counted = align_translation(replace(translation, source="Qzx Hund", source_word_counts=[1, 1]))
    assert counted.placed and counted.pairs == [(1, 0)]


def random_alignment(rows: int, columns: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).dirichlet(np.ones(columns), size=rows)


def test_merge_sums_over_source_pieces_and_averages_over_target_pieces():
    source = source_words(["▁x", "y", "▁z", "</s>"])
    target = target_words(["▁a", "b", "▁c", "</s>"])
    alignment = np.array(
        [
            [0.5, 0.3, 0.1, 0.1],
            [0.1, 0.1, 0.6, 0.2],
            [0.0, 0.2, 0.7, 0.1],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )
    expected = np.array([[(0.8 + 0.2) / 2, (0.1 + 0.6) / 2], [0.2, 0.7]])
    assert np.allclose(merge(alignment, source, target), expected)


@pytest.mark.parametrize("seed", range(5))
def test_merged_rows_keep_their_mass_except_what_went_to_eos(seed):
    source = source_words(["▁Ein", "▁H", "und", "▁", "l", "ä", "uft", "</s>"])
    target = target_words(["▁A", "▁do", "g", "▁run", "s", "</s>"])
    alignment = random_alignment(6, 8, seed)
    merged = merge(alignment, source, target)
    assert merged.shape == (3, 3)
    eos_share = np.array([alignment[0, -1], alignment[1:3, -1].mean(), alignment[3:5, -1].mean()])
    assert np.allclose(merged.sum(axis=1), 1.0 - eos_share)
    assert np.all(merged.sum(axis=1) <= 1.0 + 1e-9)


def test_merge_without_special_pieces_keeps_rows_summing_to_one():
    source = source_words(["▁x", "y", "▁z"])
    target = target_words(["▁a", "b", "c", "▁d"])
    assert np.allclose(merge(random_alignment(4, 3, 7), source, target).sum(axis=1), 1.0)


def test_merge_refuses_a_matrix_of_the_wrong_shape():
    with pytest.raises(ValueError, match="target × source"):
        merge(np.ones((2, 2)), source_words(["▁x", "</s>"]), target_words(["▁a", "b", "</s>"]))


def test_hard_alignment_takes_each_target_words_argmax():
    weights = np.array(
        [
            [0.1, 0.8, 0.1],
            [0.7, 0.2, 0.1],
            [0.1, 0.1, 0.8],
            [0.05, 0.9, 0.05],
        ]
    )
    assert hard_alignment(weights) == [(0, 1), (1, 0), (1, 3), (2, 2)]


def test_hard_alignment_breaks_ties_low_and_leaves_weightless_words_unaligned():
    weights = np.array([[0.4, 0.4, 0.2], [0.0, 0.0, 0.0]])
    assert hard_alignment(weights) == [(0, 0)]
    assert hard_alignment(np.zeros((2, 0))) == []


def test_a_word_that_weighs_null_above_every_source_word_is_left_unaligned():
    """What a row falls short of 1 is NULL's (the module's NULL option), averaged over a
    word's pieces; the weight on the source's "</s>" is a column of its own, not NULL's."""
    source = source_words(["▁x", "▁y", "</s>"])
    target = target_words(["▁a", "▁b", "c", "▁d", "</s>"])
    alignment = np.array(
        [
            [0.6, 0.1, 0.0],  # a: NULL 0.3, below x's 0.6
            [0.2, 0.1, 0.0],  # b's first piece: NULL 0.7
            [0.3, 0.2, 0.0],  # its second: NULL 0.5; the word: x 0.25, y 0.15, NULL 0.6
            [0.1, 0.3, 0.6],  # d: most on "</s>", none on NULL
            [0.0, 0.0, 1.0],
        ]
    )
    weights = merge(alignment, source, target)
    assert np.allclose(null_mass(alignment, target), [0.3, 0.6, 0.0])
    assert hard_alignment(weights, null_mass(alignment, target)) == [(0, 0), (1, 2)]
    assert hard_alignment(weights) == [(0, 0), (0, 1), (1, 2)]


def test_pharaoh_is_sorted_source_first_and_space_separated():
    assert pharaoh([(2, 1), (0, 0), (1, 2), (0, 3)]) == "0-0 0-3 1-2 2-1"
    assert pharaoh([]) == ""


def test_align_words_reads_subword_alignment_as_word_alignment():
    source = ["▁Ein", "▁H", "und", "▁", "l", "äuft", "</s>"]
    target = ["▁A", "▁do", "g", "▁run", "s", "</s>"]
    alignment = np.full((6, 7), 0.01)
    for row, column in enumerate([0, 1, 2, 5, 4, 6]):
        alignment[row, column] = 1.0
    alignment /= alignment.sum(axis=1, keepdims=True)
    aligned = align_words(source, target, alignment, reading="output")
    assert aligned.source_words == ["Ein", "Hund", "läuft"]
    assert aligned.target_words == ["A", "dog", "runs"]
    assert aligned.pharaoh() == "0-0 1-1 2-2"


def test_align_words_crossing_alignment():
    source = ["▁rote", "▁Katze", "</s>"]
    target = ["▁red", "▁cat", "</s>"]
    alignment = np.array([[0.1, 0.8, 0.1], [0.9, 0.05, 0.05], [0.0, 0.0, 1.0]])
    assert align_words(source, target, alignment, reading="output").pharaoh() == "0-1 1-0"


def test_the_input_reading_takes_each_piece_from_the_next_row():
    """Row i + 1 stands for piece i: the crossing alignment above, one row later, gives
    the same links, and the first row (the step that outputs "red") counts for nothing."""
    source = ["▁rote", "▁Katze", "</s>"]
    target = ["▁red", "▁cat", "</s>"]
    alignment = np.array([[0.0, 0.0, 1.0], [0.1, 0.8, 0.1], [0.9, 0.05, 0.05]])
    assert align_words(source, target, alignment, reading="input").pharaoh() == "0-1 1-0"
    assert align_words(source, target, alignment, reading="output").pharaoh() == "1-1"


def test_readings_keep_the_shape_and_the_input_reading_ends_in_zeros():
    alignment = random_alignment(4, 3, seed=0)
    assert np.array_equal(reading_rows(alignment, "output"), alignment)
    shifted = reading_rows(alignment, "input")
    assert shifted.shape == alignment.shape
    assert np.array_equal(shifted[:-1], alignment[1:]) and not shifted[-1].any()
    assert np.allclose(reading_rows(alignment, "both"), (alignment + shifted) / 2)
    assert set(READINGS) == {"output", "input", "both"}
    with pytest.raises(ValueError, match="unknown alignment reading 'middle'"):
        reading_rows(alignment, "middle")


@pytest.mark.parametrize("reading", ["output", "input", "both"])
@pytest.mark.parametrize("seed", range(10))
def test_indices_stay_within_the_word_counts(seed, reading):
    rng = np.random.default_rng(seed)
    vocabulary = ["▁a", "▁bb", "c", "<0xC3>", "<0xA4>", "▁", "d", "<unk>"]
    source = [str(p) for p in rng.choice(vocabulary, size=int(rng.integers(1, 12)))] + ["</s>"]
    target = [str(p) for p in rng.choice(vocabulary, size=int(rng.integers(0, 12)))] + ["</s>"]
    aligned = align_words(source, target, random_alignment(len(target), len(source), seed), reading=reading)
    assert aligned.weights.shape == (len(aligned.target_words), len(aligned.source_words))
    for i, j in aligned.pairs:
        assert 0 <= i < len(aligned.source_words) and 0 <= j < len(aligned.target_words)
    if aligned.source_words:
        assert sorted(j for _, j in aligned.pairs) == list(range(len(aligned.target_words)))


def test_empty_source_or_translation_gives_an_empty_line():
    assert align_words([], [], np.zeros((0, 0))).pharaoh() == ""
    assert align_words(["▁Hund", "</s>"], ["</s>"], np.array([[0.3, 0.7]])).pharaoh() == ""


def comparisons_with_a_source_name(tree: ast.AST) -> list[int]:
    """The lines of `tree` that compare something with an alignment source's name."""
    names = set(ALIGNMENT_SOURCES)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            constants = [c for o in operands for c in ([o] if not isinstance(o, ast.Tuple | ast.Set) else o.elts)]
            if any(isinstance(c, ast.Constant) and c.value in names for c in constants):
                lines.append(node.lineno)
    return lines


def test_only_the_registry_knows_the_alignment_sources_by_name():
    """Where alignments come from is one registry (alignment.ALIGNMENT_SOURCES): code asks
    an entry what it is (`from_module`, `readings`), and never compares with a name."""
    assert comparisons_with_a_source_name(ast.parse('if a == "aligner" or b in ("attention", "x"): pass')) == [1, 1]
    package = Path(rnnsearch.__file__).parent
    found = {
        str(path.relative_to(package)): lines
        for path in package.rglob("*.py")
        if path.name != "alignment.py"
        if (lines := comparisons_with_a_source_name(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert not found, found


def test_a_reading_the_source_does_not_take_is_refused_naming_the_ones_it_does():
    with pytest.raises(
        ValueError, match="'input' does not apply to the alignment read from the model's alignment module.*as 'output'"
    ):
        check_reading("input", ALIGNMENT_SOURCES["aligner"])
    for reading in READINGS:
        check_reading(reading, ALIGNMENT_SOURCES["attention"])

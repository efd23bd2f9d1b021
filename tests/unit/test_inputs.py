"""Input kinds, as each kind of data makes them: how sources become tensors and how an
alignment's columns are labelled."""

import pytest
import torch

from rnnsearch.config import load_config
from rnnsearch.decoding.inputs import SpeechInput, TextInput
from rnnsearch.kinds import data_kind
from rnnsearch.text.subwords import EOS, train_subwords

TEXTS = ["ein hund läuft", "zwei hunde laufen", "ein mann"] * 5


@pytest.fixture(scope="module")
def sides():
    return train_subwords(TEXTS, "word", 50), train_subwords([t.upper() for t in TEXTS], "word", 50)


def test_text_is_padded_ids_labelled_with_its_pieces_and_end(sides):
    config = load_config("configs/multi30k_de_en.yaml")
    text = data_kind(config).input(config, sides[:1])
    assert isinstance(text, TextInput) and text.seconds_per_column is None
    sources = sides[0].encode(["ein hund", "ein"])
    src, lengths, side_zero = text.tensors(sources)
    assert src.shape == (2, 3) and lengths.tolist() == [3, 2] and side_zero.tolist() == [3, 2]
    assert src[0, 2] == EOS and src[1, 1] == EOS
    assert text.length(sources[0]) == 2
    assert text.labels(sources[0]) == ["▁ein", "▁hund", "</s>"]


def test_several_sides_stack_and_side_zero_labels_the_alignment(sides):
    config = load_config("configs/multi30k_de_en.yaml")
    text = data_kind(config).input(config, sides)
    sources = list(zip(sides[0].encode(TEXTS[:2]), sides[1].encode([t.upper() for t in TEXTS[:2]])))
    src, lengths, side_zero = text.tensors(sources)
    assert src.shape == (2, 4, 2) and side_zero.tolist() == [4, 4]
    assert text.length(sources[1]) == 3
    assert text.labels(sources[0]) == ["▁ein", "▁hund", "▁läuft", "</s>"]


def test_speech_is_padded_vectors_labelled_with_their_start_times():
    config = load_config("configs/fsdd_digits.yaml")
    speech = data_kind(config).input(config, [None])
    assert isinstance(speech, SpeechInput)
    vectors = [torch.ones(4, 6), torch.ones(2, 6)]
    src, lengths, side_zero = speech.tensors(vectors)
    assert src.shape == (2, 4, 6) and lengths.tolist() == [4, 2] and side_zero.tolist() == [4, 2]
    step = speech.seconds_per_column
    assert step > 0 and speech.labels(vectors[1]) == ["0.00s", f"{step:.2f}s"]

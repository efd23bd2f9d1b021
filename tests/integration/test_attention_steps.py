"""rnnsearch.attention_steps on a trained model directory: the pieces and α that scoring
gives for the same pairs, the model's own translations when no target is given, and a
real translation shown in Jupyter as its heatmap."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

import rnnsearch
from rnnsearch.errors import UserError

SOURCES = ["Ein kleines Mädchen klettert in ein Spielhaus aus Holz.", "Zwei Hunde."]
TARGETS = ["A little girl climbs into a wooden playhouse.", "Two dogs."]


@pytest.fixture(scope="module")
def translator(model_dir):
    return rnnsearch.load(model_dir)


def test_the_steps_of_given_pairs_have_scoring_s_pieces_and_alignment(translator):
    steps = rnnsearch.attention_steps(translator, SOURCES, TARGETS)
    for k, pair in enumerate(translator.score(SOURCES, TARGETS)):
        one = steps.sentence(k)
        assert one.source_tokens == [pair.source_tokens] and one.target_tokens == [pair.target_tokens]
        assert np.allclose(one.weights.numpy(), pair.alignment, atol=1e-6)
        assert torch.allclose(one.contexts, one.weights @ one.annotations, atol=1e-6)
        assert one.states.shape == (len(pair.target_tokens), translator.model.decoder.rnn.rnn.hidden_size)
    short = steps.weights[1, :, len(steps.source_tokens[1]) :]
    assert short.numel() and (short == 0).all()


def test_without_targets_the_steps_read_the_model_s_own_translations(translator):
    translations = translator.translate(SOURCES)
    steps = rnnsearch.attention_steps(translator, SOURCES)
    assert [translator.tgt_subwords.decode(translator.tgt_subwords.encode([t.text])[0]) for t in translations] == [
        t.text for t in translations
    ]
    assert [len(tokens) for tokens in steps.target_tokens] == [
        len(translator.tgt_subwords.encode([t.text])[0]) + 1 for t in translations
    ]


def test_bad_arguments_are_one_line_naming_them(translator):
    with pytest.raises(UserError, match="targets: 1 targets for 2 sources"):
        rnnsearch.attention_steps(translator, SOURCES, TARGETS[:1])
    with pytest.raises(UserError, match="sources"):
        rnnsearch.attention_steps(translator, "Ein Hund.")
    steps = rnnsearch.attention_steps(translator, SOURCES, TARGETS)
    with pytest.raises(ValueError, match="k: 2 is not the index"):
        steps.sentence(2)
    for k in (True, "0", 1.5, None):
        with pytest.raises(TypeError, match=f"k: expected an int, the index of a sentence, got {type(k).__name__}"):
            steps.sentence(k)
    assert steps.sentence(np.int64(1)).source_tokens == steps.sentence(1).source_tokens
    for model in ("runs/de-en", None):
        with pytest.raises(TypeError, match="translator: expected a Translator"):
            rnnsearch.attention_steps(model, SOURCES)


def test_a_translation_shows_in_jupyter_as_its_heatmap(translator):
    (translation,) = translator.translate(SOURCES[:1])
    root = ET.fromstring(translation._repr_html_())
    cells = [rect for rect in root.iter("{http://www.w3.org/2000/svg}rect") if rect.get("fill") != "none"]
    assert len(cells) == translation.alignment.size

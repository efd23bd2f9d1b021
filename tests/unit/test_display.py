"""Translations, scored pairs and word alignments as HTML for Jupyter: the alignment as
an inline SVG heatmap, text escaped, nothing fetched, and a sensible view without one."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from rnnsearch.alignments.words import WordAlignment
from rnnsearch.translation.translator import PairScore, Translation

SVG = "{http://www.w3.org/2000/svg}"


def parsed(markup: str) -> ET.Element:
    """The HTML as XML: well formed, every tag closed, every token escaped."""
    return ET.fromstring(markup)


def cells(root: ET.Element) -> list[ET.Element]:
    return [rect for rect in root.iter(f"{SVG}rect") if rect.get("fill") != "none"]


def fetches_nothing(markup: str) -> bool:
    return "://" not in markup.replace('xmlns="http://www.w3.org/2000/svg"', "") and "src=" not in markup


def translation(alignment: np.ndarray | None, source_tokens: list[str], target_tokens: list[str]) -> Translation:
    return Translation(
        source="<script>alert(1)</script> & Co.",
        text="a dog & a <cat>",
        score=-1.25,
        source_tokens=source_tokens,
        target_tokens=target_tokens,
        alignment=alignment,
    )


def test_a_translation_shows_its_text_and_one_cell_per_weight_on_the_paper_s_gray_scale():
    alignment = np.array([[1.0, 0.0, 0.0], [0.25, 0.75, 0.0]], dtype=np.float32)
    shown = translation(alignment, ["▁<b>", "▁Hund", "</s>"], ["▁a", "</s>"])
    markup = shown._repr_html_()
    root = parsed(markup)
    assert fetches_nothing(markup) and "<script>" not in markup and "&lt;script&gt;" in markup
    assert "a dog &amp; a &lt;cat&gt;" in markup
    fills = [rect.get("fill") for rect in cells(root)]
    assert len(fills) == 6
    assert fills[:3] == ["rgb(255,255,255)", "rgb(0,0,0)", "rgb(0,0,0)"]
    assert fills[3] == "rgb(64,64,64)" and fills[4] == "rgb(191,191,191)"
    labels = ["".join(text.itertext()) for text in root.iter(f"{SVG}text")]
    assert labels == ["▁<b>", "▁Hund", "</s>", "▁a", "</s>"]
    titles = ["".join(title.itertext()) for title in root.iter(f"{SVG}title")]
    assert titles[4] == "</s> → ▁Hund: α = 0.750"


def test_the_alternatives_of_an_n_best_list_are_listed_after_the_best():
    best = translation(np.eye(2, dtype=np.float32), ["▁x", "</s>"], ["▁y", "</s>"])
    best.alternatives = [Translation("x", "second <one>", -2.5, ["▁x", "</s>"], ["</s>"], np.ones((1, 2)) / 2)]
    root = parsed(best._repr_html_())
    (item,) = root.iter("li")
    assert "".join(item.itertext()) == "second <one> (-2.500)"


def test_the_fixed_context_model_shows_its_text_and_says_why_there_is_no_heatmap():
    markup = translation(None, ["▁Hund", "</s>"], ["▁dog", "</s>"])._repr_html_()
    root = parsed(markup)
    assert not list(root.iter(f"{SVG}svg"))
    assert "no alignment" in markup and "a dog &amp; a &lt;cat&gt;" in markup


def test_an_empty_translation_shows_its_text_without_a_heatmap():
    empty = Translation("", "", 0.0, [], [], np.zeros((0, 0), dtype=np.float32))
    assert not list(parsed(empty._repr_html_()).iter(f"{SVG}svg"))


def test_speech_gets_narrow_columns_some_labelled_and_a_scale_up_to_its_largest_weight():
    frames = 200
    weights = np.full((3, frames), 0.5 / frames, dtype=np.float32)
    weights[:, 10] += 0.5
    labels = [f"{j * 0.03:.2f}s" for j in range(frames)]
    markup = translation(weights, labels, ["1", "2", "</s>"])._repr_html_()
    root = parsed(markup)
    assert len(cells(root)) == 3 * frames
    source_labels = [t for t in root.iter(f"{SVG}text") if t.get("transform")]
    assert 2 < len(source_labels) < frames / 4
    assert f"white = α {weights.max():.3f}" in markup
    brightest = {rect.get("fill") for rect in cells(root)[10::frames]}
    assert brightest == {"rgb(255,255,255)"}


def test_a_scored_pair_shows_its_log_probability_and_its_alignment():
    pair = PairScore(
        source="Ein Hund.",
        target="A dog.",
        log_prob=-3.5,
        token_log_probs=[-1.0, -2.5],
        source_tokens=["▁Ein", "▁Hund", "</s>"],
        target_tokens=["▁A", "</s>"],
        alignment=np.full((2, 3), 1 / 3, dtype=np.float32),
    )
    root = parsed(pair._repr_html_())
    assert "log p(target | source) = -3.500" in "".join(root.itertext())
    assert len(cells(root)) == 6


def test_a_word_alignment_outlines_its_links():
    words = WordAlignment(["Ein", "Hund"], ["A", "dog"], np.array([[0.9, 0.1], [0.2, 0.8]]), [(0, 0), (1, 1)])
    root = parsed(words._repr_html_())
    outlines = [rect for rect in root.iter(f"{SVG}rect") if rect.get("fill") == "none"]
    assert len(outlines) == 2 and len(cells(root)) == 4

"""Blocks of text cut into sentences: a regression list of our own over sentencex, in the
three languages the project's data speaks."""

from __future__ import annotations

import pytest

from rnnsearch.errors import ArgumentTypeError, ArgumentValueError
from rnnsearch.text.sentences import checked_language, sentence_spans, sentences


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        (
            "de",
            "Wir treffen uns am 3. Oktober in Berlin. Bis dann.",
            ["Wir treffen uns am 3. Oktober in Berlin. ", "Bis dann."],
        ),
        ("de", "Das ist z. B. ein Test. Die Nr. 5 ist frei.", ["Das ist z. B. ein Test. ", "Die Nr. 5 ist frei."]),
        ("de", "Herr Dr. Müller kommt. Ende.", ["Herr Dr. Müller kommt. ", "Ende."]),
        (
            "en",
            "We met e.g. at noon. Dr. Smith came at 5 p.m. today.",
            ["We met e.g. at noon. ", "Dr. Smith came at 5 p.m. today."],
        ),
        ("en", "It costs $3.50 only. Next.", ["It costs $3.50 only. ", "Next."]),
        ("fr", "M. Dupont est arrivé. Mme. Durand aussi.", ["M. Dupont est arrivé. ", "Mme. Durand aussi."]),
        ("fr", "Une ligne\nencore dans le paragraphe. Fin.", ["Une ligne\nencore dans le paragraphe. ", "Fin."]),
        ("en", "No final stop", ["No final stop"]),
        ("en", "", []),
    ],
)
def test_a_block_is_cut_where_a_sentence_ends_and_nowhere_else(language, text, expected):
    assert sentences(text, language) == expected


@pytest.mark.parametrize("text", ["  Leading space. Two  spaces.  ", "Ein Satz.\n\nNoch einer.\n", "?!. ...", "Ja."])
def test_the_sentences_cover_the_block_byte_for_byte(text):
    spans = sentence_spans(text, "de")
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(end == start for (_, end), (start, _) in zip(spans, spans[1:]))
    assert "".join(sentences(text, "de")) == text


def test_a_source_language_is_a_language_tag_or_refused_naming_its_key():
    assert [checked_language(tag, "source_language") for tag in ("de", "pt-BR", "sr-Latn", "gsw")] == [
        "de",
        "pt",
        "sr",
        "gsw",
    ]
    for bad in ("xx", "", "../../etc/passwd", "zz-YY"):
        with pytest.raises(ArgumentValueError, match=rf"^source_language: {bad!r} is not a language tag"):
            checked_language(bad, "source_language")
    with pytest.raises(ArgumentTypeError, match="source_language: expected a language tag, got int"):
        checked_language(7, "source_language")


def test_a_language_is_the_same_however_a_tool_writes_its_code():
    from rnnsearch.text.sentences import language_of

    assert {language_of(code) for code in ("en", "eng", "en-GB", "en_GB", "EN")} == {"en"}
    assert language_of("deu") == language_of("ger") == "de" != language_of("fra")

"""A block of text (a paragraph, a list item, a cell, a subtitle's cues) cut into the
sentences a model translates one at a time, as character offsets into the block.

The boundaries are sentencex's (Wikimedia's rule-based segmenter of some 300 languages),
which prefers not splitting to splitting wrongly: a line break inside a paragraph does not
end a sentence, nor does the dot of a number ("am 3. Oktober") or of a common
abbreviation ("z. B.", "e.g.", "Dr."). On top of it, a list of our own (`NEVER_ENDING`)
joins a sentence that ends on a word that never ends one in that language, a title
before a name ("M. Dupont", "Mme Durand"), which sentencex splits in French.

The offsets cover the whole block, in order: each sentence keeps the white space after
it, so that the block is the sentences joined, byte for byte.
"""

from __future__ import annotations

import functools

from rnnsearch.errors import ArgumentTypeError, ArgumentValueError

NEVER_ENDING: dict[str, frozenset[str]] = {
    "fr": frozenset({"M.", "MM.", "Mme.", "Mmes.", "Mlle.", "Mlles.", "Me.", "Mgr.", "Dr.", "Pr.", "St.", "Ste."}),
    "de": frozenset({"Hr.", "Hrn.", "Fr.", "Dr.", "Prof.", "St.", "Nr.", "Bd.", "Abs.", "Art."}),
    "en": frozenset({"Mr.", "Mrs.", "Ms.", "Dr.", "Prof.", "St.", "No.", "Mt.", "Rev."}),
}
"""Per language, the words after which no sentence ends: titles before a name and
abbreviations before a number."""


def checked_language(language: object, key: str) -> str:
    """`language`, a valid language tag (an ISO 639 code, `de`, or a BCP 47 tag, `pt-BR`,
    as the IANA registry has them), as the language subtag whose rules cut sentences;
    else an error naming `key`. A language sentencex has no rules of its own for is cut
    by its fallback rules, which end in English's."""
    import langcodes  # its registry takes a while to load, and only a document call asks

    if not isinstance(language, str):
        raise ArgumentTypeError(f"{key}: expected a language tag, got {type(language).__name__}")
    if not langcodes.tag_is_valid(language):
        raise ArgumentValueError(
            f"{key}: {language!r} is not a language tag (an ISO 639 code such as de, en or fr, or a BCP 47 tag "
            "such as pt-BR)"
        )
    return str(langcodes.Language.get(language).language)


@functools.cache
def language_of(code: str) -> str:
    """The language a code names, as its language subtag, however a tool writes it:
    `eng`, `en-GB` and `en_GB` are all `en` (a code langcodes cannot read: its first
    subtag, lowercased)."""
    import langcodes  # its registry takes a while to load, and only a document or a CAT tool's call asks

    try:
        return str(langcodes.Language.get(code.replace("_", "-")).language or "") or code.lower()
    except (ValueError, LookupError):
        return code.replace("_", "-").split("-")[0].lower()


def sentence_spans(text: str, language: str) -> list[tuple[int, int]]:
    """The (start, end) character offsets of each sentence of `text` in `language` (an
    ISO 639-1 code: "de", "en", "fr", …), covering the whole text in order (see the
    module docstring); [] for an empty text."""
    if not text:
        return []
    from sentencex import get_sentence_boundaries  # loaded with the first document, not with every model

    spans = [(int(b["start_index"]), int(b["end_index"])) for b in get_sentence_boundaries(language, text)]
    never = NEVER_ENDING.get(language, frozenset())
    joined: list[tuple[int, int]] = []
    for start, end in spans:
        if joined and _last_word(text[joined[-1][0] : joined[-1][1]]) in never:
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return _covering(joined, len(text))


def sentences(text: str, language: str) -> list[str]:
    """The sentences of `text`, each with the white space after it (`sentence_spans`)."""
    return [text[start:end] for start, end in sentence_spans(text, language)]


def _last_word(sentence: str) -> str:
    words = sentence.split()
    return words[-1] if words else ""


def _covering(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """`spans` made to cover 0 to `length` with no gap: each starts where the one before
    ends, the first at 0 and the last at the end."""
    if not spans:
        return [(0, length)]
    starts = [0] + [end for _, end in spans[:-1]]
    ends = [end for _, end in spans[:-1]] + [length]
    return list(zip(starts, ends, strict=True))

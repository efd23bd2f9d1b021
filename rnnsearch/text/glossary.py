"""A user's terms: what each source term must be translated as, read from a glossary file
and found in a sentence's text.

Files are read by glossary_files.py (`read_glossary`, `read_avoided`). Terms are read in
Unicode's compatibility composition (NFKC), as the model's pieces write text, each at most
MAX_TERM_CHARS characters.

Matching (`Glossary.matches`): an entry's source is found on whole words (Unicode word
boundaries, where its own first and last characters are word characters), as written or
in any case as the entry says, the longest entry first where entries overlap, each place
of the text in one match at most, and none on words that stand for content kept
untranslated (`KeptWords`: a `<code>` or a translate="no" element's words, which the
model reads so that it reads the sentence whole). Text and terms are compared as `matchable` reads them:
each character with its combining marks composed (an NFD "Müller" is "Müller", and "Rose"
is not found inside an NFD "Rosé"), full-width and other compatibility forms as their
plain ones, any white space (a no-break space) as a space, and, in any case, by Unicode's
full case folding (FUSSBALL is Fußball, ISTANBUL İstanbul). All entries are sought at once
(an Aho–Corasick automaton, pyahocorasick), in time linear in the text and its matches.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from rnnsearch.errors import UserError

if TYPE_CHECKING:
    import ahocorasick

MAX_TERM_CHARS = 200
"""The longest term, target or avoided phrase, in characters: a term is a word or a phrase,
and the search's time and an avoid list's tables grow with the length of what they hold."""


class GlossaryError(UserError, ValueError):
    """A glossary that cannot be read: the message names the file and the line."""


@dataclass(frozen=True)
class Term:
    """One entry: its source term, what it is translated as, whether it matches only as
    written, and where it was given (`origin`, as "file:line")."""

    source: str
    target: str
    case_sensitive: bool = False
    origin: str = ""

    @property
    def kept(self) -> bool:
        """Whether the term is kept as written (not translated): its target is its source."""
        return self.source == self.target


@dataclass(frozen=True)
class Match:
    """Where a term was found in a text: characters start to end − 1."""

    start: int
    end: int
    term: Term


class Glossary:
    """Terms, checked (one target for each source) and found in texts (`matches`); a
    glossary laid over another (`over`: a server's request over the server's own) is
    matched first, and the other's terms only where none of its own stands."""

    def __init__(self, terms: Iterable[Term], *, base: Glossary | None = None):
        self.base = base
        by_source: dict[tuple[str, bool], Term] = {}
        for term in terms:
            key = (term.source if term.case_sensitive else folded(term.source), term.case_sensitive)
            earlier = by_source.get(key)
            if earlier is not None and earlier.target != term.target:
                raise GlossaryError(
                    f"{term.origin}: {term.source!r} is translated as {term.target!r} here and as "
                    f"{earlier.target!r} at {earlier.origin}"
                )
            by_source.setdefault(key, term)
        self.terms = list(by_source.values())

    @classmethod
    def of(cls, mapping: Mapping[str, str], *, case_sensitive: bool = False) -> Glossary:
        """The glossary of a mapping from source terms to their targets (the API's)."""
        terms = []
        for k, (source, target) in enumerate(mapping.items()):
            terms.append(checked_term(source, target, case_sensitive, f"glossary.{k}"))
        return cls(terms)

    def over(self, base: Glossary | None) -> Glossary:
        """This glossary's terms laid over `base`'s (None: itself): where both hold a
        source, this one's target is written."""
        return self if base is None else Glossary(self.terms, base=base)

    def __len__(self) -> int:
        return len(self.terms) + (len(self.base) if self.base is not None else 0)

    @cached_property
    def _automaton(self) -> ahocorasick.Automaton:
        import ahocorasick  # loaded with the first glossary matched, not with every model

        automaton = ahocorasick.Automaton()
        keys: dict[str, list[Term]] = {}
        for term in self.terms:
            keys.setdefault(matchable(term.source).text, []).append(term)
        for key, terms in keys.items():
            automaton.add_word(key, terms)
        if keys:
            automaton.make_automaton()
        return automaton

    def matches(self, text: str) -> list[Match]:
        """The terms found in `text` (see the module docstring), in the order they stand."""
        taken = _kept_characters(text)
        return sorted(self._chosen(text, taken), key=lambda m: m.start)

    def _chosen(self, text: str, taken: bytearray) -> list[Match]:
        """This glossary's matches in `text` on characters not yet `taken` (which they
        then take), the longest first, then its base's."""
        chosen: list[Match] = []
        for match in sorted(self._found(text), key=lambda m: (m.start - m.end, m.start)):
            if not any(taken[match.start : match.end]):
                taken[match.start : match.end] = b"\x01" * (match.end - match.start)
                chosen.append(match)
        return chosen + (self.base._chosen(text, taken) if self.base is not None else [])

    def _found(self, text: str) -> list[Match]:
        """Every place in `text` where one of this glossary's own terms stands on whole words."""
        if not self.terms:
            return []
        found, read = [], matchable(text)
        for last, terms in self._automaton.iter(read.text):
            key_length = len(matchable(terms[0].source).text)
            span = read.span(last + 1 - key_length, last + 1)
            if span is None or not whole_words(text, *span):
                continue
            as_written = composed(text[span[0] : span[1]])
            found += [Match(*span, term) for term in terms if not term.case_sensitive or as_written == term.source]
        return found


class KeptWords(str):
    """A text some of whose words stand for content kept untranslated (a `<code>`, an
    element marked translate="no", a Markdown code span: parsing.py's stand-in words),
    read with the rest so that the model reads the sentence whole: no term is found on
    them. `kept`: their indices among the text's whitespace-separated words."""

    kept: frozenset[int]

    def __new__(cls, text: str, kept: Iterable[int]) -> KeptWords:
        made = super().__new__(cls, text)
        made.kept = frozenset(kept)
        return made


def words_between(words: Sequence[str], first: int, stop: int, *, kept: Iterable[int] = ()) -> str:
    """words[first:stop] joined by spaces: a KeptWords where some of them are `kept`
    (indices into `words`), a str where none is."""
    inside = [k - first for k in kept if first <= k < stop]
    text = " ".join(words[first:stop])
    return KeptWords(text, inside) if inside else text


def _kept_characters(text: str) -> bytearray:
    """One byte per character of `text`: 1 on the words a KeptWords keeps, 0 elsewhere."""
    taken = bytearray(len(text))
    kept = text.kept if isinstance(text, KeptWords) else frozenset()
    if not kept:
        return taken
    position = 0
    for index, word in enumerate(text.split()):
        position = text.index(word, position)
        if index in kept:
            taken[position : position + len(word)] = b"\x01" * len(word)
        position += len(word)
    return taken


@dataclass(frozen=True)
class Matchable:
    """A text as terms are matched in it (`matchable`), and for each of its characters the
    cluster of the original text it comes from: `clusters[k]` is the (start, end) in the
    original of the cluster of character k."""

    text: str
    clusters: list[tuple[int, int]]

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """The original characters of this text's characters start to end − 1, or None where
        they begin or end inside what one cluster became (the first "s" of a folded "ß")."""
        if start < 0 or end <= start:
            return None
        first, last = self.clusters[start], self.clusters[end - 1]
        if start > 0 and self.clusters[start - 1] == first:
            return None
        if end < len(self.clusters) and self.clusters[end] == last:
            return None
        return first[0], last[1]


DOTTED = "i\u0307"
"""What full case folding makes of İ (an i and a combining dot above): matched as i, so
that İstanbul is found as ISTANBUL and Istanbul."""


def matchable(text: str) -> Matchable:
    """`text` as terms are matched in it: each cluster (a character and the combining marks
    after it) in Unicode's compatibility composition (NFKC) and fully case folded, white
    space as a space, so that an NFD accent, a full-width letter, a no-break space and a
    folding that lengthens a word (ß as ss) match their plain forms; each character keeps
    where its cluster stands in `text`, so that a match is a span of the original."""
    out: list[str] = []
    clusters: list[tuple[int, int]] = []
    start = 0
    for end in range(1, len(text) + 1):
        if end < len(text) and unicodedata.combining(text[end]):
            continue
        cluster = text[start:end]
        read = " " if cluster.isspace() else unicodedata.normalize("NFKC", cluster).casefold().replace(DOTTED, "i")
        out.append(read)
        clusters += [(start, end)] * len(read)
        start = end
    return Matchable("".join(out), clusters)


def composed(text: str) -> str:
    """A term as it is read and compared as written: NFKC, its white space collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def checked_term(source: object, target: object, case_sensitive: bool, where: str) -> Term:
    """An entry, its terms read as `_composed` reads them; an empty one, or one over
    MAX_TERM_CHARS characters, refused."""
    if not isinstance(source, str) or not isinstance(target, str):
        raise GlossaryError(f"{where}: a source and a target are text")
    source, target = composed(source), composed(target)
    if not source:
        raise GlossaryError(f"{where}: an empty source term")
    if not target:
        raise GlossaryError(f"{where}: an empty target for {source!r}")
    for side, term in (("source term", source), ("target", target)):
        if len(term) > MAX_TERM_CHARS:
            raise GlossaryError(
                f"{where}: a {side} of {len(term):,} characters, more than the {MAX_TERM_CHARS} a term may have"
            )
    return Term(source, target, case_sensitive, where)


def folded(text: str) -> str:
    """`text` in lower case, character for character (a character whose lower case is
    longer stays as it is), so that positions in it are positions in `text`."""
    return "".join(lower if len(lower := character.lower()) == 1 else character for character in text)


def places(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where `phrase` stands in `text` on whole words, as written: (start, end) of each."""
    found, start = [], text.find(phrase)
    while start >= 0 and phrase:
        if whole_words(text, start, start + len(phrase)):
            found.append((start, start + len(phrase)))
        start = text.find(phrase, start + 1)
    return found


def whole_words(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is not part of a longer word on either side: a word
    character at its edge has no word character beside it."""
    before = start == 0 or not word_character(text[start]) or not word_character(text[start - 1])
    after = end == len(text) or not word_character(text[end - 1]) or not word_character(text[end])
    return before and after


def word_character(character: str) -> bool:
    """Whether `character` is part of a word (a letter, a digit or the underscore)."""
    return character.isalnum() or character == "_"

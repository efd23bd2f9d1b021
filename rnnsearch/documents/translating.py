"""Documents through translation, whatever translates their sentences: each document
read by its format (rnnsearch.documents), its units cut into sentences, the
sentences handed to a sentence translator all together, each unit's markup put back by
their word alignments, and the document written back (the rules are in
rnnsearch.translation.document_translation, which gives the model's translator; the
identity translation `copied` is the one under which every document must come back byte
for byte)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rnnsearch.alignments.symmetrisation import Link
from rnnsearch.decoding.results import TermReport
from rnnsearch.documents import format_named, format_of
from rnnsearch.documents.document import MAX_DOCUMENT_BYTES, Document, DocumentError, Format, ReadOptions
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError
from rnnsearch.markup import JoinedWeights, MarkedUp, MarkupError, PairWeights, WordWeights, parse, transferred
from rnnsearch.text.glossary import KeptWords, words_between
from rnnsearch.text.sentences import sentence_spans


@dataclass(frozen=True)
class SentenceTranslation:
    """A sentence's translation as placing reads it: its target words, the word links
    (source word, target word) and, for placing by weights, its word weights; and the
    glossary's terms found in it and which its translation writes."""

    words: list[str]
    links: list[Link]
    weights: PairWeights | None = None
    terms: TermReport = TermReport()


SentenceTranslator = Callable[[list[str]], list[SentenceTranslation]]
"""Translates sentences (whitespace-separated words), in order."""


@dataclass
class TranslatedDocument:
    """A translated document: its bytes, its name, its format's media type, and what was
    done, counted."""

    name: str
    data: bytes
    media_type: str = "application/octet-stream"
    units: int = 0
    sentences: int = 0
    kept: int = 0
    attributes: int = 0
    protected: int = 0
    untranslated: int = 0
    emptied: int = 0
    notes: tuple[str, ...] = ()
    terms: TermReport = field(default_factory=TermReport)

    @property
    def summary(self) -> str:
        """One line of what was translated; blocks left untranslated, and formatting left
        with no word, if any, named last."""
        line = (
            f"{self.name}: {self.units:,} units ({self.attributes:,} attributes), {self.sentences:,} sentences, "
            f"{self.kept:,} units kept as written, {self.protected:,} spans protected"
        )
        if self.untranslated:
            line += f"; {self.untranslated:,} blocks left untranslated (their text not found where the reader put it)"
        if self.emptied:
            line += f"; {self.emptied:,} elements left with no word (their translation had too few words)"
        for note in self.notes:
            line += f"; {note}"
        if self.terms.found:
            line += f"; {self.terms.written:,} of the {self.terms.found:,} glossary terms found written"
        return line


@dataclass
class _Read:
    """A document read, its units parsed, their sentences (word ranges) found."""

    name: str
    document: Document
    format: Format
    parsed: list[MarkedUp] = field(default_factory=list)
    sentences: list[list[tuple[int, int]]] = field(default_factory=list)


def copied(sentences: list[str]) -> list[SentenceTranslation]:
    """Each sentence translated as itself, every word linked to itself: the identity
    translation, under which every document must come back byte for byte."""
    return [SentenceTranslation(words, [(k, k) for k in range(len(words))]) for words in map(str.split, sentences)]


def read_document(
    document: object,
    *,
    format: str | None = None,
    name: str | None = None,
    options: ReadOptions,
) -> tuple[str, Format, Document]:
    """A document given as a path, or as bytes with a `name` (its extension says the
    format, unless `format` does): its name, its format and what the format reads, read
    as `options` ask."""
    if isinstance(document, (str, Path)):
        path = Path(document)
        name = name or str(path)
        data = _bounded_read(path)
    elif isinstance(document, (bytes, bytearray, memoryview)):
        data = bytes(document)
        if not name and format is None:
            raise ArgumentValueError("documents: bytes need a name (its extension says the format) or a format")
        name = name or f"document.{format}"
    else:
        raise ArgumentTypeError(f"documents: expected a path or bytes, got {type(document).__name__}")
    chosen = format_named(format) if format is not None else format_of(name)
    return name, chosen, chosen.read(data, origin=name, options=options)


def _bounded_read(path: Path) -> bytes:
    """The bytes of the file `path`; one larger than MAX_DOCUMENT_BYTES is refused by its
    size before it is read, and no more than one byte past the bound is ever read (a file
    that grows, a pipe), which the format's own size check then refuses."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size > MAX_DOCUMENT_BYTES:
                raise DocumentError(
                    f"{path}: {size:,} bytes is more than the {MAX_DOCUMENT_BYTES:,} a document may have"
                )
            return file.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as error:
        raise DocumentError(f"{path}: cannot read it ({error.strerror or error})") from None


def translate_read(
    documents: Sequence[tuple[str, Format, Document]],
    translate: SentenceTranslator,
    *,
    language: str,
    unchanged_ok: bool = False,
    fits: Callable[[list[str]], list[bool]] | None = None,
) -> list[TranslatedDocument]:
    """Documents read (`read_document`) translated: their units' sentences (in the source
    `language`) translated together by `translate`, each unit's markup put back by the
    sentences' links; `fits` says which sentences the model can read whole (None: all)."""
    read = [_parsed(name, chosen, document, language) for name, chosen, document in documents]
    sentences = [
        (k, u, span) for k, each in enumerate(read) for u, spans in enumerate(each.sentences) for span in spans
    ]
    texts = [_sentence(read[k].parsed[u], a, b) for k, u, (a, b) in sentences]
    translated = _translated_in_parts(texts, translate, fits)
    by_unit: dict[tuple[int, int], list[tuple[tuple[int, int], SentenceTranslation]]] = {}
    terms: list[list[TermReport]] = [[] for _ in read]
    for (k, u, span), translation in zip(sentences, translated, strict=True):
        by_unit.setdefault((k, u), []).append((span, translation))
        terms[k].append(translation.terms)
    results = []
    for k, each in enumerate(read):
        placed = [_unit_output(each.parsed[u], by_unit.get((k, u), [])) for u in range(len(each.parsed))]
        count = sum(len(spans) for spans in each.sentences)
        document = _written(each, [output for output, _ in placed], sentences=count, unchanged_ok=unchanged_ok)
        document.emptied = sum(emptied for _, emptied in placed)
        document.terms = TermReport.total(terms[k])
        results.append(document)
    return results


def _parsed(name: str, chosen: Format, document: Document, language: str) -> _Read:
    each = _Read(name, document, chosen)
    for unit in document.units:
        try:
            parsed = unit.parsed or parse(unit.markup, chosen.dialect)
        except MarkupError as error:
            raise DocumentError(f"{name}: {unit.where}: {error}") from None
        each.parsed.append(parsed)
        each.sentences.append(_sentence_words(parsed.text, language) if parsed.has_own_words else [])
    return each


def _sentence(parsed: MarkedUp, first: int, stop: int) -> str:
    """A unit's words `first` to `stop` − 1, a sentence, as the model reads them: those that
    stand for kept elements marked so that no term is found on them."""
    return words_between(parsed.words, first, stop, kept=parsed.kept_words)


def _sentence_words(text: str, language: str) -> list[tuple[int, int]]:
    """The sentences of `text` as ranges of its whitespace-separated words: each word in
    the sentence it starts in; sentences with no word left out."""
    starts, position = [], 0
    for word in text.split():
        position = text.index(word, position)
        starts.append(position)
        position += len(word)
    ranges, first = [], 0
    for _, end in sentence_spans(text, language):
        stop = first
        while stop < len(starts) and starts[stop] < end:
            stop += 1
        if stop > first:
            ranges.append((first, stop))
        first = stop
    return ranges


def _translated_in_parts(
    texts: list[str], translate: SentenceTranslator, fits: Callable[[list[str]], list[bool]] | None
) -> list[SentenceTranslation]:
    """`translate` of every text; one the model cannot read whole is cut between words
    into halves, again until each fits, and its parts' translations joined. Each part is
    asked about once: only the halves of a cut are asked about again. A single word the
    model cannot read (a long URL, a run of code or data) is kept as it is, linked to
    itself: no model translates it, and the rest of its document still is."""
    parts: list[list[str]] = [[text] for text in texts]
    kept: list[list[bool]] = [[False] for _ in texts]  # each part: a word the model cannot read, kept
    unsure = [(k, 0) for k in range(len(texts))]  # (text, part) whose fit is not known
    while fits is not None and unsure:
        too_long: dict[int, set[int]] = {}
        for (k, j), fit in zip(unsure, fits([parts[k][j] for k, j in unsure]), strict=True):
            if not fit and len(parts[k][j].split()) > 1:
                too_long.setdefault(k, set()).add(j)
            elif not fit:
                kept[k][j] = True
        unsure = []
        for k, cut in too_long.items():
            pieces: list[str] = []
            marks: list[bool] = []
            for j, part in enumerate(parts[k]):
                if j in cut:
                    words, kept_words = part.split(), part.kept if isinstance(part, KeptWords) else ()
                    half = len(words) // 2
                    unsure += [(k, len(pieces)), (k, len(pieces) + 1)]
                    pieces += [
                        words_between(words, 0, half, kept=kept_words),
                        words_between(words, half, len(words), kept=kept_words),
                    ]
                    marks += [False, False]
                else:
                    pieces.append(part)
                    marks.append(kept[k][j])
            parts[k], kept[k] = pieces, marks
    readable = [part for each, marks in zip(parts, kept) for part, mark in zip(each, marks) if not mark]
    flat_translations = iter(translate(readable))
    joined = []
    for each, marks in zip(parts, kept, strict=True):
        translations = [copied([part])[0] if mark else next(flat_translations) for part, mark in zip(each, marks)]
        joined.append(_joined(translations, [len(part.split()) for part in each]))
    return joined


def _joined(translations: list[SentenceTranslation], sources: list[int]) -> SentenceTranslation:
    """Consecutive translations as one: words one after the other, links and weights offset."""
    if len(translations) == 1:
        return translations[0]
    words: list[str] = []
    links: list[Link] = []
    source_offset = 0
    for translation, count in zip(translations, sources, strict=True):
        links += [(source + source_offset, target + len(words)) for source, target in translation.links]
        words += translation.words
        source_offset += count
    weights = _block_weights([translation.weights for translation in translations])
    return SentenceTranslation(words, links, weights, TermReport.total(t.terms for t in translations))


def _block_weights(weights: list[PairWeights | None]) -> JoinedWeights | None:
    """The word weights of consecutive translations as one pair's, each kept apart
    (JoinedWeights); None unless every translation has them."""
    parts: list[WordWeights] = []
    for each in weights:
        if each is None:
            return None
        parts += each.parts if isinstance(each, JoinedWeights) else [each]
    return JoinedWeights(tuple(parts)) if parts else None


def _unit_output(
    parsed: MarkedUp, sentences: list[tuple[tuple[int, int], SentenceTranslation]]
) -> tuple[str | None, int]:
    """A unit's translated line of markup, or None where it has no words or its
    translation is its own words; and how many of its elements that held words hold
    none of the translation's (only a translation with too few words leaves one so). Its
    sentences' word ranges follow one another from its first word, so their joined links
    are over the unit's words."""
    if not sentences:
        return None, 0
    joined = _joined([translation for _, translation in sentences], [b - a for (a, b), _ in sentences])
    if joined.words == parsed.words:
        return None, 0
    return transferred(parsed, joined.words, joined.links, weights=joined.weights)


def _written(each: _Read, outputs: list[str | None], *, sentences: int, unchanged_ok: bool) -> TranslatedDocument:
    """The document written from its units' outputs, refused where nothing changed."""
    document = each.document
    changed = sum(output is not None for output in outputs)
    if not changed and not unchanged_ok:
        why = "came back unchanged: every unit's translation is its own text"
        if not sentences:
            why = "holds nothing to translate"
        raise DocumentError(f"{each.name}: it {why}; give unchanged_ok (--unchanged-ok) to write it all the same")
    return TranslatedDocument(
        each.name,
        document.write(outputs),
        each.format.media_type,
        units=len(outputs),
        sentences=sentences,
        kept=len(outputs) - changed,
        attributes=sum(unit.attribute for unit in document.units),
        protected=document.protected,
        untranslated=document.untranslated,
        notes=document.notes,
    )

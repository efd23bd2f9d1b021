"""Translating documents: web pages, Word files, Markdown, subtitles, PO catalogues and
plain text in, the same documents out (rnnsearch.markup.formats reads and writes each).

Every unit of every document given in one call is cut into sentences
(rnnsearch.text.sentences), by its text without markup, so that a sentence is never cut
at a tag, a run or a line break. All the sentences are translated together, in the
batches of one search, and each unit's translation is its sentences' translations one
after the other, with the unit's markup put back by their word alignments taken together
(rnnsearch.markup): an element that crosses a sentence boundary keeps its place. A unit
whose translation is its own words, word for word, is kept as written; a sentence longer
than the model reads (search.max_source_length) is translated in parts, cut between
words.

A document whose every unit comes back unchanged, or that holds nothing to translate, is
refused (a DocumentError saying so) unless `unchanged_ok` is given: a file handed back
as it came is never taken for a translation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rnnsearch.alignments.readings import DEFAULT_READING
from rnnsearch.alignments.symmetrisation import Link
from rnnsearch.alignments.words import align_translations
from rnnsearch.arguments import checked_choice
from rnnsearch.config.data import DataSection
from rnnsearch.decoding.decoding import SENTENCES_PER_SEARCH, Decoding
from rnnsearch.decoding.results import Translation
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError
from rnnsearch.markup import PLACEMENTS, MarkedUp, MarkupError, WordWeights, parse, transfer
from rnnsearch.markup.formats import format_named, format_of
from rnnsearch.markup.formats.document import Document, DocumentError, Format, ReadOptions
from rnnsearch.text.sentences import sentence_spans
from rnnsearch.translation.request import Request, build_request
from rnnsearch.translation.text_translation import NOT_TEXT, TextTranslation


@dataclass(frozen=True)
class SentenceTranslation:
    """A sentence's translation as placing reads it: its target words, the word links
    (source word, target word) and, for placing by weights, its word weights."""

    words: list[str]
    links: list[Link]
    weights: WordWeights | None = None


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

    @property
    def summary(self) -> str:
        """One line of what was translated; blocks left untranslated, if any, named last."""
        line = (
            f"{self.name}: {self.units:,} units ({self.attributes:,} attributes), {self.sentences:,} sentences, "
            f"{self.kept:,} units kept as written, {self.protected:,} spans protected"
        )
        if self.untranslated:
            line += f"; {self.untranslated:,} blocks left untranslated (their text not found where the reader put it)"
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
    target_language: str,
    retranslate: bool = False,
) -> tuple[str, Format, Document]:
    """A document given as a path, or as bytes with a `name` (its extension says the
    format, unless `format` does): its name, its format and what the format reads."""
    if isinstance(document, (str, Path)):
        path = Path(document)
        name = name or str(path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise DocumentError(f"{path}: cannot read it ({error.strerror or error})") from None
    elif isinstance(document, (bytes, bytearray, memoryview)):
        data = bytes(document)
        if name is None and format is None:
            raise ArgumentValueError("documents: bytes need a name (its extension says the format) or a format")
        name = name or f"document.{format}"
    else:
        raise ArgumentTypeError(f"documents: expected a path or bytes, got {type(document).__name__}")
    chosen = format_named(format) if format is not None else format_of(name)
    options = ReadOptions(target_language, retranslate=retranslate)
    return name, chosen, chosen.read(data, origin=name, options=options)


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
    texts = [" ".join(read[k].parsed[u].words[a:b]) for k, u, (a, b) in sentences]
    translated = _translated_in_parts(texts, translate, fits)
    by_unit: dict[tuple[int, int], list[tuple[tuple[int, int], SentenceTranslation]]] = {}
    for (k, u, span), translation in zip(sentences, translated, strict=True):
        by_unit.setdefault((k, u), []).append((span, translation))
    results = []
    for k, each in enumerate(read):
        outputs = [_unit_output(each.parsed[u], by_unit.get((k, u), [])) for u in range(len(each.parsed))]
        count = sum(len(spans) for spans in each.sentences)
        results.append(_written(each, outputs, sentences=count, unchanged_ok=unchanged_ok))
    return results


def _parsed(name: str, chosen: Format, document: Document, language: str) -> _Read:
    each = _Read(name, document, chosen)
    for unit in document.units:
        try:
            parsed = unit.parsed or parse(unit.markup, chosen.dialect)
        except MarkupError as error:
            raise DocumentError(f"{name}: {unit.where}: {error}") from None
        each.parsed.append(parsed)
        each.sentences.append(_sentence_words(parsed.text, language))
    return each


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
    into halves, again until each fits, and its parts' translations joined."""
    parts: list[list[str]] = [[text] for text in texts]
    while fits is not None:
        flat = [part for each in parts for part in each]
        fit = iter(fits(flat))
        cut, changed = [], False
        for each in parts:
            pieces: list[str] = []
            for part in each:
                words = part.split()
                if next(fit) or len(words) < 2:
                    pieces.append(part)
                else:
                    half = len(words) // 2
                    pieces += [" ".join(words[:half]), " ".join(words[half:])]
                    changed = True
            cut.append(pieces)
        parts = cut
        if not changed:
            break
    flat_translations = iter(translate([part for each in parts for part in each]))
    return [_joined([next(flat_translations) for _ in each], [len(part.split()) for part in each]) for each in parts]


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
    return SentenceTranslation(words, links, _block_weights([translation.weights for translation in translations]))


def _block_weights(weights: list[WordWeights | None]) -> WordWeights | None:
    """The word weights of consecutive translations as one pair's: each block on the
    diagonal, no weight between one's target words and another's source words; None
    unless every translation has them."""
    present = [each for each in weights if each is not None]
    if not present or len(present) < len(weights):
        return None
    backward = [each.backward for each in present if each.backward is not None]
    return WordWeights(
        _diagonal([each.forward for each in present]),
        _diagonal(backward) if len(backward) == len(present) else None,
        present[0].least,
    )


def _diagonal(blocks: list[np.ndarray]) -> np.ndarray:
    """The matrices `blocks` down the diagonal of one, zero elsewhere."""
    joined = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=np.float32)
    row = column = 0
    for block in blocks:
        joined[row : row + block.shape[0], column : column + block.shape[1]] = block
        row, column = row + block.shape[0], column + block.shape[1]
    return joined


def _unit_output(parsed: MarkedUp, sentences: list[tuple[tuple[int, int], SentenceTranslation]]) -> str | None:
    """A unit's translated line of markup, or None where it has no words or its
    translation is its own words. Its sentences' word ranges follow one another from its
    first word, so their joined links are over the unit's words."""
    if not sentences:
        return None
    joined = _joined([translation for _, translation in sentences], [b - a for (a, b), _ in sentences])
    if joined.words == parsed.words:
        return None
    return transfer(parsed, joined.words, joined.links, weights=joined.weights)


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
    )


class DocumentTranslation(TextTranslation):
    """The Translator's document translation (`translate_documents`)."""

    data: DataSection  # the model's data section: its languages

    def translate_documents(
        self,
        documents: Iterable[object],
        *,
        format: str | None = None,
        names: Sequence[str] | None = None,
        beam_size: int | None = None,
        placement: str | None = None,
        reading: str = DEFAULT_READING,
        alignment_from: str | None = None,
        unchanged_ok: bool = False,
        source_language: str | None = None,
        retranslate: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[TranslatedDocument]:
        """Translate documents, each a path or bytes (then with its name in `names`, whose
        extension says its format, or a `format` for all): HTML, DOCX, Markdown, SRT, PO
        or plain text (rnnsearch.markup.formats.FORMATS). All their sentences are
        translated in one batched search; each result holds the translated document's
        bytes and what was done (`summary`). The markup of each unit goes back by the
        word alignment, as `translate`'s does with `markup`: read as `reading` says, from
        `alignment_from`, placed as `placement` says. A document that comes back
        unchanged, or holds nothing to translate, is a DocumentError unless
        `unchanged_ok`. Sentences are found by the rules of `source_language` (None: the
        model's source language). With `retranslate`, what a document holds translated
        already (a catalogue's translated entries) is translated again rather than kept.
        `progress(total, done)` is called as each batch of
        sentences is done, with how many there are and how many that batch held."""
        request, placed = document_request(
            self, NOT_TEXT, alignment_from=alignment_from, reading=reading, beam_size=beam_size, placement=placement
        )
        if isinstance(documents, (str, bytes, Path)):
            raise ArgumentTypeError("documents: expected a list of paths or bytes, not a single one")
        given = list(documents)
        if names is not None and len(names) != len(given):
            raise ArgumentValueError(f"names: {len(names)} names for {len(given)} documents")
        target = self.data.tgt_lang
        read = [
            read_document(
                d,
                format=format,
                name=None if names is None else names[k],
                target_language=target,
                retranslate=retranslate,
            )
            for k, d in enumerate(given)
        ]
        return translate_read(
            read,
            sentence_translator(
                lambda batch: self.translate_with(request, batch),
                reading=request.reading,
                placement=placed,
                batch=SENTENCES_PER_SEARCH,
                progress=progress,
            ),
            language=source_language or self.data.src_lang,
            unchanged_ok=unchanged_ok,
            fits=self._fit,
        )

    def _fit(self, sentences: list[str]) -> list[bool]:
        return fitting(self, sentences)


def document_request(
    decoding: Decoding,
    not_text: str,
    *,
    alignment_from: object,
    reading: object = DEFAULT_READING,
    beam_size: object,
    placement: object,
) -> tuple[Request, str]:
    """A document call's settings, checked once, for the API and the server alike: the
    request its sentences are searched with (their word links read, so the model must
    align) and the placement of their markup (None: by the links). A model that does not
    read text is refused first, `not_text` saying what it takes."""
    decoding.input_kind.require_text(not_text)
    request = build_request(
        decoding, alignment_from=alignment_from, reading=reading, beam_size=beam_size, links_read=True
    )
    decoding.require_alignment()
    return request, "links" if placement is None else checked_choice(placement, "placement", PLACEMENTS)


def fitting(decoding: Decoding, sentences: list[str]) -> list[bool]:
    """Which sentences the model of `decoding` reads whole (search.max_source_length)."""
    limit = decoding.search.max_source_length
    return [pieces <= limit for pieces in decoding.input_kind.pieces(sentences)]


def sentence_translator(
    translate: Callable[[list[str]], list[Translation]],
    *,
    reading: str,
    placement: str,
    batch: int,
    progress: Callable[[int, int], None] | None = None,
) -> SentenceTranslator:
    """Sentences translated by `translate` (a model call: texts in, Translations with
    their alignments out), `batch` at a time, each batch's end reported to
    `progress(total, done)`, and read as placing reads them: target words, word links
    read as `reading` says, and word weights where `placement` is by weights. The API
    calls the model itself; the server hands each batch to its batcher, to be decoded
    with other requests."""

    def translated(sentences: list[str]) -> list[SentenceTranslation]:
        translations: list[Translation] = []
        for start in range(0, len(sentences), batch):
            part = sentences[start : start + batch]
            translations += translate(part)
            if progress is not None:
                progress(len(sentences), len(part))
        aligned = align_translations(translations, reading=reading)
        return [
            SentenceTranslation(
                translation.text.split(),
                list(words.pairs),
                WordWeights(words.weights) if placement == "weights" else None,
            )
            for translation, words in zip(translations, aligned, strict=True)
        ]

    return translated

"""Translating documents: web pages, Word files, Markdown, subtitles, PO catalogues and
plain text in, the same documents out (rnnsearch.documents reads and writes each).

Every unit of every document given in one call is cut into sentences
(rnnsearch.text.sentences), by its text without markup, so that a sentence is never cut
at a tag, a run or a line break. All the sentences are translated together, in the
batches of one search, and each unit's translation is its sentences' translations one
after the other, with the unit's markup put back by their word alignments taken together
(rnnsearch.markup): an element that crosses a sentence boundary keeps its place. A unit
whose translation is its own words, word for word, is kept as written; a sentence longer
than the model reads (search.max_source_length) is translated in parts, cut between
words, and a single word longer than that is kept as written.

A document whose every unit comes back unchanged, or that holds nothing to translate, is
refused (a DocumentError saying so) unless `unchanged_ok` is given: a file handed back
as it came is never taken for a translation.

The steps that need no model (reading, cutting, placing, writing) are in
rnnsearch.documents.translating; this module gives them the model's sentence translator
(`sentence_translator`) and the API's `translate_documents`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Unpack

from rnnsearch.config.data import DataSection
from rnnsearch.decoding.decoding import SENTENCES_PER_SEARCH, Decoding
from rnnsearch.decoding.results import Translation
from rnnsearch.documents.document import Document, Format, ReadKeywords, ReadOptions
from rnnsearch.documents.translating import (
    SentenceTranslation,
    SentenceTranslator,
    TranslatedDocument,
    read_document,
    translate_read,
)
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError
from rnnsearch.markup import Placement, checked_placement, chosen_placement
from rnnsearch.text.sentences import checked_language
from rnnsearch.translation.request import DocumentKeywords, Request, taken
from rnnsearch.translation.text_translation import NOT_TEXT, TextTranslation


class DocumentOptions(DocumentKeywords, ReadKeywords, total=False):
    """What `translate_documents` may ask besides the documents and how they are named:
    its search's settings and how each format reads."""


class DocumentTranslation(TextTranslation):
    """The Translator's document translation (`translate_documents`). What its options ask:

    The markup of each unit goes back by the word alignment, as `translate`'s does with
    `markup`: read from the alignment source asked, as `reading` says, placed as `placement` says.
    Sentences are found by the rules of `source_language`, a language tag (None: the
    model's source language; one that is not a tag is an error). With `retranslate`,
    what a document holds translated already (a catalogue's translated entries) is
    translated again rather than kept; `overwrite` names the states of an XLIFF file's
    translations that are written over (`translated`, `final`, `approved`…:
    TRANSLATION_STATES); `proposals` offers an XLIFF file's translations beside their
    targets (`<alt-trans>`, `<mtc:match>`) and leaves the targets as they are;
    `state_qualifier` is what a target written says it is (`leveraged-mt`, or
    `mt-suggestion`: STATE_QUALIFIERS). `notes`:
    whether notes and comments are translated (speaker notes, a workbook's notes on
    cells, a Word or OpenDocument file's comments); `hidden_sheets`: whether the sheets a
    workbook hides are; `sheet_names`: whether a workbook's sheet names are, every
    reference to a sheet following it.
    `progress(total, done)` is called as each batch of sentences is done, with how many
    there are and how many that batch held. `glossary` is the user's terms, as
    `translate` takes them: each term found in a sentence is written in its translation;
    `avoid`, words no translation may write, as `translate` takes them.
    """

    data: DataSection  # the model's data section: its languages

    def translate_documents(
        self,
        documents: Iterable[object],
        *,
        format: str | None = None,
        names: Sequence[str] | None = None,
        unchanged_ok: bool = False,
        source_language: str | None = None,
        progress: Callable[[int, int], None] | None = None,
        **options: Unpack[DocumentOptions],
    ) -> list[TranslatedDocument]:
        """Translate documents, each a path or bytes (then named in `names`, or all of one
        `format`) of any format rnnsearch.documents.formats() reads, all their sentences
        in one batched search; each result holds the document's bytes and what was done
        (`summary`). A document that comes back unchanged, or holds nothing to translate,
        is a DocumentError unless `unchanged_ok`; DocumentTranslation says the rest."""
        own = ("format", "names", "unchanged_ok", "source_language", "progress")
        taken(options, DocumentOptions, "translate_documents", besides=own)
        settings = self.document_settings(options, source_language=source_language)
        return self.translate_documents_with(
            settings, documents, format=format, names=names, unchanged_ok=unchanged_ok, progress=progress
        )

    def document_settings(
        self, options: Mapping[str, object], *, source_language: str | None = None
    ) -> DocumentSettings:
        """`translate_documents`' options (`DocumentOptions`, as a command's flags give
        them) and source language checked once, as one record."""
        taken(options, DocumentOptions, "translate_documents")
        reads = ReadKeywords.__optional_keys__
        request, placed = document_request(self, NOT_TEXT, {k: v for k, v in options.items() if k not in reads})
        language = (
            self.data.src_lang if source_language is None else checked_language(source_language, "source_language")
        )
        read_options = {key: value for key, value in options.items() if key in reads}
        read_with = ReadOptions(self.data.tgt_lang, source_language=self.data.src_lang, **read_options)  # type: ignore[arg-type]
        return DocumentSettings(request, placed, read_with, language)

    def translate_documents_with(
        self,
        settings: DocumentSettings,
        documents: Iterable[object],
        *,
        format: str | None = None,
        names: Sequence[str] | None = None,
        unchanged_ok: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[TranslatedDocument]:
        """`translate_documents`, its settings given as one checked record
        (`document_settings` makes it), as the `translate-document` command calls it."""
        read = _read_all(documents, format=format, names=names, options=settings.read_with)
        return self._translated(read, settings, unchanged_ok=unchanged_ok, progress=progress)

    def _translated(
        self,
        read: list[tuple[str, Format, Document]],
        settings: DocumentSettings,
        *,
        unchanged_ok: bool,
        progress: Callable[[int, int], None] | None,
    ) -> list[TranslatedDocument]:
        """Documents read, their sentences (in the settings' language) translated as their
        request asks, `SENTENCES_PER_SEARCH` at a time, and their markup placed as their
        placement says."""
        request = settings.request
        translate = sentence_translator(
            lambda batch: self.translate_with(request, batch),
            reading=request.reading,
            placement=settings.placement,
            batch=SENTENCES_PER_SEARCH,
            progress=progress,
        )
        return translate_read(
            read, translate, language=settings.language, unchanged_ok=unchanged_ok, fits=partial(fitting, self)
        )


@dataclass(frozen=True)
class DocumentSettings:
    """How a document call translates (`DocumentTranslation.document_settings` makes it
    once): the `request` its sentences are searched with, the `placement` of their
    markup, how each format reads (`read_with`) and the `language` whose rules cut the
    sentences."""

    request: Request
    placement: Placement
    read_with: ReadOptions
    language: str


def document_request(
    translator: TextTranslation, not_text: str, asked: Mapping[str, object]
) -> tuple[Request, Placement]:
    """A document call's settings, checked once, for the API and the server alike: the
    request its sentences are searched with (their word links read, so the model must
    align) and the placement of their markup (None: the measured best for the
    alignment read, `chosen_placement`). A model that does not read text is refused
    first, `not_text` saying what it takes."""
    translator.input_kind.require_text(not_text)
    searched = {key: value for key, value in asked.items() if key != "placement"}
    request = translator.request(searched, links_read=True)
    translator.require_alignment()
    placement = checked_placement(asked.get("placement"))
    return request, chosen_placement(placement, from_module=request.source.from_module)


def fitting(decoding: Decoding, sentences: list[str]) -> list[bool]:
    """Which sentences the model of `decoding` reads whole (search.max_source_length)."""
    limit = decoding.search.max_source_length
    return [pieces <= limit for pieces in decoding.input_kind.pieces(sentences)]


def sentence_translator(
    translate: Callable[[list[str]], list[Translation]],
    *,
    reading: str,
    placement: Placement,
    batch: int,
    progress: Callable[[int, int], None] | None = None,
) -> SentenceTranslator:
    """Sentences translated by `translate` (a model call: texts in, Translations with
    their alignments out), `batch` at a time, each batch's end reported to
    `progress(total, done)`, and read as placing reads them: target words, word links
    read as `reading` says (a module's jump table as `placement` reads it), and word
    weights where `placement` is by weights. The API
    calls the model itself; the server hands each batch to its batcher, to be decoded
    with other requests."""

    def translated(sentences: list[str]) -> list[SentenceTranslation]:
        translations: list[Translation] = []
        for start in range(0, len(sentences), batch):
            part = sentences[start : start + batch]
            translations += translate(part)
            if progress is not None:
                progress(len(sentences), len(part))
        return [
            SentenceTranslation(
                translation.text.split(),
                list(read.words.pairs),
                placement.weights(read),
                translation.terms,
            )
            for translation, read in zip(translations, placement.read(translations, reading=reading), strict=True)
        ]

    return translated


def _read_all(
    documents: Iterable[object], *, format: str | None, names: Sequence[str] | None, options: ReadOptions
) -> list[tuple[str, Format, Document]]:
    """Each document read (`read_document`), named by `names` where they are given."""
    if isinstance(documents, (str, bytes, Path)):
        raise ArgumentTypeError("documents: expected a list of paths or bytes, not a single one")
    given = list(documents)
    if names is not None and len(names) != len(given):
        raise ArgumentValueError(f"names: {len(names)} names for {len(given)} documents")
    return [
        read_document(d, format=format, name=None if names is None else names[k], options=options)
        for k, d in enumerate(given)
    ]

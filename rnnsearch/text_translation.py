"""Translating text: texts in, one Translation each, given whole or a chunk at a time,
optionally with the start of each translation forced (a prefix)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rnnsearch.alignment import align_translation
from rnnsearch.arguments import checked_iterable, checked_strings, numbered_chunks
from rnnsearch.decoding import Decoding
from rnnsearch.errors import ArgumentValueError
from rnnsearch.markup import MarkedUp, Reading, transfer
from rnnsearch.results import Translation
from rnnsearch.search.rules import Cancelled, SearchOptions

NOT_TEXT = "give it WAV files"
"""What a speech model is given instead of text."""


class TextTranslation:
    """`Translator.translate` and `translate_chunks` over the shared `Decoding`."""

    def __init__(self, decoding: Decoding):
        self.decoding = decoding

    def translate(
        self,
        texts: Iterable[str],
        beam_size: int | None,
        n_best: int,
        cancelled: Cancelled | None,
        *,
        prefixes: Iterable[str] | None,
        markup: Reading | None,
        alignment_from: str | None = None,
    ) -> list[Translation]:
        """Every text translated, in order (see `Translator.translate`)."""
        source = self._require(markup, alignment_from)
        texts = checked_strings(texts, "texts", example='a list such as ["Ein Hund."]')
        checked_prefixes = _prefixes(prefixes, len(texts), "prefixes")
        options = self.decoding.options(beam_size, n_best, cancelled)
        return self._translate(
            texts, options, first_line=1, prefixes=checked_prefixes, markup=markup, alignment_from=source
        )

    def _require(self, markup: Reading | None, alignment_from: object) -> str:
        """A model that reads text, and, to put markup back or align with a module, one with
        an alignment; the alignments' source checked (`Decoding.alignment_source`):
        "attention" for a model without an alignment."""
        self.decoding.source.require_text(NOT_TEXT)
        if markup is not None or alignment_from == "aligner":
            self.decoding.require_alignment()
        return self.decoding.alignment_source(alignment_from)

    def translate_chunks(
        self,
        chunks: Iterable[Iterable[str]],
        beam_size: int | None,
        n_best: int,
        *,
        prefix_chunks: Iterable[Iterable[str]] | None,
        markup: Reading | None,
        alignment_from: str | None = None,
    ) -> Iterator[list[Translation]]:
        """Each chunk's translations as it is done (see `Translator.translate_chunks`);
        the model and the options are checked at the call, the texts as their chunks come."""
        source = self._require(markup, alignment_from)
        options = self.decoding.options(beam_size, n_best)
        chunks = checked_iterable(chunks, "chunks")
        if prefix_chunks is not None:
            prefix_chunks = checked_iterable(prefix_chunks, "prefix_chunks")
        return self._translated_chunks(chunks, options, prefix_chunks, markup, source)

    def _translated_chunks(
        self,
        chunks: Iterable[Iterable[str]],
        options: SearchOptions,
        prefix_chunks: Iterable[Iterable[str]] | None,
        markup: Reading | None,
        alignment_from: str,
    ) -> Iterator[list[Translation]]:
        """Each chunk checked and translated, numbered from the first chunk's first line."""
        prefix_chunks = iter(prefix_chunks) if prefix_chunks is not None else None
        for index, first_line, texts in numbered_chunks(chunks, _checked_texts, lambda texts: texts):
            prefixes = None
            if prefix_chunks is not None:
                name = f"prefix_chunks[{index}]"
                prefixes = _prefixes(next(prefix_chunks, None), len(texts), name)
                if prefixes is None:
                    raise ArgumentValueError(f"{name}: missing; prefix_chunks ended before chunks")
            yield self._translate(
                texts, options, first_line=first_line, prefixes=prefixes, markup=markup, alignment_from=alignment_from
            )
        if prefix_chunks is not None and next(prefix_chunks, None) is not None:
            raise ArgumentValueError("prefix_chunks: more chunks than chunks of texts")

    def _translate(
        self,
        texts: list[str],
        options: SearchOptions,
        *,
        first_line: int,
        prefixes: list[str] | None,
        markup: Reading | None,
        alignment_from: str,
    ) -> list[Translation]:
        """Translate checked texts; `first_line` is the number of texts[0] in error messages.
        Marked-up texts are translated without their markup, which then goes back into
        every hypothesis by its word alignment (from `alignment_from`)."""
        prefix_ids = None if prefixes is None else self.decoding.tgt_subwords.encode(prefixes)
        marked = None if markup is None else markup.lines(texts, first_line=first_line)
        if marked is not None:
            texts = [text if parsed is None else parsed.text for text, parsed in zip(texts, marked, strict=True)]
        translations = self.decoding.decode(
            texts, texts, options, first_line=first_line, prefixes=prefix_ids, alignment_from=alignment_from
        )
        for parsed, translation in zip(marked or [], translations):
            put_markup_back(parsed, translation)
        return translations


def put_markup_back(parsed: MarkedUp | None, translation: Translation) -> None:
    """Every hypothesis of a marked-up input's translation given the input's markup
    (`marked_up`), placed by the hypothesis's own word alignment; an input read as plain
    text (None) gets none. The server puts markup back with it too."""
    if parsed is None:
        return
    for hypothesis in [translation, *translation.alternatives]:
        links = align_translation(hypothesis).pairs
        hypothesis.marked_up = transfer(parsed, hypothesis.text.split(), links)


def _checked_texts(chunk: object, index: int) -> list[str]:
    return checked_strings(chunk, f"chunks[{index}]", example='a list such as ["Ein Hund."]')


def _prefixes(prefixes: object, count: int, name: str) -> list[str] | None:
    """Checked prefixes for `count` texts, or None when none is given."""
    if prefixes is None:
        return None
    prefixes = checked_strings(prefixes, name, example='a list such as ["A dog", ""]')
    if len(prefixes) != count:
        raise ArgumentValueError(f"{name}: {len(prefixes)} prefixes for {count} texts")
    return prefixes

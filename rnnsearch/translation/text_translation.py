"""Translating text: texts in, one Translation each, given whole or a chunk at a time,
optionally with the start of each translation forced (a prefix)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Unpack

from rnnsearch.alignments.readings import DEFAULT_READING
from rnnsearch.arguments import checked_iterable, checked_strings, numbered_chunks
from rnnsearch.config.data import DataSection
from rnnsearch.decoding.decoding import Decoding
from rnnsearch.decoding.results import Translation
from rnnsearch.decoding.wanted import Wanted
from rnnsearch.errors import ArgumentValueError
from rnnsearch.markup import MarkedUp, Placement, chosen_placement, transfer
from rnnsearch.search.rules import Cancelled
from rnnsearch.text.glossary import Match
from rnnsearch.text.glossary_files import read_glossary
from rnnsearch.translation.request import Asked, ChunkKeywords, Request, TextKeywords, build_request, taken
from rnnsearch.translation.written_terms import note_terms

NOT_TEXT = "give it WAV files"
"""What a speech model is given instead of text."""


class TextTranslation(Decoding):
    """The Translator's text translation (`translate`, `translate_chunks`), done here over
    the decoding it is. What their options ask:

    `markup` ("xml" or "html") reads each text as a line with inline markup: its text is
    translated, and each hypothesis's `marked_up` is its text with the markup put back
    around the words aligned to those it enclosed (rnnsearch.markup has the rules). A
    text whose markup is not well-formed is a MarkupError (a ValueError) naming its
    line, or with `lenient_markup` it is translated as plain text and its
    `marked_up` stays None. A marked-up text longer than `max_markup_chars` characters
    (None: rnnsearch.markup.MAX_MARKUP_CHARS) is refused. It needs a model with an
    alignment. The tags are placed by each hypothesis's word alignment, read from its
    `alignment` as `reading` says (rnnsearch.alignments.readings.READINGS), and kept as
    its `words`: by its word
    weights, around the span of words they make likeliest for each element, or by its
    links, from the first to the last word linked to the element's, as `placement`
    says (a name of rnnsearch.markup.PLACEMENTS or a Placement; None: the measured
    best, `tempered` where they are the alignment module's and `links` where they are
    the attention, rnnsearch.markup.chosen_placement).

    `alignment_from` ("attention" or "aligner") says what each hypothesis's `alignment`
    is: the attention α of its search, or the alignment module's β (docs/model.md),
    computed once search has chosen the pieces, which it does not change; None takes
    the module where the model has one. Each result's `alignment_from` says which.

    `glossary`, the user's terms (a glossary file's path, a mapping from source terms to
    their targets, or a rnnsearch.text.glossary.Glossary): each term found in a text
    (on whole words, in any case, the longest first) has its target written in that
    text's translation, by greedy and beam search alike; a target the model's pieces
    cannot spell is refused, naming where it was given. `avoid`, words and phrases no
    translation may contain (a list, or a file's path, one a line): none is written
    on whole words, in any case, however the model's pieces would spell it, unless a
    prefix or a term asks for it.
    """

    data: DataSection  # the model's data section: its languages, which a glossary file's header may name

    def translate(
        self,
        texts: Iterable[str],
        beam_size: int | None = None,
        n_best: int = 1,
        cancelled: Cancelled | None = None,
        **options: Unpack[TextKeywords],
    ) -> list[Translation]:
        """Translate every text, in order; an empty or blank text gives an empty translation.

        `texts` is a list (or any other iterable) of str; a single str is refused, not read
        as its characters. beam_size 1 is greedy search, at most MAX_BEAM_SIZE; the default
        comes from the model's config. `cancelled`, asked before every decoder step, stops
        the work with SearchCancelled once it returns True.

        `prefixes`, one str per text ("" for none), force the start of each translation:
        the prefix's pieces are the first output pieces, whatever the model would choose,
        and search goes on from there. The score and the alignment cover the prefix too.
        A text with a prefix is translated even when blank.

        `markup`, `lenient_markup`, `max_markup_chars`, `reading`, `placement`,
        `alignment_from`, `glossary` and `avoid` are described in the docstring of
        rnnsearch.translation.text_translation.TextTranslation, which `translate_chunks`
        shares.
        """
        taken(options, TextKeywords, "translate", besides=("beam_size", "n_best", "cancelled"))
        asked: Asked = {**options, "beam_size": beam_size, "n_best": n_best, "cancelled": cancelled}
        return self.translate_with(self.request(asked), texts)

    def request(
        self, asked: Mapping[str, object], *, searches: bool = True, shown: bool = True, links_read: bool = False
    ) -> Request:
        """What `asked` asks of this model, checked once (`build_request`), a glossary
        file's path read for the model's languages (its header may name its columns by
        them): what the API's methods, the commands and the server make of their input."""
        glossary = asked.get("glossary")
        if isinstance(glossary, (str, Path)):
            read = read_glossary(glossary, source_language=self.data.src_lang, target_language=self.data.tgt_lang)
            asked = {**asked, "glossary": read}
        return build_request(self, asked, searches=searches, shown=shown, links_read=links_read)

    def translate_with(
        self, request: Request, texts: Iterable[str], *, owners: Sequence[Request] | None = None
    ) -> list[Translation]:
        """`translate`, its settings given as one checked Request (`request` makes it from
        `translate`'s keywords), as the server and the commands call it; `owners`: each
        text's own request, whose glossary its terms are found by, where requests that
        differ in their glossaries alone are decoded together (Request.shared)."""
        self.input_kind.require_text(NOT_TEXT)
        texts = checked_strings(texts, "texts", example='a list such as ["Ein Hund."]')
        _check_prefixes(request, len(texts), "prefixes")
        if owners is not None and len(owners) != len(texts):
            raise ArgumentValueError(f"owners: {len(owners)} requests for {len(texts)} texts")
        return self._translate(texts, _searching(request), first_line=1, owners=owners)

    def translate_chunks(
        self,
        chunks: Iterable[Iterable[str]],
        beam_size: int | None = None,
        n_best: int = 1,
        *,
        prefix_chunks: Iterable[Iterable[str]] | None = None,
        **options: Unpack[ChunkKeywords],
    ) -> Iterator[list[Translation]]:
        """Translate texts that arrive a chunk at a time, such as lines from a pipe: yield each
        chunk's translations, in order, as soon as the chunk is done, before the next chunk
        is read. Errors number the lines across chunks, as one list would. The model and the
        options are checked at the call, the texts as their chunks come. `prefix_chunks`
        gives the chunks' prefixes (as `translate`'s `prefixes`), chunk for chunk, and
        `markup`, `lenient_markup`, `max_markup_chars`, `reading`, `alignment_from`,
        `placement`, `glossary` and `avoid` are as in `translate`."""
        taken(options, ChunkKeywords, "translate_chunks", besides=("beam_size", "n_best", "prefix_chunks"))
        request = self.request({**options, "beam_size": beam_size, "n_best": n_best})
        return self.translate_chunks_with(request, chunks, prefix_chunks=prefix_chunks)

    def translate_chunks_with(
        self,
        request: Request,
        chunks: Iterable[Iterable[str]],
        *,
        prefix_chunks: Iterable[Iterable[str]] | None = None,
    ) -> Iterator[list[Translation]]:
        """`translate_chunks`, its settings given as one checked Request (`request`)."""
        self.input_kind.require_text(NOT_TEXT)
        chunks = checked_iterable(chunks, "chunks")
        if prefix_chunks is not None:
            prefix_chunks = checked_iterable(prefix_chunks, "prefix_chunks")
        return self._translated_chunks(chunks, _searching(request), prefix_chunks)

    def _translated_chunks(
        self,
        chunks: Iterable[Iterable[str]],
        request: Request,
        prefix_chunks: Iterable[Iterable[str]] | None,
    ) -> Iterator[list[Translation]]:
        """Each chunk checked and translated, numbered from the first chunk's first line,
        with its own prefixes where they are given."""
        prefix_chunks = iter(prefix_chunks) if prefix_chunks is not None else None
        for index, first_line, texts in numbered_chunks(chunks, _checked_texts, lambda texts: texts):
            if prefix_chunks is not None:
                name = f"prefix_chunks[{index}]"
                given = next(prefix_chunks, None)
                if given is None:
                    raise ArgumentValueError(f"{name}: missing; prefix_chunks ended before chunks")
                request = request.prefixed(checked_strings(given, name, example='a list such as ["A dog", ""]'))
                _check_prefixes(request, len(texts), name)
            yield self._translate(texts, request, first_line=first_line)
        if prefix_chunks is not None and next(prefix_chunks, None) is not None:
            raise ArgumentValueError("prefix_chunks: more chunks than chunks of texts")

    def _translate(
        self, texts: list[str], request: Request, *, first_line: int, owners: Sequence[Request] | None = None
    ) -> list[Translation]:
        """Translate checked texts; `first_line` is the number of texts[0] in error messages.
        Marked-up texts are translated without their markup, which then goes back into
        every hypothesis by its word alignment (from the request's source, read as its
        reading says)."""
        markup = request.markup
        marked = None if markup is None else markup.lines(texts, first_line=first_line)
        if marked is not None:
            texts = [text if parsed is None else parsed.source_text for text, parsed in zip(texts, marked, strict=True)]
        matches = request.matches_of(texts, owners)
        translations = self.decode(
            texts,
            texts,
            request.searched,
            first_line=first_line,
            wanted=self._wanted(request, texts, matches),
            read_from=request.source,
        )
        for translation, found in zip(translations, matches or [], strict=False):
            note_terms(translation, found)
        if markup is not None and marked is not None:
            for parsed, translation in zip(marked, translations):
                put_markup_back(parsed, translation, reading=request.reading, placement=markup.placement)
        return translations

    def _wanted(self, request: Request, texts: list[str], matches: list[list[Match]] | None) -> Wanted | None:
        """What the request asks of the texts' translations beyond the model's choice: their
        prefixes, the targets of the terms `matches` found in each (each target once, begun
        where the attention passes the end of its first match), and the words to avoid."""
        terms = ends = None
        if matches is not None:
            found_ends = zip(matches, self._term_ends(texts, matches), strict=True)
            firsts = [_first_ends(found, ended) for found, ended in found_ends]
            terms = [list(first) for first in firsts]
            ends = [list(first.values()) for first in firsts]
        return Wanted.asked(self.tgt_subwords, request, terms=terms, term_ends=ends)

    def _term_ends(self, texts: list[str], matches: list[list[Match]]) -> list[list[int]]:
        """The source piece after each match's words: the pieces of the text up to its end
        (where the attention passes it, search begins the term: search/terms.py)."""
        before = [text[: match.end] for text, found in zip(texts, matches, strict=True) for match in found]
        counts = iter(self.input_kind.pieces(before) if before else [])
        return [[next(counts) for _ in found] for found in matches]


def put_markup_back(
    parsed: MarkedUp | None,
    translation: Translation,
    *,
    reading: str = DEFAULT_READING,
    placement: Placement | None = None,
) -> None:
    """Every hypothesis of a marked-up input's translation given the input's markup
    (`marked_up`), placed by the hypothesis's own word alignment as `reading` reads it
    and as `placement` says (rnnsearch.markup.PLACEMENTS; None: the measured best for
    what the translation's alignment is read from), which the hypothesis keeps (`words`,
    read as the placement reads a module's jump table) for whatever writes its links; an
    input read as plain text (None) gets none. The server puts markup back with it too."""
    if parsed is None:
        return
    hypotheses = [translation, *translation.alternatives]
    placement = chosen_placement(placement, from_module=translation.read_from.from_module)
    for hypothesis, read in zip(hypotheses, placement.read(hypotheses, reading=reading), strict=True):
        hypothesis.words = read.words
        weights = placement.weights(read)
        hypothesis.marked_up = transfer(parsed, hypothesis.text.split(), read.words.pairs, weights=weights)


def _searching(request: Request) -> Request:
    """`request`, checked to be one that searches (built with its search options)."""
    request.searched  # noqa: B018  # refused here, before any text is read, if it searches nothing
    return request


def _checked_texts(chunk: object, index: int) -> list[str]:
    return checked_strings(chunk, f"chunks[{index}]", example='a list such as ["Ein Hund."]')


def _check_prefixes(request: Request, count: int, name: str) -> None:
    """Refuse a request's prefixes (`name`) that are not one a text, for `count` texts."""
    given = request.prefixes
    if given is not None and len(given) != count:
        raise ArgumentValueError(f"{name}: {len(given)} prefixes for {count} texts")


def _first_ends(found: Sequence[Match], ends: Sequence[int]) -> dict[str, int]:
    """Each target of a text's matches, in the order first found, and the end of its first match."""
    first: dict[str, int] = {}
    for match, end in zip(found, ends, strict=True):
        first.setdefault(match.term.target, end)
    return first

"""Given translations scored and aligned: each (source, target) pair's teacher-forced
log-probability, token by token, and its alignment (rnnsearch.decoding.forced), as PairScores,
and the word alignments read off them, one direction or both combined."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Unpack

from rnnsearch.alignments.readings import AlignmentSource
from rnnsearch.alignments.symmetrisation import COMBINATIONS
from rnnsearch.alignments.words import WordAlignment, align_translations, combine
from rnnsearch.arguments import checked_choice, checked_iterable, checked_strings, numbered_chunks
from rnnsearch.config.data import DataSection, check_reverse
from rnnsearch.decoding.decoding import Decoding
from rnnsearch.decoding.forced import ForcedPair, mean_forced, teacher_forced
from rnnsearch.decoding.inputs import END
from rnnsearch.decoding.results import PairScore, Translation
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError, UserError
from rnnsearch.markup import MarkedUp, Placement, Reading, chosen_placement, transfer
from rnnsearch.model.ensemble import Ensemble
from rnnsearch.model.modes import evaluating
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.translation.request import AlignKeywords, Request, build_request, taken

NOT_TEXT = "scoring and alignment take text sources"
"""What a speech model is given instead of text."""


@dataclass(frozen=True)
class AlignedPair:
    """A given pair scored and aligned: `pair`, its texts, pieces and α as a Translation
    (a marked-up source as it was scored, without its markup), and `words`, its word
    alignment, both directions' links combined when a reverse model is given, and its
    target with the source's markup put back when the source was read as marked up."""

    pair: Translation
    words: WordAlignment


@dataclass(frozen=True)
class AlignSettings:
    """How given pairs are aligned (`align` and `align_chunks` make it once): by the
    `request` (where the alignments come from, their reading, the sources' markup), with a
    reverse model (or None), its own request, whose links combine by `symmetrize` (None:
    as what they are read from combines by default, AlignmentSource.combination)."""

    request: Request
    reverse: GivenPairs | None = None
    reverse_request: Request | None = None
    symmetrize: str | None = None


REVERSE_READS = ("alignment_from", "reading")
"""What a reverse model's request takes of `align`'s: where its rows come from and how
they are read (its own default source where none is asked), so that both directions'
links are read alike."""


def _read(translations: list[Translation], reading: str, placement: Placement | None) -> list[Reading]:
    """Each scored pair's word alignment, read as `reading` says and, with markup to place,
    as its `placement` reads a module's rows."""
    if placement is None:
        return [Reading(words) for words in align_translations(translations, reading=reading)]
    return placement.read(translations, reading=reading)


def _checked_pairs(chunk: object, index: int) -> tuple[list[str], list[str]]:
    """A chunk of (sources, targets), each a list of str, as many targets as sources."""
    if not isinstance(chunk, tuple | list) or len(chunk) != 2:
        raise ArgumentTypeError(f"chunks[{index}]: expected a pair (sources, targets), got {_shape(chunk)}")
    given_sources, given_targets = chunk
    sources = checked_strings(given_sources, f"chunks[{index}] sources", example='a list such as ["Ein Hund."]')
    targets = checked_strings(given_targets, f"chunks[{index}] targets", example='a list such as ["A dog."]')
    if len(sources) != len(targets):
        raise ArgumentValueError(f"chunks[{index}]: {len(targets)} targets for {len(sources)} sources")
    return sources, targets


def _shape(chunk: object) -> str:
    """What a chunk that is not a pair is, for its error."""
    if isinstance(chunk, tuple | list):
        return f"{len(chunk)} items"
    return type(chunk).__name__


class GivenPairs(Decoding):
    """The Translator's scoring and alignment of given pairs (`score`, `score_chunks`,
    `align`, `align_chunks`), done here over the decoding it is; pairs are batched
    search.batch_sentences at a time, as search batches its sources."""

    data: DataSection  # the model's data section, whose languages say which way it translates

    def score(
        self, sources: Iterable[str], targets: Iterable[str], *, alignment_from: str | None = None
    ) -> list[PairScore]:
        """Score each given target as a translation of its source, in order: its
        log-probability under the model, token by token, and its alignment.

        Both are lists (or other iterables) of str, as many targets as sources. A blank
        line is scored as an empty sentence: a blank target is </s> alone, and a blank
        source is read as the source </s> alone, so every pair gets a score. A source of
        more than search.max_source_length pieces is refused, as `translate` refuses it.
        `alignment_from` says what each alignment is read from, as in `align`; the scores
        are the same either way.
        """
        self.input_kind.require_text(NOT_TEXT)
        source = build_request(self, {"alignment_from": alignment_from}, searches=False).source
        sources = checked_strings(sources, "sources", example='a list such as ["Ein Hund."]')
        targets = checked_strings(targets, "targets", example='a list such as ["A dog."]')
        if len(targets) != len(sources):
            raise ArgumentValueError(f"targets: {len(targets)} targets for {len(sources)} sources")
        return self._score(sources, targets, None, first_line=1, source=source)

    def score_chunks(
        self,
        chunks: Iterable[tuple[Sequence[str], Sequence[str]]],
        origin: str | None = None,
        *,
        alignment_from: str | None = None,
    ) -> Iterator[list[PairScore]]:
        """`score` for pairs that arrive a chunk at a time, (sources, targets) of the same
        length each, such as the lines of two large files: yield each chunk's scores as
        soon as it is done. Errors number the lines across chunks and name `origin`, the
        source file, when given; `alignment_from` as in `score`."""
        self.input_kind.require_text(NOT_TEXT)
        request = build_request(self, {"alignment_from": alignment_from}, searches=False)
        return self.score_chunks_with(request, chunks, origin)

    def score_chunks_with(
        self, request: Request, chunks: Iterable[tuple[Sequence[str], Sequence[str]]], origin: str | None = None
    ) -> Iterator[list[PairScore]]:
        """`score_chunks`, its settings given as one checked Request (`Translator.request`
        makes it, as the `score` command does from its flags): what its alignments are read from."""
        self.input_kind.require_text(NOT_TEXT)
        return self._scored_chunks(checked_iterable(chunks, "chunks"), origin, request.source)

    def align(
        self,
        sources: Iterable[str],
        targets: Iterable[str],
        *,
        reverse: GivenPairs | None = None,
        symmetrize: str | None = None,
        **options: Unpack[AlignKeywords],
    ) -> list[WordAlignment]:
        """The word alignment of each given translation, in order: `targets[k]` to
        `sources[k]`, read off the teacher-forced α as `reading` says
        (`rnnsearch.alignments.readings.READINGS`), each target word to the source word it weighs
        most. With `reverse`, a model that translates targets into sources, both
        directions combined by `symmetrize` (`rnnsearch.alignments.symmetrisation.COMBINATIONS`:
        a heuristic over their links, or a soft combination of their word weights; None:
        the measured best for what they are read from, `soft` for the alignment module's
        and grow-diag-final-and for α). Words are the texts' whitespace-separated words;
        `pairs` of each result holds the (source word, target word) links, 0-based.

        With `markup` ("xml" or "html"), the sources are lines with inline markup: the
        words are those of their text, and each result's `marked_up` is its target with
        the source's markup put back by the links, as `translate` puts it back into a
        translation (`lenient_markup`, `max_markup_chars` and `placement` as there; with
        `reverse`, placement by the weights reads both directions': their lesser or their
        mean, as the placement says). A placement that reads a module's jump table at
        another strength (`tempered`, the default on a module's rows) reads the links it
        writes with it too.

        `alignment_from` ("attention" or "aligner") says what the links are read from: the
        attention α, or the alignment module's β (docs/model.md), which sees each target
        word it aligns; None takes the module where the model has one. Each result's
        `alignment_from` says which it is."""
        taken(options, AlignKeywords, "align", besides=("reverse", "symmetrize"))
        settings = self.align_settings(options, reverse=reverse, symmetrize=symmetrize)
        sources = checked_strings(sources, "sources", example='a list such as ["Ein Hund."]')
        targets = checked_strings(targets, "targets", example='a list such as ["A dog."]')
        if len(targets) != len(sources):
            raise ArgumentValueError(f"targets: {len(targets)} targets for {len(sources)} sources")
        return [pair.words for pair in self._aligned(sources, targets, settings, None, first_line=1)]

    def align_chunks(
        self,
        chunks: Iterable[tuple[Sequence[str], Sequence[str]]],
        origin: str | None = None,
        *,
        reverse: GivenPairs | None = None,
        symmetrize: str | None = None,
        **options: Unpack[AlignKeywords],
    ) -> Iterator[list[AlignedPair]]:
        """`align` for pairs that arrive a chunk at a time, (sources, targets) of the same
        length each, such as the lines of two large files: yield each chunk's pairs as soon
        as they are done, each an AlignedPair of the scored pair (`pair`, as a Translation,
        with its α) and its word alignment (`words`). Errors number the lines across chunks
        and name `origin`, the source file, when given; `alignment_from` as in `align`."""
        taken(options, AlignKeywords, "align_chunks", besides=("origin", "reverse", "symmetrize"))
        settings = self.align_settings(options, reverse=reverse, symmetrize=symmetrize)
        return self.align_chunks_with(settings, chunks, origin)

    def align_chunks_with(
        self,
        settings: AlignSettings,
        chunks: Iterable[tuple[Sequence[str], Sequence[str]]],
        origin: str | None = None,
    ) -> Iterator[list[AlignedPair]]:
        """`align_chunks`, its settings given as one checked record (`align_settings` makes
        it), as the `align` command calls it."""
        chunks = checked_iterable(chunks, "chunks")
        return (
            self._aligned(sources, targets, settings, origin, first_line=first_line)
            for _, first_line, (sources, targets) in numbered_chunks(chunks, _checked_pairs, lambda pairs: pairs[0])
        )

    def align_settings(
        self, asked: Mapping[str, object], *, reverse: object = None, symmetrize: object = None
    ) -> AlignSettings:
        """`align`'s arguments checked once, as one record: `asked`, its keywords
        (`AlignKeywords`, as a command's flags give them), a request for this model and,
        with a reverse model (checked to be a Translator of the other direction), one for
        it, each model a text model with an alignment (and an alignment module, where asked
        to align with it), each source read as the reading asks."""
        taken(asked, AlignKeywords, "align")
        if reverse is not None and not isinstance(reverse, GivenPairs):
            raise ArgumentTypeError(f"reverse: expected a Translator (rnnsearch.load), got {type(reverse).__name__}")
        request = build_request(self, asked, searches=False, links_read=True)
        combination = None if symmetrize is None else checked_choice(symmetrize, "symmetrize", COMBINATIONS)
        reverse_request = None
        if reverse is not None:
            check_reverse(self.data, reverse.data)
            read = {key: asked[key] for key in REVERSE_READS if key in asked}
            reverse_request = build_request(reverse, read, searches=False, links_read=True)
        for given in (self, reverse) if reverse is not None else (self,):
            given.input_kind.require_text(NOT_TEXT)
            given.require_alignment()
        return AlignSettings(request, reverse, reverse_request, combination)

    def _aligned(
        self,
        sources: list[str],
        targets: list[str],
        settings: AlignSettings,
        origin: str | None,
        *,
        first_line: int,
    ) -> list[AlignedPair]:
        """Checked pairs scored and aligned, both ways with a reverse model: marked-up
        sources without their markup, which then goes back into each target by its links."""
        request, reverse = settings.request, settings.reverse
        marked: list[MarkedUp | None] = [None] * len(sources)
        if request.markup is not None:
            marked = request.markup.lines(sources, origin=origin, first_line=first_line)
        sources = [source if parsed is None else parsed.text for source, parsed in zip(sources, marked, strict=True)]
        scored = self._score(sources, targets, origin, first_line=first_line, source=request.source)
        forward = [pair.as_translation() for pair in scored]
        placement = None
        if request.markup is not None:
            placement = chosen_placement(request.markup.placement, from_module=request.source.from_module)
        forward_read = _read(forward, request.reading, placement)
        backward_read = None
        if reverse is not None and settings.reverse_request is not None:
            reverse_source = settings.reverse_request.source
            scored = reverse._score(targets, sources, None, first_line=first_line, source=reverse_source)
            backward_read = _read([p.as_translation() for p in scored], request.reading, placement)
        method = settings.symmetrize or request.source.combination
        aligned = []
        for k, (pair, parsed) in enumerate(zip(forward, marked, strict=True)):
            words = forward_read[k].words
            back = None if backward_read is None else backward_read[k]
            if back is not None:
                words = combine(words, back.words, method=method)
            if parsed is not None and placement is not None:
                weights = placement.weights(replace(forward_read[k], words=words), back)
                words = replace(words, marked_up=transfer(parsed, words.target_words, words.pairs, weights=weights))
            aligned.append(AlignedPair(pair, words))
        return aligned

    def _scored_chunks(
        self, chunks: Iterable[tuple[Sequence[str], Sequence[str]]], origin: str | None, source: AlignmentSource
    ) -> Iterator[list[PairScore]]:
        """Each chunk's pairs checked and scored, numbered from the first chunk's first line."""
        for _, first_line, (sources, targets) in numbered_chunks(chunks, _checked_pairs, lambda pairs: pairs[0]):
            yield self._score(sources, targets, origin, first_line=first_line, source=source)

    def _score(
        self,
        sources: list[str],
        targets: list[str],
        origin: str | None,
        *,
        first_line: int,
        source: AlignmentSource,
    ) -> list[PairScore]:
        """Score checked pairs; `first_line` is the number of sources[0] in error messages,
        and their alignments come from `source` (a request's, checked)."""
        encoded = self.input_kind.sources(
            sources, limit=self.search.max_source_length, origin=origin, first_line=first_line
        )
        sides = [encoded] if len(self.input_kind.sides) == 1 else [list(side) for side in zip(*encoded)]
        target_ids = self.tgt_subwords.encode(targets)
        forced = self._forced(sides, target_ids, source)
        pairs = zip(sources, targets, sides[0], target_ids, forced, strict=True)
        jumps = self.module_jumps() if source.from_module else None
        return [replace(self._pair_score(*pair), read_from=source, jumps=jumps) for pair in pairs]

    def _forced(
        self, sides: list[list[list[int]]], target_ids: list[list[int]], source: AlignmentSource
    ) -> list[ForcedPair]:
        """The teacher-forced pass of every member over its side's sources, an ensemble's
        combined as its search combines them; alignments from `source`, an ensemble's
        from its aligned members that have what `source` names."""
        model = self.model
        from_module = source.from_module
        members = [member for member in self.members if isinstance(member, RNNSearch)]
        if len(members) < len(self.members):
            raise UserError(
                "scoring and aligning given pairs runs on PyTorch, not on an exported package's graphs: "
                "load it with runtime='torch' (--runtime torch)"
            )
        member_sides = model.sides if isinstance(model, Ensemble) else [0]
        bf16 = self.search.precision == "bf16"
        with evaluating(model):
            passes = [
                teacher_forced(
                    member,
                    list(zip(sides[side], target_ids)),
                    self.search.batch_sentences,
                    bf16=bf16,
                    from_module=from_module and member.aligner is not None,
                )
                for member, side in zip(members, member_sides)
            ]
        if len(passes) == 1:
            return passes[0]
        assert isinstance(model, Ensemble), "several passes: an ensemble's members"
        aligned = [m for m in model.aligned if not from_module or members[m].aligner is not None]
        return mean_forced(passes, aligned)

    def _pair_score(
        self, source: str, target: str, source_ids: list[int], target_ids: list[int], forced: ForcedPair
    ) -> PairScore:
        """One pair's texts, pieces and teacher-forced pass as the API returns them."""
        token_log_probs = forced.log_probs.tolist()
        return PairScore(
            source=source,
            target=target,
            log_prob=math.fsum(token_log_probs),
            token_log_probs=token_log_probs,
            source_tokens=self.input_kind.labels(source_ids),
            target_tokens=self.tgt_subwords.pieces(target_ids) + [END],
            alignment=forced.alignment,
            source_word_counts=self.input_kind.word_counts(source),
            target_word_counts=self.tgt_subwords.word_counts(target),
        )

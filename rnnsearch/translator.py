"""Text in, text out: the one place where subwords, model and search are wired together."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from rnnsearch import display, kernels, model_directory
from rnnsearch.alignment import DEFAULT_READING, READINGS, WordAlignment, align_translation, combine
from rnnsearch.arguments import checked_count, checked_iterable, checked_list, checked_strings
from rnnsearch.config import MAX_BEAM_SIZE, RUNTIMES, SEARCH_PRECISIONS, Config
from rnnsearch.errors import ArgumentTypeError, ArgumentValueError, UserError
from rnnsearch.inputs import END, input_kind
from rnnsearch.model.ensemble import Ensemble, side_numbers
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.model_directory import load_model, load_model_files
from rnnsearch.scoring import ForcedPair, mean_forced, teacher_forced
from rnnsearch.search import Cancelled, Hypothesis, SearchOptions, max_output_lengths, prefix_tensor
from rnnsearch.search.beam import beam_search
from rnnsearch.search.fixed_shape import fixed_shape_beam_search, fixed_shape_greedy_search
from rnnsearch.search.greedy import greedy_search
from rnnsearch.symmetrisation import DEFAULT_METHOD, METHODS
from rnnsearch.text.batches import Source
from rnnsearch.text.corpus import is_blank
from rnnsearch.text.subwords import Subwords

SENTENCES_PER_SEARCH = 1024  # sentences handed to one search call, `search.batch_sentences` of them in flight


@dataclass
class Translation:
    """One translation of one source sentence.

    alignment: (len(target_tokens), len(source_tokens)) weights α_ij; row i is the
    attention of target piece i over the source pieces, and sums to 1. None for the
    fixed-context baseline, which has no alignment model.
    alternatives: the rest of the n-best list, best first.
    """

    source: str
    text: str
    score: float
    source_tokens: list[str]
    target_tokens: list[str]
    alignment: np.ndarray | None
    alternatives: list[Translation] = field(default_factory=list)

    def _repr_html_(self) -> str:
        """Jupyter's view: the text and the alignment heatmap (display.py)."""
        return display.translation_html(self)


@dataclass
class PairScore:
    """How the model scores one given translation: `target` for `source`, teacher-forced.

    log_prob: log p(target | source), natural log: the sum of `token_log_probs`
    token_log_probs: log p(y_i | y_<i, source) of each target piece and then of </s>,
      one per entry of `target_tokens`
    alignment: (len(target_tokens), len(source_tokens)) weights α_ij, as Translation has
      them for the model's own output; None for the fixed-context baseline.
    """

    source: str
    target: str
    log_prob: float
    token_log_probs: list[float]
    source_tokens: list[str]
    target_tokens: list[str]
    alignment: np.ndarray | None

    def _repr_html_(self) -> str:
        """Jupyter's view: the texts, the log-probability and the alignment heatmap (display.py)."""
        return display.pair_html(self)

    @property
    def tokens(self) -> int:
        """Target tokens scored: the pieces and </s>."""
        return len(self.token_log_probs)

    def as_translation(self) -> Translation:
        """The pair as a Translation of `source` whose text is `target` and whose score is
        `log_prob`, for what reads translations (alignment files, word alignments)."""
        return Translation(
            source=self.source,
            text=self.target,
            score=self.log_prob,
            source_tokens=self.source_tokens,
            target_tokens=self.target_tokens,
            alignment=self.alignment,
        )


def resolve_device(name: str, key: str = "device") -> torch.device:
    """cpu, cuda, cuda:N, or auto (the GPU where PyTorch sees one); anything else, or a GPU
    that is not there, is a one-line error naming `key`, where it was asked for."""
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{key}: expected a str such as 'cpu' or 'auto', got {type(name).__name__}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise UserError(f"{key}: unknown device {name!r}; choose cpu, cuda, cuda:N or auto")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise UserError(f"{key}: {name!r} asked for, but this PyTorch sees no CUDA GPU; use cpu or auto")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise UserError(f"{key}: {name!r} asked for, but only {torch.cuda.device_count()} GPU(s) are visible")
    return device


def check_source_lengths(
    ids: Sequence[Sequence[int]], limit: int, origin: str | None = None, *, first_line: int = 1
) -> None:
    """Refuse the first source of more than `limit` (search.max_source_length) pieces, by line number:
    the search neither cuts nor skips a source. `origin` names the file; without it, the input.
    `first_line` is the number of ids[0], for input read a chunk at a time."""
    for line, pieces in enumerate(ids, start=first_line):
        if len(pieces) > limit:
            where = f"{origin}:{line}" if origin else f"input line {line}"
            raise UserError(f"{where}: {len(pieces)} subword pieces, more than search.max_source_length = {limit}")


class Translator:
    """A trained model, or an ensemble of them, ready to translate: `translate(texts)` → list
    of Translation, or for a speech model `transcribe(audio, names)`."""

    def __init__(
        self,
        model: RNNSearch | Ensemble,
        src_subwords: Subwords | None,
        tgt_subwords: Subwords,
        config: Config,
        *,
        source_sides: Sequence[Subwords] | None = None,
    ):
        """src_subwords is None for a speech model, whose source is audio. For an ensemble
        whose members read the source in different pieces, `source_sides` are their
        source subword models by side number (see Ensemble); src_subwords is side 0's,
        the pieces alignments are over."""
        self.model = model
        self.src_subwords = src_subwords
        self.source_sides = list(source_sides) if source_sides else [src_subwords]
        self.tgt_subwords = tgt_subwords
        self.search = config.search
        self.scoring_batch = (config.train.batch_tokens, config.train.max_batch_sentences)
        self.target_language = config.data.tgt_lang
        self.data = config.data
        self.source = input_kind(config, self.source_sides)

    @property
    def runtime(self) -> str:
        """What runs the search: "torch", or "onnx fp32" / "onnx int8" for exported packages."""
        members = self.model.members if isinstance(self.model, Ensemble) else [self.model]
        exported = sorted({member.precision for member in members if not isinstance(member, RNNSearch)})
        return "torch" if not exported else "onnx " + "+".join(exported)

    @property
    def parameters(self) -> int:
        """The trained weights of the model, or of all members of an ensemble."""
        members = self.model.members if isinstance(self.model, Ensemble) else [self.model]
        return sum(
            sum(p.numel() for p in member.parameters()) if isinstance(member, RNNSearch) else member.parameter_count
            for member in members
        )

    @property
    def device(self) -> torch.device:
        """Where the model's weights are; the CPU for an exported package, whose runtime holds its own."""
        weights = next(self.model.parameters(), None)
        return torch.device("cpu") if weights is None else weights.device

    def translate(
        self,
        texts: Iterable[str],
        beam_size: int | None = None,
        n_best: int = 1,
        cancelled: Cancelled | None = None,
        *,
        prefixes: Iterable[str] | None = None,
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
        """
        if self.src_subwords is None:
            raise UserError("this model reads audio, not text: give it WAV files")
        texts = checked_strings(texts, "texts", example='a list such as ["Ein Hund."]')
        checked_prefixes = self._prefixes(prefixes, len(texts), "prefixes")
        options = self._options(beam_size, n_best, cancelled)
        return self._translate_texts(texts, options, first_line=1, prefixes=checked_prefixes)

    @staticmethod
    def _prefixes(prefixes: object, count: int, name: str) -> list[str] | None:
        """Checked prefixes for `count` texts, or None when none is given."""
        if prefixes is None:
            return None
        prefixes = checked_strings(prefixes, name, example='a list such as ["A dog", ""]')
        if len(prefixes) != count:
            raise ArgumentValueError(f"{name}: {len(prefixes)} prefixes for {count} texts")
        return prefixes

    def translate_chunks(
        self,
        chunks: Iterable[Iterable[str]],
        beam_size: int | None = None,
        n_best: int = 1,
        *,
        prefix_chunks: Iterable[Iterable[str]] | None = None,
    ) -> Iterator[list[Translation]]:
        """Translate texts that arrive a chunk at a time, such as lines from a pipe: yield each
        chunk's translations, in order, as soon as the chunk is done, before the next chunk
        is read. Errors number the lines across chunks, as one list would. The model and the
        options are checked at the call, the texts as their chunks come. `prefix_chunks`
        gives the chunks' prefixes (as `translate`'s `prefixes`), chunk for chunk."""
        if self.src_subwords is None:
            raise UserError("this model reads audio, not text: give it WAV files")
        options = self._options(beam_size, n_best)
        chunks = checked_iterable(chunks, "chunks")
        if prefix_chunks is not None:
            prefix_chunks = checked_iterable(prefix_chunks, "prefix_chunks")
        return self._translated_chunks(chunks, options, prefix_chunks)

    def _translated_chunks(
        self,
        chunks: Iterable[Iterable[str]],
        options: SearchOptions,
        prefix_chunks: Iterable[Iterable[str]] | None,
    ) -> Iterator[list[Translation]]:
        first_line = 1
        prefix_chunks = iter(prefix_chunks) if prefix_chunks is not None else None
        for index, chunk in enumerate(chunks):
            texts = checked_strings(chunk, f"chunks[{index}]", example='a list such as ["Ein Hund."]')
            prefixes = None
            if prefix_chunks is not None:
                name = f"prefix_chunks[{index}]"
                prefixes = self._prefixes(next(prefix_chunks, None), len(texts), name)
                if prefixes is None:
                    raise ArgumentValueError(f"{name}: missing; prefix_chunks ended before chunks")
            yield self._translate_texts(texts, options, first_line=first_line, prefixes=prefixes)
            first_line += len(texts)
        if prefix_chunks is not None and next(prefix_chunks, None) is not None:
            raise ArgumentValueError("prefix_chunks: more chunks than chunks of texts")

    def _translate_texts(
        self,
        texts: list[str],
        options: SearchOptions,
        *,
        first_line: int,
        prefixes: list[str] | None = None,
    ) -> list[Translation]:
        """Translate checked texts; `first_line` is the number of texts[0] in error messages."""
        sources = self._encode_sources(texts, None, first_line=first_line)
        prefix_ids = None if prefixes is None else self.tgt_subwords.encode(prefixes)
        blank = [is_blank(text) and not (prefix_ids and prefix_ids[i]) for i, text in enumerate(texts)]
        return self._decode(texts, sources, blank, options, prefix_ids)

    def _encode_sources(self, texts: list[str], origin: str | None, *, first_line: int) -> list[Source]:
        """The texts in the pieces of every source side, each checked against
        search.max_source_length: piece ids per text, or with several sides a tuple of
        them, side 0 first."""
        sides = [subwords.encode(texts) for subwords in self.source_sides]
        for ids in sides:
            check_source_lengths(ids, self.search.max_source_length, origin, first_line=first_line)
        return sides[0] if len(sides) == 1 else list(zip(*sides))

    def source_pieces(self, texts: Sequence[str]) -> list[int]:
        """How many source pieces each text is, in the side that cuts it into the most:
        the count search.max_source_length bounds."""
        sides = [subwords.encode(list(texts)) for subwords in self.source_sides]
        return [max(len(ids) for ids in pieces) for pieces in zip(*sides)]

    def _widths(self, beam_size: object, n_best: object) -> tuple[int, int]:
        """The beam size (the config's for None) and n-best count asked for, checked."""
        if beam_size is None:
            beam_size = self.search.beam_size
        else:
            beam_size = checked_count(beam_size, "beam_size", maximum=MAX_BEAM_SIZE)
        n_best = checked_count(n_best, "n_best", maximum=MAX_BEAM_SIZE)
        if n_best > beam_size:
            raise ArgumentValueError(f"n_best: {n_best} is more than the beam size {beam_size}")
        return beam_size, n_best

    def _options(self, beam_size: object, n_best: object, cancelled: Cancelled | None = None) -> SearchOptions:
        """The search options of a call: its beam size and n-best count, checked, and the config's others."""
        beam_size, n_best = self._widths(beam_size, n_best)
        return SearchOptions(
            beam_size=beam_size,
            n_best=n_best,
            length_penalty=self.search.length_penalty,
            in_flight=self.search.batch_sentences,
            cancelled=cancelled,
        )

    def score(self, sources: Iterable[str], targets: Iterable[str]) -> list[PairScore]:
        """Score each given target as a translation of its source, in order: its
        log-probability under the model, token by token, and its alignment.

        Both are lists (or other iterables) of str, as many targets as sources. A blank
        line is scored as an empty sentence: a blank target is </s> alone, and a blank
        source is read as the source </s> alone, so every pair gets a score. A source of
        more than search.max_source_length pieces is refused, as `translate` refuses it.
        """
        self._require_text()
        sources = checked_strings(sources, "sources", example='a list such as ["Ein Hund."]')
        targets = checked_strings(targets, "targets", example='a list such as ["A dog."]')
        if len(targets) != len(sources):
            raise ArgumentValueError(f"targets: {len(targets)} targets for {len(sources)} sources")
        return self._score_texts(sources, targets, None, first_line=1)

    def align(
        self,
        sources: Iterable[str],
        targets: Iterable[str],
        *,
        reverse: Translator | None = None,
        symmetrize: str = DEFAULT_METHOD,
        reading: str = DEFAULT_READING,
    ) -> list[WordAlignment]:
        """The word alignment of each given translation, in order: `targets[k]` to
        `sources[k]`, read off the teacher-forced α as `reading` says
        (`rnnsearch.alignment.READINGS`), each target word to the source word it weighs
        most. With `reverse`, a model that translates targets into sources, both
        directions' links combined by `symmetrize` (`rnnsearch.symmetrisation.METHODS`).
        Words are the texts' whitespace-separated words; `pairs` of each result holds
        the (source word, target word) links, 0-based."""
        if reading not in READINGS:
            raise ArgumentValueError(f"reading: {reading!r} is not one of {', '.join(READINGS)}")
        if symmetrize not in METHODS:
            raise ArgumentValueError(f"symmetrize: {symmetrize!r} is not one of {', '.join(METHODS)}")
        if reverse is not None and not isinstance(reverse, Translator):
            raise ArgumentTypeError(f"reverse: expected a Translator (rnnsearch.load), got {type(reverse).__name__}")
        self.require_alignment()
        sources = checked_strings(sources, "sources", example='a list such as ["Ein Hund."]')
        targets = checked_strings(targets, "targets", example='a list such as ["A dog."]')
        forward = [align_translation(pair.as_translation(), reading=reading) for pair in self.score(sources, targets)]
        if reverse is None:
            return forward
        reverse.require_alignment()
        backward = [
            align_translation(pair.as_translation(), reading=reading) for pair in reverse.score(targets, sources)
        ]
        combined = []
        for number, (there, back) in enumerate(zip(forward, backward, strict=True), start=1):
            try:
                combined.append(combine(there, back, method=symmetrize))
            except ValueError as error:
                raise ArgumentValueError(f"pair {number}: {error}") from None
        return combined

    def score_chunks(
        self, chunks: Iterable[tuple[Sequence[str], Sequence[str]]], origin: str | None = None
    ) -> Iterator[list[PairScore]]:
        """`score` for pairs that arrive a chunk at a time, (sources, targets) of the same
        length each, such as the lines of two large files: yield each chunk's scores as
        soon as it is done. Errors number the lines across chunks and name `origin`, the
        source file, when given."""
        self._require_text()
        return self._scored_chunks(checked_iterable(chunks, "chunks"), origin)

    def _scored_chunks(
        self, chunks: Iterable[tuple[Sequence[str], Sequence[str]]], origin: str | None
    ) -> Iterator[list[PairScore]]:
        """Each chunk's pairs checked and scored, numbered from the first chunk's first line."""
        first_line = 1
        for index, (sources, targets) in enumerate(chunks):
            sources = checked_strings(sources, f"chunks[{index}] sources", example='a list such as ["Ein Hund."]')
            targets = checked_strings(targets, f"chunks[{index}] targets", example='a list such as ["A dog."]')
            if len(sources) != len(targets):
                raise ArgumentValueError(f"chunks[{index}]: {len(targets)} targets for {len(sources)} sources")
            yield self._score_texts(sources, targets, origin, first_line=first_line)
            first_line += len(sources)

    def _score_texts(
        self, sources: list[str], targets: list[str], origin: str | None, *, first_line: int
    ) -> list[PairScore]:
        """Score checked pairs; `first_line` is the number of sources[0] in error messages."""
        encoded = self._encode_sources(sources, origin, first_line=first_line)
        sides = [encoded] if len(self.source_sides) == 1 else [list(side) for side in zip(*encoded)]
        target_ids = self.tgt_subwords.encode(targets)
        members = self.model.members if isinstance(self.model, Ensemble) else [self.model]
        member_sides = self.model.sides if isinstance(self.model, Ensemble) else [0]
        if not all(isinstance(member, RNNSearch) for member in members):
            raise UserError(
                "scoring and aligning given pairs runs on PyTorch, not on an exported package's graphs: "
                "load it with runtime='torch' (--runtime torch)"
            )
        was_training = self.model.training
        self.model.eval()
        try:
            passes = [
                teacher_forced(
                    member,
                    list(zip(sides[side], target_ids)),
                    *self.scoring_batch,
                    bf16=self.search.precision == "bf16",
                )
                for member, side in zip(members, member_sides)
            ]
        finally:
            self.model.train(was_training)
        forced = passes[0] if len(passes) == 1 else mean_forced(passes, self.model.aligned)
        pairs = zip(sources, targets, sides[0], target_ids, forced, strict=True)
        return [self._pair_score(*pair) for pair in pairs]

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
            source_tokens=self.source.labels(source_ids),
            target_tokens=self.tgt_subwords.pieces(target_ids) + [END],
            alignment=forced.alignment,
        )

    def _require_text(self) -> None:
        """Refuse a speech model where only text will do."""
        if self.src_subwords is None:
            raise UserError("this model reads audio, not text: scoring and alignment take text sources")

    def transcribe(
        self,
        audio: Iterable[np.ndarray],
        names: Iterable[str],
        beam_size: int | None = None,
        n_best: int = 1,
        cancelled: Cancelled | None = None,
    ) -> list[Translation]:
        """Recognise recordings (mono float samples at the model's sample rate), named for the
        output; `cancelled` as for `translate`."""
        from rnnsearch.speech.corpus import audio_inputs

        if self.src_subwords is not None:
            raise UserError("this model reads text, not audio")
        audio = checked_list(audio, "audio", example="a list of 1-D numpy arrays")
        for index, samples in enumerate(audio):
            if not isinstance(samples, np.ndarray) or samples.ndim != 1:
                raise ArgumentTypeError(f"audio[{index}]: expected a 1-D numpy array of samples")
        names = self._names(names, len(audio))
        beam_size, n_best = self._widths(beam_size, n_best)
        return self.translate_vectors(audio_inputs(audio, self.data), names, beam_size, n_best, cancelled)

    def transcribe_files(
        self, paths: Iterable[str], beam_size: int | None = None, n_best: int = 1
    ) -> list[Translation]:
        """Recognise WAV files; a file at another sample rate, or not a WAV, is a one-line error."""
        from rnnsearch.speech.audio import read_wav
        from rnnsearch.speech.digits import SAMPLE_RATE

        if self.src_subwords is not None:
            raise UserError("this model reads text, not audio")
        paths = checked_strings(paths, "paths", example='a list such as ["one.wav"]', unicode=False)
        beam_size, n_best = self._widths(beam_size, n_best)
        audio = [read_wav(path, expected_rate=SAMPLE_RATE)[0] for path in paths]
        return self.transcribe(audio, paths, beam_size, n_best)

    @staticmethod
    def _names(names: object, count: int) -> list[str]:
        """The names of `count` inputs, one str each."""
        names = checked_strings(names, "names", example="a list of one str per input", unicode=False)
        if len(names) != count:
            raise ArgumentValueError(f"names: {len(names)} names for {count} inputs")
        return names

    @property
    def speech(self) -> bool:
        """True for a model that reads audio."""
        return self.source.kind == "speech"

    def translate_vectors(
        self,
        inputs: Iterable[torch.Tensor],
        names: Iterable[str],
        beam_size: int | None = None,
        n_best: int = 1,
        cancelled: Cancelled | None = None,
    ) -> list[Translation]:
        """Decode encoder inputs that are already feature vectors (frames, size), e.g. a validation set."""
        if not self.speech:
            raise UserError("this model reads text, not feature vectors")
        inputs = checked_list(inputs, "inputs", example="a list of (frames, size) tensors")
        size = self.data.features.size
        for index, vectors in enumerate(inputs):
            tensor = isinstance(vectors, torch.Tensor) and vectors.is_floating_point()
            if not (tensor and vectors.dim() == 2 and vectors.size(1) == size):
                raise ArgumentTypeError(f"inputs[{index}]: expected a float tensor of shape (frames, {size})")
        names = self._names(names, len(inputs))
        options = self._options(beam_size, n_best, cancelled)
        blank = [len(x) == 0 for x in inputs]
        return self._decode(names, inputs, blank, options)

    def _decode(
        self,
        originals: list[str],
        sources: list[Source],
        blank: list[bool],
        options: SearchOptions,
        prefixes: list[list[int]] | None = None,
    ) -> list[Translation]:
        """Search for every non-blank source, longest first in batches, and return results in input order."""
        todo = sorted((i for i in range(len(sources)) if not blank[i]), key=lambda i: -self.source.length(sources[i]))
        results = {i: self._empty(originals[i]) for i in range(len(sources)) if blank[i]}
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(todo), SENTENCES_PER_SEARCH):
                chunk = todo[start : start + SENTENCES_PER_SEARCH]
                chunk_prefixes = None if prefixes is None else [prefixes[i] for i in chunk]
                hypotheses = self._search([sources[i] for i in chunk], options, chunk_prefixes)
                for i, nbest in zip(chunk, hypotheses):
                    results[i] = self._to_text(originals[i], self.source.labels(sources[i]), nbest)
        finally:
            self.model.train(was_training)
        return [results[i] for i in range(len(sources))]

    def _search(
        self, sources: list[Source], options: SearchOptions, prefixes: list[list[int]] | None
    ) -> list[list[Hypothesis]]:
        src, src_lengths, side_zero_lengths = self.source.tensors(sources)
        limits = max_output_lengths(side_zero_lengths, self.search.max_length_ratio, self.search.max_length_extra)
        forced = None if prefixes is None else prefix_tensor(prefixes)
        if forced is not None:  # room for the whole prefix and </s>
            limits = torch.maximum(limits, torch.tensor([len(prefix) + 1 for prefix in prefixes]))
        src, src_lengths = src.to(self.device), src_lengths.to(self.device)
        # On a GPU, launching a step's kernels costs more than running them: there the
        # search keeps fixed shapes and replays each step as a CUDA graph. Its graphs hold
        # one model's state and no prefixes; ensembles and prefixes search as on the CPU.
        graphs = kernels.choose(self.device, purpose="search").cuda_graphs
        fixed = graphs and isinstance(self.model, RNNSearch) and forced is None
        if options.beam_size == 1:
            search = fixed_shape_greedy_search if fixed else greedy_search
        else:
            search = fixed_shape_beam_search if fixed else beam_search
        forcing = {} if forced is None else {"prefixes": forced}
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.search.precision == "bf16"):
            return search(self.model, src, src_lengths, max_lengths=limits, options=options, **forcing)

    @property
    def seconds_per_vector(self) -> float | None:
        """Audio per encoder input vector for a speech model; None for text."""
        return self.source.seconds_per_column

    def _to_text(self, source: str, source_tokens: list[str], nbest: list[Hypothesis]) -> Translation:
        translations = [
            Translation(
                source=source,
                text=self.tgt_subwords.decode(h.tokens),
                score=h.score,
                source_tokens=source_tokens,
                target_tokens=self.tgt_subwords.pieces(h.tokens) + [END],
                alignment=None if h.alignment is None else h.alignment[:, : len(source_tokens)].numpy(),
            )
            for h in nbest
        ]
        best = translations[0]
        best.alternatives = translations[1:]
        return best

    @staticmethod
    def _empty(source: str) -> Translation:
        return Translation(source, "", 0.0, [], [], np.zeros((0, 0), dtype=np.float32))

    def require_alignment(self) -> None:
        """Raise a UserError when the model has no alignment to show."""
        if not self.model.has_alignment:
            raise UserError(
                "this model has no alignment model (model.attention: none), so there is no alignment to show"
            )


ModelDirs = str | os.PathLike | Sequence[str | os.PathLike]


def load(
    model_dir: ModelDirs,
    device: str = "auto",
    precision: str | None = None,
    batch_sentences: int | None = None,
    *,
    runtime: str | None = None,
) -> Translator:
    """A Translator for the trained model in `model_dir` (best weights if there are any), or
    for an ensemble of the models in a list of directories (see rnnsearch.model.ensemble);
    `precision` (fp32, bf16, or int8 for an exported package) and `batch_sentences`
    override the search section of the model's config, for an ensemble the first member's.

    A package that `rnnsearch export` wrote runs on ONNX Runtime, on the CPU, unless
    `runtime` is "torch"; `runtime` "onnx" requires one.

    The members of an ensemble must share the target subword model and read the same kind
    of input; each keeps its own source subword model.
    """
    search: dict[str, object] = {}
    if precision is not None:
        if precision not in SEARCH_PRECISIONS:
            raise UserError(f"precision {precision!r}: choose from {', '.join(SEARCH_PRECISIONS)}")
        search["precision"] = precision
    if batch_sentences is not None:
        search["batch_sentences"] = checked_count(batch_sentences, "batch_sentences")
    if runtime is not None and runtime not in RUNTIMES:
        raise UserError(f"runtime {runtime!r}: choose from {', '.join(RUNTIMES)}")
    directories = [model_dir] if isinstance(model_dir, (str, os.PathLike)) else _model_dirs(model_dir)
    on_onnx = [_runs_on_onnx(directory, runtime, precision) for directory in directories]
    target = torch.device("cpu") if all(on_onnx) and device == "auto" else resolve_device(device)
    if any(on_onnx) and target.type != "cpu":
        raise UserError(f"device {device!r}: an exported package runs on the CPU; pass --runtime torch for a GPU")
    if any(on_onnx):
        search["precision"] = "fp32"  # the graphs' own precision is chosen as they load
    files = [load_model_files(directory) for directory in directories]
    _require_compatible(directories, files)
    graph_precision = precision if precision == "int8" else "fp32"
    models = [
        _load_onnx(directory, *member, graph_precision) if onnx else load_model(directory, *member).to(target)
        for directory, member, onnx in zip(directories, files, on_onnx)
    ]
    config, src_subwords, tgt_subwords = files[0]
    if isinstance(model_dir, (str, os.PathLike)):
        return Translator(models[0], src_subwords, tgt_subwords, _with_search(config, search))
    sources = [src_subwords for _, src_subwords, _ in files]
    keys = [None if subwords is None else subwords.model_bytes for subwords in sources]
    sides = side_numbers(keys, [model.has_alignment for model in models])
    by_side = {side: subwords for side, subwords in zip(sides, sources)}
    ensemble = Ensemble(models, sides).eval()
    source_sides = [by_side[side] for side in range(len(by_side))]
    return Translator(ensemble, source_sides[0], tgt_subwords, _with_search(config, search), source_sides=source_sides)


def _runs_on_onnx(directory: str | os.PathLike, runtime: str | None, precision: str | None) -> bool:
    """Whether the model in `directory` runs on ONNX Runtime, refusing a runtime or a
    precision it cannot run with."""
    from rnnsearch.export.manifest import is_package, require_whole_package

    package = is_package(directory)
    if runtime != "torch":
        require_whole_package(directory)
    if runtime == "torch":
        if precision == "int8":
            raise UserError("precision int8: runs on an exported package's graphs, not with --runtime torch")
        return False
    if runtime == "onnx" or precision == "int8":
        if not package:
            asked = "runtime onnx" if runtime == "onnx" else "precision int8"
            command = f"rnnsearch export {directory} -o OUT_DIR" + (" --int8" if precision == "int8" else "")
            raise UserError(f"{asked}: {directory} is not an exported package; write one with `{command}`")
    if package and precision == "bf16":
        raise UserError(
            f"precision bf16: {directory} runs on ONNX Runtime at fp32 or int8; pass --runtime torch for bf16"
        )
    return package


def _load_onnx(
    directory: str | os.PathLike, config: Config, src_subwords: Subwords | None, tgt_subwords: Subwords, precision: str
) -> torch.nn.Module:
    """The graphs of an exported package, on as many threads as PyTorch uses, its subword
    models checked to be those its weights record."""
    from rnnsearch.export.runtime import load_onnx_model

    best = Path(directory) / model_directory.BEST
    model_directory.check_files(model_directory.read_info(best), best, src_subwords, tgt_subwords)
    return load_onnx_model(
        directory,
        precision,
        config=config.model,
        target_vocabulary=len(tgt_subwords),
        threads=torch.get_num_threads(),
    ).eval()


def _with_search(config: Config, search: dict[str, object]) -> Config:
    return config.model_copy(update={"search": config.search.model_copy(update=search)})


def _model_dirs(model_dirs: object) -> list[str | os.PathLike]:
    """A checked, non-empty list of model directories."""
    if not isinstance(model_dirs, (list, tuple)):
        raise ArgumentTypeError(f"model_dir: expected a str, a path or a list of them, got {type(model_dirs).__name__}")
    if not model_dirs:
        raise ArgumentValueError("model_dir: an empty list; an ensemble needs at least one model directory")
    for index, directory in enumerate(model_dirs):
        if not isinstance(directory, (str, os.PathLike)):
            raise ArgumentTypeError(f"model_dir[{index}]: expected a str or a path, got {type(directory).__name__}")
    return list(model_dirs)


def _require_compatible(
    directories: list[str | os.PathLike], files: list[tuple[Config, Subwords | None, Subwords]]
) -> None:
    """Refuse members that cannot decode together, naming the first that differs from the first member."""
    first, (first_config, first_source, first_target) = directories[0], files[0]
    for directory, (config, source, target) in zip(directories[1:], files[1:]):
        if (source is None) != (first_source is None):
            kinds = ("audio" if source is None else "text", "audio" if first_source is None else "text")
            raise UserError(f"{directory}: reads {kinds[0]} but {first} reads {kinds[1]}; an ensemble reads one kind")
        if target.model_bytes != first_target.model_bytes:
            raise UserError(
                f"{directory}: its target subword model is not that of {first}; "
                "the members of an ensemble must share the target vocabulary"
            )
        if source is None and config.data.features != first_config.data.features:
            raise UserError(
                f"{directory}: its data.features differ from those of {first}; "
                "the members of a speech ensemble must read the same feature vectors"
            )

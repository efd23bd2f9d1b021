"""The Python API (`rnnsearch.load`): a trained model, or an ensemble of them, ready to
translate text, transcribe speech, or score and align given translations.

`Translator` is the one object users hold. What it shares between its jobs (the model,
its input kind, the target subword model, the search) is a `Decoding`
(rnnsearch.decoding); each job is a façade of its own over it: text_translation.py,
transcription.py and given_pairs.py. Loading a model directory, an exported package
or an ensemble is rnnsearch.loading's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
import torch

from rnnsearch.alignment import DEFAULT_READING, WordAlignment
from rnnsearch.config import MAX_BEAM_SIZE, Config
from rnnsearch.decoding import SENTENCES_PER_SEARCH, Decoding
from rnnsearch.devices import resolve_device
from rnnsearch.errors import ArgumentTypeError
from rnnsearch.given_pairs import AlignedPair, AlignSettings, GivenPairs
from rnnsearch.inputs import check_source_lengths
from rnnsearch.kinds import data_kind
from rnnsearch.loading import ModelDirs, assemble
from rnnsearch.markup import Reading
from rnnsearch.model.ensemble import Ensemble
from rnnsearch.model.seq2seq import RNNSearch
from rnnsearch.results import PairScore, Translation
from rnnsearch.search.rules import Cancelled
from rnnsearch.symmetrisation import DEFAULT_METHOD
from rnnsearch.text.subwords import Subwords
from rnnsearch.text_translation import TextTranslation
from rnnsearch.transcription import Transcription

__all__ = [
    "MAX_BEAM_SIZE",
    "SENTENCES_PER_SEARCH",
    "ModelDirs",
    "PairScore",
    "Translation",
    "Translator",
    "check_source_lengths",
    "load",
    "resolve_device",
]


class Translator(Decoding):
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
        self.src_subwords = src_subwords
        self.source_sides = list(source_sides) if source_sides else [src_subwords]
        self.kind = data_kind(config)
        super().__init__(model, self.kind.input(config, self.source_sides), tgt_subwords, config.search)
        self.target_language = config.data.tgt_lang
        self.data = config.data
        self._text = TextTranslation(self)
        self._speech = Transcription(self, config.data)
        self._pairs = GivenPairs(self, config.data)

    def translate(
        self,
        texts: Iterable[str],
        beam_size: int | None = None,
        n_best: int = 1,
        cancelled: Cancelled | None = None,
        *,
        prefixes: Iterable[str] | None = None,
        markup: str | None = None,
        lenient_markup: bool = False,
        alignment_from: str | None = None,
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

        `markup` ("xml" or "html") reads each text as a line with inline markup: its text is
        translated, and each hypothesis's `marked_up` is its text with the markup put back
        around the words aligned to those it enclosed (rnnsearch.markup has the rules). A
        text whose markup is not well-formed is a MarkupError (a ValueError) naming its
        line, or with `lenient_markup` it is translated as plain text and its
        `marked_up` stays None. It needs a model with an alignment.

        `alignment_from` ("attention" or "aligner") says what each hypothesis's `alignment`
        is: the attention α of its search, or the alignment module's β (docs/model.md),
        computed once search has chosen the pieces, which it does not change; None takes
        the module where the model has one. Each result's `alignment_from` says which.
        """
        reading = Reading.of(markup, lenient_markup)
        return self._text.translate(
            texts, beam_size, n_best, cancelled, prefixes=prefixes, markup=reading, alignment_from=alignment_from
        )

    def translate_chunks(
        self,
        chunks: Iterable[Iterable[str]],
        beam_size: int | None = None,
        n_best: int = 1,
        *,
        prefix_chunks: Iterable[Iterable[str]] | None = None,
        markup: str | None = None,
        lenient_markup: bool = False,
        alignment_from: str | None = None,
    ) -> Iterator[list[Translation]]:
        """Translate texts that arrive a chunk at a time, such as lines from a pipe: yield each
        chunk's translations, in order, as soon as the chunk is done, before the next chunk
        is read. Errors number the lines across chunks, as one list would. The model and the
        options are checked at the call, the texts as their chunks come. `prefix_chunks`
        gives the chunks' prefixes (as `translate`'s `prefixes`), chunk for chunk, and
        `markup`, `lenient_markup` and `alignment_from` are as in `translate`."""
        reading = Reading.of(markup, lenient_markup)
        return self._text.translate_chunks(
            chunks, beam_size, n_best, prefix_chunks=prefix_chunks, markup=reading, alignment_from=alignment_from
        )

    def source_pieces(self, texts: Sequence[str]) -> list[int]:
        """How many source pieces each text is, in the side that cuts it into the most:
        the count search.max_source_length bounds."""
        return self.source.pieces(texts)

    def score(self, sources: Iterable[str], targets: Iterable[str]) -> list[PairScore]:
        """Score each given target as a translation of its source, in order: its
        log-probability under the model, token by token, and its alignment.

        Both are lists (or other iterables) of str, as many targets as sources. A blank
        line is scored as an empty sentence: a blank target is </s> alone, and a blank
        source is read as the source </s> alone, so every pair gets a score. A source of
        more than search.max_source_length pieces is refused, as `translate` refuses it.
        """
        return self._pairs.score(sources, targets)

    def align(
        self,
        sources: Iterable[str],
        targets: Iterable[str],
        *,
        reverse: Translator | None = None,
        symmetrize: str = DEFAULT_METHOD,
        reading: str = DEFAULT_READING,
        markup: str | None = None,
        lenient_markup: bool = False,
        alignment_from: str | None = None,
    ) -> list[WordAlignment]:
        """The word alignment of each given translation, in order: `targets[k]` to
        `sources[k]`, read off the teacher-forced α as `reading` says
        (`rnnsearch.alignment.READINGS`), each target word to the source word it weighs
        most. With `reverse`, a model that translates targets into sources, both
        directions' links combined by `symmetrize` (`rnnsearch.symmetrisation.METHODS`).
        Words are the texts' whitespace-separated words; `pairs` of each result holds
        the (source word, target word) links, 0-based.

        With `markup` ("xml" or "html"), the sources are lines with inline markup: the
        words are those of their text, and each result's `marked_up` is its target with
        the source's markup put back by the links, as `translate` puts it back into a
        translation (`lenient_markup` as there).

        `alignment_from` ("attention" or "aligner") says what the links are read from: the
        attention α, or the alignment module's β (docs/model.md), which sees each target
        word it aligns; None takes the module where the model has one. Each result's
        `alignment_from` says which it is."""
        settings = self._align_settings(reverse, symmetrize, reading, markup, lenient_markup, alignment_from)
        return self._pairs.align(sources, targets, settings)

    def align_chunks(
        self,
        chunks: Iterable[tuple[Sequence[str], Sequence[str]]],
        origin: str | None = None,
        *,
        reverse: Translator | None = None,
        symmetrize: str = DEFAULT_METHOD,
        reading: str = DEFAULT_READING,
        markup: str | None = None,
        lenient_markup: bool = False,
        alignment_from: str | None = None,
    ) -> Iterator[list[AlignedPair]]:
        """`align` for pairs that arrive a chunk at a time, (sources, targets) of the same
        length each, such as the lines of two large files: yield each chunk's pairs as soon
        as they are done, each an AlignedPair of the scored pair (`pair`, as a Translation,
        with its α) and its word alignment (`words`). Errors number the lines across chunks
        and name `origin`, the source file, when given; `alignment_from` as in `align`."""
        settings = self._align_settings(reverse, symmetrize, reading, markup, lenient_markup, alignment_from)
        return self._pairs.align_chunks(chunks, origin, settings)

    @staticmethod
    def _align_settings(
        reverse: object, symmetrize: str, reading: str, markup: str | None, lenient_markup: bool, alignment_from: object
    ) -> AlignSettings:
        """`align`'s arguments as one record, the reverse model checked to be a Translator."""
        if reverse is not None and not isinstance(reverse, Translator):
            raise ArgumentTypeError(f"reverse: expected a Translator (rnnsearch.load), got {type(reverse).__name__}")
        backward = None if reverse is None else reverse._pairs
        return AlignSettings(backward, symmetrize, reading, Reading.of(markup, lenient_markup), alignment_from)

    def score_chunks(
        self, chunks: Iterable[tuple[Sequence[str], Sequence[str]]], origin: str | None = None
    ) -> Iterator[list[PairScore]]:
        """`score` for pairs that arrive a chunk at a time, (sources, targets) of the same
        length each, such as the lines of two large files: yield each chunk's scores as
        soon as it is done. Errors number the lines across chunks and name `origin`, the
        source file, when given."""
        return self._pairs.score_chunks(chunks, origin)

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
        return self._speech.transcribe(audio, names, beam_size, n_best, cancelled)

    def transcribe_files(
        self, paths: Iterable[str], beam_size: int | None = None, n_best: int = 1
    ) -> list[Translation]:
        """Recognise WAV files; a file at another sample rate, or not a WAV, is a one-line error."""
        return self._speech.transcribe_files(paths, beam_size, n_best)

    def translate_vectors(
        self,
        inputs: Iterable[torch.Tensor],
        names: Iterable[str],
        beam_size: int | None = None,
        n_best: int = 1,
        cancelled: Cancelled | None = None,
    ) -> list[Translation]:
        """Decode encoder inputs that are already feature vectors (frames, size), e.g. a validation set."""
        return self._speech.translate_vectors(inputs, names, beam_size, n_best, cancelled)


def load(
    model_dir: ModelDirs,
    device: str = "auto",
    precision: str | None = None,
    batch_sentences: int | None = None,
    *,
    runtime: str | None = None,
    coverage_penalty: float | None = None,
    search: Mapping[str, object] | None = None,
) -> Translator:
    """A Translator for the trained model in `model_dir` (best weights if there are any), or
    for an ensemble of the models in a list of directories (see rnnsearch.model.ensemble);
    `precision` (fp32, bf16, or int8 for an exported package) and `batch_sentences`
    override the search section of the model's config, for an ensemble the first member's.

    A package that `rnnsearch export` wrote runs on ONNX Runtime, on the CPU, unless
    `runtime` is "torch"; `runtime` "onnx" requires one. `coverage_penalty` overrides
    search.coverage_penalty (β of the coverage penalty that ranks beam search's finished
    hypotheses; 0: none). `search` overrides any key of the search section, as
    {"coverage_penalty": 0.5, "max_length_ratio": 1.5}; every override is checked by the
    section's own rules, as the config's values are, and one that breaks them is a
    ValueError naming the key.

    The members of an ensemble must share the target subword model and read the same kind
    of input; each keeps its own source subword model.
    """
    assembled = assemble(
        model_dir, device, precision, batch_sentences, runtime=runtime, coverage_penalty=coverage_penalty, search=search
    )
    sides = assembled.source_sides
    return Translator(assembled.model, sides[0], assembled.tgt_subwords, assembled.config, source_sides=sides)

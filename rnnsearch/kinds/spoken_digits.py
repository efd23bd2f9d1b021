"""Spoken digit strings: feature vectors of audio in, digit pieces out (rnnsearch.kinds).
The audio stack (rnnsearch.speech) is imported only when a speech model runs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rnnsearch.config import Config
from rnnsearch.config.data import DataSection, SpokenDigitsConfig
from rnnsearch.decoding.inputs import SpeechInput
from rnnsearch.errors import UserError
from rnnsearch.files import model_directory
from rnnsearch.files.metrics_log import MetricsRow
from rnnsearch.kinds.jobs import KindTranslator, RequestT
from rnnsearch.kinds.text import test_set
from rnnsearch.text.batches import InMemoryPairs
from rnnsearch.text.subwords import Subwords, train_subwords

if TYPE_CHECKING:  # a run's data is made by training's modules, which translating never loads
    from rnnsearch.decoding.results import Translation
    from rnnsearch.evaluation.metrics import Evaluation, EvaluationRequest
    from rnnsearch.training.distributed import World
    from rnnsearch.training.run_data import Corpus


class SpokenDigits:
    """Spoken digit strings built from the bundled FSDD recordings (data.kind
    spoken_digits): the model transcribes feature vectors into digits."""

    name = "spoken_digits"
    refused_options: tuple[tuple[str, str], ...] = (
        (
            "hard_alignments",
            "--hard-alignments: a recording has no words to link; --alignments writes α over time steps",
        ),
        ("prefix", "--prefix: a speech model's output cannot be given a prefix"),
        ("markup", "--markup: a speech model reads recordings, which have no markup"),
        ("glossary", "--glossary: a speech model reads recordings, which have no words to find terms in"),
        ("avoid", "--avoid: a speech model writes digits, not words"),
    )
    """`translate`'s and `evaluate`'s options that a recording cannot take (argument name, refusal)."""

    @staticmethod
    def input(config: Config, sides: Sequence[Subwords | None]) -> SpeechInput:
        """Sources as feature vectors, each standing for the audio of its stacked frames."""
        from rnnsearch.speech.utterances import seconds_per_vector

        return SpeechInput(seconds_per_vector(_own(config.data)))

    @staticmethod
    def prepare_corpus(config: Config, model_dir: Path, resume: bool, world: World) -> tuple[Corpus, None, Subwords]:
        """Feature vectors in, digit pieces out; only the target has subwords.

        Rank 0 computes the features first, so the other ranks find them in the cache.
        """
        from rnnsearch.speech.utterances import part_inputs
        from rnnsearch.training.console import say
        from rnnsearch.training.run_data import Corpus

        if world.is_main:
            sources, targets = part_inputs(_own(config.data), "train")
            valid_sources, valid_references = part_inputs(_own(config.data), "validation")
            if not resume:
                tgt_subwords = _digit_subwords(config, targets)
                model_directory.save_model_files(model_dir, config, None, tgt_subwords)
        world.barrier()
        if not world.is_main:
            sources, targets = part_inputs(_own(config.data), "train")
            valid_sources, valid_references = part_inputs(_own(config.data), "validation")
        if resume or not world.is_main:
            _, _, tgt_subwords = model_directory.load_model_files(model_dir)
        limit = config.data.max_length
        train = [(s, t) for s, t in zip(sources, tgt_subwords.encode(targets)) if len(s) <= limit and len(t) <= limit]
        valid = list(zip(valid_sources, tgt_subwords.encode(valid_references)))
        if world.is_main:
            say(f"training data: {len(train)} spoken digit strings ({len(sources) - len(train)} over max_length)")
        corpus = Corpus(InMemoryPairs(train), InMemoryPairs(valid), valid_sources, valid_references)
        return corpus, None, tgt_subwords

    @staticmethod
    def validation_scores(hypotheses: list[str], references: list[str]) -> MetricsRow:
        """Digit error rate and string accuracy."""
        from rnnsearch.speech.metrics import digit_error_rate, string_accuracy

        return {
            "valid_der": digit_error_rate(hypotheses, references).value,
            "valid_accuracy": string_accuracy(hypotheses, references).value,
        }

    @staticmethod
    def scores_line(row: MetricsRow, suffix: str = "") -> str:
        """The validation scores of `row` in words; `suffix` "_all": those of the whole set."""
        line = f"digit error rate {row[f'valid_der{suffix}']:.2f}%"
        return line if suffix else f"{line}, strings right {row['valid_accuracy']:.1f}%"

    @staticmethod
    def translate_lines(translator: KindTranslator[RequestT], lines: list[str], request: RequestT) -> list[Translation]:
        """WAV files, one path a line, transcribed with the request's search (read from the
        attention: the only alignment a recording has)."""
        search = request.searched
        return translator.transcribe_files(lines, beam_size=search.beam_size, n_best=search.n_best)

    @staticmethod
    def translate_chunks(
        translator: KindTranslator[RequestT],
        chunks: Iterator[list[str]],
        request: RequestT,
        *,
        prefix_chunks: Iterator[list[str]] | None = None,
    ) -> Iterator[list[Translation]]:
        """`translate`'s input, WAV paths a chunk at a time, transcribed with the request's
        search (a recording takes no prefix: `refused_options`)."""
        search = request.searched
        for paths in chunks:
            yield translator.transcribe_files(paths, beam_size=search.beam_size, n_best=search.n_best)

    @staticmethod
    def evaluate(translator: KindTranslator[RequestT], asked: EvaluationRequest, request: RequestT) -> Evaluation:
        """`rnnsearch evaluate`: digit error rate and string accuracy on a part of the config's
        spoken digits (`asked.part`), or on WAV files listed in `asked.src` with digit strings
        in `asked.ref`."""
        from rnnsearch.evaluation.metrics import Evaluation
        from rnnsearch.speech.metrics import digit_error_rate, string_accuracy
        from rnnsearch.speech.utterances import part_inputs

        if asked.lowercase_tokenized or asked.by_length:
            flag = "--lowercase-tokenized" if asked.lowercase_tokenized else "--by-length"
            raise UserError(f"evaluate {flag}: a speech model's references are digit strings, scored by digit")
        if asked.src or asked.ref:
            if not (asked.src and asked.ref):
                raise UserError("evaluate: give both --src (WAV paths) and --ref (digit strings), or neither")
            paths, references = test_set(asked.src, asked.ref)
            _require_files(paths, asked.src)
            translations = translator.transcribe_files(paths, beam_size=request.searched.beam_size)
            heading = asked.src
        else:
            data = _own(translator.data)
            inputs, references = part_inputs(data, asked.part)
            names = [f"{asked.part} {k}" for k in range(1, len(inputs) + 1)]
            translations = translator.translate_vectors(inputs, names, beam_size=request.searched.beam_size)
            heading = f"{data.split} split, {asked.part} part ({len(inputs)} utterances)"
        hypotheses = [t.text for t in translations]
        return Evaluation([digit_error_rate(hypotheses, references), string_accuracy(hypotheses, references)], heading)


def _own(data: DataSection) -> SpokenDigitsConfig:
    """A model's or a run's data section, which is this kind's."""
    if not isinstance(data, SpokenDigitsConfig):
        raise TypeError(f"a data.kind {data.kind} config given to the spoken digits kind")
    return data


def _require_files(paths: Sequence[str], listing: str) -> None:
    """Refuse, naming the line of `listing`, a path that is no file: a text file given
    where WAV paths are listed, say."""
    for number, path in enumerate(paths, start=1):
        if not Path(path).is_file():
            raise UserError(f"{listing}, line {number}: {path!r} is no file; --src lists WAV files, one path a line")


def _digit_subwords(config: Config, targets: list[str]) -> Subwords:
    """The digit pieces of a new run: those of train.init_from, else learnt from the targets."""
    if config.train.init_from:
        from rnnsearch.training import checkpoint

        return checkpoint.init_from_subwords(config.train.init_from, config.model, data_kind=config.data.kind)[1]
    options = config.subwords
    return train_subwords(targets, options.kind, options.vocab_size, options.min_frequency)

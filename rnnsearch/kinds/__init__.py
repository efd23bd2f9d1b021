"""Each kind of data a model learns from, one object: text, or spoken digit strings.

A kind is chosen once, from a config's `data.kind` (`data_kind`), and owns what differs
between kinds, so that no code elsewhere asks which kind it has:

    input(config, sides)            what the encoder reads and how a source is shown
                                    (an rnnsearch.decoding.inputs kind)
    prepare_corpus(config, …)       a training run's pairs, prepared (or made in memory),
                                    and its validation set
    validation_scores(hyps, refs)   the scores a validation logs (BLEU, or digit error
                                    rate and string accuracy), keyed as in metrics.jsonl
    scores_line(row, suffix)        those scores in the trainer's validation line
    translate_lines(translator, …)  `attention`'s input lines translated (or transcribed:
                                    WAV paths) as the call's request asks
    translate_chunks(translator, …) `translate`'s input, a chunk of lines at a time, by
                                    the call's request (rnnsearch.translation.request)
    refused_options                 the `translate` options the kind cannot take, with why
    evaluate(translator, asked,     `rnnsearch evaluate`: the test set's scores, an Evaluation, the
             request)               call's request translating it (its beam, glossary and avoid list)

Each takes the translator as what a kind asks of it (`jobs.KindTranslator`), the
request as what it reads of one (its search), so the kind says which of the
translator's jobs reads its lines, and mypy checks each call.

What a kind declares without running anything (what the model reads, whether it aligns
words, the scores its validations log and which selects a model, whether it is prepared
on disk, its source subwords and vector size) is on its section of the config (a
rnnsearch.config.data.DataSection). Adding a kind is one config section and its entry in
DATA_SECTIONS, one class here and its entry in KINDS.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rnnsearch.config import Config
from rnnsearch.files.metrics_log import MetricsRow
from rnnsearch.kinds.jobs import KindTranslator, RequestT
from rnnsearch.kinds.spoken_digits import SpokenDigits
from rnnsearch.kinds.text import TextData

if TYPE_CHECKING:
    from rnnsearch.decoding.inputs import InputKind
    from rnnsearch.decoding.results import Translation
    from rnnsearch.evaluation.metrics import Evaluation, EvaluationRequest
    from rnnsearch.text.subwords import Subwords
    from rnnsearch.training.distributed import World
    from rnnsearch.training.run_data import Corpus


class DataKind(Protocol):
    """What a kind of data is to the code that runs it (the methods above)."""

    name: str
    refused_options: tuple[tuple[str, str], ...]

    def input(self, config: Config, sides: Sequence[Subwords | None]) -> InputKind: ...

    def prepare_corpus(
        self, config: Config, model_dir: Path, resume: bool, world: World
    ) -> tuple[Corpus, Subwords | None, Subwords]: ...

    def validation_scores(self, hypotheses: list[str], references: list[str]) -> MetricsRow: ...

    def scores_line(self, row: MetricsRow, suffix: str = "") -> str: ...

    def translate_lines(
        self, translator: KindTranslator[RequestT], lines: list[str], request: RequestT
    ) -> list[Translation]: ...

    def translate_chunks(
        self,
        translator: KindTranslator[RequestT],
        chunks: Iterator[list[str]],
        request: RequestT,
        *,
        prefix_chunks: Iterator[list[str]] | None = None,
    ) -> Iterator[list[Translation]]: ...

    def evaluate(
        self, translator: KindTranslator[RequestT], asked: EvaluationRequest, request: RequestT
    ) -> Evaluation: ...


KINDS: dict[str, type[DataKind]] = {"text": TextData, "spoken_digits": SpokenDigits}
"""Each kind of data, by the value of data.kind that names it."""


def data_kind(config: Config) -> DataKind:
    """The kind of data of a model or run with this config: the one place that tells them apart."""
    return KINDS[config.data.kind]()


__all__ = ["KINDS", "DataKind", "KindTranslator", "data_kind"]

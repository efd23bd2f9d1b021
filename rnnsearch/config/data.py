"""The config's data section: what a model learns from, one section class for each kind
of data (DATA_SECTIONS), each declaring what its kind is for the checks, files, logs and
reports that need to know it without running anything (what a kind does is its class
in rnnsearch.kinds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal, cast

from pydantic import Field, model_validator

from rnnsearch.config.search import MAX_SOURCE_LENGTH
from rnnsearch.errors import ArgumentValueError, UserError
from rnnsearch.model.settings import MAX_WIDTH
from rnnsearch.sections import MAX_COUNT, MAX_SEED, MAX_THREADS, Section

MAX_DIGITS = 100
"""The most digits a made-up spoken digit string may hold: an utterance of this many is
already minutes of audio."""


class ParallelFiles(Section):
    """A source file and its line-aligned target file (plain or .gz UTF-8)."""

    src: str
    tgt: str


class TrainingFiles(ParallelFiles):
    """A training corpus: its parallel files and, optionally, their word alignments."""

    alignments: str | None = Field(
        None,
        description="word alignments of the pairs, one Pharaoh line each (0-based i-j: source word i, target "
        "word j; an empty line: no links), that guide the attention (train.guided_alignment_weight); "
        "`rnnsearch align-corpus` writes them",
    )


@dataclass(frozen=True)
class ValidationScore:
    """A score that validations log: its `key` in metrics.jsonl (a validation of the whole
    set adds "_all"), its words (`label`, on plots and the server's page), its TensorBoard
    `tag`, which way is better, and `metric`, the name train.selection_metric gives it
    where it can select a model."""

    key: str
    label: str
    tag: str
    higher_is_better: bool
    metric: str | None = None

    def better(self, value: float) -> float:
        """`value` as a number that grows as the score improves."""
        return value if self.higher_is_better else -value


VALIDATION_LOSS = ValidationScore("valid_loss", "validation loss", "valid/loss", higher_is_better=False, metric="loss")
"""The score every kind's validations log and any run can select by."""


class DataSection(Section):
    """What every kind of data's config section is and declares, for the checks, files,
    logs and reports that need to know it without running anything (what a kind does is
    its class in rnnsearch.kinds): what the model reads (`reads`: what the API's requests
    carry) and at what `sample_rate` if audio, its words in messages (`described`, `task`),
    whether its pairs hold words to align, whether its training data is prepared on disk,
    whether the source has a subword model, and the `scores` its validations log, the
    first of them its quality score (plotted, able to select a model, reported by the
    server). Each section is one entry of DATA_SECTIONS, by its `kind`."""

    reads: ClassVar[str]
    described: ClassVar[str]
    task: ClassVar[str]
    aligns_words: ClassVar[bool]
    prepared_on_disk: ClassVar[bool]
    source_subwords: ClassVar[bool]
    scores: ClassVar[tuple[ValidationScore, ...]]
    sample_rate: ClassVar[int | None] = None

    kind: str
    src_lang: str
    tgt_lang: str
    max_length: int

    @property
    def quality(self) -> ValidationScore:
        """The kind's quality score: the first of its scores."""
        return self.scores[0]

    @property
    def train_corpora(self) -> list[TrainingFiles]:
        """The training corpora in files, in the order they are used: none for data made in memory."""
        return []

    @property
    def vector_size(self) -> int | None:
        """The size of one encoder input vector; None where the model reads subword ids."""
        return None

    def input_settings(self) -> dict[str, object]:
        """The keys, named as in the data section, that make a source into the encoder's
        input vectors: the members of an ensemble must share them (none for subword ids)."""
        return {}


class DataConfig(DataSection):
    """Parallel text: the model reads subword ids."""

    reads: ClassVar[str] = "text"
    described: ClassVar[str] = "a text model"
    task: ClassVar[str] = "translates text"
    aligns_words: ClassVar[bool] = True
    prepared_on_disk: ClassVar[bool] = True
    source_subwords: ClassVar[bool] = True
    scores: ClassVar[tuple[ValidationScore, ...]] = (
        ValidationScore("valid_bleu", "validation BLEU", "valid/bleu", higher_is_better=True, metric="bleu"),
    )

    kind: Literal["text"] = "text"
    train: TrainingFiles | Annotated[list[TrainingFiles], Field(min_length=1)] = Field(
        description="a training corpus, or a list of them (a large general one and a small in-domain one, say), "
        "used together"
    )
    valid: ParallelFiles
    test: ParallelFiles | None = None
    src_lang: str = "de"
    tgt_lang: str = "en"
    max_length: int = Field(
        100, gt=0, le=MAX_SOURCE_LENGTH, description="training pairs longer than this many pieces are skipped"
    )
    max_length_ratio: float | None = Field(
        None,
        ge=1.0,
        description="training pairs whose longer side has more than this many times the pieces of "
        "the shorter are skipped (misaligned lines, say); null keeps every ratio",
    )
    prepared: str | None = Field(
        None,
        description="where the encoded training data is written and reused (rnnsearch prepare); default: "
        "the model directory's prepared/",
    )
    workers: int | None = Field(
        None,
        gt=0,
        le=MAX_THREADS,
        description="processes that encode the training data; default: one per core for a corpus "
        "over 64 MB, else the preparing process alone",
    )

    @property
    def train_corpora(self) -> list[TrainingFiles]:
        """The training corpora, in the order they are used."""
        return self.train if isinstance(self.train, list) else [self.train]


class FeatureConfig(Section):
    """Log-mel filterbank features of the audio (rnnsearch.speech.features)."""

    bins: int = Field(40, gt=0, le=MAX_WIDTH, description="mel bands")
    window_ms: float = Field(25.0, gt=0)
    hop_ms: float = Field(10.0, gt=0)
    normalise: Literal["utterance", "none"] = "utterance"
    stack: int = Field(
        3, ge=1, le=MAX_WIDTH, description="consecutive frames concatenated into one, shortening the input"
    )

    @property
    def size(self) -> int:
        """The size of one encoder input vector."""
        return self.bins * self.stack


class SpokenDigitsConfig(DataSection):
    """Spoken digit strings built from the bundled FSDD recordings: the model reads
    feature vectors and writes digits (rnnsearch.speech.digits)."""

    reads: ClassVar[str] = "audio"
    described: ClassVar[str] = "a speech model"
    task: ClassVar[str] = "transcribes speech"
    aligns_words: ClassVar[bool] = False
    prepared_on_disk: ClassVar[bool] = False
    source_subwords: ClassVar[bool] = False
    sample_rate: ClassVar[int] = 8000  # Hz: the Free Spoken Digit Dataset's recordings
    scores: ClassVar[tuple[ValidationScore, ...]] = (
        ValidationScore(
            "valid_der",
            "validation digit error rate (%)",
            "valid/digit_error_rate",
            higher_is_better=False,
            metric="error_rate",
        ),
        ValidationScore(
            "valid_accuracy", "validation strings right (%)", "valid/string_accuracy", higher_is_better=True
        ),
    )

    kind: Literal["spoken_digits"]
    split: Literal["customary", "speaker"] = Field(
        "customary", description="customary: test on recordings 0-4; speaker: test on a held-out speaker"
    )
    train_utterances: int = Field(8000, gt=0, le=MAX_COUNT)
    valid_utterances: int = Field(300, gt=0, le=MAX_COUNT)
    test_utterances: int = Field(500, gt=0, le=MAX_COUNT)
    min_digits: int = Field(1, ge=1, le=MAX_DIGITS)
    max_digits: int = Field(8, ge=1, le=MAX_DIGITS)
    seed: int = Field(1, ge=0, le=MAX_SEED)
    features: FeatureConfig = FeatureConfig()
    cache_dir: str = Field("runs/cache", description="computed features are kept here and reused")
    max_length: int = Field(
        400,
        gt=0,
        le=MAX_SOURCE_LENGTH,
        description="training utterances longer than this many input vectors are skipped",
    )
    src_lang: str = "audio"
    tgt_lang: str = "digits"

    @property
    def vector_size(self) -> int:
        """The size of one encoder input vector."""
        return self.features.size

    def input_settings(self) -> dict[str, object]:
        """The feature settings: recordings become vectors by them."""
        return {"features": self.features.model_dump()}

    @model_validator(mode="after")
    def _digit_range(self) -> SpokenDigitsConfig:
        if self.min_digits > self.max_digits:
            raise ValueError(f"min_digits ({self.min_digits}) exceeds max_digits ({self.max_digits})")
        return self


DATA_SECTIONS: dict[str, type[DataSection]] = {"text": DataConfig, "spoken_digits": SpokenDigitsConfig}
"""Each kind of data's config section, by the data.kind that names it (text when none is named)."""


def files_section(data: DataSection) -> DataConfig:
    """`data` where only a kind whose pairs are files on disk reaches (`prepared_on_disk`,
    text's section): preparing them, aligning a corpus, testing on its files."""
    if not data.prepared_on_disk:
        raise UserError(f"data.kind {data.kind}: its pairs are made in memory, not read from files")
    return cast(DataConfig, data)


def check_reverse(forward: DataSection, backward: DataSection, *, name: str = "reverse") -> None:
    """Refuse, naming the argument `name`, a reverse model that translates the way the
    forward one does: its config's languages must be the forward model's swapped, or,
    where both configs name the same pair of languages (the defaults, say), its training
    corpora the forward model's with their sides swapped."""
    languages = (forward.src_lang, forward.tgt_lang)
    if (backward.tgt_lang, backward.src_lang) == languages:
        return
    if (backward.src_lang, backward.tgt_lang) == languages and _swapped_corpora(forward, backward):
        return
    raise ArgumentValueError(
        f"{name}: the reverse model translates {backward.src_lang}→{backward.tgt_lang}, but the model translates "
        f"{forward.src_lang}→{forward.tgt_lang}; give a model of the other direction, "
        f"{forward.tgt_lang}→{forward.src_lang}"
    )


def _swapped_corpora(forward: DataSection, backward: DataSection) -> bool:
    """Whether `backward` trained on `forward`'s text corpora with their sides swapped."""
    if not (forward.aligns_words and backward.aligns_words):  # pairs of words, from text corpora
        return False
    swapped = [(corpus.tgt, corpus.src) for corpus in backward.train_corpora]
    return swapped == [(corpus.src, corpus.tgt) for corpus in forward.train_corpora]

"""The one validated configuration schema: data, subwords, model, train, search.

The model section's schema is the model package's (model/settings.py), beside the
registries it checks names against; the data sections (one for each kind of data), the
search and the train sections are config/data.py, config/search.py and config/train.py.
The default of every config key lives in its schema and nowhere else; settings outside the
config (command-line options such as serve's limits, fixed speech front-end values)
keep their defaults beside the code that uses them. YAML goes in and out; unknown keys
and wrong types are rejected with a one-line message naming the key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, SerializeAsAny, ValidationError, field_validator, model_validator

from rnnsearch.config.data import DATA_SECTIONS, VALIDATION_LOSS, DataSection, ValidationScore
from rnnsearch.config.search import SearchConfig
from rnnsearch.config.train import TrainConfig
from rnnsearch.errors import UserError
from rnnsearch.model.settings import ModelConfig, objective_needs_links
from rnnsearch.sections import MAX_COUNT, Section


class SubwordConfig(Section):
    kind: Literal["unigram", "bpe", "word"] = "unigram"
    vocab_size: int = Field(8000, gt=8, le=MAX_COUNT)
    joint: bool = True
    min_frequency: int = Field(1, ge=1, description="word kind only: rarer words become <unk>")
    sample_sentences: int = Field(
        250_000,
        gt=0,
        le=MAX_COUNT,
        description="SentencePiece learns from a reproducible random sample of at most this many "
        "training pairs (each side's sentences; both sides' if joint); its memory grows with the sample, "
        "and the default keeps preparation under 2 GB (BENCHMARKS.md)",
    )

    @model_validator(mode="after")
    def _min_frequency_only_for_words(self) -> SubwordConfig:
        if self.min_frequency != 1 and self.kind != "word":
            raise ValueError("min_frequency applies to kind 'word' only")
        return self


def _plural(data: DataSection) -> str:
    """What the pairs of a kind of data are called in a message: "spoken digits"."""
    return data.kind.replace("_", " ")


class Config(Section):
    data: SerializeAsAny[DataSection]
    subwords: SubwordConfig = SubwordConfig()
    model: ModelConfig = Field(default_factory=ModelConfig)  # made when needed: its check reads the model's registries
    train: TrainConfig = TrainConfig()
    search: SearchConfig = SearchConfig()

    @field_validator("data", mode="before")
    @classmethod
    def _section_of_its_kind(cls, data: object) -> object:
        """A data mapping read by its kind's section (DATA_SECTIONS), text unless it names one."""
        if not isinstance(data, dict):
            return data
        kind = data.get("kind", "text")
        if kind not in DATA_SECTIONS:
            raise ValueError(f"kind {kind!r} is not a kind of data; one of {', '.join(DATA_SECTIONS)}")
        return DATA_SECTIONS[kind].model_validate({**data, "kind": kind})

    @model_validator(mode="after")
    def _metric_fits_the_data(self) -> Config:
        metric = self.train.selection_metric
        if metric is not None and metric not in (VALIDATION_LOSS.metric, self.data.quality.metric):
            raise ValueError(
                f"train.selection_metric {metric} does not apply to data.kind {self.data.kind}; "
                f"it takes {self.data.quality.metric} or {VALIDATION_LOSS.metric}"
            )
        return self

    @property
    def selection(self) -> ValidationScore:
        """The validation score that selects the best model: train.selection_metric's, by
        default the kind's quality score."""
        if self.train.selection_metric == VALIDATION_LOSS.metric:
            return VALIDATION_LOSS
        return self.data.quality

    @model_validator(mode="after")
    def _location_covers_every_source_position(self) -> Config:
        attention = self.model.attention
        longest = max(self.data.max_length, self.search.max_source_length) + 1  # + </s>
        if attention != "none" and attention.score == "location" and attention.size < longest:
            raise ValueError(
                f"model.attention.size must cover the longest source ({longest} positions with </s>) "
                "for location attention"
            )
        return self

    @model_validator(mode="after")
    def _guidance_has_attention_and_links(self) -> Config:
        if not self.train.guided_alignment_weight:
            return self
        if self.model.attention == "none":
            raise ValueError("train.guided_alignment_weight needs an attention to guide; model.attention is none")
        if not self.data.aligns_words:
            raise ValueError(
                f"train.guided_alignment_weight guides text pairs; {_plural(self.data)} have no word alignments"
            )
        if not any(corpus.alignments for corpus in self.data.train_corpora):
            raise ValueError("train.guided_alignment_weight needs word alignments: no data.train corpus names any")
        return self

    @model_validator(mode="after")
    def _aligner_on_text_with_its_links(self) -> Config:
        if not self.model.aligner:
            return self
        if not self.data.aligns_words:
            raise ValueError(f"model.aligner aligns words; {_plural(self.data)} have no source words to align")
        if objective_needs_links(self.train.aligner_objective) and not any(
            corpus.alignments for corpus in self.data.train_corpora
        ):
            raise ValueError(
                f"train.aligner_objective {self.train.aligner_objective} needs word links: no data.train corpus names "
                "alignments (make them with `rnnsearch align-corpus`, or train the module by prediction alone)"
            )
        return self

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, reading numbers as YAML 1.2 and users do: `1e-3` and `1e308`
    are floats, where YAML 1.1 needs a dot (`1.0e-3`) and reads them as strings, which
    the strict schema would then refuse as "not a valid number"."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float", re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+$"), list("-+0123456789.")
)


def read_yaml(text: str) -> object:
    """YAML text as Python values, numbers read as `_Loader` reads them."""
    return yaml.load(text, Loader=_Loader)


def _describe(error: ValidationError, origin: str) -> str:
    problems = []
    for item in error.errors():
        loc = list(item["loc"])
        key = ".".join(str(part) for part in loc) or "(top level)"
        message = "unknown key" if item["type"] == "extra_forbidden" else item["msg"].removeprefix("Value error, ")
        problems.append(f"{key}: {message}")
    return f"{origin}: " + "; ".join(problems)


def _apply_override(tree: dict[str, object], assignment: str) -> None:
    key, sep, raw = assignment.partition("=")
    if not sep or not key:
        raise UserError(f"--set {assignment!r}: expected section.key=value")
    node = tree
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise UserError(f"--set {key}: {part} is not a section")
        node = child
    try:
        node[parts[-1]] = read_yaml(raw)
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None)  # what the parser found, without its multi-line context
        detail = f" ({' '.join(problem.split())})" if problem else ""
        raise UserError(f"--set {assignment}: not valid YAML{detail}") from None


def config_from_dict(tree: dict[str, object], origin: str = "config") -> Config:
    try:
        return Config.model_validate(tree)
    except ValidationError as error:
        raise UserError(_describe(error, origin)) from None


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> Config:
    """Read a YAML config, apply `section.key=value` overrides and validate it."""
    path = Path(path)
    try:
        tree = read_yaml(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise UserError(f"{path}: no such config file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a YAML config file") from None
    except UnicodeDecodeError as error:
        raise UserError(f"{path}: not valid UTF-8 (byte {error.start + 1})") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise UserError(f"{path}{where}: not valid YAML") from None
    if not isinstance(tree, dict):
        raise UserError(f"{path}: expected a mapping of sections at the top level")
    for assignment in overrides:
        _apply_override(tree, assignment)
    return config_from_dict(tree, str(path))

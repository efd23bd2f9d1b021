"""The model section of the config: the architecture, checked against the model's own
registries of scores (scores.py) and wirings (wirings.py), which are the one list of
each. rnnsearch.config holds it as `Config.model`, and checks the alignment module's
objective against its registry (objectives.py) through the functions here.

The registries hold the model's modules, which need torch; they are read when a model
section is checked, not when this module is imported, so that importing the config
(as every command does before it parses its arguments) does not import torch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator, model_validator

from rnnsearch.sections import Section, registered_name

if TYPE_CHECKING:
    from rnnsearch.model.scores import AttentionScore
    from rnnsearch.model.wirings import BahdanauWiring, LuongWiring


def _scores() -> dict[str, type[AttentionScore]]:
    from rnnsearch.model.scores import SCORES

    return SCORES


def _wirings() -> dict[str, type[BahdanauWiring] | type[LuongWiring]]:
    from rnnsearch.model.wirings import WIRINGS

    return WIRINGS


def aligner_objective(name: str) -> str:
    """`name`, if it is one of the alignment module's objectives (model/objectives.py);
    else a ValueError listing them."""
    from rnnsearch.model.objectives import OBJECTIVES

    return registered_name(name, OBJECTIVES, "alignment module objective")


def objective_needs_links(name: str) -> bool:
    """Whether the alignment module's objective `name` reads word links."""
    from rnnsearch.model.objectives import needs_links

    return needs_links(name)


MAX_WIDTH = 16_384
"""The widest layer a model may ask for (embeddings, hidden states, readout, the alignment
module): 32 times the widest in the paper, and small enough that a mistyped size is
refused with its key rather than met by an allocation of hundreds of gigabytes."""


class EncoderConfig(Section):
    cell: Literal["gru", "lstm"] = "gru"
    hidden_size: int = Field(
        256, gt=0, le=MAX_WIDTH, description="per direction; bidirectional annotations are twice this"
    )
    layers: int = Field(1, ge=1, le=4, description="stacked layers, with model.dropout between them")
    bidirectional: bool = True


class AttentionConfig(Section):
    score: str = Field("additive", description="a name from rnnsearch.model.scores.SCORES")
    size: int = Field(
        512,
        gt=0,
        le=MAX_WIDTH,
        description="additive: hidden size n of the alignment model; location: source positions covered; "
        "general, dot, scaled_dot and cosine have no size of their own and ignore it",
    )
    coverage: bool = Field(
        False,
        description="feed the score the attention paid so far to each source position, "
        "C_{i-1,j} = Σ_{k<i} α_kj (Tu et al. 2016's linguistic coverage); additive only",
    )

    @field_validator("score")
    @classmethod
    def _registered(cls, score: str) -> str:
        return registered_name(score, _scores(), "score")


class DecoderConfig(Section):
    cell: Literal["gru", "lstm"] = "gru"
    hidden_size: int = Field(512, gt=0, le=MAX_WIDTH)
    layers: int = Field(1, ge=1, le=4, description="stacked layers, with model.dropout between them")
    wiring: str = Field(
        "bahdanau",
        description="a name from rnnsearch.model.wirings.WIRINGS: bahdanau (attend with s_{i-1}, then update) "
        "or luong (update, then attend with s_i)",
    )
    input_feeding: bool = Field(False, description="luong only: give h̃_{i-1} to the next step's RNN input")
    readout: Literal["maxout", "tanh"] | None = Field(
        None, description="g in t_i (bahdanau) or h̃_i (luong); default: maxout for bahdanau, tanh for luong"
    )
    readout_size: int = Field(256, gt=0, le=MAX_WIDTH, description="size of t_i (bahdanau) or h̃_i (luong)")
    tied_embeddings: bool = Field(
        False, description="share the target embeddings with the output layer (needs readout_size = embedding_size)"
    )

    @field_validator("wiring")
    @classmethod
    def _registered_wiring(cls, wiring: str) -> str:
        return registered_name(wiring, _wirings(), "wiring")

    @model_validator(mode="before")
    @classmethod
    def _readout_of_the_wiring(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("readout") is None:
            wiring = _wirings().get(data.get("wiring", "bahdanau"))
            return {**data, "readout": wiring.default_readout if wiring else "maxout"}
        return data

    @model_validator(mode="after")
    def _input_feeding_where_the_wiring_has_it(self) -> DecoderConfig:
        _wirings()[self.wiring](self.input_feeding)  # a wiring without input feeding refuses it, saying so
        return self


class ModelConfig(Section):
    embedding_size: int = Field(256, gt=0, le=MAX_WIDTH)
    encoder: EncoderConfig = EncoderConfig()
    attention: AttentionConfig | Literal["none"] = Field(
        default_factory=AttentionConfig, description="an alignment model, or none: the fixed-context baseline"
    )
    decoder: DecoderConfig = Field(default_factory=DecoderConfig)  # its check reads the wirings' registry
    dropout: float = Field(0.2, ge=0.0, lt=1.0)
    aligner: bool = Field(
        False,
        description="add the alignment module (docs/model.md): for each target word y_i, a word alignment that "
        "sees y_i, trained beside the translation without changing it; `rnnsearch train-aligner` adds one to a "
        "trained model",
    )
    aligner_size: int = Field(
        256, gt=0, le=MAX_WIDTH, description="the alignment module's size d (its keys, queries and words)"
    )
    aligner_null: bool = Field(
        True,
        description="give the alignment module a NULL position beside the source (docs/model.md): a target word "
        "that no source word translates puts its weight there and is left unaligned (on by default, the measured "
        "better; false: every target word is linked somewhere)",
    )

    @model_validator(mode="after")
    def _aligner_reads_an_attention(self) -> ModelConfig:
        if self.aligner and self.attention == "none":
            raise ValueError(
                "model.aligner needs an attention model: the fixed-context baseline has no alignment to improve on"
            )
        return self

    @model_validator(mode="after")
    def _tied_sizes_match(self) -> ModelConfig:
        if self.decoder.tied_embeddings and self.decoder.readout_size != self.embedding_size:
            raise ValueError(
                f"decoder.tied_embeddings needs decoder.readout_size ({self.decoder.readout_size}) "
                f"= embedding_size ({self.embedding_size})"
            )
        return self

    @model_validator(mode="after")
    def _coverage_where_the_score_reads_it(self) -> ModelConfig:
        attention = self.attention
        if attention == "none":
            return self
        score = attention.score
        if attention.coverage and not _scores()[score].reads_coverage:
            raise ValueError(f"model.attention.coverage needs the additive score; the {score} score has no use for it")
        return self

"""The train section of the config (`Config.train`): how a run trains, and which of its
keys a `train-aligner` run takes. rnnsearch.config holds it as `Config.train`."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from rnnsearch.config.search import Precision
from rnnsearch.model.settings import aligner_objective
from rnnsearch.sections import MAX_COUNT, MAX_RATE, MAX_SEED, MAX_THREADS, Section


class TrainConfig(Section):
    model_dir: str = Field("runs/model", description="where the model directory is written")
    seed: int = Field(1, ge=0, le=MAX_SEED)
    batch_tokens: int = Field(2000, gt=0, le=MAX_COUNT, description="padded target tokens per batch, at most")
    max_batch_sentences: int | None = Field(None, gt=0, le=MAX_COUNT)
    learning_rate: float = Field(1e-3, gt=0)
    warmup_steps: int = Field(200, ge=0)
    clip_norm: float = Field(1.0, gt=0)
    label_smoothing: float = Field(0.1, ge=0.0, lt=1.0)
    guided_alignment_weight: float = Field(
        0.0,
        ge=0.0,
        description="lambda of guided alignment: adds lambda times the cross-entropy between each row of the "
        "attention and the word links of data.train[].alignments, spread over the pieces (docs/model.md); 0: off",
    )
    aligner_objective: str = Field(
        "both",
        description="what trains the alignment module (model.aligner, `rnnsearch train-aligner`), a name from "
        "rnnsearch.model.objectives.OBJECTIVES: prediction (predict each y_i through the module's own alignment, "
        "no links needed), links (the word links of data.train[].alignments), or both (their sum); docs/model.md",
    )
    aligner_agreement_weight: float = Field(
        1.0,
        ge=0.0,
        description="weight of the agreement term where two directions' alignment modules train together "
        "(`rnnsearch train-aligner MODEL_DIR --reverse REVERSE_DIR`, `rnnsearch self-train`): the summed squared "
        "difference between the model's β and the reverse model's, transposed (docs/model.md; 1, the measured "
        "best, by default); 0: side by side without agreeing. A run of one module has none to agree with",
    )
    frozen_passes_gib: float = Field(
        4.0,
        ge=0.0,
        description="memory (GiB, on train.device) for the frozen translation's teacher-forced passes that "
        "`rnnsearch train-aligner` keeps, each pair's computed once instead of once per epoch, so that later "
        "epochs train the module alone; pairs beyond it are computed at each step. 0 keeps none",
    )
    lr_schedule: Literal["plateau", "anneal"] = Field(
        "plateau",
        description="plateau: multiply the rate by lr_decay_factor after lr_patience validations without gain; "
        "anneal: hold the rate after warmup, then decay it linearly to min_learning_rate over the last "
        "anneal_fraction of the budget (max_steps or max_minutes, whichever ends first)",
    )
    anneal_fraction: float = Field(0.25, gt=0.0, le=1.0, description="anneal schedule only")
    lr_decay_factor: float = Field(0.5, gt=0.0, le=1.0, description="plateau schedule only")
    lr_patience: int = Field(2, ge=0, description="plateau schedule only: validations without gain before it decays")
    min_learning_rate: float = Field(1e-5, ge=0)
    patience: int = Field(
        8,
        ge=1,
        description="plateau schedule only: validations without improvement before training stops; an annealed "
        "run trains to the end of its budget, since its rate holds (and validation stalls) until the anneal",
    )
    selection_metric: str | None = Field(
        None,
        description="the validation score that selects the best model: the data kind's quality score by default "
        "(bleu for text, error_rate, the digit error rate, for spoken digits), or loss for any kind",
    )
    valid_every: int = Field(1000, gt=0, description="steps between validations and checkpoints")
    init_from: str | None = Field(
        None,
        description="fine-tuning: a model directory whose weights and subword models this run starts from; its "
        "model section must equal this config's; the optimizer, schedule and best score start afresh",
    )
    keep_checkpoints: int = Field(
        0,
        ge=0,
        description="N > 0: every validation also writes the model weights to checkpoints/step{NNNNNNN}.safetensors "
        "in the model directory, keeping the last N, for `rnnsearch average`; 0 keeps none",
    )
    valid_bleu_sentences: int | None = Field(
        2000,
        gt=0,
        description="validation sentences translated for BLEU (or the digit error rate) at each "
        "validation, the first ones of the set; the last validation translates them all; null: all, every time",
    )
    valid_heatmaps: int = Field(
        3,
        ge=0,
        description="validation sentences, the first ones, whose alignment is drawn at every validation "
        "(alignments/step{NNNNNNN}-{k}.png), to watch it form; 0 draws none",
    )
    log_every: int = Field(
        100,
        gt=0,
        description="steps between training-loss rows in metrics.jsonl and, when standard error is not a terminal "
        "(a file, a pipe, a CI log), between log lines in place of the progress bar",
    )
    tensorboard: bool = Field(
        False,
        description="also write the training and validation curves and the validation heatmaps as TensorBoard "
        "event files to the model directory's tensorboard/ (needs the tensorboard extra); off by default, since "
        "metrics.jsonl and the PNGs hold the same figures without the extra package",
    )
    max_steps: int | None = Field(None, gt=0)
    max_minutes: float | None = Field(None, gt=0)
    threads: int | None = Field(None, gt=0, le=MAX_THREADS, description="CPU threads; default: the physical cores")
    precision: Precision = Field(
        "fp32",
        description="bf16: the forward pass under bfloat16 autocast (fast on CPUs with AVX-512 BF16 or AMX; on a GPU "
        "small models gain nothing); attention weights and the loss stay fp32, the weights and the optimizer fp32",
    )
    device: str = "auto"
    cuda_graphs: bool = Field(
        True,
        description="on a GPU (one process, fp32): replay the decoder's forward and backward and the loss, the "
        "alignment module's terms included, as CUDA graphs, one set per batch shape, each keeping its own "
        "activations; false runs every kernel from Python",
    )

    @field_validator("learning_rate", "min_learning_rate")
    @classmethod
    def _rate_a_step_holds(cls, rate: float) -> float:
        if rate > MAX_RATE:
            raise ValueError(f"{rate:g} is larger than {MAX_RATE:g}, the largest rate Adam's float32 step can take")
        return rate

    @field_validator("aligner_objective")
    @classmethod
    def _registered_objective(cls, name: str) -> str:
        return aligner_objective(name)

    @model_validator(mode="after")
    def _annealing_needs_a_budget(self) -> TrainConfig:
        if self.lr_schedule == "anneal" and self.max_steps is None and self.max_minutes is None:
            raise ValueError("lr_schedule 'anneal' needs max_steps or max_minutes: it decays to the end of the budget")
        return self


ALIGNER_RUN_KEYS = (
    "model.aligner_size",
    "model.aligner_null",
    "train.aligner_objective",
    "train.aligner_agreement_weight",
    "train.frozen_passes_gib",
    "train.max_steps",
    "train.max_minutes",
    "train.learning_rate",
    "train.warmup_steps",
    "train.min_learning_rate",
    "train.batch_tokens",
    "train.max_batch_sentences",
    "train.clip_norm",
    "train.seed",
    "train.log_every",
    "train.valid_every",
    "train.device",
    "train.cuda_graphs",
    "train.threads",
    "data.train",
)
"""The keys a train-aligner run may set (--set), each one it uses: the module's size and NULL
option, its objective and the directions' agreement, the memory for the frozen passes it
keeps, its budget, learning rate and batches, where it runs (and whether a GPU replays its
steps as CUDA graphs), and the training corpora (to
add word links for the links objective, say; a key under data.train too). Every other key
is the frozen model's, or one the run does not read, and is refused."""

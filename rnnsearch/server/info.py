"""GET /v1/model: what is being served, read once from the translator and its model directory."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from rnnsearch.config import load_config
from rnnsearch.config.data import ValidationScore
from rnnsearch.errors import UserError
from rnnsearch.files.metrics_log import read_metrics
from rnnsearch.files.model_directory import CONFIG, METRICS
from rnnsearch.server.limits import Limits
from rnnsearch.server.schemas import MAX_BEAM_SIZE, ModelInfo, ServedLimits, TrainingFigures
from rnnsearch.text.glossary import MAX_TERM_CHARS
from rnnsearch.translation.translator import Translator


def describe_model(translator: Translator, model_dir: str | Path | Sequence[str | Path], limits: Limits) -> ModelInfo:
    """The served model's input, languages, vocabularies, architecture, size, training figures and limits;
    for an ensemble (a list of model directories), its first member's, and how many members it has."""
    members = 1 if isinstance(model_dir, (str, os.PathLike)) else len(model_dir)
    model_dir = Path(model_dir if isinstance(model_dir, (str, os.PathLike)) else model_dir[0])
    config = load_config(model_dir / CONFIG)
    return ModelInfo(
        input=translator.data.reads,
        source_language=config.data.src_lang,
        target_language=config.data.tgt_lang,
        source_vocabulary=None if translator.src_subwords is None else len(translator.src_subwords),
        target_vocabulary=len(translator.tgt_subwords),
        parameters=translator.parameters,
        runtime=translator.runtime,
        members=members,
        has_alignment=translator.model.has_alignment,
        architecture=config.model,
        subwords=config.subwords,
        search=translator.search,
        training=training_figures(model_dir / METRICS, config.data.quality),
        sample_rate=translator.data.sample_rate,
        seconds_per_vector=translator.seconds_per_vector,
        limits=ServedLimits(
            max_texts=limits.max_texts,
            max_chars=limits.max_chars,
            max_source_pieces=translator.search.max_source_length,
            max_audio_seconds=max_audio_seconds(translator, limits),
            timeout_seconds=limits.timeout,
            max_beam_size=MAX_BEAM_SIZE,
            max_glossary_terms=limits.max_glossary_terms,
            max_term_chars=MAX_TERM_CHARS,
        ),
    )


def max_audio_seconds(translator: Translator, limits: Limits) -> float | None:
    """Seconds per recording: the server's limit, or less where the model's search.max_source_length
    input vectors cover less audio; None for a text model."""
    if translator.seconds_per_vector is None:  # text
        return None
    return min(limits.max_audio_seconds, translator.search.max_source_length * translator.seconds_per_vector)


def training_figures(metrics: Path, quality: ValidationScore) -> TrainingFigures | None:
    """Steps, validations and the best validation `quality` score and perplexity logged
    in `metrics`, read as every reader of the log reads it (a row torn by a kill dropped).

    None when there is no such file, or when it is corrupt: the figures are informative
    only, and the server serves without them.
    """
    try:
        rows = read_metrics(metrics)
    except (FileNotFoundError, UserError):
        return None
    validations = [row for row in rows if quality.key in row or "valid_ppl" in row]
    scores = [row.get(quality.key) for row in validations]
    perplexity = [row["valid_ppl"] for row in validations if isinstance(row.get("valid_ppl"), int | float)]
    numbers = [score for score in scores if isinstance(score, int | float)]
    return TrainingFigures(
        steps=max((row["step"] for row in rows), default=0),
        validations=len(validations),
        valid_score=quality.key,
        valid_score_label=quality.label,
        best_valid_score=max(numbers, key=quality.better, default=None),
        best_valid_perplexity=min(perplexity, default=None),
    )

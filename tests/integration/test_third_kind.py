"""A kind of data is three things, as docs/architecture.md promises: its config section,
its class, and their registry entries. This test defines a third kind, made in memory
(reversed symbol strings, scored by exact match), and trains, validates, selects,
draws, reports, translates and evaluates with it, touching no other module."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import rnnsearch
from rnnsearch.cli import main
from rnnsearch.config import config_from_dict, load_config
from rnnsearch.config.data import DATA_SECTIONS, DataSection, ValidationScore
from rnnsearch.decoding.inputs import TextInput
from rnnsearch.evaluation.metrics import Evaluation, EvaluationRequest, MetricScore
from rnnsearch.files import model_directory
from rnnsearch.files.metrics_log import read_metrics
from rnnsearch.kinds import KINDS, data_kind
from rnnsearch.server.info import training_figures
from rnnsearch.text.batches import InMemoryPairs
from rnnsearch.text.subwords import train_subwords
from rnnsearch.text.synthetic import make_pairs
from rnnsearch.training.run_data import Corpus, encode_validation
from rnnsearch.training.trainer import Trainer

EXACT = ValidationScore("valid_exact", "validation strings exactly right (%)", "valid/exact", True, metric="exact")


class ReversalConfig(DataSection):
    """Symbol strings to reverse, made in memory."""

    reads: ClassVar[str] = "text"
    described: ClassVar[str] = "a reversal model"
    task: ClassVar[str] = "reverses symbol strings"
    aligns_words: ClassVar[bool] = False
    prepared_on_disk: ClassVar[bool] = False
    source_subwords: ClassVar[bool] = True
    scores: ClassVar[tuple[ValidationScore, ...]] = (EXACT,)

    kind: Literal["reversal"]
    pairs: int = 300
    src_lang: str = "symbols"
    tgt_lang: str = "reversed"
    max_length: int = 20


def _exact(hypotheses: list[str], references: list[str]) -> float:
    return 100.0 * sum(h == r for h, r in zip(hypotheses, references)) / len(references)


class Reversal:
    """The kind's class: what it prepares, scores and translates."""

    name = "reversal"
    refused_options: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def input(config, sides: Sequence) -> TextInput:
        return TextInput(sides)

    @staticmethod
    def prepare_corpus(config, model_dir: Path, resume: bool, world) -> tuple[Corpus, Any, Any]:
        pairs = make_pairs("reverse", config.data.pairs, 2, 6, 8, seed=1)
        sources, targets = [s for s, _ in pairs], [t for _, t in pairs]
        if resume:
            _, src, tgt = model_directory.load_model_files(model_dir)
        else:
            src = tgt = train_subwords(sources + targets, "word", 32)
            model_directory.save_model_files(model_dir, config, src, tgt)
        limit = config.data.max_length
        train = encode_validation(sources[20:], targets[20:], src, tgt, limit)
        valid = encode_validation(sources[:20], targets[:20], src, tgt, limit)
        return Corpus(InMemoryPairs(list(train)), valid, sources[:20], targets[:20]), src, tgt

    @staticmethod
    def validation_scores(hypotheses: list[str], references: list[str]) -> dict:
        return {EXACT.key: _exact(hypotheses, references)}

    @staticmethod
    def scores_line(row: dict, suffix: str = "") -> str:
        return f"exact {row[EXACT.key + suffix]:.1f}%"

    @staticmethod
    def translate_lines(translator, lines: list[str], request) -> list:
        return translator.translate_with(request, lines)

    @staticmethod
    def translate_chunks(translator, chunks: Iterator[list[str]], request, *, prefix_chunks=None) -> Iterator[list]:
        return translator.translate_chunks_with(request, chunks, prefix_chunks=prefix_chunks)

    @staticmethod
    def evaluate(translator, asked: EvaluationRequest, request) -> Evaluation:
        sources, references = Path(asked.src).read_text().splitlines(), Path(asked.ref).read_text().splitlines()
        hypotheses = [t.text for t in translator.translate_with(request, sources)]
        return Evaluation([MetricScore("exact", _exact(hypotheses, references), "exact string match", "%")])


@pytest.fixture
def reversal(monkeypatch):
    monkeypatch.setitem(DATA_SECTIONS, "reversal", ReversalConfig)
    monkeypatch.setitem(KINDS, "reversal", Reversal)


def test_a_third_kind_trains_validates_and_translates_through_its_registry_entries(reversal, tmp_path, capsys):
    model = tmp_path / "model"
    config = config_from_dict(
        {
            "data": {"kind": "reversal"},
            "subwords": {"kind": "word", "vocab_size": 32},
            "model": {
                "embedding_size": 16,
                "encoder": {"hidden_size": 16},
                "attention": {"size": 16},
                "decoder": {"hidden_size": 16, "readout_size": 16},
            },
            "train": {
                "model_dir": str(model),
                "batch_tokens": 200,
                "max_steps": 6,
                "valid_every": 3,
                "log_every": 3,
                "tensorboard": True,
            },
        }
    )
    assert isinstance(data_kind(config), Reversal) and config.selection == EXACT
    progress = Trainer(config, model, data_kind(config)).run()
    assert "greedy exact" in capsys.readouterr().err
    rows = read_metrics(model / model_directory.METRICS)
    validated = [row for row in rows if EXACT.key in row]
    assert [row["step"] for row in validated] == [3, 6]
    assert progress.best == max(row[EXACT.key] for row in validated)  # selected by its own score
    assert (model / model_directory.LEARNING_CURVE).exists()
    figures = training_figures(model / model_directory.METRICS, load_config(model / "config.yaml").data.quality)
    assert (figures.valid_score, figures.best_valid_score) == (EXACT.key, progress.best)
    events = EventAccumulator(str(model / "tensorboard"), size_guidance={"scalars": 0}).Reload()
    assert [event.step for event in events.Scalars(EXACT.tag)] == [3, 6]
    translator = rnnsearch.load(model, device="cpu")
    assert isinstance(translator.kind, Reversal)
    [translation] = translator.translate(["w1 w2 w3"], beam_size=2)
    assert len(translation.source_tokens) == 4  # three words and </s>
    assert translation.alignment.shape == (len(translation.target_tokens), 4)
    src, ref = tmp_path / "test.src", tmp_path / "test.ref"
    src.write_text("w1 w2 w3\nw4 w5\n")
    ref.write_text("w3 w2 w1\nw5 w4\n")
    assert main(["evaluate", str(model), "--src", str(src), "--ref", str(ref), "--json"]) == 0
    assert 0.0 <= json.loads(capsys.readouterr().out)["exact"]["score"] <= 100.0

"""train.init_from: a run that starts from a trained model's weights and subword models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from conftest import tiny_config, write_config, write_lines

from rnnsearch.cli import main
from rnnsearch.files import model_directory
from rnnsearch.model.seq2seq import build_model
from rnnsearch.prepared import PreparedPairs
from rnnsearch.text.batches import epoch_batches, make_batch
from rnnsearch.text.corpus import read_lines
from rnnsearch.training.loss import sequence_loss

EXACT = {"label_smoothing": 0.0}  # with no dropout either, a step's loss is the model's plain loss on its batch


def settings(corpus: Path, model_dir: Path, **train) -> dict:
    tree = tiny_config(corpus, model_dir, log_every=1, **EXACT, **train)
    tree["model"]["dropout"] = 0.0
    return tree


@pytest.fixture(scope="module")
def general(corpus, tmp_path_factory) -> Path:
    """A model trained for a few steps on the whole corpus: the one fine-tuning starts from."""
    folder = tmp_path_factory.mktemp("general")
    config = write_config(folder / "c.yaml", settings(corpus, folder / "run", max_steps=4, valid_every=4))
    assert main(["train", str(config)]) == 0
    return folder / "run"


@pytest.fixture(scope="module")
def domain(corpus, tmp_path_factory) -> Path:
    """The last 100 training pairs as a small "in-domain" corpus, with the same validation set."""
    folder = tmp_path_factory.mktemp("domain")
    for split in ("train", "val"):
        for lang in ("de", "en"):
            lines = read_lines(corpus / f"{split}.{lang}")
            write_lines(folder / f"{split}.{lang}", lines[-100:] if split == "train" else lines)
    return folder


def test_fine_tuning_starts_from_the_weights_and_subwords_of_the_model(general, domain, tmp_path, capsys):
    tree = settings(domain, tmp_path / "tuned", max_steps=2, valid_every=2, init_from=str(general))
    tree["subwords"]["vocab_size"] = 300  # ignored: the pieces are the general model's
    assert main(["train", str(write_config(tmp_path / "c.yaml", tree))]) == 0
    assert f"starting from the weights of {general / model_directory.BEST} (step 4)" in capsys.readouterr().err
    for name in (model_directory.SRC_SUBWORDS, model_directory.TGT_SUBWORDS):
        assert (tmp_path / "tuned" / name).read_bytes() == (general / name).read_bytes()

    config, src_subwords, tgt_subwords = model_directory.load_model_files(general)
    model = build_model(config.model, len(src_subwords), len(tgt_subwords))
    model_directory.load_weights(model, general / model_directory.BEST)
    data = PreparedPairs(tmp_path / "tuned" / "prepared")
    tuned = model_directory.load_model_files(tmp_path / "tuned")[0].train
    first = epoch_batches(data, tuned.batch_tokens, tuned.max_batch_sentences, seed=tuned.seed, epoch=0)[0]
    with torch.no_grad():
        loss, tokens = sequence_loss(model.train(), make_batch([data[i] for i in first]))
    rows = [json.loads(line) for line in (tmp_path / "tuned" / "metrics.jsonl").read_text().splitlines()]
    assert rows[0]["step"] == 1 and rows[0]["train_loss"] == pytest.approx(float(loss) / tokens, rel=1e-5)
    assert rows[0]["lr"] < tree["train"]["learning_rate"]  # a fresh warm-up, not the general run's schedule


def test_a_model_section_that_differs_is_refused_with_the_key_named(general, domain, tmp_path, capsys):
    tree = settings(domain, tmp_path / "tuned", max_steps=2, init_from=str(general))
    tree["model"]["decoder"]["hidden_size"] = 24
    assert main(["train", str(write_config(tmp_path / "c.yaml", tree))]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "rnnsearch: error: train.init_from: model.decoder.hidden_size is 32 there but 24 here "
        f"({general / model_directory.CONFIG}); a model starts only from its own kind"
    )
    assert not (tmp_path / "tuned").exists()


def test_a_missing_model_to_start_from_is_one_line(domain, tmp_path, capsys):
    tree = settings(domain, tmp_path / "tuned", max_steps=2, init_from=str(tmp_path / "nowhere"))
    assert main(["train", str(write_config(tmp_path / "c.yaml", tree))]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"rnnsearch: error: {tmp_path / 'nowhere'}: no such model directory"
    )

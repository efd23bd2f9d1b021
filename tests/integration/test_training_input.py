"""Bad training data and config stop `rnnsearch train` with one line naming the culprit, before any training."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnnsearch.cli import main
from tests.integration.conftest import tiny_config, write_config


def train(capsys, config: Path, *overrides: str) -> tuple[int, str]:
    """The exit status of `rnnsearch train` and the last line it wrote to stderr."""
    status = main(["train", str(config), *[a for o in overrides for a in ("--set", o)]])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err.splitlines()[-1] if err else ""


@pytest.mark.parametrize("value", ["[1", "{a: 1", ": x", "@x", "!!python/object:os.system", "a: b: c", "'open"])
def test_an_override_that_is_not_yaml_is_named(corpus, tmp_path, capsys, value):
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run"))
    status, line = train(capsys, config, f"train.seed={value}")
    assert status == 1
    assert line.startswith("rnnsearch: error: --set train.seed=") and "not valid YAML" in line, line
    assert not (tmp_path / "run").exists()


def test_a_config_file_that_is_not_yaml_is_named(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("data:\n  train: {src: a, tgt: b\n  valid: !!python/object:os.system x\n", encoding="utf-8")
    status, line = train(capsys, config)
    assert status == 1 and line.startswith(f"rnnsearch: error: {config}:") and "not valid YAML" in line, line


def corpus_with(corpus: Path, folder: Path, **files: list[str]) -> Path:
    """A copy of the tiny corpus with some of its files (train_de, val_en, ...) replaced by `files`."""
    folder.mkdir()
    for name in ("train.de", "train.en", "val.de", "val.en"):
        lines = files.get(name.replace(".", "_"))
        text = (corpus / name).read_text(encoding="utf-8") if lines is None else "".join(f"{x}\n" for x in lines)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("files", "blamed", "reason"),
    [
        ({"train_de": [], "train_en": []}, "train.de", "the file is empty"),
        (
            {"train_de": [" ", "\t", ""], "train_en": ["A dog.", "A cat.", "Two men."]},
            "train.de",
            "every line is blank",
        ),
        ({"train_de": ["Ein Hund.", "Eine Katze."], "train_en": ["", "  "]}, "train.en", "every line is blank"),
        ({"train_de": ["Ein Hund.", ""], "train_en": ["", "A cat."]}, "train.de", "blank line of"),
    ],
)
def test_training_text_without_a_usable_pair_is_named_before_subwords_are_trained(
    corpus, tmp_path, capsys, files, blamed, reason
):
    data = corpus_with(corpus, tmp_path / "data", **files)
    config = write_config(tmp_path / "c.yaml", tiny_config(data, tmp_path / "run"))
    status, line = train(capsys, config)
    assert status == 1
    assert line.startswith(f"rnnsearch: error: {data / blamed}: no usable training pairs") and reason in line, line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("lines", [[], ["", "   ", "\t"]])
def test_a_validation_set_without_a_usable_pair_is_named_before_training(corpus, tmp_path, capsys, lines):
    data = corpus_with(corpus, tmp_path / "data", val_de=lines, val_en=lines)
    config = write_config(tmp_path / "c.yaml", tiny_config(data, tmp_path / "run"))
    status, line = train(capsys, config)
    assert status == 1 and line.startswith(f"rnnsearch: error: {data / 'val.de'}: no usable validation pairs"), line
    assert not (tmp_path / "run").exists()


def test_a_validation_set_of_only_overlong_pairs_is_named_before_training(corpus, tmp_path, capsys):
    long = " ".join(["Hund"] * 150)  # more pieces than data.max_length (100), fewer than the search's 250
    data = corpus_with(corpus, tmp_path / "data", val_de=[long, ""], val_en=[long, "A dog."])
    config = write_config(tmp_path / "c.yaml", tiny_config(data, tmp_path / "run"))
    status, line = train(capsys, config)
    assert status == 1
    assert line.startswith(f"rnnsearch: error: {data / 'val.de'}: no usable validation pairs"), line
    assert "data.max_length = 100" in line and not (tmp_path / "run" / "last.safetensors").exists()


def test_an_overlong_validation_source_is_named_by_file_and_line_before_training(corpus, tmp_path, capsys):
    sources = (corpus / "val.de").read_text(encoding="utf-8").splitlines()
    sources[5] = " ".join(["Hund"] * 300)  # more pieces than search.max_source_length (250)
    data = corpus_with(corpus, tmp_path / "data", val_de=sources)
    config = write_config(tmp_path / "c.yaml", tiny_config(data, tmp_path / "run"))
    status, line = train(capsys, config)
    assert status == 1
    assert line.startswith(f"rnnsearch: error: {data / 'val.de'}:6: "), line
    assert "more than search.max_source_length = 250" in line
    assert not (tmp_path / "run" / "last.safetensors").exists()


@pytest.mark.parametrize(("kind", "size"), [("unigram", 10), ("unigram", 300), ("bpe", 300)])
def test_a_vocabulary_too_small_for_the_characters_names_the_key_and_the_size_needed(
    corpus, tmp_path, capsys, kind, size
):
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run"))
    status, line = train(capsys, config, f"subwords.kind={kind}", f"subwords.vocab_size={size}")
    assert status == 1 and f"subwords.vocab_size: {size} is too small" in line, line
    if size > 260:  # room for the reserved pieces, not for the 62 characters of the corpus as well
        assert line.endswith("which needs at least 322 pieces: one for each of its characters and 260 reserved"), line
    assert not (tmp_path / "run").exists()

"""Tests for rnnsearch.config: defaults, strict validation, overrides and one-line errors."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from rnnsearch.config import Config, config_from_dict, load_config
from rnnsearch.config.search import (
    MAX_BEAM_SIZE,
    MAX_LENGTH_PENALTY,
    MAX_LENGTH_RATIO,
    MAX_SOURCE_LENGTH,
    SearchConfig,
    SearchSettingError,
)
from rnnsearch.errors import UserError
from rnnsearch.search.rules import max_output_lengths, normalised


def minimal_tree() -> dict[str, Any]:
    return {
        "data": {
            "train": {"src": "train.de", "tgt": "train.en"},
            "valid": {"src": "valid.de", "tgt": "valid.en"},
        }
    }


def write_config(directory: Path, tree: dict[str, Any], name: str = "config.yaml") -> Path:
    path = directory / name
    path.write_text(yaml.safe_dump(tree), encoding="utf-8")
    return path


def user_error_message(excinfo: pytest.ExceptionInfo[UserError]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def test_minimal_config_gets_defaults() -> None:
    config = config_from_dict(minimal_tree())
    assert config.data.train.src == "train.de"
    assert config.data.valid.tgt == "valid.en"
    assert config.data.test is None
    assert config.data.max_length == 100
    assert config.subwords.kind == "unigram"
    assert config.subwords.vocab_size == 8000
    assert config.model.encoder.hidden_size == 256
    assert config.model.decoder.readout == "maxout"
    assert config.model.dropout == 0.2
    assert config.train.batch_tokens == 2000
    assert config.train.max_steps is None
    assert config.search.beam_size == 5


def test_missing_required_section_is_rejected() -> None:
    with pytest.raises(UserError) as excinfo:
        config_from_dict({"data": {"train": {"src": "a", "tgt": "b"}}})
    assert "data.valid" in user_error_message(excinfo)


def test_unknown_top_level_key() -> None:
    tree = minimal_tree() | {"trian": {"max_steps": 5}}
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree)
    message = user_error_message(excinfo)
    assert "trian: unknown key" in message


def test_unknown_nested_key_names_dotted_path() -> None:
    tree = minimal_tree() | {"model": {"decoder": {"hiden_size": 10}}}
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree)
    message = user_error_message(excinfo)
    assert "model.decoder.hiden_size" in message
    assert "unknown key" in message


def test_wrong_type_names_key() -> None:
    tree = minimal_tree() | {"train": {"batch_tokens": "lots"}}
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree, "my.yaml")
    message = user_error_message(excinfo)
    assert message.startswith("my.yaml: ")
    assert "train.batch_tokens" in message


def test_several_problems_reported_on_one_line() -> None:
    tree = minimal_tree() | {"train": {"batch_tokens": "lots", "bogus": 1}, "search": {"beam_size": 0}}
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree)
    message = user_error_message(excinfo)
    for key in ("train.batch_tokens", "train.bogus", "search.beam_size"):
        assert key in message


def test_min_frequency_rejected_for_unigram() -> None:
    tree = minimal_tree() | {"subwords": {"kind": "unigram", "min_frequency": 2}}
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree)
    message = user_error_message(excinfo)
    assert "subwords" in message
    assert "min_frequency" in message


@pytest.mark.parametrize(
    ("model", "named"),
    [
        ({"decoder": {"input_feeding": True}}, ["model.decoder", "input_feeding", "luong"]),
        ({"decoder": {"tied_embeddings": True, "readout_size": 300}}, ["tied_embeddings", "300", "256"]),
        ({"decoder": {"layers": 5}}, ["model.decoder.layers"]),
        ({"encoder": {"cell": "rnn"}}, ["model.encoder.cell"]),
        ({"decoder": {"wiring": "vaswani"}}, ["model.decoder.wiring"]),
        ({"attention": {"score": "dot", "coverage": True}}, ["model.attention.coverage", "dot"]),
        ({"attention": {"score": "location", "coverage": True}}, ["model.attention.coverage", "location"]),
        ({"attention": {"score": "general", "coverage": True}}, ["model.attention.coverage", "general"]),
    ],
)
def test_invalid_architectures_are_one_line_errors(model: dict[str, Any], named: list[str]) -> None:
    with pytest.raises(UserError) as excinfo:
        config_from_dict(minimal_tree() | {"model": model})
    message = user_error_message(excinfo)
    assert all(word in message for word in named), message


@pytest.mark.parametrize(("wiring", "readout"), [("bahdanau", "maxout"), ("luong", "tanh")])
def test_the_readout_defaults_to_the_wirings_own(wiring: str, readout: str) -> None:
    config = config_from_dict(minimal_tree() | {"model": {"decoder": {"wiring": wiring}}})
    assert config.model.decoder.readout == readout
    assert config_from_dict(yaml.safe_load(config.to_yaml())) == config


def test_annealing_needs_a_budget() -> None:
    tree = minimal_tree() | {"train": {"lr_schedule": "anneal"}}
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree)
    message = user_error_message(excinfo)
    assert "train" in message and "max_minutes" in message
    tree["train"]["max_minutes"] = 15
    assert config_from_dict(tree).train.lr_schedule == "anneal"


def test_the_config_beam_is_bounded_like_every_other() -> None:
    wide = minimal_tree() | {"search": {"beam_size": MAX_BEAM_SIZE + 1}}
    with pytest.raises(UserError) as excinfo:
        config_from_dict(wide)
    assert "search.beam_size" in user_error_message(excinfo)
    wide["search"]["beam_size"] = MAX_BEAM_SIZE
    assert config_from_dict(wide).search.beam_size == MAX_BEAM_SIZE


def test_a_word_vocabulary_reserves_no_byte_pieces() -> None:
    assert config_from_dict(minimal_tree() | {"subwords": {"kind": "word", "vocab_size": 64}}).subwords.vocab_size == 64


def test_min_frequency_allowed_for_words() -> None:
    tree = minimal_tree() | {"subwords": {"kind": "word", "min_frequency": 2}}
    assert config_from_dict(tree).subwords.min_frequency == 2


def test_overrides_are_applied_with_yaml_types(tmp_path: Path) -> None:
    path = write_config(tmp_path, minimal_tree())
    config = load_config(path, ["train.max_steps=5", "model.dropout=0.1", "train.device=cpu"])
    assert config.train.max_steps == 5
    assert isinstance(config.train.max_steps, int)
    assert config.model.dropout == pytest.approx(0.1)
    assert config.train.device == "cpu"
    assert config.train.batch_tokens == 2000


@pytest.mark.parametrize(
    ("assignment", "key"),
    [
        ("model.encoder.hidden_size=true", "model.encoder.hidden_size"),
        ("train.max_steps=2.5", "train.max_steps"),
        ("train.max_steps=2.0", "train.max_steps"),
        ("train.seed='7'", "train.seed"),
        ("model.dropout=false", "model.dropout"),
        ("train.device=1", "train.device"),
        ("train.init_from=[a, b]", "train.init_from"),
    ],
)
def test_a_value_of_another_type_is_refused_not_coerced(tmp_path: Path, assignment: str, key: str) -> None:
    """A bool, float or string where an int belongs (and the like) is an error naming the
    key: coerced, `true` would become a hidden size of 1 and "7" a seed of 7."""
    with pytest.raises(UserError) as excinfo:
        load_config(write_config(tmp_path, minimal_tree()), [assignment])
    assert key in user_error_message(excinfo)


def test_an_int_is_a_float_where_a_float_belongs(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, minimal_tree()), ["train.learning_rate=1", "train.max_minutes=12"])
    assert config.train.learning_rate == 1.0 and config.train.max_minutes == 12.0


def test_override_replaces_value_from_file(tmp_path: Path) -> None:
    tree = minimal_tree() | {"train": {"max_steps": 100, "seed": 7}}
    config = load_config(write_config(tmp_path, tree), ["train.max_steps=5"])
    assert config.train.max_steps == 5
    assert config.train.seed == 7


@pytest.mark.parametrize("assignment", ["nokey", "=5"])
def test_malformed_override(tmp_path: Path, assignment: str) -> None:
    path = write_config(tmp_path, minimal_tree())
    with pytest.raises(UserError) as excinfo:
        load_config(path, [assignment])
    assert assignment in user_error_message(excinfo)


@pytest.mark.parametrize("value", ["[1", "{a: 1", ": x", "@x", "!!python/object:os.system"])
def test_override_value_that_is_not_yaml_names_the_override(tmp_path: Path, value: str) -> None:
    path = write_config(tmp_path, minimal_tree())
    with pytest.raises(UserError) as excinfo:
        load_config(path, [f"train.seed={value}"])
    assert user_error_message(excinfo).startswith(f"--set train.seed={value}: not valid YAML")


def test_override_through_a_value_is_rejected(tmp_path: Path) -> None:
    path = write_config(tmp_path, minimal_tree())
    with pytest.raises(UserError) as excinfo:
        load_config(path, ["data.train.src.x=1"])
    assert "src" in user_error_message(excinfo)


def test_override_of_unknown_key_is_rejected(tmp_path: Path) -> None:
    path = write_config(tmp_path, minimal_tree())
    with pytest.raises(UserError) as excinfo:
        load_config(path, ["train.max_step=5"])
    message = user_error_message(excinfo)
    assert str(path) in message
    assert "train.max_step: unknown key" in message


def test_missing_config_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"
    with pytest.raises(UserError) as excinfo:
        load_config(path)
    assert str(path) in user_error_message(excinfo)


def test_invalid_yaml_names_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("data:\n  train: {src: a, tgt: b}\n  valid: x: y\n", encoding="utf-8")
    with pytest.raises(UserError) as excinfo:
        load_config(path)
    assert user_error_message(excinfo).startswith(f"{path}:3:")


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(UserError) as excinfo:
        load_config(path)
    assert str(path) in user_error_message(excinfo)


def test_config_file_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"data:\n  train: {src: d\xe4ten.de, tgt: b}\n  valid: {src: c, tgt: d}\n")
    with pytest.raises(UserError) as excinfo:
        load_config(path)
    assert str(path) in user_error_message(excinfo)


def test_to_yaml_round_trips(tmp_path: Path) -> None:
    tree = minimal_tree()
    tree["data"]["test"] = {"src": "test.de", "tgt": "test.en"}
    tree["subwords"] = {"kind": "word", "vocab_size": 500, "min_frequency": 3}
    tree["model"] = {"dropout": 0.3, "attention": {"score": "dot", "size": 64}}
    tree["train"] = {"max_minutes": 1.5, "min_learning_rate": 1e-6, "max_batch_sentences": 16}
    original = config_from_dict(tree)
    path = tmp_path / "saved.yaml"
    path.write_text(original.to_yaml(), encoding="utf-8")
    reloaded = load_config(path)
    assert isinstance(reloaded, Config)
    assert reloaded == original
    assert reloaded.to_yaml() == original.to_yaml()


def test_default_config_round_trips(tmp_path: Path) -> None:
    original = config_from_dict(minimal_tree())
    path = tmp_path / "saved.yaml"
    path.write_text(original.to_yaml(), encoding="utf-8")
    assert load_config(path) == original


@pytest.mark.parametrize("value", [-0.5, "much"])
def test_a_bad_coverage_penalty_is_refused_naming_the_key(value) -> None:
    with pytest.raises(UserError) as excinfo:
        config_from_dict(minimal_tree() | {"search": {"coverage_penalty": value}}, "my.yaml")
    message = user_error_message(excinfo)
    assert message.startswith("my.yaml: ") and "search.coverage_penalty" in message
    assert "\n" not in message


def aligned_tree() -> dict[str, Any]:
    tree = minimal_tree()
    tree["data"]["train"] = [tree["data"]["train"], {"src": "a.de", "tgt": "a.en", "alignments": "a.links"}]
    return tree | {"train": {"guided_alignment_weight": 1.0}}


def test_guided_alignment_is_off_by_default_and_on_with_a_corpus_that_has_links() -> None:
    assert config_from_dict(minimal_tree()).train.guided_alignment_weight == 0.0
    config = config_from_dict(aligned_tree())
    assert config.train.guided_alignment_weight == 1.0
    assert [c.alignments for c in config.data.train_corpora] == [None, "a.links"]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda tree: tree["data"]["train"][1].pop("alignments"), "no data.train corpus"),
        (lambda tree: tree.update(model={"attention": "none"}), "model.attention is none"),
        (lambda tree: tree["train"].update(guided_alignment_weight=-1.0), "train.guided_alignment_weight"),
    ],
)
def test_guided_alignment_without_links_or_attention_is_refused_in_one_line(change, named: str) -> None:
    tree = aligned_tree()
    change(tree)
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree, "my.yaml")
    message = user_error_message(excinfo)
    assert message.startswith("my.yaml: ") and named in message


def test_guided_alignment_of_spoken_digits_is_refused_in_one_line() -> None:
    tree = {"data": {"kind": "spoken_digits"}, "train": {"guided_alignment_weight": 0.5, "selection_metric": "loss"}}
    with pytest.raises(UserError) as excinfo:
        config_from_dict(tree)
    assert "spoken digits" in user_error_message(excinfo)


def test_the_config_and_the_command_import_without_torch():
    """Settings are data: reading the schema, and the command before it parses its
    arguments (`rnnsearch --help`), need no torch; checking a model section reads the
    model's registries, which do."""
    code = (
        "import sys, rnnsearch.config, rnnsearch.cli\n"
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))[:3]\n"
        "rnnsearch.config.ModelConfig()\n"
        "assert 'torch' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max_length_ratio", 1.0e19),
        ("max_length_ratio", 1e308),
        ("max_length_extra", 2**63),
        ("max_length_extra", 10**30),
        ("length_penalty", 400.0),
        ("length_penalty", 1e308),
        ("max_source_length", 2**63),
        ("batch_sentences", 10**30),
    ],
)
def test_a_search_setting_past_its_bound_is_refused_naming_the_key(key: str, value: float) -> None:
    """Unbounded, these overflowed the length limit to one step (empty translations) or
    a score to an OverflowError."""
    with pytest.raises(SearchSettingError, match=f"^{key}: .*less than or equal to"):
        SearchConfig().overridden({key: value})


def test_the_longest_search_allowed_keeps_its_arithmetic_finite() -> None:
    search = SearchConfig().overridden(
        {"max_source_length": MAX_SOURCE_LENGTH, "max_length_ratio": MAX_LENGTH_RATIO, "max_length_extra": 10_000}
    )
    limit = max_output_lengths(torch.tensor([MAX_SOURCE_LENGTH + 1]), search.max_length_ratio, search.max_length_extra)
    assert limit.item() == MAX_SOURCE_LENGTH * MAX_LENGTH_RATIO + 10_000
    assert math.isfinite(normalised(-1.0, int(limit.item()), MAX_LENGTH_PENALTY))


def test_numbers_with_an_exponent_are_numbers_in_files_and_overrides(tmp_path: Path) -> None:
    """YAML 1.1 reads 1e-3 as a string (it wants 1.0e-3), which the strict schema refused
    as "not a valid number"."""
    tree = minimal_tree()
    tree["train"] = {"learning_rate": "LR"}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(tree).replace("LR", "2e-4"), encoding="utf-8")
    config = load_config(path, ["search.length_penalty=5e-1", "search.max_length_ratio=+1E1"])
    assert (config.train.learning_rate, config.search.length_penalty, config.search.max_length_ratio) == (
        2e-4,
        0.5,
        10.0,
    )
    with pytest.raises(UserError) as excinfo:
        load_config(path, ["search.max_length_ratio=1e308"])
    assert user_error_message(excinfo) == f"{path}: search.max_length_ratio: Input should be less than or equal to 100"


def test_a_layer_too_wide_to_allocate_is_refused_naming_the_key(tmp_path: Path) -> None:
    for key in ("model.aligner_size", "model.embedding_size", "model.decoder.hidden_size"):
        with pytest.raises(UserError) as excinfo:
            load_config(write_config(tmp_path, minimal_tree()), [f"{key}=1000000000"])
        assert f"{key}: Input should be less than or equal to 16384" in user_error_message(excinfo)


@pytest.mark.parametrize(
    ("assignment", "bound"),
    [
        ("model.attention.size=1000000000", "less than or equal to 16384"),  # a 128 GB allocation
        ("train.seed=18446744073709551616", "less than or equal to 18446744073709551615"),  # torch's overflow
        ("train.seed=-1", "greater than or equal to 0"),
        ("train.threads=1000000000", "less than or equal to 1024"),  # OpenMP aborted the process
        ("subwords.vocab_size=1000000000000", "less than or equal to 100000000"),  # SentencePiece's traceback
        ("train.batch_tokens=1000000000000", "less than or equal to 100000000"),
        ("data.max_length=1000000000", "less than or equal to 100000"),
    ],
)
def test_every_count_in_a_config_is_bounded_and_refused_naming_its_key(tmp_path: Path, assignment, bound) -> None:
    section, *_, name = assignment.partition("=")[0].split(".")
    with pytest.raises(UserError) as excinfo:
        load_config(write_config(tmp_path, minimal_tree()), [assignment])
    message = user_error_message(excinfo)
    assert (
        message.startswith(f"{tmp_path / 'config.yaml'}: {section}.") and f"{name}: Input should be {bound}" in message
    )


@pytest.mark.parametrize("key", ["train.learning_rate", "train.min_learning_rate"])
def test_a_rate_adam_s_float32_step_cannot_take_is_refused_naming_its_key(tmp_path: Path, key: str) -> None:
    assert load_config(write_config(tmp_path, minimal_tree()), [f"{key}=3.4e37"]) is not None
    with pytest.raises(UserError) as excinfo:
        load_config(write_config(tmp_path, minimal_tree()), [f"{key}=1e308"])
    assert f"{key}: 1e+308 is larger than 3.4e+37" in user_error_message(excinfo)

"""Each kind of data is one object (rnnsearch.kinds), and no code outside the kinds and
the audio stack asks which kind it has."""

import ast
from pathlib import Path
from typing import get_args

import pytest

import rnnsearch
from rnnsearch.config import config_from_dict
from rnnsearch.config.data import DATA_SECTIONS
from rnnsearch.kinds import KINDS, data_kind
from rnnsearch.kinds.spoken_digits import SpokenDigits
from rnnsearch.kinds.text import TextData

PACKAGE = Path(rnnsearch.__file__).parent
ALLOWED = ("kinds/", "speech/")  # the kind objects, and the audio stack a speech kind runs
KIND_CLASSES = {"SpokenDigitsConfig", "DataConfig", "SpeechInput", "TextInput", "SpokenDigits", "TextData"}
KIND_WORDS = {"speech", "spoken_digits", "text", "audio"}
SCORE_KEYS = {
    f"{score.key}{suffix}" for section in DATA_SECTIONS.values() for score in section.scores for suffix in ("", "_all")
}
"""The keys of a kind's own validation scores (valid_bleu, valid_der, …): only the kind and
its config section, which declares them, may name one."""


def _kind_readings(tree: ast.AST) -> list[str]:
    """Where a module reads which kind of data it has: a `.speech` attribute, a kind's
    name (`data.kind`, `reads`) compared with a constant, an isinstance test of a kind's
    class, or the key of a kind's own score (`row["valid_der"]`, `"valid_bleu" in row`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in SCORE_KEYS:
            found.append(f"line {node.lineno}: the score key {node.value!r}")
        if isinstance(node, ast.Attribute) and node.attr == "speech":
            found.append(f"line {node.lineno}: .speech")
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = any(isinstance(x, ast.Attribute) and x.attr in ("kind", "reads") for x in operands)
            constant = any(isinstance(x, ast.Constant) and x.value in KIND_WORDS for x in operands)
            if named and constant:
                found.append(f"line {node.lineno}: a kind compared with a constant")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
            classes = ast.walk(node.args[1]) if len(node.args) > 1 else ()
            if any(getattr(name, "id", None) in KIND_CLASSES for name in classes):
                found.append(f"line {node.lineno}: isinstance of a kind's class")
    return found


def test_no_module_outside_the_kinds_asks_which_kind_of_data_it_has():
    readings = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(ALLOWED):
            continue
        found = _kind_readings(ast.parse(path.read_text(encoding="utf-8")))
        if relative == "config/data.py":  # where each section declares its scores
            found = [reading for reading in found if "score key" not in reading]
        if found:
            readings[relative] = found
    assert readings == {}


def test_the_check_finds_a_branch_on_the_kind():
    source = (
        "if config.speech:\n    pass\nif config.data.kind == 'spoken_digits':\n    pass\nisinstance(x, SpeechInput)\n"
        "label = 'DER' if 'valid_der' in row else 'BLEU'\nbest = max(row['valid_bleu_all'] for row in rows)\n"
    )
    assert len(_kind_readings(ast.parse(source))) == 5


def test_every_data_section_of_the_config_has_its_kind():
    assert set(DATA_SECTIONS) == set(KINDS)
    for name, section in DATA_SECTIONS.items():
        assert get_args(section.model_fields["kind"].annotation) == (name,)


def test_each_kind_logs_the_scores_its_section_declares():
    declared = {name: {score.key for score in section.scores} for name, section in DATA_SECTIONS.items()}
    logged = {name: set(kind.validation_scores(["1 2"], ["1 2"])) for name, kind in KINDS.items()}
    assert logged == declared


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        ({"train": {"src": "a", "tgt": "b"}, "valid": {"src": "c", "tgt": "d"}}, TextData),
        ({"kind": "spoken_digits"}, SpokenDigits),
    ],
)
def test_a_config_chooses_its_kind_once(data, kind):
    train = {} if kind is TextData else {"selection_metric": "error_rate"}
    assert isinstance(data_kind(config_from_dict({"data": data, "train": train})), kind)


def test_each_kind_words_its_validation_scores():
    text = {"valid_bleu": 31.234, "valid_bleu_all": 30.0}
    assert TextData.scores_line(text) == "BLEU 31.23" and TextData.scores_line(text, "_all") == "30.00"
    digits = {"valid_der": 2.5, "valid_accuracy": 91.25, "valid_der_all": 3.0}
    assert SpokenDigits.scores_line(digits) == "digit error rate 2.50%, strings right 91.2%"
    assert SpokenDigits.scores_line(digits, "_all") == "digit error rate 3.00%"
    assert TextData.validation_scores(["a b c d"], ["a b c d"]) == {"valid_bleu": pytest.approx(100.0)}
    assert SpokenDigits.validation_scores(["1 2"], ["1 3"])["valid_der"] == 50.0

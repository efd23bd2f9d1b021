"""The `rnnsearch` command's arguments: every command module's commands are offered, the
shared flag groups check alike wherever they are added, and help loads no model code."""

import json
import subprocess
import sys

import pytest

from rnnsearch.cli import main

COMMANDS = (
    "train",
    "prepare",
    "train-aligner",
    "self-train",
    "align-corpus",
    "translate",
    "translate-document",
    "evaluate",
    "score",
    "align",
    "average",
    "export",
    "compare",
    "synthetic",
    "attention",
    "serve",
)
PROBE = """
import json, sys
from rnnsearch.cli import main
try:
    main(["--help"])
except SystemExit as stop:
    status = stop.code
heavy = ("rnnsearch.translation", "rnnsearch.server", "rnnsearch.training", "rnnsearch.export", "rnnsearch.search")
print(json.dumps({"status": status, "loaded": sorted(m for m in sys.modules if m.startswith(heavy))}))
"""


def test_help_lists_every_command_in_order_and_loads_no_translator_server_or_training():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True)
    report = json.loads(done.stdout.splitlines()[-1])
    assert report == {"status": 0, "loaded": []}
    assert "{" + ",".join(COMMANDS) + "}" in done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_its_help(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: rnnsearch {command} ")


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (["translate", "m", "--beam-size", "0"], "argument --beam-size: must be greater than 0, got 0"),
        (["evaluate", "m", "--beam-size", "1000"], "argument --beam-size: must be at most"),
        (["attention", "m", "x", "-o", "x.png", "--batch-sentences", "-3"], "must be greater than 0, got -3"),
        (["serve", "m", "--precision", "fp64"], "argument --precision: invalid choice: 'fp64'"),
        (["score", "m", "--src", "a", "--tgt", "b", "--precision", "int8"], "invalid choice: 'int8'"),
        (["align", "m", "--src", "a"], "the following arguments are required: --tgt"),
        (["train"], "the following arguments are required: config"),
        (["prepare", "c.yaml", "--set"], "argument --set: expected one argument"),
        (["align-corpus", "c.yaml", "--iterations", "0"], "argument --iterations: must be greater than 0, got 0"),
        (["align-corpus", "c.yaml", "--symmetrize", "and"], "argument --symmetrize: invalid choice: 'and'"),
    ],
)
def test_shared_flags_are_checked_alike_by_every_command_that_takes_them(arguments, error, capsys):
    with pytest.raises(SystemExit) as stop:
        main(arguments)
    assert stop.value.code == 2
    assert error in capsys.readouterr().err

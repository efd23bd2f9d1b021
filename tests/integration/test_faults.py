"""Faults a training run and the commands meet on a real machine: a full disk, a kill
mid-write, output that cannot be written. A full disk is a file-size limit on the
process (SIGXFSZ ignored), which makes writes past it fail with the OS's own error."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys

from rnnsearch.evaluation.plots import learning_curves

ROWS = [{"step": 1, "train_loss": 5.0}, {"step": 2, "train_loss": 4.0, "valid_loss": 4.5, "valid_bleu": 1.0}]


def test_a_plot_that_cannot_be_written_leaves_the_previous_figure_whole(tmp_path):
    path = tmp_path / "learning_curve.png"
    learning_curves(ROWS, path)
    before = path.read_bytes()
    code = f"""
from rnnsearch.errors import UserError
from rnnsearch.evaluation.plots import learning_curves
try:
    learning_curves({ROWS!r}, "{path}")
except UserError as error:
    print(error)
"""

    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) // 2, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, preexec_fn=limit_file_size
    )
    assert result.stdout.strip() == f"{path}: cannot write: File too large", result.stderr[-3000:]
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["learning_curve.png"]

"""What training says between validations: a line every train.log_every steps when
standard error is a pipe, and the progress bar on a terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

from tests.integration.conftest import tiny_config, write_config

LINE = re.compile(
    r"^step (\d+), epoch (\d+): loss \d+\.\d{3}, lr \d\.\d\de-\d\d, [\d,]+ target tokens/s, \d+:\d\d left$"
)


def test_a_run_whose_standard_error_is_a_pipe_writes_a_line_every_log_every_steps(corpus, tmp_path):
    options = {"max_steps": 7, "valid_every": 5, "log_every": 3}
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run", **options))
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "rnnsearch", "train", str(config)]
    result = subprocess.run(
        command, stdout=subprocess.DEVNULL, capture_output=False, stderr=subprocess.PIPE, env=environment, timeout=300
    )
    stderr = result.stderr.decode("utf-8")
    assert result.returncode == 0, stderr[-3000:]
    matches = [LINE.match(line) for line in stderr.splitlines()]
    assert [(int(m[1]), int(m[2])) for m in matches if m] == [(3, 1), (6, 1)], stderr
    assert "\r" not in stderr  # no progress bar drawn into the log
    assert re.search(r"^step 5: valid loss", stderr, re.MULTILINE), stderr


def test_a_run_on_a_terminal_draws_the_progress_bar_and_no_log_lines(corpus, tmp_path):
    options = {"max_steps": 4, "valid_every": 4, "log_every": 2}
    config = write_config(tmp_path / "c.yaml", tiny_config(corpus, tmp_path / "run", **options))
    reader, writer = pty.openpty()
    fcntl.ioctl(writer, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "rnnsearch", "train", str(config)]
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=writer, env=environment) as process:
        os.close(writer)
        chunks = []
        while True:
            try:
                chunk = os.read(reader, 65536)
            except OSError:  # EIO: the process closed the terminal's other end
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(reader)
        assert process.wait(timeout=300) == 0
    screen = b"".join(chunks).decode("utf-8", errors="replace")
    assert re.search(r"4/4 \[", screen), screen
    assert not any(LINE.match(line.strip()) for line in re.split(r"[\r\n]", screen)), screen

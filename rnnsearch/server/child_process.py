"""`rnnsearch serve` in a child process, for benchmarks and end-to-end tests."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rnnsearch.errors import UserError

SERVING = re.compile(r" at (http://\S+:\d+/) ")


@contextmanager
def served(model_dir: str | Path, log_path: Path, wait: float = 300.0) -> Iterator[str]:
    """Start `rnnsearch serve model_dir` on a free loopback port; yield its URL; stop it afterwards.

    The server's output goes to `log_path`, not to a pipe: uvicorn logs every request,
    and a pipe that nobody reads fills up and stalls the server.
    """
    command = [sys.executable, "-m", "rnnsearch", "serve", str(model_dir), "--port", "0", "--device", "cpu"]
    with log_path.open("w") as log:
        server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            yield _url(server, log_path, wait)
        finally:
            _stop(server)


def _url(server: subprocess.Popen, log_path: Path, wait: float) -> str:
    """The URL in the server's 'serving … at http://HOST:PORT/' line, waited for at most `wait` seconds."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and server.poll() is None:
        match = SERVING.search(log_path.read_text(encoding="utf-8", errors="replace"))
        if match:
            return match.group(1)
        time.sleep(0.2)
    output = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    raise UserError(f"the server printed no address (exit status {server.poll()}): {output[-1] if output else ''}")


def _stop(server: subprocess.Popen) -> None:
    """Terminate the server, and kill it if it has not exited 30 s later."""
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()

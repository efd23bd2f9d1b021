"""How preparing reads a corpus and speaks while it does: a chunk of pairs at a time, a
progress bar over the input files' bytes, and lines on standard error."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

from tqdm import tqdm

from rnnsearch.config.data import ParallelFiles

CHUNK_LINES = 10_000
"""Pairs read, encoded and written together; sampling.py and writing.py read it here when
they run (`streaming.CHUNK_LINES`), so that a test may set it."""


def say(message: str) -> None:
    """Write `message` as a line to standard error without breaking the progress bar."""
    tqdm.write(message, file=sys.stderr)


def total_bytes(corpora: Sequence[ParallelFiles]) -> int:
    """The size of every file of `corpora`, together."""
    return sum(os.stat(path).st_size for c in corpora for path in (c.src, c.tgt))


class Progress:
    """A progress bar over the input files' bytes (shown on a terminal only), with lines/s."""

    def __init__(self, what: str, total: int):
        self.bar = tqdm(total=total, unit="B", unit_scale=True, desc=what, dynamic_ncols=True, disable=None)
        self.lines, self.base, self.started = 0, 0, time.monotonic()

    def update(self, lines: int, bytes_read: int) -> None:
        self.lines += lines
        self.bar.update(self.base + bytes_read - self.bar.n)
        rate = self.lines / max(time.monotonic() - self.started, 1e-9)
        self.bar.set_postfix_str(f"{self.lines:,} lines, {rate:,.0f} lines/s", refresh=False)

    def next_corpus(self) -> None:
        """The next corpus's bytes count after the last one's."""
        self.base = self.bar.n

    def close(self) -> None:
        self.bar.close()

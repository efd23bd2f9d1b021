"""Reading lines as they arrive: a chunk of whatever has come, so that a filter fed one
line at a time through a pipe answers each line before the next one is written."""

from __future__ import annotations

import io
import select
from collections.abc import Iterator
from typing import Protocol

from rnnsearch.text.corpus import decode_lines

READ_SIZE = 1 << 16
"""Bytes asked for by one read: more than a buffered stream's own buffer, so that a read
that returns fewer leaves nothing buffered behind it."""


class Arriving(Protocol):
    """A binary stream read as its data arrives (standard input's buffer, a buffered file)."""

    def read1(self, size: int = ..., /) -> bytes: ...

    def fileno(self) -> int: ...


def arriving_chunks(stream: Arriving, origin: str, limit: int) -> Iterator[list[str]]:
    """The lines of `stream` (UTF-8, checked as `decode_lines` does, named `origin`), in
    chunks of at most `limit`: a chunk ends at `limit` lines, at the end of the input, or
    where the input has no more lines ready to read. A file or a busy pipe gives full
    chunks; a pipe fed line by line gives each line as soon as it arrives."""
    lines: list[bytes] = []
    partial = b""
    done = 0
    while True:
        data = stream.read1(READ_SIZE)
        *complete, partial = (partial + data).split(b"\n")
        lines += complete
        if not data and partial:
            lines.append(partial)
        while len(lines) >= limit:
            yield decode_lines(lines[:limit], origin, first=done + 1)
            lines, done = lines[limit:], done + limit
        if lines and (not data or not _more_ready(stream, filled=len(data) == READ_SIZE)):
            yield decode_lines(lines, origin, first=done + 1)
            lines, done = [], done + len(lines)
        if not data:
            return


def _more_ready(stream: Arriving, *, filled: bool) -> bool:
    """Whether more input can be read without waiting: after a read that `filled` its size
    more may be buffered; otherwise the buffer is empty and the file descriptor tells (a
    file always has more ready, up to its end). A stream without one, held in memory, has."""
    if filled:
        return True
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return True
    return bool(select.select([descriptor], [], [], 0)[0])

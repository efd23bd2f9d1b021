"""What the commands read and write: the input a chunk at a time, and outputs whose write
errors are one line naming the file rather than a traceback."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TextIO, TypeVar, cast

from rnnsearch.errors import UserError

P = ParamSpec("P")
R = TypeVar("R")


class NamedOutput:
    """An output stream whose write errors (a full disk, /dev/full) are one line naming it,
    `<stdout>` for standard output; a closed pipe stays a BrokenPipeError."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self.stream = stream
        self.name = name

    def write(self, text: str) -> int:
        return self._named(self.stream.write, text)

    def flush(self) -> None:
        self._named(self.stream.flush)

    def close(self) -> None:
        self._named(self.stream.close)

    def __enter__(self) -> NamedOutput:
        return self

    def __exit__(self, *exception: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)

    def _named(self, operation: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return operation(*args, **kwargs)
        except BrokenPipeError:
            raise
        except OSError as error:
            if self.stream is sys.__stdout__:
                discard(self.stream)
            raise UserError(f"{self.name}: cannot write: {error.strerror or error}") from None


def discard(stream: TextIO) -> None:
    """Point the stream's descriptor at /dev/null, so the output still buffered is dropped
    at exit instead of failing again with a traceback."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)


def output(path: str) -> NamedOutput:
    """A UTF-8 text file opened for writing, whose write errors name it."""
    return NamedOutput(open(path, "w", encoding="utf-8"), path)


def opened(files: contextlib.ExitStack, path: str | None) -> NamedOutput | None:
    """The output file `path` opened on `files`, which closes it; None for no path."""
    return files.enter_context(output(path)) if path else None


def read_input(path: str | None) -> Iterator[list[str]]:
    """The input lines a chunk at a time: a file in chunks of SENTENCES_PER_SEARCH, stdin as
    its lines arrive, so that translations can be written before the input ends."""
    from rnnsearch.text.corpus import read_lines
    from rnnsearch.text.stream import Arriving, arriving_chunks
    from rnnsearch.translation.translator import SENTENCES_PER_SEARCH

    if path is None or path == "-":
        stdin = cast(Arriving, sys.stdin.buffer)  # a BufferedReader, though typed as any BinaryIO
        yield from arriving_chunks(stdin, "<stdin>", SENTENCES_PER_SEARCH)
        return
    lines = read_lines(path)
    for start in range(0, len(lines), SENTENCES_PER_SEARCH):
        yield lines[start : start + SENTENCES_PER_SEARCH]

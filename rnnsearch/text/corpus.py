"""Reading parallel text: plain or gzip UTF-8 files, one sentence a line.

Every problem is reported as a one-line UserError naming the file (and line), so a
user never sees a traceback for bad data and no line is dropped silently.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rnnsearch.errors import UserError


def read_lines(path: str | Path) -> list[str]:
    """All lines of a UTF-8 text file (gzip if it ends in .gz), without newlines."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as handle:
            raw_lines = handle.read().split(b"\n")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a text file") from None
    except (OSError, EOFError) as error:
        raise UserError(f"{path}: cannot read ({error})") from None
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    return [_decode(raw, path, number) for number, raw in enumerate(raw_lines, start=1)]


def decode_lines(raw_lines: Iterable[bytes], origin: str, first: int = 1) -> list[str]:
    """Decode byte lines (e.g. from stdin) with the same checks as files; `first` is the
    number of the first line, for lines read a chunk at a time."""
    return [_decode(raw.rstrip(b"\n"), origin, number) for number, raw in enumerate(raw_lines, start=first)]


def _decode(raw: bytes, origin: str | Path, number: int) -> str:
    try:
        return raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as error:
        raise UserError(f"{origin}:{number}: not valid UTF-8 (byte {error.start + 1})") from None


def read_parallel(src_path: str | Path, tgt_path: str | Path) -> tuple[list[str], list[str]]:
    """Line-aligned source and target sentences; differing line counts are an error."""
    sources, targets = read_lines(src_path), read_lines(tgt_path)
    if len(sources) != len(targets):
        raise UserError(
            f"{src_path} has {len(sources)} lines but {tgt_path} has {len(targets)}; "
            "parallel files must have the same number of lines"
        )
    return sources, targets


@dataclass(frozen=True)
class FilterReport:
    """What filtering a training corpus kept and skipped, for the user to see."""

    kept: int
    empty: int
    too_long: int

    def __str__(self) -> str:
        return f"kept {self.kept} pairs; skipped {self.empty} empty and {self.too_long} longer than the limit"


def is_blank(line: str) -> bool:
    return not line.strip()


def require_usable_pairs(
    sources: list[str], targets: list[str], src_path: str | Path, tgt_path: str | Path, *, purpose: str
) -> None:
    """Refuse parallel text in which no pair has words on both sides, naming the file to blame.

    Such a set gives training nothing to learn subwords or weights from, and validation
    nothing to score; checked on reading, it costs one line instead of a failure deep in
    SentencePiece or at the first validation. `purpose` (training, validation) goes in the message.
    """
    if any(not is_blank(s) and not is_blank(t) for s, t in zip(sources, targets)):
        return
    if not sources:
        path, reason = src_path, "the file is empty"
    elif all(map(is_blank, sources)):
        path, reason = src_path, "every line is blank"
    elif all(map(is_blank, targets)):
        path, reason = tgt_path, "every line is blank"
    else:
        path, reason = src_path, f"each non-blank line faces a blank line of {tgt_path}"
    raise UserError(f"{path}: no usable {purpose} pairs ({reason})")

"""Reading parallel text: plain or gzip UTF-8 files, one sentence a line.

Every problem is reported as a one-line UserError naming the file (and line), so a
user never sees a traceback for bad data and no line is dropped silently. Files are
read a chunk of lines at a time, so that a training corpus of any size streams through
in bounded memory; the small-file readers are built on the same line rules.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from rnnsearch.errors import UserError


class _InvalidLine(UserError):
    """A line that is not UTF-8; it carries its number so that, of two files read side by
    side, the error met first in reading order can be reported."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line

    def __reduce__(self) -> tuple[type[_InvalidLine], tuple[str, int]]:
        """Pickled with its line number, so that a worker process can raise it to this one."""
        return _InvalidLine, (str(self), self.line)


def decode_lines(raw_lines: Iterable[bytes], origin: str, first: int = 1) -> list[str]:
    """Decode byte lines (e.g. from stdin) with the same checks as files; `first` is the
    number of the first line, for lines read a chunk at a time.

    A line loses one final "\\n" and then any "\\r" before it, so "\\r\\n" endings read
    like "\\n" ones; bytes that are not UTF-8 are an error naming `origin` and the line.
    """
    raw_lines = list(raw_lines)
    if not raw_lines:
        return []
    joined = b"".join(raw_lines)
    ends_in_newline = joined.endswith(b"\n")
    if joined.count(b"\n") == len(raw_lines) - (not ends_in_newline):  # lines as a file gives them
        try:  # decoded as one text, several times faster than a line at a time
            lines = joined.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            pass
        else:
            if ends_in_newline:
                lines.pop()
            return [line.rstrip("\r") for line in lines]
    return [_decode(_without_newline(raw), origin, number) for number, raw in enumerate(raw_lines, start=first)]


def _without_newline(raw: bytes) -> bytes:
    return raw[:-1] if raw.endswith(b"\n") else raw


def _decode(raw: bytes, origin: str | Path, number: int) -> str:
    try:
        return raw.decode("utf-8").rstrip("\r")
    except UnicodeDecodeError as error:
        raise _InvalidLine(f"{origin}:{number}: not valid UTF-8 (byte {error.start + 1})", number) from None


class _LineFile:
    """A text file (gzip when its name ends in .gz) opened for reading raw lines a few at
    a time, every failure to open or read it turned into a UserError naming it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._disk = _open_binary(path)  # closed by close(), with the decompressor over it
        self._lines: BinaryIO | gzip.GzipFile = self._disk
        if path.suffix == ".gz":
            self._lines = gzip.GzipFile(fileobj=self._disk, mode="rb")

    def __enter__(self) -> _LineFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the decompressor (if any) and the file under it."""
        try:
            self._lines.close()
        finally:
            self._disk.close()

    def read(self, limit: int | None = None) -> list[bytes]:
        """The next `limit` raw lines (all that are left when None), each with its "\\n"
        except perhaps the last line of the file; fewer only at the end of the file."""
        try:
            return list(islice(self._lines, limit))
        except EOFError as error:
            raise UserError(f"{self.path}: cannot read (truncated gzip file: {error})") from None
        except (gzip.BadGzipFile, zlib.error) as error:
            raise UserError(f"{self.path}: cannot read (corrupt gzip file: {error})") from None
        except OSError as error:
            raise UserError(f"{self.path}: cannot read ({error})") from None

    def count_rest(self, chunk_lines: int) -> int:
        """How many lines are left, read a chunk at a time and not kept."""
        total = 0
        while chunk := self.read(chunk_lines):
            total += len(chunk)
        return total

    def decode(self, raw_lines: list[bytes], first: int) -> list[str]:
        """Raw lines of this file, numbered from `first`, decoded as `decode_lines` does."""
        return decode_lines(raw_lines, str(self.path), first)

    @property
    def bytes_read(self) -> int:
        """Bytes consumed from the file on disk (compressed bytes for gzip)."""
        return self._disk.tell()


def _open_binary(path: Path) -> BinaryIO:
    """`path` opened for binary reading, or the one-line UserError saying why it cannot be."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a text file") from None
    except OSError as error:
        raise UserError(f"{path}: cannot read ({error})") from None


def file_bytes(path: str | Path) -> int:
    """The size of `path` on disk (compressed for gzip): the total that `LineChunk.bytes_read` reaches."""
    try:
        return Path(path).stat().st_size
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except OSError as error:
        raise UserError(f"{path}: cannot read ({error})") from None


def read_lines(path: str | Path) -> list[str]:
    """All lines of a UTF-8 text file (gzip if it ends in .gz), without newlines."""
    with _LineFile(Path(path)) as lines:
        return lines.decode(lines.read(), first=1)


def stream_lines(path: str | Path, *, chunk_lines: int = 10_000) -> Iterator[str]:
    """The lines of a UTF-8 text file (gzip if it ends in .gz), without newlines, read and
    checked `chunk_lines` at a time: a file larger than memory streams through. The file
    opens at the call, so that a missing one is refused before the first line is asked for."""
    lines = _LineFile(Path(path))

    def stream() -> Iterator[str]:
        with lines:
            first = 1
            while raw := lines.read(chunk_lines):
                yield from lines.decode(raw, first=first)
                first += len(raw)

    return stream()


@dataclass(frozen=True)
class LineChunk:
    """Consecutive aligned lines of a pair of parallel files."""

    first_line: int  # 1-based number of the chunk's first line
    sources: list[str]
    targets: list[str]
    bytes_read: int  # bytes consumed so far from both files on disk (compressed for gzip), for progress
    links: list[str] | None = None  # the word alignments' lines, where a file of them is read beside
    links_path: Path | None = None


@dataclass(frozen=True)
class RawChunk:
    """Consecutive aligned lines of a pair of parallel files, not yet decoded: what a
    worker process is sent, to decode (and check) them there."""

    src_path: Path
    tgt_path: Path
    first_line: int
    raw_sources: list[bytes]
    raw_targets: list[bytes]
    bytes_read: int
    links_path: Path | None = None  # the pairs' word alignments, read in lockstep when given
    raw_links: list[bytes] | None = None

    def decode(self) -> LineChunk:
        """The chunk's lines as text; of two lines that are not UTF-8 the earlier one is
        reported (the source's on the same line), as reading pair by pair would meet them."""
        decoded: list[list[str]] = []
        errors: list[_InvalidLine] = []
        files = [(self.src_path, self.raw_sources), (self.tgt_path, self.raw_targets)]
        if self.links_path is not None and self.raw_links is not None:
            files.append((self.links_path, self.raw_links))
        for path, raw in files:
            try:
                decoded.append(decode_lines(raw, str(path), self.first_line))
            except _InvalidLine as error:
                errors.append(error)
        if errors:
            raise min(errors, key=lambda error: error.line)
        links = decoded[2] if len(decoded) > 2 else None
        return LineChunk(self.first_line, decoded[0], decoded[1], self.bytes_read, links, self.links_path)


def stream_parallel(src_path: str | Path, tgt_path: str | Path, *, chunk_lines: int = 10_000) -> Iterator[LineChunk]:
    """The line-aligned pairs of two files, in chunks of at most `chunk_lines` pairs.

    Memory is bounded by a chunk whatever the size of the files. Errors (a missing or
    unreadable file, a truncated gzip file, a line that is not UTF-8, a file that ends
    before the other) are raised when the stream reaches them, after the chunks before
    them; the files are closed when the stream ends, fails or is closed early.
    """
    for chunk in stream_raw_parallel(src_path, tgt_path, chunk_lines=chunk_lines):
        yield chunk.decode()


def stream_raw_parallel(
    src_path: str | Path, tgt_path: str | Path, *, chunk_lines: int = 10_000, alignments: str | Path | None = None
) -> Iterator[RawChunk]:
    """`stream_parallel`'s chunks before decoding, with every check but UTF-8's, which
    `RawChunk.decode` makes (in this process or another). Where one file ends before the
    other, the lines they share are decoded first, so that a bad line among them is
    reported before the different lengths. `alignments`, a file of one line per pair, is
    read in lockstep into each chunk's `raw_links`; another number of lines is an error."""
    if chunk_lines < 1:
        raise ValueError(f"chunk_lines must be positive, not {chunk_lines}")
    with ExitStack() as stack:
        source, target = (stack.enter_context(_LineFile(Path(path))) for path in (src_path, tgt_path))
        links = None if alignments is None else stack.enter_context(_LineFile(Path(alignments)))
        first = 1
        while True:
            raw_sources, raw_targets = source.read(chunk_lines), target.read(chunk_lines)
            aligned = min(len(raw_sources), len(raw_targets))
            raw_links = None if links is None else links.read(max(aligned, 1))
            chunk = RawChunk(
                source.path,
                target.path,
                first,
                raw_sources[:aligned],
                raw_targets[:aligned],
                source.bytes_read + target.bytes_read,
                None if links is None else links.path,
                None if raw_links is None else raw_links[:aligned],
            )
            if len(raw_sources) != len(raw_targets):
                chunk.decode()
                _refuse_different_lengths(source, target, raw_sources, raw_targets, first, chunk_lines)
            if links is not None and raw_links is not None and len(raw_links) != aligned:
                chunk.decode()
                _refuse_other_alignment_lines(
                    links, source, before=first - 1, pairs=aligned, read=len(raw_links), chunk_lines=chunk_lines
                )
            if not aligned:
                return
            yield chunk
            first += aligned


def _refuse_different_lengths(
    source: _LineFile,
    target: _LineFile,
    raw_sources: list[bytes],
    raw_targets: list[bytes],
    first: int,
    chunk_lines: int,
) -> None:
    """Raise the error for files of different lengths, whose last chunks (from line `first`)
    differ: the shorter one has ended; the rest of the longer one is counted to say how long it is."""
    (short, short_raw), (long, long_raw) = sorted(
        ((source, raw_sources), (target, raw_targets)), key=lambda f: len(f[1])
    )
    short_count = first - 1 + len(short_raw)
    long_count = first - 1 + len(long_raw) + long.count_rest(chunk_lines)
    raise UserError(
        f"{short.path} ends after {_line_count(short_count)} but {long.path} has {_line_count(long_count)}; "
        "parallel files must have the same number of lines"
    )


def _refuse_other_alignment_lines(
    links: _LineFile, source: _LineFile, *, before: int, pairs: int, read: int, chunk_lines: int
) -> None:
    """Raise the error for an alignment file with another number of lines than its pairs:
    after `before` lines, a chunk of `pairs` pairs met `read` lines of alignments (fewer:
    the alignments ended; more, only at the end of the pairs: the alignments go on)."""
    if read < pairs:
        link_count, pair_count = before + read, before + pairs + source.count_rest(chunk_lines)
    else:
        link_count, pair_count = before + read + links.count_rest(chunk_lines), before + pairs
    raise UserError(
        f"{links.path} has {_line_count(link_count)} but {source.path} has {_line_count(pair_count)}; "
        "an alignment file has one line per pair"
    )


def _line_count(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def read_parallel(src_path: str | Path, tgt_path: str | Path) -> tuple[list[str], list[str]]:
    """Line-aligned source and target sentences; differing line counts are an error.

    All the lines are kept in memory; `stream_parallel` reads a corpus of any size.
    """
    sources: list[str] = []
    targets: list[str] = []
    for chunk in stream_parallel(src_path, tgt_path):
        sources += chunk.sources
        targets += chunk.targets
    return sources, targets


def is_blank(line: str) -> bool:
    return not line.strip()


@dataclass
class PairCounts:
    """Blank and usable pairs counted chunk by chunk, for `require_usable` on a streamed corpus."""

    lines: int = 0
    blank_sources: int = 0
    blank_targets: int = 0
    usable: int = 0  # pairs with words on both sides

    def add(self, sources: list[str], targets: list[str]) -> list[bool]:
        """Count a chunk of aligned pairs; which of them are usable (blank on neither side)."""
        blank_sources = [is_blank(s) for s in sources]
        blank_targets = [is_blank(t) for t in targets]
        usable = [not (s or t) for s, t in zip(blank_sources, blank_targets, strict=True)]
        self.lines += len(usable)
        self.blank_sources += sum(blank_sources)
        self.blank_targets += sum(blank_targets)
        self.usable += sum(usable)
        return usable

    def merge(self, other: PairCounts) -> None:
        """Add the counts of another part of the same corpus (counted in another process)."""
        self.lines += other.lines
        self.blank_sources += other.blank_sources
        self.blank_targets += other.blank_targets
        self.usable += other.usable


def require_usable(counts: PairCounts, src_path: str | Path, tgt_path: str | Path, *, purpose: str) -> None:
    """Refuse parallel text in which no pair has words on both sides, naming the file to blame.

    Such a set gives training nothing to learn subwords or weights from, and validation
    nothing to score; checked on reading, it costs one line instead of a failure deep in
    SentencePiece or at the first validation. `purpose` (training, validation) goes in the message.
    """
    if counts.usable:
        return
    if not counts.lines:
        path, reason = src_path, "the file is empty"
    elif counts.blank_sources == counts.lines:
        path, reason = src_path, "every line is blank"
    elif counts.blank_targets == counts.lines:
        path, reason = tgt_path, "every line is blank"
    else:
        path, reason = src_path, f"each non-blank line faces a blank line of {tgt_path}"
    raise UserError(f"{path}: no usable {purpose} pairs ({reason})")


def require_usable_pairs(
    sources: list[str], targets: list[str], src_path: str | Path, tgt_path: str | Path, *, purpose: str
) -> None:
    """`require_usable` for parallel text read whole."""
    counts = PairCounts()
    counts.add(sources, targets)
    require_usable(counts, src_path, tgt_path, purpose=purpose)

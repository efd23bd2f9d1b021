"""Tests for rnnsearch.text.corpus: reading parallel text, whole or as a stream, and its checks."""

from __future__ import annotations

import gc
import gzip
import os
import re
import tracemalloc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rnnsearch.errors import UserError
from rnnsearch.text.corpus import (
    LineChunk,
    PairCounts,
    decode_lines,
    file_bytes,
    read_lines,
    read_parallel,
    require_usable,
    require_usable_pairs,
    stream_parallel,
)

LINES = ["Ein Hund läuft.", "", "  zwei  Leerzeichen ", "Ünïcödé ✓ 漢字"]


def write_plain(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def write_gzip(path: Path, data: bytes) -> Path:
    with gzip.open(path, "wb") as out:
        out.write(data)
    return path


def message_of(excinfo: pytest.ExceptionInfo[UserError]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def encoded(lines: list[str], ending: str = "\n") -> bytes:
    return "".join(line + ending for line in lines).encode("utf-8")


def test_plain_and_gzip_give_same_lines(tmp_path: Path) -> None:
    data = encoded(LINES)
    plain = read_lines(write_plain(tmp_path / "a.txt", data))
    zipped = read_lines(write_gzip(tmp_path / "a.txt.gz", data))
    assert plain == LINES
    assert zipped == LINES


def test_crlf_endings_are_stripped(tmp_path: Path) -> None:
    assert read_lines(write_plain(tmp_path / "crlf.txt", encoded(LINES, "\r\n"))) == LINES
    assert read_lines(write_gzip(tmp_path / "crlf.gz", encoded(LINES, "\r\n"))) == LINES


def test_final_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = write_plain(tmp_path / "nofinal.txt", b"one\ntwo\nthree")
    assert read_lines(path) == ["one", "two", "three"]


def test_trailing_blank_lines_are_kept_except_the_final_newline(tmp_path: Path) -> None:
    path = write_plain(tmp_path / "blank.txt", b"one\n\n\n")
    assert read_lines(path) == ["one", "", ""]


def test_empty_file_gives_no_lines(tmp_path: Path) -> None:
    assert read_lines(write_plain(tmp_path / "empty.txt", b"")) == []
    assert read_lines(write_gzip(tmp_path / "empty.gz", b"")) == []


@pytest.mark.parametrize("writer", [write_plain, write_gzip])
def test_invalid_utf8_names_path_and_line(tmp_path: Path, writer) -> None:
    path = writer(tmp_path / ("bad.gz" if writer is write_gzip else "bad.txt"), b"ok\nfine\nbr\xffoken\nlast\n")
    with pytest.raises(UserError) as excinfo:
        read_lines(path)
    assert f"{path}:3:" in message_of(excinfo)


def test_missing_file_names_path(tmp_path: Path) -> None:
    for name in ("absent.txt", "absent.gz"):
        path = tmp_path / name
        with pytest.raises(UserError) as excinfo:
            read_lines(path)
        assert str(path) in message_of(excinfo)


def test_directory_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(UserError) as excinfo:
        read_lines(tmp_path)
    assert str(tmp_path) in message_of(excinfo)


def test_corrupt_gzip_is_rejected(tmp_path: Path) -> None:
    not_gzip = write_plain(tmp_path / "fake.gz", b"plain text, not gzip\n")
    truncated = write_plain(tmp_path / "cut.gz", gzip.compress(encoded(LINES * 50))[:40])
    for path in (not_gzip, truncated):
        with pytest.raises(UserError) as excinfo:
            read_lines(path)
        assert str(path) in message_of(excinfo)


def test_read_parallel_returns_aligned_lines(tmp_path: Path) -> None:
    src = write_plain(tmp_path / "x.de", encoded(["a", "b"]))
    tgt = write_gzip(tmp_path / "x.en.gz", encoded(["A", "B"]))
    assert read_parallel(src, tgt) == (["a", "b"], ["A", "B"])


def test_read_parallel_line_count_mismatch(tmp_path: Path) -> None:
    src = write_plain(tmp_path / "train.de", encoded(["a", "b", "c"]))
    tgt = write_plain(tmp_path / "train.en", encoded(["A", "B", "C", "D"]))
    with pytest.raises(UserError) as excinfo:
        read_parallel(src, tgt)
    message = message_of(excinfo)
    assert str(src) in message and str(tgt) in message
    rest = message.replace(str(src), "<src>").replace(str(tgt), "<tgt>")
    assert re.search(r"<src>\D*\b3\b.*<tgt>\D*\b4\b", rest)
    assert message.endswith("parallel files must have the same number of lines")


def test_decode_lines_strips_newlines() -> None:
    assert decode_lines([b"one\n", b"two\r\n", b"three"], "<stdin>") == ["one", "two", "three"]


def test_decode_lines_names_stdin_line() -> None:
    with pytest.raises(UserError) as excinfo:
        decode_lines([b"fine\n", b"also fine\n", b"\xc3\x28 bad\n"], "<stdin>")
    assert "<stdin>:3:" in message_of(excinfo)


@pytest.mark.parametrize(
    ("sources", "targets", "blamed", "reason"),
    [
        ([], [], "a.de", "(the file is empty)"),
        (["", " \t "], ["x", "y"], "a.de", "(every line is blank)"),
        (["x", "y"], ["", "  "], "a.en", "(every line is blank)"),
        (["x", ""], ["", "y"], "a.de", "(each non-blank line faces a blank line of a.en)"),
    ],
)
def test_a_set_without_a_usable_pair_names_the_file_to_blame(
    sources: list[str], targets: list[str], blamed: str, reason: str
) -> None:
    with pytest.raises(UserError) as excinfo:
        require_usable_pairs(sources, targets, "a.de", "a.en", purpose="validation")
    assert message_of(excinfo) == f"{blamed}: no usable validation pairs {reason}"


def test_one_usable_pair_is_enough() -> None:
    require_usable_pairs(["", "x"], ["y", "z"], "a.de", "a.en", purpose="training")


def write_pair(folder: Path, sources: bytes, targets: bytes, *, zipped: bool) -> tuple[Path, Path]:
    """A pair of parallel files holding the given bytes, gzip-compressed or plain."""
    writer, suffix = (write_gzip, ".gz") if zipped else (write_plain, "")
    return writer(folder / f"train.de{suffix}", sources), writer(folder / f"train.en{suffix}", targets)


def streamed(src: Path, tgt: Path, chunk_lines: int) -> tuple[list[str], list[str]]:
    """The pairs of stream_parallel, joined, after checking the chunks' sizes and line numbers."""
    sources: list[str] = []
    targets: list[str] = []
    for chunk in stream_parallel(src, tgt, chunk_lines=chunk_lines):
        assert chunk.first_line == len(sources) + 1
        assert 0 < len(chunk.sources) == len(chunk.targets) <= chunk_lines
        sources += chunk.sources
        targets += chunk.targets
    return sources, targets


@pytest.mark.parametrize("zipped", [False, True])
@pytest.mark.parametrize("ending", ["\n", "\r\n"])
@pytest.mark.parametrize("final_newline", [True, False])
@pytest.mark.parametrize("chunk_lines", [1, 2, 3, 10_000])
def test_stream_parallel_gives_the_pairs_of_read_parallel(
    tmp_path: Path, zipped: bool, ending: str, final_newline: bool, chunk_lines: int
) -> None:
    sources = LINES + ["", "sechs", "", "acht"]
    targets = ["A dog runs.", "x", "", "Unicode ✓", "five", "", "seven", "eight"]
    data = [encoded(lines, ending) for lines in (sources, targets)]
    if not final_newline:
        data = [text.removesuffix(ending.encode()) for text in data]
    src, tgt = write_pair(tmp_path, *data, zipped=zipped)
    expected = read_parallel(src, tgt)
    assert expected == (sources, targets)
    assert streamed(src, tgt, chunk_lines) == expected


def test_stream_parallel_of_empty_files_yields_nothing(tmp_path: Path) -> None:
    for zipped in (False, True):
        folder = tmp_path / str(zipped)
        folder.mkdir()
        assert list(stream_parallel(*write_pair(folder, b"", b"", zipped=zipped))) == []


def test_stream_parallel_counts_bytes_read_up_to_the_files_sizes(tmp_path: Path) -> None:
    lines = [f"line {i} " * 20 for i in range(5000)]
    for zipped in (False, True):
        folder = tmp_path / str(zipped)
        folder.mkdir()
        src, tgt = write_pair(folder, encoded(lines), encoded(lines[::-1]), zipped=zipped)
        progress = [chunk.bytes_read for chunk in stream_parallel(src, tgt, chunk_lines=500)]
        assert progress == sorted(progress) and len(set(progress)) > 1
        assert progress[-1] == file_bytes(src) + file_bytes(tgt)


@pytest.mark.parametrize("zipped", [False, True])
@pytest.mark.parametrize("bad_side", ["source", "target"])
def test_invalid_utf8_deep_in_a_stream_comes_after_the_chunks_before_it(
    tmp_path: Path, zipped: bool, bad_side: str
) -> None:
    good = encoded([f"line {i}" for i in range(1, 11)])
    bad = encoded([f"line {i}" for i in range(1, 8)]) + b"li\xffne 8\n" + encoded(["line 9", "line 10"])
    src, tgt = write_pair(tmp_path, *((bad, good) if bad_side == "source" else (good, bad)), zipped=zipped)
    chunks: list[LineChunk] = []
    with pytest.raises(UserError) as excinfo:
        chunks.extend(stream_parallel(src, tgt, chunk_lines=3))
    assert message_of(excinfo) == f"{src if bad_side == 'source' else tgt}:8: not valid UTF-8 (byte 3)"
    assert [chunk.first_line for chunk in chunks] == [1, 4]
    assert chunks[-1].sources == ["line 4", "line 5", "line 6"]


def test_of_two_bad_lines_in_a_chunk_the_earlier_is_named(tmp_path: Path) -> None:
    src, tgt = write_pair(tmp_path, b"a\nb\nc\n\xff\n", b"A\n\xfe\nC\nD\n", zipped=False)
    with pytest.raises(UserError) as excinfo:
        list(stream_parallel(src, tgt))
    assert message_of(excinfo) == f"{tgt}:2: not valid UTF-8 (byte 1)"


@pytest.mark.parametrize("zipped", [False, True])
@pytest.mark.parametrize("shorter", ["source", "target"])
@pytest.mark.parametrize("chunk_lines", [2, 3, 10_000])
def test_files_of_different_lengths_name_both_and_the_one_that_ends_first(
    tmp_path: Path, zipped: bool, shorter: str, chunk_lines: int
) -> None:
    short, long = encoded([f"s{i}" for i in range(7)]), encoded([f"l{i}" for i in range(12)])
    src, tgt = write_pair(tmp_path, *((short, long) if shorter == "source" else (long, short)), zipped=zipped)
    ends, goes_on = (src, tgt) if shorter == "source" else (tgt, src)
    chunks: list[LineChunk] = []
    with pytest.raises(UserError) as excinfo:
        chunks.extend(stream_parallel(src, tgt, chunk_lines=chunk_lines))
    assert message_of(excinfo) == (
        f"{ends} ends after 7 lines but {goes_on} has 12 lines; parallel files must have the same number of lines"
    )
    assert sum(len(chunk.sources) for chunk in chunks) == 7 // chunk_lines * chunk_lines
    with pytest.raises(UserError) as excinfo:
        read_parallel(src, tgt)
    assert str(ends) in message_of(excinfo) and "has 12 lines" in message_of(excinfo)


def test_an_empty_file_facing_one_line_is_counted_in_words(tmp_path: Path) -> None:
    src, tgt = write_pair(tmp_path, b"", b"one\n", zipped=False)
    with pytest.raises(UserError) as excinfo:
        list(stream_parallel(src, tgt))
    assert message_of(excinfo).startswith(f"{src} ends after 0 lines but {tgt} has 1 line; ")


def truncated_gzip(path: Path) -> Path:
    return write_plain(path, gzip.compress(encoded([f"line {i}" for i in range(2000)]))[:-12])


def corrupt_gzip(path: Path) -> Path:
    data = bytearray(gzip.compress(encoded([f"line {i}" for i in range(2000)])))
    data[len(data) // 2 : len(data) // 2 + 8] = b"\xff" * 8
    return write_plain(path, bytes(data))


@pytest.mark.parametrize(
    ("damage", "wording"),
    [(truncated_gzip, "cannot read (truncated gzip file: "), (corrupt_gzip, "cannot read (corrupt gzip file: ")],
)
@pytest.mark.parametrize("damaged_side", ["source", "target"])
def test_a_damaged_gzip_file_is_named_on_one_line(tmp_path: Path, damage, wording: str, damaged_side: str) -> None:
    good = write_gzip(tmp_path / "good.gz", encoded([f"line {i}" for i in range(2000)]))
    bad = damage(tmp_path / "bad.gz")
    src, tgt = (bad, good) if damaged_side == "source" else (good, bad)
    with pytest.raises(UserError) as excinfo:
        list(stream_parallel(src, tgt, chunk_lines=100))
    assert message_of(excinfo).startswith(f"{bad}: {wording}")
    with pytest.raises(UserError) as excinfo:
        read_lines(bad)
    assert message_of(excinfo).startswith(f"{bad}: {wording}")


def test_a_file_that_is_not_gzip_is_named_as_corrupt(tmp_path: Path) -> None:
    fake = write_plain(tmp_path / "fake.gz", b"plain text, not gzip\n")
    with pytest.raises(UserError) as excinfo:
        list(stream_parallel(fake, fake))
    assert message_of(excinfo).startswith(f"{fake}: cannot read (corrupt gzip file: ")


@pytest.mark.parametrize("missing_side", ["source", "target"])
def test_a_missing_file_is_named(tmp_path: Path, missing_side: str) -> None:
    present = write_plain(tmp_path / "present.txt", b"a\n")
    absent = tmp_path / "absent.gz"
    src, tgt = (absent, present) if missing_side == "source" else (present, absent)
    with pytest.raises(UserError) as excinfo:
        list(stream_parallel(src, tgt))
    assert message_of(excinfo) == f"{absent}: no such file"
    with pytest.raises(UserError) as excinfo:
        file_bytes(absent)
    assert message_of(excinfo) == f"{absent}: no such file"


@pytest.mark.parametrize("zipped", [False, True])
def test_streaming_memory_is_bounded_by_a_chunk_not_the_file(tmp_path: Path, zipped: bool) -> None:
    lines = [f"{i:06d} ein Satz mit einigen Wörtern, damit die Zeile lang ist" for i in range(200_000)]
    data = encoded(lines)
    src, tgt = write_pair(tmp_path, data, data, zipped=zipped)
    pairs = 0
    tracemalloc.start()
    try:
        for chunk in stream_parallel(src, tgt, chunk_lines=1000):
            pairs += len(chunk.sources)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert pairs == len(lines)
    assert peak < len(data) / 8, (peak, len(data))  # reading either file whole takes more than all of it


def open_paths() -> set[Path]:
    """The files this process holds open, from /proc where there is one."""
    folder = Path("/proc/self/fd")
    paths = set()
    for fd in os.listdir(folder) if folder.is_dir() else []:
        try:
            paths.add(Path(os.readlink(folder / fd)))
        except OSError:
            continue
    return paths


@contextmanager
def closing_every_file(*paths: Path) -> Iterator[None]:
    """Fail if the block leaves one of `paths` open, or lets a file be closed only by the garbage collector."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        yield
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert not set(paths) & open_paths()


@pytest.mark.parametrize("zipped", [False, True])
def test_files_are_closed_when_the_consumer_stops_early(tmp_path: Path, zipped: bool) -> None:
    src, tgt = write_pair(tmp_path, encoded(LINES * 3), encoded(LINES * 3), zipped=zipped)
    with closing_every_file(src, tgt):
        stream = stream_parallel(src, tgt, chunk_lines=2)
        next(stream)
        if Path("/proc/self/fd").is_dir():
            assert {src, tgt} <= open_paths()
        stream.close()


@pytest.mark.parametrize(
    ("sources", "targets"),
    [(encoded(LINES * 3), encoded(LINES)), (b"a\nb\nc\n\xff\n", b"1\n2\n3\n4\n")],
    ids=["different lengths", "invalid UTF-8"],
)
def test_files_are_closed_when_the_stream_fails(tmp_path: Path, sources: bytes, targets: bytes) -> None:
    src, tgt = write_pair(tmp_path, sources, targets, zipped=True)
    with closing_every_file(src, tgt), pytest.raises(UserError):
        list(stream_parallel(src, tgt, chunk_lines=2))


def test_files_are_closed_when_the_stream_ends(tmp_path: Path) -> None:
    src, tgt = write_pair(tmp_path, encoded(LINES * 3), encoded(LINES * 3), zipped=True)
    with closing_every_file(src, tgt):
        assert len(list(stream_parallel(src, tgt, chunk_lines=2))) == 6


def test_the_first_file_is_closed_when_the_second_is_missing(tmp_path: Path) -> None:
    src = write_plain(tmp_path / "train.de", encoded(LINES))
    with closing_every_file(src), pytest.raises(UserError):
        list(stream_parallel(src, tmp_path / "absent.en"))


@pytest.mark.parametrize(
    ("sources", "targets", "lines", "blank_sources", "blank_targets", "usable"),
    [
        (["a", "", " ", "b"], ["x", "y", "", "\t"], [True, False, False, False], 2, 2, 1),
        ([], [], [], 0, 0, 0),
    ],
)
def test_pair_counts_add_up_chunk_by_chunk(
    sources: list[str], targets: list[str], lines: list[bool], blank_sources: int, blank_targets: int, usable: int
) -> None:
    counts = PairCounts()
    assert counts.add(sources, targets) == lines
    assert counts.add(sources, targets) == lines
    assert counts == PairCounts(2 * len(lines), 2 * blank_sources, 2 * blank_targets, 2 * usable)


@pytest.mark.parametrize(
    ("chunks", "blamed", "reason"),
    [
        ([], "a.de", "(the file is empty)"),
        ([(["", " \t "], ["x", "y"]), (["  "], ["z"])], "a.de", "(every line is blank)"),
        ([(["x"], [""]), (["y"], ["  "])], "a.en", "(every line is blank)"),
        ([(["x"], [""]), ([""], ["y"])], "a.de", "(each non-blank line faces a blank line of a.en)"),
    ],
)
def test_counts_without_a_usable_pair_name_the_file_to_blame(
    chunks: list[tuple[list[str], list[str]]], blamed: str, reason: str
) -> None:
    counts = PairCounts()
    for sources, targets in chunks:
        counts.add(sources, targets)
    with pytest.raises(UserError) as excinfo:
        require_usable(counts, "a.de", "a.en", purpose="training")
    assert message_of(excinfo) == f"{blamed}: no usable training pairs {reason}"


def test_counts_with_one_usable_pair_in_any_chunk_pass() -> None:
    counts = PairCounts()
    counts.add(["", "x"], ["y", ""])
    counts.add(["z"], ["w"])
    require_usable(counts, "a.de", "a.en", purpose="training")

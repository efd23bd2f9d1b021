"""Tests for rnnsearch.text.corpus and the pair filtering in training.encode_pairs."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from rnnsearch.errors import UserError
from rnnsearch.text.corpus import FilterReport, decode_lines, read_lines, read_parallel, require_usable_pairs
from rnnsearch.text.subwords import Subwords, train_subwords
from rnnsearch.training import trainer
from rnnsearch.training.trainer import encode_pairs

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


@pytest.fixture(scope="module")
def word_subwords() -> Subwords:
    texts = ["the cat sat", "a dog ran far away", "the dog sat on the mat", "cat and dog"]
    return train_subwords(texts, "word", 100)


@pytest.mark.parametrize("chunk", [3, 4096])  # pairs encoded three at a time, or all at once
def test_encode_pairs_filters_and_counts(word_subwords: Subwords, chunk: int, monkeypatch) -> None:
    monkeypatch.setattr(trainer, "ENCODE_CHUNK", chunk)
    sources = [
        "the cat sat",
        "",
        "the dog",
        "   \t ",
        "the cat sat on the mat",
        "cat",
        "the dog ran",
        "",
    ]
    targets = [
        "a dog ran",
        "the cat",
        "  ",
        "cat",
        "the dog",
        "the dog sat on the mat and",
        "the cat",
        "the dog sat on the mat and far away",
    ]
    pairs, report = encode_pairs(sources, targets, word_subwords, word_subwords, max_length=4)
    assert report == FilterReport(kept=2, empty=4, too_long=2)
    assert report.kept + report.empty + report.too_long == len(sources)
    kept = [("the cat sat", "a dog ran"), ("the dog ran", "the cat")]
    expected = [(word_subwords.encode([s])[0], word_subwords.encode([t])[0]) for s, t in kept]
    assert [(list(source), list(target)) for source, target in pairs] == expected
    for source, target in pairs:
        assert 0 < len(source) <= 4 and 0 < len(target) <= 4
        assert all(i > 3 for i in source + target)


def test_encode_pairs_length_limit_is_inclusive(word_subwords: Subwords) -> None:
    pairs, report = encode_pairs(["the cat sat on"], ["the dog sat"], word_subwords, word_subwords, max_length=4)
    assert report == FilterReport(kept=1, empty=0, too_long=0)
    assert [len(s) for s, _ in pairs] == [4]


def test_encode_pairs_everything_skipped(word_subwords: Subwords) -> None:
    pairs, report = encode_pairs(["", "the cat sat on the mat"], ["x", "y"], word_subwords, word_subwords, 3)
    assert pairs == []
    assert report == FilterReport(kept=0, empty=1, too_long=1)
    assert str(report) == "kept 0 pairs; skipped 1 empty and 1 longer than the limit"

"""`rnnsearch align-corpus`: eflomal's links for every training corpus of a config, one
Pharaoh line per pair, near human links on the Hansards, written whole or not at all."""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DATA, write_config, write_lines

from rnnsearch import alignment_error_rate, read_gold
from rnnsearch.cli import main
from rnnsearch.files import TEMPORARY_SUFFIX
from rnnsearch.text.corpus import read_lines

ROOT = Path(__file__).resolve().parents[2]
HANSARDS = ROOT / "data" / "alignment"
FAST = ["--iterations", "0.1"]  # a tenth of eflomal's iterations: a second a corpus, links still good
needs_eflomal = pytest.mark.skipif(
    importlib.util.find_spec("eflomal") is None, reason="eflomal is not installed: pip install 'rnnsearch[align]'"
)


def hansards(folder: Path) -> tuple[Path, Path]:
    """The 447 English–French Hansards pairs that have human links, as two files."""
    pairs = [line.split(" ||| ") for line in read_lines(HANSARDS / "enfr.src-tgt")]
    return write_lines(folder / "hansards.en", [p[0] for p in pairs]), write_lines(
        folder / "hansards.fr", [p[1] for p in pairs]
    )


def multi30k_gz(folder: Path) -> tuple[Path, Path]:
    """300 Multi30k pairs, gzipped, with a blank source, a blank target, a pair blank on
    both sides and a source over eflomal's 1,023 words."""
    sources, targets = read_lines(DATA / "train.de.gz")[:300], read_lines(DATA / "train.en.gz")[:300]
    sources[3], targets[10], sources[20], targets[20] = "  ", "", "", ""
    sources[30] = " ".join(sources[:60] * 3)
    paths = folder / "m30k.de.gz", folder / "m30k.en.gz"
    for path, lines in zip(paths, (sources, targets), strict=True):
        path.write_bytes(gzip.compress("".join(line + "\n" for line in lines).encode("utf-8")))
    return paths


def config(folder: Path, *corpora: dict) -> Path:
    tree = {"data": {"train": list(corpora), "valid": {key: corpora[0][key] for key in ("src", "tgt")}}}
    return write_config(folder / "config.yaml", tree)


def corpus(src: Path, tgt: Path, alignments: Path | None) -> dict:
    return {"src": str(src), "tgt": str(tgt), **({"alignments": str(alignments)} if alignments else {})}


def links(path: Path) -> list[list[tuple[int, int]]]:
    return [[tuple(int(k) for k in link.split("-")) for link in line.split()] for line in read_lines(path)]


@pytest.fixture(scope="module")
def aligned(tmp_path_factory) -> tuple[Path, str]:
    """Both corpora aligned by one command (the second into a gzip file), and what it printed."""
    folder = tmp_path_factory.mktemp("aligned")
    if importlib.util.find_spec("eflomal") is None:
        pytest.skip("eflomal is not installed: pip install 'rnnsearch[align]'")
    path = config(
        folder,
        corpus(*hansards(folder), folder / "out" / "hansards.align"),
        corpus(*multi30k_gz(folder), folder / "m30k.align.gz"),
    )
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["align-corpus", str(path), *FAST]) == 0
    return folder, printed.getvalue()


def test_the_links_are_near_the_human_ones_and_every_line_is_a_pair_of_words(aligned):
    folder, printed = aligned
    written = links(folder / "out" / "hansards.align")
    assert len(written) == 447
    score = alignment_error_rate(written, read_gold(HANSARDS / "enfr.gold", one_based=True))
    assert score.aer < 40, score
    assert score.precision > 60 and score.recall > 60, score
    sources, targets = (read_lines(folder / f"hansards.{language}") for language in ("en", "fr"))
    for pair, source, target in zip(written, sources, targets, strict=True):
        assert pair == sorted(set(pair))
        assert all(0 <= i < len(source.split()) and 0 <= j < len(target.split()) for i, j in pair)
    assert f"{folder / 'out' / 'hansards.align'}: 447 pairs, {sum(map(len, written)):,} links" in printed


def test_a_gzip_corpus_gives_a_gzip_file_with_empty_lines_for_blank_and_overlong_pairs(aligned):
    folder, printed = aligned
    written = links(folder / "m30k.align.gz")
    assert len(written) == 300
    assert [k for k, pair in enumerate(written) if not pair] == [3, 10, 20, 30]
    assert sum(map(len, written)) > 2000  # the other pairs have links: about one a word
    assert f"{folder / 'm30k.align.gz'}: 300 pairs" in printed
    assert printed.count("\n") == 2  # one line a corpus


@needs_eflomal
def test_a_killed_run_leaves_the_old_file_and_the_next_run_clears_its_leftovers(tmp_path):
    alignments = tmp_path / "hansards.align"
    alignments.write_text("the old links\n", encoding="utf-8")
    path = config(tmp_path, corpus(*hansards(tmp_path), alignments))
    run = subprocess.Popen(
        [sys.executable, "-m", "rnnsearch", "align-corpus", str(path)],  # eflomal's full iterations: seconds
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # eflomal's process with it, killed together
    )
    try:
        while not list(tmp_path.glob(f".hansards.align.*{TEMPORARY_SUFFIX}")) and run.poll() is None:
            time.sleep(0.01)
        assert run.poll() is None, "the run ended before it began to write"
        os.killpg(run.pid, signal.SIGKILL)
    finally:
        run.wait()
    assert alignments.read_text(encoding="utf-8") == "the old links\n"
    assert len(list(tmp_path.glob(f".hansards.align.*{TEMPORARY_SUFFIX}"))) == 1
    assert main(["align-corpus", str(path), *FAST]) == 0
    assert len(links(alignments)) == 447
    assert sorted(entry.name for entry in tmp_path.iterdir() if entry.name.startswith(".")) == []


@needs_eflomal
def test_bad_text_is_one_line_and_leaves_the_old_file_whole(tmp_path, capsys):
    source, target = hansards(tmp_path)
    target.write_bytes(target.read_bytes() + b"caf\xe9\n")
    alignments = write_lines(tmp_path / "hansards.align", ["0-0"])
    assert main(["align-corpus", str(config(tmp_path, corpus(source, target, alignments)))]) == 1
    error = capsys.readouterr().err.splitlines()
    assert error[-1] == f"rnnsearch: error: {source} ends after 447 lines but {target} has 448 lines; " + (
        "parallel files must have the same number of lines"
    )
    assert read_lines(alignments) == ["0-0"]
    assert [entry.name for entry in tmp_path.iterdir() if entry.name.startswith(".")] == []


def test_a_corpus_without_alignments_is_one_line_naming_its_key(tmp_path, capsys):
    source, target = hansards(tmp_path)
    path = config(tmp_path, corpus(source, target, tmp_path / "a.align"), corpus(source, target, None))
    assert main(["align-corpus", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"rnnsearch: error: {path}: data.train[1].alignments is not set: name the Pharaoh file the corpus's "
        "word alignments go to\n"
    )
    assert not (tmp_path / "a.align").exists()  # every corpus checked before the first is aligned


BLOCKED = """
import sys
sys.modules["eflomal"] = None  # `import eflomal` fails, as where it is not installed
from rnnsearch.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_without_eflomal_the_command_says_how_to_install_it(tmp_path):
    path = config(tmp_path, corpus(*hansards(tmp_path), tmp_path / "a.align"))
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, "align-corpus", str(path)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("rnnsearch: error: aligning a corpus needs eflomal, which cannot be imported")
    assert done.stderr.endswith(": pip install 'rnnsearch[align]'\n")
    assert not (tmp_path / "a.align").exists()

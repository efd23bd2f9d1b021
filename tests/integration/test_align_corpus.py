"""`rnnsearch align-corpus`: eflomal's links for every training corpus of a config, one
Pharaoh line per pair, near human links on the Hansards, written whole or not at all."""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DATA, write_config, write_lines

from rnnsearch import alignment_error_rate, read_gold
from rnnsearch.cli import main
from rnnsearch.errors import UserError
from rnnsearch.files.atomic import TEMPORARY_SUFFIX
from rnnsearch.jobs import corpus_alignment
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
from rnnsearch.errors import UserError
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


def eflomal_processes(folder: Path) -> list[int]:
    """The eflomal programs running over files in `folder`, by process id."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if arguments[0].endswith(b"/eflomal") and any(str(folder).encode() in argument for argument in arguments):
            found.append(int(entry.name))
    return found


def start_align_corpus(folder: Path, path: Path, **limits) -> subprocess.Popen:
    """align-corpus in a process of its own, its temporary folder an empty one of `folder`."""
    (folder / "tmp").mkdir()
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(folder / "tmp")}
    return subprocess.Popen(
        [sys.executable, "-m", "rnnsearch", "align-corpus", str(path)],  # eflomal's full iterations: seconds
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        **limits,
    )


def wait_for(condition, *, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


@needs_eflomal
@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGTERM])
def test_killing_align_corpus_kills_eflomal_and_leaves_no_temporary_file(tmp_path, signal_number):
    """Only the command is killed, not its process group: eflomal must die with it, and
    nothing lands in the system's temporary folder. A SIGTERM removes the command's own
    temporary folder on the way out; after a SIGKILL the next run removes it (the test above)."""
    alignments = tmp_path / "hansards.align"
    alignments.write_text("the old links\n", encoding="utf-8")
    run = start_align_corpus(tmp_path, config(tmp_path, corpus(*hansards(tmp_path), alignments)))
    try:
        assert wait_for(lambda: eflomal_processes(tmp_path) or run.poll() is not None)
        assert run.poll() is None, run.stderr.read()
        os.kill(run.pid, signal_number)
    finally:
        run.wait(timeout=60)
    assert wait_for(lambda: not eflomal_processes(tmp_path), seconds=10), "eflomal outlived the command"
    assert list((tmp_path / "tmp").iterdir()) == []
    assert alignments.read_text(encoding="utf-8") == "the old links\n"
    left = list(tmp_path.glob(f".hansards.align.*{TEMPORARY_SUFFIX}"))
    assert len(left) == (1 if signal_number == signal.SIGKILL else 0)
    if signal_number == signal.SIGTERM:
        assert run.returncode == 130 and run.stderr.read().endswith("\nrnnsearch: interrupted\n")


@needs_eflomal
def test_an_eflomal_killed_under_the_command_is_one_line(tmp_path):
    """As the kernel's out-of-memory killer would: the command says so in one line."""
    alignments = tmp_path / "hansards.align"
    run = start_align_corpus(tmp_path, config(tmp_path, corpus(*hansards(tmp_path), alignments)))
    try:
        assert wait_for(lambda: eflomal_processes(tmp_path) or run.poll() is not None)
        for pid in eflomal_processes(tmp_path):
            os.kill(pid, signal.SIGKILL)
    finally:
        run.wait(timeout=60)
    assert run.returncode == 1
    assert run.stderr.read().splitlines()[-1] == (
        "rnnsearch: error: eflomal was killed by SIGKILL (by the kernel's out-of-memory killer?)"
    )
    assert not alignments.exists() and list(tmp_path.glob(f".hansards.align.*{TEMPORARY_SUFFIX}")) == []


def limit_file_size(limit: int):
    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    return limited


@needs_eflomal
def test_an_input_eflomal_cannot_write_whole_is_one_line_naming_it(tmp_path):
    """Files may grow to 8,000 bytes, as on a disk that fills: eflomal's writer checks none
    of its writes, so the command checks what it wrote and names the file that came out short."""
    alignments = tmp_path / "hansards.align"
    path = config(tmp_path, corpus(*hansards(tmp_path), alignments))
    run = start_align_corpus(tmp_path, path, preexec_fn=limit_file_size(8_000))
    run.wait(timeout=120)
    last = run.stderr.read().splitlines()[-1]
    assert run.returncode == 1 and last.startswith("rnnsearch: error: "), last
    assert "/source.ids: eflomal's input was cut short after 8,000 bytes" in last
    assert last.endswith("it could not be written whole (a full disk or a file size limit?)")
    assert not alignments.exists() and list(tmp_path.glob(f".hansards.align.*{TEMPORARY_SUFFIX}")) == []


@pytest.mark.parametrize("text", ["0-0\n1-1\n", "0-0\n1-1\n2-", ""])
def test_links_that_end_early_are_one_line_naming_the_file(tmp_path, text):
    """eflomal reports no error when its link file cannot be written whole (it checks no
    write): a file with fewer whole lines than pairs is named, with the likely causes."""
    path = tmp_path / "forward.links"
    path.write_text(text, encoding="ascii")
    with pytest.raises(UserError) as raised:
        list(corpus_alignment._eflomal_links(path, 5))
    message = str(raised.value)
    assert message.startswith(f"{path}: eflomal's links end {5 - text.count(chr(10))} pairs early")
    assert message.endswith("though it reported no error (a full disk or a file size limit?)")


@needs_eflomal
def test_the_corpora_are_aligned_together_in_one_eflomal_run(tmp_path, capsys):
    """One run over every corpus, so the small one borrows the large one's statistics, and
    each corpus's links written back to its own file, line for line."""
    hansards_files, multi30k_files = hansards(tmp_path), multi30k_gz(tmp_path)
    path = config(
        tmp_path,
        corpus(*hansards_files, tmp_path / "h.align"),
        corpus(*multi30k_files, tmp_path / "m.align"),
    )
    assert main(["align-corpus", str(path), *FAST]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("eflomal aligning 747 pairs, 2 corpora together") == 1
    for (source, target), alignments in ((hansards_files, "h.align"), (multi30k_files, "m.align")):
        lines = links(tmp_path / alignments)
        assert len(lines) == len(read_lines(source))
        for pair, (src, tgt) in zip(lines, zip(read_lines(source), read_lines(target), strict=True), strict=True):
            assert all(i < len(src.split()) and j < len(tgt.split()) for i, j in pair)
    assert [line.split(":")[0] for line in captured.out.splitlines()] == [
        str(tmp_path / "h.align"),
        str(tmp_path / "m.align"),
    ]

"""Word alignments of training corpora from a statistical aligner, for guided alignment
training: eflomal (Östling & Tiedemann 2017) run over the corpora in both directions, the
two combined by a symmetrisation heuristic (grow-diag-final-and unless asked otherwise),
written as the Pharaoh files that the corpora's `alignments` keys name.

The corpora are aligned together, in one eflomal run over all their pairs, one corpus
after another, and each corpus's links are written back to its own file: a small
in-domain corpus beside a large general one is aligned with the large one's statistics
(BENCHMARKS.md: the Hansards' AER falls from about 17.7 to 16.7 with Multi30k beside them).

The corpora stream through. eflomal is handed each side as an iterable of lines, read a
chunk at a time by the readers training uses (plain or .gz, the same UTF-8 and line
checks, the same one-line errors), and the two link files it writes are read back a line
at a time beside the corpus, combined and written. Beyond a chunk of lines, Python holds
only what eflomal itself keeps: while it reads, every sentence as an array of word ids
(4 bytes a word) and each side's vocabulary; while it samples, nothing, since the corpus
then lives in eflomal's own process.

What eflomal does shows in the file:
- its words are the whitespace-split words of each line (lowercased to count them),
  the words guided alignment reads;
- a pair with a blank side gets an empty line, and so does a sentence of 1,024 words or
  more, which eflomal leaves unaligned;
- it samples: two runs give slightly different links;
- its number of iterations falls as the corpus grows (5,000/√pairs for its last model),
  so a small corpus takes longer per pair than a large one.

The file is written whole or not at all (`files.replacing`): eflomal's input files of
word ids and its link files go in the same private folder beside it, not in the system's
temporary folder. eflomal's program runs as a child that the kernel kills when the
command dies (rnnsearch.children), so no aligner outlives a killed command; a SIGTERM or
Ctrl-C removes the folder on the way out, and after a SIGKILL the next run over the same
file removes it. An eflomal failure (killed, a full disk) is one line saying what failed.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import inspect
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from tqdm import tqdm

from rnnsearch.alignments.symmetrisation import DEFAULT_METHOD, METHODS, Link, symmetrise
from rnnsearch.alignments.words import pharaoh
from rnnsearch.children import die_with
from rnnsearch.config import Config
from rnnsearch.config.data import TrainingFiles, files_section
from rnnsearch.errors import UserError
from rnnsearch.files.atomic import TEMPORARY_SUFFIX, replacing, write_failure
from rnnsearch.text.corpus import PairCounts, require_usable, stream_parallel

INSTALL = "pip install 'rnnsearch[align]'"
EFLOMAL_MODELS = {1: "IBM1", 2: "IBM1 then HMM", 3: "IBM1, HMM, then HMM with fertility"}
DEFAULT_EFLOMAL_MODEL = 3  # eflomal's own default, and its most accurate
FULL_DISK_BYTES = 1 << 20  # free space below which a failure is put down to a full disk


@dataclass(frozen=True)
class CorpusAlignment:
    """What `align_corpus` wrote: the file, its pairs (lines), their links, the pairs
    without a link (an empty line) and the seconds it took, reading to writing."""

    path: Path
    pairs: int
    links: int
    unlinked: int
    seconds: float

    def __str__(self) -> str:
        return (
            f"{self.path}: {self.pairs:,} pairs, {self.links:,} links ({self.unlinked:,} pairs without), "
            f"{self.seconds:.1f} s"
        )


def import_eflomal() -> ModuleType:
    """The eflomal package, or the one-line error saying how to install it."""
    try:
        import eflomal
    except ImportError as error:
        raise UserError(f"aligning a corpus needs eflomal, which cannot be imported ({error}): {INSTALL}") from None
    return eflomal


def corpora_to_align(config: Config, *, origin: str = "config") -> list[TrainingFiles]:
    """The config's training corpora, each of which must name the file its alignments go
    to, no two the same and none one of the corpus's own files; `origin` (the config's
    path) starts the errors."""
    if not config.data.aligns_words:
        raise UserError(f"{origin}: data.kind {config.data.kind} has no parallel text to align")
    data = files_section(config.data)
    corpora = data.train_corpora
    listed = isinstance(data.train, list)
    written: set[Path] = set()
    for k, corpus in enumerate(corpora):
        key = f"data.train[{k}].alignments" if listed else "data.train.alignments"
        if corpus.alignments is None:
            raise UserError(f"{origin}: {key} is not set: name the Pharaoh file the corpus's word alignments go to")
        path = Path(corpus.alignments).resolve()
        if path in (Path(corpus.src).resolve(), Path(corpus.tgt).resolve()):
            raise UserError(f"{origin}: {key} {corpus.alignments} is the corpus's own text; name a file of its own")
        if path in written:
            raise UserError(f"{origin}: {key} {corpus.alignments} is another corpus's alignments too")
        written.add(path)
    return corpora


def align_training_corpora(
    config: Config,
    *,
    origin: str = "config",
    symmetrisation: str = DEFAULT_METHOD,
    model: int = DEFAULT_EFLOMAL_MODEL,
    iterations: float = 1.0,
) -> list[CorpusAlignment]:
    """Align the training corpora of `config` together (`align_corpora`) into the files
    their `alignments` keys name, in order; every corpus is checked before any is read."""
    corpora = corpora_to_align(config, origin=origin)
    return align_corpora(
        [(corpus.src, corpus.tgt, cast(str, corpus.alignments)) for corpus in corpora],  # each set: checked
        symmetrisation=symmetrisation,
        model=model,
        iterations=iterations,
    )


def align_corpus(
    src: str | Path,
    tgt: str | Path,
    alignments: str | Path,
    *,
    symmetrisation: str = DEFAULT_METHOD,
    model: int = DEFAULT_EFLOMAL_MODEL,
    iterations: float = 1.0,
) -> CorpusAlignment:
    """Word-align the line-aligned pairs of `src` and `tgt` with eflomal into `alignments`
    (`align_corpora` of one corpus)."""
    return align_corpora([(src, tgt, alignments)], symmetrisation=symmetrisation, model=model, iterations=iterations)[0]


def align_corpora(
    corpora: Sequence[tuple[str | Path, str | Path, str | Path]],
    *,
    symmetrisation: str = DEFAULT_METHOD,
    model: int = DEFAULT_EFLOMAL_MODEL,
    iterations: float = 1.0,
) -> list[CorpusAlignment]:
    """Word-align the line-aligned pairs of each corpus (src, tgt, alignments) with eflomal,
    both directions, in one run over all of them, so that a small corpus is aligned with
    the statistics of a large one beside it; and write each corpus's links, combined by
    `symmetrisation`, to its `alignments` file: one Pharaoh line per pair (0-based "i-j",
    source word first), gzip when the name ends in .gz, each file replacing an earlier one
    only once every file is complete.

    `model` is eflomal's (EFLOMAL_MODELS) and `iterations` its sampling iterations
    relative to its default (which falls as all the corpora's pairs grow).
    """
    eflomal = import_eflomal()
    if symmetrisation not in METHODS:
        raise UserError(f"unknown symmetrisation {symmetrisation!r}; choose from {', '.join(METHODS)}")
    if model not in EFLOMAL_MODELS:
        raise UserError(f"eflomal model {model}: choose from {', '.join(map(str, EFLOMAL_MODELS))}")
    if not 0 < iterations < float("inf"):
        raise UserError(f"eflomal iterations must be a number greater than 0, got {iterations}")
    started, paths = time.monotonic(), [Path(alignments) for _, _, alignments in corpora]
    for path in paths:
        _clear_leftovers(path)
    counts = [PairCounts() for _ in corpora]
    aligner = eflomal.Aligner(model=model, rel_iterations=iterations)
    with contextlib.ExitStack() as stack:
        temporaries = [stack.enter_context(replacing(path)) for path in paths]
        folder = temporaries[0].parent
        texts = [(src, tgt) for src, tgt, _ in corpora]
        inputs = _prepare(aligner, texts, counts, folder)
        link_files = folder / "forward.links", folder / "backward.links"
        total = sum(count.lines for count in counts)
        _run_eflomal(eflomal, aligner, inputs, link_files, pairs=total)
        links = (_eflomal_links(link_files[0], total), _eflomal_links(link_files[1], total))
        written = [
            _write(src, tgt, links, temporary, pairs=count.lines, method=symmetrisation, name=path)
            for (src, tgt), count, temporary, path in zip(texts, counts, temporaries, paths, strict=True)
        ]
        for leftover in (*inputs, *link_files):
            leftover.unlink()
    seconds = time.monotonic() - started
    return [
        CorpusAlignment(path, count.lines, made, unlinked, seconds)
        for path, count, (made, unlinked) in zip(paths, counts, written, strict=True)
    ]


def _prepare(
    aligner: Any, texts: list[tuple[str | Path, str | Path]], counts: list[PairCounts], folder: Path
) -> tuple[Path, Path]:
    """Both sides of all the corpora, one after another, as eflomal's files of word ids,
    written by eflomal's own writer into `folder` (the private folder beside the first
    output, which a later run clears if this one is killed), not into the system's
    temporary folder, where nothing would."""
    inputs = folder / "source.ids", folder / "target.ids"
    try:
        with inputs[0].open("wb") as source, inputs[1].open("wb") as target:
            aligner.prepare_files(_sides(texts, 0, counts), source, _sides(texts, 1, counts), target, None, None)
    except OSError as error:
        raise write_failure(inputs[0].parent, error) from None
    for path in inputs:
        _require_whole(path, sum(count.lines for count in counts) + 1)
    return inputs


def _require_whole(path: Path, lines: int) -> None:
    """Refuse an input file that eflomal's writer, which does not check its writes, left
    with fewer than `lines` lines (a header, then a line a sentence)."""
    with path.open("rb") as written:
        found = sum(block.count(b"\n") for block in iter(lambda: written.read(1 << 20), b""))
    if found < lines:
        raise UserError(
            f"{path}: eflomal's input was cut short after {path.stat().st_size:,} bytes, {found:,} of its "
            f"{lines:,} lines: it could not be written whole{_short_write_note(path.parent)}"
        )


def eflomal_iterations(aligner: Any, pairs: int) -> tuple[int, int, int]:
    """The sampling iterations of eflomal's three models for a corpus of `pairs` pairs:
    eflomal's own default, which its Python wrapper computes and its program needs told.
    The last model gets 5,000 / √pairs times `rel_iterations` (at least 2), each earlier
    one a quarter of that; models past `model` get none."""
    last = max(2, round(aligner.rel_iterations * 5000 / math.sqrt(pairs)))
    quarter = max(1, last // 4)
    return {1: (last, 0, 0), 2: (max(2, quarter), last, 0)}.get(aligner.model, (max(2, quarter), quarter, last))


def _run_eflomal(
    eflomal: ModuleType, aligner: Any, inputs: tuple[Path, Path], link_files: tuple[Path, Path], *, pairs: int
) -> None:
    """Run eflomal's program over the prepared inputs, writing both directions' links, as a
    child that dies with this process; a failure is one line saying what happened."""
    program = Path(inspect.getfile(eflomal)).parent / "bin" / "eflomal"
    first, second, third = eflomal_iterations(aligner, pairs)
    command = [str(program), "-q", "-m", str(aligner.model), "-n", str(aligner.n_samplers)]
    command += ["-N", str(aligner.null_prior), "-1", str(first)]
    command += ["-2", str(second)] if aligner.model >= 2 else []
    command += ["-3", str(third)] if aligner.model >= 3 else []
    command += ["-s", str(inputs[0]), "-t", str(inputs[1]), "-f", str(link_files[0]), "-r", str(link_files[1])]
    parent = os.getpid()
    with subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: die_with(parent),
    ) as process:
        try:
            _, messages = process.communicate()
        except BaseException:
            process.kill()
            raise
    if process.returncode != 0:
        raise UserError(_failure(process.returncode, messages.decode("utf-8", "replace"), inputs[0].parent))


def _failure(status: int, messages: str, folder: Path) -> str:
    """What to say of an eflomal run that ended with `status` and printed `messages`."""
    if status < 0:
        name = signal.Signals(-status).name
        cause = " (by the kernel's out-of-memory killer?)" if name == "SIGKILL" else ""
        what = f"eflomal was killed by {name}{cause}"
    else:
        said = messages.strip().splitlines()
        what = f"eflomal failed (exit status {status}{': ' + said[-1].strip() if said else ''})"
    return what + _disk_note(folder)


def _short_write_note(folder: Path) -> str:
    """Why a file in `folder` came out short: its disk's free space when that is nearly
    none, else the causes it may have."""
    return _disk_note(folder) or " (a full disk or a file size limit?)"


def _disk_note(folder: Path) -> str:
    """A note on the space left where eflomal's files are, when it is nearly none."""
    free = shutil.disk_usage(folder).free
    return f"; {folder} has {free:,} bytes free: is its disk full?" if free < FULL_DISK_BYTES else ""


def _clear_leftovers(path: Path) -> None:
    """Make `path`'s folder if need be, and remove the temporaries (with their link files,
    as large as the corpus) that a killed run left beside `path`; other files' stay."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise write_failure(path, error) from None
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.{'[0-9a-f]' * 8}{TEMPORARY_SUFFIX}"):
        shutil.rmtree(leftover, ignore_errors=True)


def _bar(what: str, total: int | None = None) -> tqdm:
    """A progress bar over pairs, on a terminal only; a line says what starts either way."""
    tqdm.write(what, file=sys.stderr)
    return tqdm(total=total, unit=" pairs", desc=what, dynamic_ncols=True, disable=None, leave=False)


def _sides(texts: list[tuple[str | Path, str | Path]], side: int, counts: list[PairCounts]) -> Iterator[str]:
    """One side (0 source, 1 target) of every corpus, one after another, a line at a time,
    for eflomal to read. Both files of a corpus are read together, so that each side gets
    training's checks on both (UTF-8, the same number of lines). The source side counts
    each corpus's pairs into its `counts`, and refuses a corpus with no pair of words on
    both sides, as training refuses it."""
    for (src, tgt), count in zip(texts, counts, strict=True):
        with _bar(f"eflomal reading {(src, tgt)[side]}") as bar:
            for chunk in stream_parallel(src, tgt):
                if side == 0:
                    count.add(chunk.sources, chunk.targets)
                yield from (chunk.sources, chunk.targets)[side]
                bar.update(len(chunk.sources))
        if side == 0:
            require_usable(count, src, tgt, purpose="training")
    if side == 1:
        what = f"{len(texts)} corpora together" if len(texts) > 1 else "both ways"
        tqdm.write(f"eflomal aligning {sum(count.lines for count in counts):,} pairs, {what}", file=sys.stderr)


def _write(
    src: str | Path,
    tgt: str | Path,
    links: tuple[Iterator[list[Link]], Iterator[list[Link]]],
    out: Path,
    *,
    pairs: int,
    method: str,
    name: Path,
) -> tuple[int, int]:
    """Combine the next `pairs` lines of eflomal's two directions (`links`) pair by pair,
    with each pair's word counts read again from the corpus, and write the Pharaoh lines
    to `out`, the temporary of the file `name`; return the links written and the pairs
    without one."""
    forward, backward = links
    written = unlinked = 0
    opener = gzip.open if out.name.endswith(".gz") else open
    with opener(out, "wt", encoding="utf-8", newline="\n") as handle, _bar(f"writing {name}", pairs) as bar:
        for chunk in stream_parallel(src, tgt):
            for number, (source, target) in enumerate(
                zip(chunk.sources, chunk.targets, strict=True), start=chunk.first_line
            ):
                try:
                    combined = symmetrise(
                        next(forward),
                        next(backward),
                        source_length=len(source.split()),
                        target_length=len(target.split()),
                        method=method,
                    )
                except ValueError as error:
                    raise UserError(f"{src}: line {number}: eflomal's {error}") from None
                handle.write(pharaoh(combined) + "\n")
                written += len(combined)
                unlinked += not combined
            bar.update(len(chunk.sources))
    return written, unlinked


def _eflomal_links(path: Path, pairs: int) -> Iterator[list[Link]]:
    """The links of an eflomal link file, a line (pair) at a time, (source, target) word
    pairs. eflomal does not check its writes, so a file that is missing or ends early
    after a run that reported no error was cut short by the disk."""
    if not path.exists():
        raise UserError(f"{path}: eflomal wrote no links, though it reported no error{_disk_note(path.parent)}")
    with path.open(encoding="ascii") as lines:
        for line in lines:
            if not line.endswith("\n"):
                break  # a last line cut short
            yield [_link(text) for text in line.split()]
            pairs -= 1
    if pairs > 0:
        raise UserError(
            f"{path}: eflomal's links end {pairs:,} pairs early: it could not write them all, though it reported "
            f"no error{_short_write_note(path.parent)}"
        )


def _link(text: str) -> Link:
    source, _, target = text.partition("-")
    return int(source), int(target)

"""Prepared data: the training corpus encoded once into flat arrays on disk, then
memory-mapped by every training run (and every rank of one) that uses it.

    manifest.json                     what the data was built from; written last
    subwords.src.model / .tgt.model   the SentencePiece models that encoded it
    source.tokens, target.tokens      the piece ids of every kept pair, one sentence after another
    source.offsets, target.offsets    int64: pair k is tokens[offsets[k]:offsets[k + 1]]
    source.lengths, target.lengths    pieces per sentence, for length bucketing

The arrays are raw little-endian numpy arrays (numpy.memmap reads them), with their
types and sizes in the manifest, as in fairseq's indexed datasets. The corpus is read
as a stream and never held whole: SentencePiece learns from a random sample drawn
while streaming (reservoir sampling, reproducible), and worker processes encode the
pairs a chunk at a time, in order, while this process writes them out. So the memory
of preparing and of training does not grow with the corpus, beyond a few bytes per
pair of lengths and batch order.

A directory without a manifest is no dataset: preparing deletes the old manifest
first, writes each array to a temporary renamed into place, and writes the manifest
last, so a kill or a full disk at any moment leaves nothing a training run accepts.
A dataset is reused while the inputs (size and modification time), the settings that
shape it and the subword models are those it was built from, and built again,
saying why, when one changed.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import random
import signal
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import chain, compress
from multiprocessing import get_context
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator
from tqdm import tqdm

from rnnsearch import files
from rnnsearch.config import Config, ParallelFiles
from rnnsearch.errors import UserError
from rnnsearch.reserved import PAD
from rnnsearch.sections import Section
from rnnsearch.text.corpus import PairCounts, RawChunk, require_usable, stream_parallel, stream_raw_parallel
from rnnsearch.text.subwords import Subwords, train_subwords

FORMAT = 1  # the layout of the files; a dataset of another layout is built again
MANIFEST = "manifest.json"
SRC_SUBWORDS = "subwords.src.model"
TGT_SUBWORDS = "subwords.tgt.model"
SIDES = ("source", "target")
CHUNK_LINES = 10_000  # pairs read, encoded and written together
SAMPLE_SEED = 0  # the subword sample is the same for the same corpus, whatever the run's seed
SMALL_CORPUS_BYTES = 64 << 20  # below this (~250,000 pairs), starting workers costs more than they save
IN_FLIGHT_PER_WORKER = 2  # chunks queued per worker: enough to keep it busy, few enough for flat memory
PR_SET_PDEATHSIG = 1  # prctl's option: the signal a process gets when its parent dies (linux/prctl.h)


def prepared_dir(config: Config, model_dir: str | Path) -> Path:
    """Where the prepared data of `config` lives: data.prepared, else MODEL_DIR/prepared."""
    return Path(config.data.prepared) if config.data.prepared else Path(model_dir) / "prepared"


# ---- what a dataset is built from -------------------------------------------------------


def _file_identity(path: str) -> dict[str, Any]:
    """A file as the manifest records it: its absolute path, size and modification time."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    return {"path": str(Path(path).resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _inputs(config: Config) -> list[dict[str, Any]]:
    return [{"src": _file_identity(c.src), "tgt": _file_identity(c.tgt)} for c in config.data.train_corpora]


def _settings(config: Config) -> dict[str, Any]:
    """The config keys that change the prepared pairs, by their dotted names."""
    return {"data.max_length": config.data.max_length, "data.max_length_ratio": config.data.max_length_ratio}


def _subword_settings(config: Config) -> dict[str, Any]:
    """The config keys that change the subword models trained in preparation."""
    return {f"subwords.{key}": value for key, value in config.subwords.model_dump().items()}


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """The manifest of a prepared dataset; None where there is none or it is unreadable
    (no dataset, or an interrupted one)."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


ARRAYS = tuple(f"{side}.{kind}" for side in SIDES for kind in ("tokens", "offsets", "lengths"))
_TYPES = Literal["uint16", "int32"]


_Digest = Annotated[str, StringConstraints(pattern="^[0-9a-f]{64}$")]


class _FileIdentity(Section):
    path: str
    size: int = Field(ge=0)
    mtime_ns: int


class _Input(Section):
    src: _FileIdentity
    tgt: _FileIdentity


class _Filtered(Section):
    corpus: str
    kept: int = Field(ge=0)
    empty: int = Field(ge=0)
    too_long: int = Field(ge=0)
    uneven: int = Field(ge=0)


class _Settings(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)
    max_length: int = Field(gt=0, alias="data.max_length")


class Manifest(Section):
    """What a manifest must hold, checked before anything it describes is read."""

    format: Literal[1]
    inputs: list[_Input] = Field(min_length=1)
    settings: _Settings
    subwords: list[_Digest] = Field(min_length=2, max_length=2)
    pairs: int = Field(ge=0)
    token_type: _TYPES
    length_type: _TYPES
    file_sizes: dict[Literal[ARRAYS], Annotated[int, Field(ge=0)]]  # type: ignore[valid-type]
    # absent from datasets prepared before the arrays had digests, which are read as they are
    file_digests: dict[Literal[ARRAYS], _Digest] | None = None  # type: ignore[valid-type]
    filtered: list[_Filtered]

    @model_validator(mode="after")
    def _every_array(self) -> Manifest:
        for field in (self.file_sizes, self.file_digests):
            if field is not None and set(field) != set(ARRAYS):
                raise ValueError(f"file_sizes and file_digests must name {', '.join(ARRAYS)}")
        return self


def manifest_problem(manifest: dict[str, Any]) -> str | None:
    """What is wrong with a manifest, on one line (its first problems), or None."""
    try:
        Manifest.model_validate(manifest)
    except ValidationError as error:
        problems = [f"{'.'.join(str(part) for part in e['loc']) or 'manifest'}: {e['msg']}" for e in error.errors()[:3]]
        return "; ".join(problems)
    return None


def stale_reason(directory: Path, config: Config, subwords: tuple[Subwords, Subwords] | None = None) -> str | None:
    """Why the dataset in `directory` cannot serve `config`, or None if it can.

    `subwords`, when given (a resumed or fine-tuning run), are the models the data must be encoded
    with; otherwise the data's own models must come from today's subword settings.
    """
    manifest = read_manifest(directory)
    if manifest is None:
        return "there is none yet"
    if manifest.get("format") != FORMAT:
        return f"{directory} was prepared in another layout"
    problem = manifest_problem(manifest)
    if problem is not None:
        return f"{directory / MANIFEST} is not a valid manifest ({problem})"
    return _changed(manifest, config, subwords) or _missing_array(directory, manifest)


def _changed(manifest: dict[str, Any], config: Config, subwords: tuple[Subwords, Subwords] | None) -> str | None:
    """The first input, setting or subword model of `config` that differs from the manifest's."""
    inputs = _inputs(config)
    paths = [(i["src"]["path"], i["tgt"]["path"]) for i in inputs]
    if [(i["src"]["path"], i["tgt"]["path"]) for i in manifest["inputs"]] != paths:
        return "data.train names other files"
    for recorded, current in zip(manifest["inputs"], inputs):
        for side in ("src", "tgt"):
            if recorded[side] != current[side]:
                return f"{current[side]['path']} changed since it was prepared"
    wanted = _settings(config) if subwords else {**_settings(config), **_subword_settings(config)}
    for key, value in wanted.items():
        recorded = manifest["settings"].get(key, "not set")
        if recorded != value:
            return f"{key} changed ({recorded} → {value})"
    if subwords and [s.digest for s in subwords] != manifest["subwords"]:
        return "the model's subword models are not those that encoded it"
    return None


def _missing_array(directory: Path, manifest: dict[str, Any]) -> str | None:
    """A data file whose size is not the manifest's (deleted or cut short), if any."""
    for name, size in manifest["file_sizes"].items():
        path = directory / name
        if not path.is_file() or path.stat().st_size != size:
            return f"{path} is missing or has the wrong size"
    return None


def _changed_array(directory: Path, manifest: dict[str, Any]) -> str | None:
    """A data file whose bytes are not those the manifest's digest records, if any (one
    read of every array, once, as the first epoch reads them anyway)."""
    for name, expected in (manifest.get("file_digests") or {}).items():
        with open(directory / name, "rb") as data:
            if hashlib.file_digest(data, "sha256").hexdigest() != expected:
                return f"{directory / name}: its bytes do not match the manifest's digest (changed or corrupt)"
    return None


# ---- preparing ---------------------------------------------------------------------------


def _say(message: str) -> None:
    tqdm.write(message, file=sys.stderr)


def _total_bytes(corpora: Sequence[ParallelFiles]) -> int:
    return sum(os.stat(path).st_size for c in corpora for path in (c.src, c.tgt))


class _Progress:
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


def _usable_chunks(corpus: ParallelFiles, counts: PairCounts) -> Iterator[tuple[list[str], list[str], int, int]]:
    """The pairs of `corpus` with words on both sides, a chunk at a time, with the lines
    read and the bytes read so far; `counts` counts the blank ones."""
    for chunk in stream_parallel(corpus.src, corpus.tgt, chunk_lines=CHUNK_LINES):
        usable = counts.add(chunk.sources, chunk.targets)
        sources = [s for s, keep in zip(chunk.sources, usable) if keep]
        targets = [t for t, keep in zip(chunk.targets, usable) if keep]
        yield sources, targets, len(chunk.sources), chunk.bytes_read


def _sample(config: Config) -> tuple[list[str], list[str]]:
    """A reproducible uniform random sample of at most subwords.sample_sentences usable
    pairs of all the training corpora, in corpus order when every pair fits, drawn in one
    pass over the stream (reservoir sampling), so memory holds the sample only.

    Reading checks every line, so a corpus with nothing usable is refused here, before
    SentencePiece runs."""
    size = config.subwords.sample_sentences
    rng = random.Random(SAMPLE_SEED)
    sources: list[str] = []
    targets: list[str] = []
    seen = 0
    progress = _Progress("reading", _total_bytes(config.data.train_corpora))
    try:
        for corpus in config.data.train_corpora:
            counts = PairCounts()
            for chunk_sources, chunk_targets, lines, bytes_read in _usable_chunks(corpus, counts):
                for source, target in zip(chunk_sources, chunk_targets):
                    if seen < size:
                        sources.append(source)
                        targets.append(target)
                    else:
                        slot = rng.randrange(seen + 1)
                        if slot < size:
                            sources[slot], targets[slot] = source, target
                    seen += 1
                progress.update(lines, bytes_read)
            require_usable(counts, corpus.src, corpus.tgt, purpose="training")
            progress.next_corpus()
    finally:
        progress.close()
    return sources, targets


def train_vocabularies(config: Config, sources: list[str], targets: list[str]) -> tuple[Subwords, Subwords]:
    """Source and target SentencePiece models (the same one twice if `subwords.joint`)."""
    options = config.subwords

    def train(texts: list[str]) -> Subwords:
        return train_subwords(texts, options.kind, options.vocab_size, options.min_frequency)

    if options.joint:
        joint = train(sources + targets)
        return joint, joint
    return train(sources), train(targets)


@dataclass(frozen=True)
class FilterReport:
    """What preparing a training corpus kept and skipped, for the user to see."""

    kept: int
    empty: int
    too_long: int
    uneven: int = 0

    @property
    def pairs(self) -> int:
        """The pairs read: kept and skipped."""
        return self.kept + self.empty + self.too_long + self.uneven

    def __str__(self) -> str:
        uneven = f", {self.uneven} with a length ratio over data.max_length_ratio" if self.uneven else ""
        return f"kept {self.kept} pairs; skipped {self.empty} empty and {self.too_long} longer than the limit{uneven}"


@dataclass
class _Encoded:
    """One chunk's kept pairs as flat arrays, and what it held and skipped."""

    tokens: tuple[np.ndarray, np.ndarray]
    lengths: tuple[np.ndarray, np.ndarray]
    counts: PairCounts
    too_long: int
    uneven: int
    lines: int
    bytes_read: int


@dataclass(frozen=True)
class _Encoder:
    """Decodes a chunk of raw lines, drops blank pairs, encodes the rest and filters them
    by length: a worker process is sent one (subword models pickle as their bytes), so
    that all of the work on a line but reading it happens in the workers."""

    subwords: tuple[Subwords, Subwords]
    max_length: int
    max_ratio: float | None
    token_type: str
    length_type: str

    def __call__(self, raw: RawChunk) -> _Encoded:
        chunk = raw.decode()
        counts = PairCounts()
        usable = counts.add(chunk.sources, chunk.targets)
        ids = (
            self.subwords[0].encode(list(compress(chunk.sources, usable))),
            self.subwords[1].encode(list(compress(chunk.targets, usable))),
        )
        lengths = [np.fromiter(map(len, side), dtype=np.int64, count=len(side)) for side in ids]
        too_long = (lengths[0] > self.max_length) | (lengths[1] > self.max_length)
        uneven = np.zeros_like(too_long)
        if self.max_ratio is not None:
            uneven = ~too_long & (np.maximum(*lengths) > self.max_ratio * np.minimum(*lengths))
        keep = ~(too_long | uneven)
        return _Encoded(
            tokens=tuple(self._flat(side, keep) for side in ids),
            lengths=tuple(side[keep].astype(self.length_type) for side in lengths),
            counts=counts,
            too_long=int(too_long.sum()),
            uneven=int(uneven.sum()),
            lines=len(chunk.sources),
            bytes_read=chunk.bytes_read,
        )

    def _flat(self, sentences: list[list[int]], keep: np.ndarray) -> np.ndarray:
        return np.fromiter(chain.from_iterable(compress(sentences, keep.tolist())), dtype=self.token_type)


_WORKER_ENCODER: _Encoder | None = None


def _start_worker(encoder: _Encoder, parent: int) -> None:
    """An encoding worker's set-up: its encoder, and its death with the process that
    started it (`parent`), so that a killed prepare leaves no worker behind holding the
    caller's standard streams (or the pipe multiprocessing's resource tracker waits on)."""
    global _WORKER_ENCODER
    _WORKER_ENCODER = encoder
    _die_with(parent)


def _die_with(parent: int) -> None:
    """Have the kernel kill this process when `parent` dies (Linux's PR_SET_PDEATHSIG);
    if it died already, before the request was made, exit now. Elsewhere a worker
    outlives its parent only until it next waits for work from it."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if os.getppid() != parent:
        os._exit(1)


def _encode_in_worker(raw: RawChunk) -> _Encoded:
    return _WORKER_ENCODER(raw)


def _smallest_type(largest: int) -> str:
    return "uint16" if largest <= np.iinfo(np.uint16).max else "int32"


class _Writer:
    """The six arrays of a dataset, appended to a chunk at a time, each in a temporary
    that is renamed into place only when every one was written."""

    def __init__(self, directory: Path, stack: ExitStack):
        self.directory = directory
        self.handles: dict[str, BinaryIO] = {}
        self.hashes = {name: hashlib.sha256() for name in ARRAYS}
        for side in SIDES:
            for kind in ("tokens", "offsets", "lengths"):
                name = f"{side}.{kind}"
                temporary = stack.enter_context(files.replacing(directory / name))
                self.handles[name] = stack.enter_context(open(temporary, "wb"))
        self.offsets = [0, 0]
        self.pairs = 0
        for side in SIDES:
            self._write(f"{side}.offsets", np.zeros(1, dtype=np.int64))

    def add(self, encoded: _Encoded) -> None:
        for k, side in enumerate(SIDES):
            lengths = encoded.lengths[k]
            offsets = self.offsets[k] + np.cumsum(lengths, dtype=np.int64)
            self._write(f"{side}.tokens", encoded.tokens[k])
            self._write(f"{side}.lengths", lengths)
            self._write(f"{side}.offsets", offsets)
            if len(offsets):
                self.offsets[k] = int(offsets[-1])
        self.pairs += len(encoded.lengths[0])

    def _write(self, name: str, array: np.ndarray) -> None:
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        self.hashes[name].update(data)
        try:
            self.handles[name].write(data)
        except OSError as error:
            raise files.write_failure(self.directory / name, error) from None

    def sizes(self) -> dict[str, int]:
        return {name: handle.tell() for name, handle in self.handles.items()}

    def digests(self) -> dict[str, str]:
        """Each array's SHA-256, for the manifest: the check that tells a flipped bit."""
        return {name: digest.hexdigest() for name, digest in self.hashes.items()}


def _worker_count(config: Config) -> int:
    if config.data.workers is not None:
        return config.data.workers
    if _total_bytes(config.data.train_corpora) <= SMALL_CORPUS_BYTES:
        return 1
    return len(os.sched_getaffinity(0))


def _encode_corpus(
    corpus: ParallelFiles,
    encode: Callable[[RawChunk], Future | _Encoded],
    writer: _Writer,
    progress: _Progress,
    in_flight: int,
) -> FilterReport:
    """Stream one corpus through `encode` (the encoder, or a pool's submit), writing the
    encoded chunks in input order; at most `in_flight` chunks are pending at once.

    A chunk's errors (a line that is not UTF-8) surface when its result is taken, those
    of reading (the end of one file) when the stream meets them: the chunks pending then
    are taken first, so that the error met first in the files is the one reported."""
    counts = PairCounts()
    pending: deque[Future | _Encoded] = deque()
    too_long = uneven = 0

    def write_oldest() -> None:
        nonlocal too_long, uneven
        result = pending.popleft()
        encoded = result.result() if isinstance(result, Future) else result
        writer.add(encoded)
        counts.merge(encoded.counts)
        too_long, uneven = too_long + encoded.too_long, uneven + encoded.uneven
        progress.update(encoded.lines, encoded.bytes_read)

    kept_before = writer.pairs
    try:
        for raw in stream_raw_parallel(corpus.src, corpus.tgt, chunk_lines=CHUNK_LINES):
            pending.append(encode(raw))
            if len(pending) >= in_flight:
                write_oldest()
    except UserError:
        while pending:
            write_oldest()
        raise
    while pending:
        write_oldest()
    require_usable(counts, corpus.src, corpus.tgt, purpose="training")
    progress.next_corpus()
    return FilterReport(
        kept=writer.pairs - kept_before,
        empty=counts.lines - counts.usable,
        too_long=too_long,
        uneven=uneven,
    )


def prepare(
    config: Config, directory: Path, subwords: tuple[Subwords, Subwords] | None = None, *, reason: str = ""
) -> tuple[Subwords, Subwords]:
    """Build the prepared dataset of `config` in `directory`, and return its subword models.

    With `subwords` (a resumed or fine-tuning run), the data is encoded with them; otherwise they are
    trained on a sample of the corpus first. `reason` (why it is built) is reported.
    """
    _say(f"preparing the training data in {directory}" + (f": {reason}" if reason else ""))
    (directory / MANIFEST).unlink(missing_ok=True)
    trained = subwords is None
    if subwords is None:
        started = time.monotonic()
        sources, targets = _sample(config)
        sampled = time.monotonic()
        subwords = train_vocabularies(config, sources, targets)
        _say(
            f"subwords learnt from {len(sources):,} pairs in {time.monotonic() - sampled:.1f} s, "
            f"after {sampled - started:.1f} s of reading and sampling"
        )
        del sources, targets
    directory.mkdir(parents=True, exist_ok=True)
    files.remove_temporaries(directory)
    for name, model in zip((SRC_SUBWORDS, TGT_SUBWORDS), subwords):
        files.atomic_write(directory / name, model.model_bytes)
    encoder = _Encoder(
        subwords,
        max_length=config.data.max_length,
        max_ratio=config.data.max_length_ratio,
        token_type=_smallest_type(max(len(subwords[0]), len(subwords[1])) - 1),
        length_type=_smallest_type(config.data.max_length),
    )
    reports, (sizes, digests) = _encode_all(config, directory, encoder)
    if not any(r.kept for r in reports):
        limits = f"data.max_length = {config.data.max_length} pieces" + (
            f" or data.max_length_ratio = {config.data.max_length_ratio}" if config.data.max_length_ratio else ""
        )
        raise UserError(f"{config.data.train_corpora[0].src}: no usable training pairs (each is over {limits})")
    manifest = {
        "format": FORMAT,
        "inputs": _inputs(config),
        "settings": {**_settings(config), **(_subword_settings(config) if trained else {})},
        "subwords": [s.digest for s in subwords],
        "pairs": sum(r.kept for r in reports),
        "token_type": encoder.token_type,
        "length_type": encoder.length_type,
        "file_sizes": sizes,
        "file_digests": digests,
        "filtered": [{"corpus": c.src, **vars(r)} for c, r in zip(config.data.train_corpora, reports)],
    }
    files.atomic_write(directory / MANIFEST, (json.dumps(manifest, indent=1) + "\n").encode("utf-8"))
    return subwords


def _encode_all(config: Config, directory: Path, encoder: _Encoder) -> tuple[list[FilterReport], dict[str, int]]:
    """Encode every corpus into the arrays of `directory`; the filter report of each."""
    corpora = config.data.train_corpora
    workers = _worker_count(config)
    progress = _Progress("encoding", _total_bytes(corpora))
    reports = []
    with ExitStack() as stack:
        writer = _Writer(directory, stack)
        if workers > 1:
            pool = stack.enter_context(
                ProcessPoolExecutor(
                    workers,
                    mp_context=get_context("spawn"),
                    initializer=_start_worker,
                    initargs=(encoder, os.getpid()),
                )
            )

            def encode(raw: RawChunk) -> Future:
                return pool.submit(_encode_in_worker, raw)

        else:
            encode = encoder
        try:
            for corpus in corpora:
                started = time.monotonic()
                report = _encode_corpus(corpus, encode, writer, progress, in_flight=IN_FLIGHT_PER_WORKER * workers)
                seconds = time.monotonic() - started
                rate = report.pairs / max(seconds, 1e-9)
                _say(f"training data {corpus.src}: {report}; encoded in {seconds:.1f} s, {rate:,.0f} pairs/s")
                reports.append(report)
        finally:
            progress.close()
        sizes = writer.sizes(), writer.digests()
    return reports, sizes


def ensure_prepared(
    config: Config, directory: Path, subwords: tuple[Subwords, Subwords] | None = None
) -> tuple[Subwords, Subwords]:
    """The subword models of the prepared data in `directory`, built first if it is
    missing or stale (saying why), reused otherwise (saying so)."""
    reason = stale_reason(directory, config, subwords)
    if reason is None:
        manifest = read_manifest(directory)
        _say(f"training data: {manifest['pairs']:,} prepared pairs in {directory}, reused")
        return subwords or _load_subwords(directory)
    return prepare(config, directory, subwords, reason=reason)


def _load_subwords(directory: Path) -> tuple[Subwords, Subwords]:
    return Subwords.load(directory / SRC_SUBWORDS), Subwords.load(directory / TGT_SUBWORDS)


# ---- reading -----------------------------------------------------------------------------


CHECK_BLOCK = 1 << 20  # pairs compared at once: the check's memory stays flat whatever the corpus


def _steps_by(offsets: np.ndarray, lengths: np.ndarray) -> bool:
    """Whether offsets[k + 1] − offsets[k] is lengths[k] for every pair k, a block at a time."""
    for start in range(0, len(lengths), CHECK_BLOCK):
        stop = min(start + CHECK_BLOCK, len(lengths))
        if not np.array_equal(np.diff(offsets[start : stop + 1]), lengths[start:stop]):
            return False
    return True


class PreparedPairs:
    """A prepared dataset opened for training: its length arrays for bucketing, and pair
    k as two numpy views of memory maps, read from disk when a batch needs them."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        manifest = read_manifest(self.directory)
        if manifest is None or manifest.get("format") != FORMAT:
            raise UserError(f"{self.directory}: no prepared data here (run rnnsearch prepare)")
        problem = manifest_problem(manifest)
        if problem is not None:
            raise UserError(f"{self.directory / MANIFEST}: not a valid manifest ({problem}); prepare the data again")
        reason = _missing_array(self.directory, manifest) or _changed_array(self.directory, manifest)
        if reason is not None:
            raise UserError(f"{reason}; prepare the data again")
        self.manifest = manifest
        self.tokens = [self._map(f"{side}.tokens", manifest["token_type"]) for side in SIDES]
        self.offsets = [self._map(f"{side}.offsets", "int64") for side in SIDES]
        self.source_lengths, self.target_lengths = (
            self._map(f"{side}.lengths", manifest["length_type"]) for side in SIDES
        )
        self._subwords = self._checked_subwords()
        lengths = (self.source_lengths, self.target_lengths)
        for k, side in enumerate(SIDES):
            self._check_side(side, self.tokens[k], self.offsets[k], lengths[k], vocabulary=len(self._subwords[k]))

    def _checked_subwords(self) -> tuple[Subwords, Subwords]:
        """The subword models beside the arrays, checked to be those that encoded them."""
        subwords = _load_subwords(self.directory)
        for name, model, recorded in zip((SRC_SUBWORDS, TGT_SUBWORDS), subwords, self.manifest["subwords"]):
            if model.digest != recorded:
                raise UserError(
                    f"{self.directory / name}: not the subword model that encoded this data (its digest differs "
                    "from the manifest's); prepare the data again"
                )
        return subwords

    def _check_side(
        self, side: str, tokens: np.ndarray, offsets: np.ndarray, lengths: np.ndarray, *, vocabulary: int
    ) -> None:
        """One side's arrays against the manifest and each other, vectorised, once: as
        many lengths as pairs, each from 1 to data.max_length; offsets from 0 that step by
        those lengths to the number of tokens; token ids within the `vocabulary`."""
        limit = self.manifest["settings"]["data.max_length"]

        def refuse(name: str, what: str) -> None:
            raise UserError(f"{self.directory / f'{side}.{name}'}: {what}; prepare the data again")

        if len(lengths) != self.manifest["pairs"]:
            refuse("lengths", f"{len(lengths):,} lengths for the manifest's {self.manifest['pairs']:,} pairs")
        if len(lengths) and not (1 <= int(lengths.min()) and int(lengths.max()) <= limit):
            refuse("lengths", f"a length outside 1 … {limit} (data.max_length)")
        if len(offsets) != len(lengths) + 1 or (len(offsets) and int(offsets[0]) != 0):
            refuse("offsets", f"{len(offsets):,} offsets, not 0 followed by one per pair")
        if not _steps_by(offsets, lengths):
            refuse("offsets", "offsets that do not step by the lengths")
        end = int(offsets[-1]) if len(offsets) else 0
        if end != len(tokens):
            refuse("tokens", f"{len(tokens):,} tokens where the offsets end at {end:,}")
        if len(tokens) and not (PAD < int(tokens.min()) and int(tokens.max()) < vocabulary):
            refuse("tokens", f"a token id outside 1 … {vocabulary - 1}, the subword vocabulary")

    def _map(self, name: str, dtype: str) -> np.ndarray:
        path = self.directory / name
        if path.stat().st_size == 0:
            return np.zeros(0, dtype=np.dtype(dtype).newbyteorder("<"))
        return np.memmap(path, dtype=np.dtype(dtype).newbyteorder("<"), mode="r")

    def __len__(self) -> int:
        return len(self.source_lengths)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        src_offsets, tgt_offsets = self.offsets
        return (
            self.tokens[0][src_offsets[index] : src_offsets[index + 1]],
            self.tokens[1][tgt_offsets[index] : tgt_offsets[index + 1]],
        )

    @property
    def subwords(self) -> tuple[Subwords, Subwords]:
        return self._subwords

"""Writing a dataset's arrays: each corpus streamed through the encoder (or its pool of
workers) and appended, in input order, to six arrays (eight with word links) that are
renamed into place only when every one was written, with the filter report of what was
kept and skipped."""

from __future__ import annotations

import hashlib
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from rnnsearch.config.data import TrainingFiles
from rnnsearch.errors import UserError
from rnnsearch.files import atomic
from rnnsearch.prepared import streaming
from rnnsearch.prepared.manifest import ARRAYS, LINK_ARRAYS, SIDES
from rnnsearch.prepared.streaming import Progress, say, total_bytes
from rnnsearch.prepared.workers import Encoded, Encoder, encoding
from rnnsearch.text.corpus import PairCounts, RawChunk, require_usable, stream_raw_parallel

IN_FLIGHT_PER_WORKER = 2  # chunks queued per worker: enough to keep it busy, few enough for flat memory


@dataclass(frozen=True)
class FilterReport:
    """What preparing a training corpus kept and skipped, for the user to see."""

    kept: int
    empty: int
    too_long: int
    uneven: int = 0
    unplaced: int = 0  # pairs with word links that their pieces do not spell, whose links go unused

    @property
    def pairs(self) -> int:
        """The pairs read: kept and skipped."""
        return self.kept + self.empty + self.too_long + self.uneven

    def __str__(self) -> str:
        uneven = f", {self.uneven} with a length ratio over data.max_length_ratio" if self.uneven else ""
        unplaced = (
            f"; the word links of {self.unplaced} kept pairs are unused (their pieces spell other words than the text)"
            if self.unplaced
            else ""
        )
        return (
            f"kept {self.kept} pairs; skipped {self.empty} empty and {self.too_long} longer than the limit{uneven}"
            f"{unplaced}"
        )


class Writer:
    """The six arrays of a dataset (eight with word links), appended to a chunk at a
    time, each in a temporary that is renamed into place only when every one was written."""

    def __init__(self, directory: Path, stack: ExitStack, *, links: bool = False):
        self.directory = directory
        self.handles: dict[str, BinaryIO] = {}
        names = ARRAYS + LINK_ARRAYS if links else ARRAYS
        self.hashes = {name: hashlib.sha256() for name in names}
        for name in names:
            temporary = stack.enter_context(atomic.replacing(directory / name))
            self.handles[name] = stack.enter_context(open(temporary, "wb"))
        self.offsets = [0, 0]
        self.pairs = 0
        self.links = 0 if links else None  # the link rows written so far
        for name in (*(f"{side}.offsets" for side in SIDES), *(["links.offsets"] if links else [])):
            self._write(name, np.zeros(1, dtype=np.int64))

    def add(self, encoded: Encoded) -> None:
        for k, side in enumerate(SIDES):
            lengths = encoded.lengths[k]
            offsets = self.offsets[k] + np.cumsum(lengths, dtype=np.int64)
            self._write(f"{side}.tokens", encoded.tokens[k])
            self._write(f"{side}.lengths", lengths)
            self._write(f"{side}.offsets", offsets)
            if len(offsets):
                self.offsets[k] = int(offsets[-1])
        self.pairs += len(encoded.lengths[0])
        if self.links is not None:
            self.links = self._add_links(encoded, self.links)

    def _add_links(self, encoded: Encoded, written: int) -> int:
        """The chunk's link rows after the `written` ones, and where each pair's end; no
        links for a corpus without them. The link rows written now."""
        kept = len(encoded.lengths[0])
        counts = np.zeros(kept, dtype=np.int64) if encoded.links is None else encoded.links.counts
        if encoded.links is not None:
            self._write("links", encoded.links.rows.reshape(-1))
        self._write("links.offsets", written + np.cumsum(counts, dtype=np.int64))
        return written + int(counts.sum())

    def _write(self, name: str, array: np.ndarray) -> None:
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        self.hashes[name].update(data)
        try:
            self.handles[name].write(data)
        except OSError as error:
            raise atomic.write_failure(self.directory / name, error) from None

    def sizes(self) -> dict[str, int]:
        return {name: handle.tell() for name, handle in self.handles.items()}

    def digests(self) -> dict[str, str]:
        """Each array's SHA-256, for the manifest: the check that tells a flipped bit."""
        return {name: digest.hexdigest() for name, digest in self.hashes.items()}


def _encode_corpus(
    corpus: TrainingFiles,
    encode: Callable[[RawChunk], Future | Encoded],
    writer: Writer,
    progress: Progress,
    in_flight: int,
) -> FilterReport:
    """Stream one corpus through `encode` (the encoder, or a pool's submit), writing the
    encoded chunks in input order; at most `in_flight` chunks are pending at once.

    A chunk's errors (a line that is not UTF-8) surface when its result is taken, those
    of reading (the end of one file) when the stream meets them: the chunks pending then
    are taken first, so that the error met first in the files is the one reported."""
    counts = PairCounts()
    pending: deque[Future | Encoded] = deque()
    too_long = uneven = unplaced = 0

    def write_oldest() -> None:
        nonlocal too_long, uneven, unplaced
        result = pending.popleft()
        encoded = result.result() if isinstance(result, Future) else result
        writer.add(encoded)
        counts.merge(encoded.counts)
        too_long, uneven = too_long + encoded.too_long, uneven + encoded.uneven
        unplaced += encoded.links.unplaced if encoded.links is not None else 0
        progress.update(encoded.lines, encoded.bytes_read)

    kept_before = writer.pairs
    try:
        chunks = stream_raw_parallel(
            corpus.src, corpus.tgt, chunk_lines=streaming.CHUNK_LINES, alignments=corpus.alignments
        )
        for raw in chunks:
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
        unplaced=unplaced,
    )


def write_arrays(
    corpora: Sequence[TrainingFiles], directory: Path, encoder: Encoder, *, workers: int
) -> tuple[list[FilterReport], dict[str, int], dict[str, str]]:
    """Encode every corpus into the arrays of `directory` with `workers` processes; the
    filter report of each corpus, and the arrays' sizes and digests."""
    progress = Progress("encoding", total_bytes(corpora))
    reports = []
    with ExitStack() as stack:
        writer = Writer(directory, stack, links=any(c.alignments for c in corpora))
        encode = encoding(encoder, workers, stack)
        try:
            for corpus in corpora:
                started = time.monotonic()
                report = _encode_corpus(corpus, encode, writer, progress, in_flight=IN_FLIGHT_PER_WORKER * workers)
                seconds = time.monotonic() - started
                rate = report.pairs / max(seconds, 1e-9)
                say(f"training data {corpus.src}: {report}; encoded in {seconds:.1f} s, {rate:,.0f} pairs/s")
                reports.append(report)
        finally:
            progress.close()
        sizes, digests = writer.sizes(), writer.digests()
    return reports, sizes, digests

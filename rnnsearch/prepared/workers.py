"""Encoding a corpus's chunks: the encoder that turns raw lines into piece-id arrays, and
the pool of worker processes that runs it beside the process that reads and writes.

Workers are started with spawn, each sent one encoder (subword models pickle as their
bytes), and die with the process that started them (Linux's PR_SET_PDEATHSIG), so that
a killed prepare leaves none behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import chain, compress
from multiprocessing import get_context

import numpy as np

from rnnsearch.children import die_with
from rnnsearch.config.data import ParallelFiles
from rnnsearch.prepared.links import EncodedLinks, encode_links
from rnnsearch.prepared.streaming import total_bytes
from rnnsearch.text.corpus import PairCounts, RawChunk
from rnnsearch.text.subwords import Subwords

SMALL_CORPUS_BYTES = 64 << 20  # below this (~250,000 pairs), starting workers costs more than they save


@dataclass
class Encoded:
    """One chunk's kept pairs as flat arrays, and what it held and skipped."""

    tokens: tuple[np.ndarray, np.ndarray]
    lengths: tuple[np.ndarray, np.ndarray]
    counts: PairCounts
    too_long: int
    uneven: int
    lines: int
    bytes_read: int
    links: EncodedLinks | None = None  # the kept pairs' piece links, for a corpus with word alignments


@dataclass(frozen=True)
class Encoder:
    """Decodes a chunk of raw lines, drops blank pairs, encodes the rest, filters them by
    length and places the kept pairs' word links (if any) on their pieces: a worker
    process is sent one (subword models pickle as their bytes), so that all of the work
    on a line but reading it happens in the workers."""

    subwords: tuple[Subwords, Subwords]
    max_length: int
    max_ratio: float | None
    token_type: str
    length_type: str

    def __call__(self, raw: RawChunk) -> Encoded:
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
        links = None
        if chunk.links is not None:
            links = encode_links(chunk, usable, keep, ids, self.subwords, self.length_type)
        return Encoded(
            tokens=(self._flat(ids[0], keep), self._flat(ids[1], keep)),
            lengths=(lengths[0][keep].astype(self.length_type), lengths[1][keep].astype(self.length_type)),
            counts=counts,
            too_long=int(too_long.sum()),
            uneven=int(uneven.sum()),
            lines=len(chunk.sources),
            bytes_read=chunk.bytes_read,
            links=links,
        )

    def _flat(self, sentences: list[list[int]], keep: np.ndarray) -> np.ndarray:
        return np.fromiter(chain.from_iterable(compress(sentences, keep.tolist())), dtype=self.token_type)


_WORKER_ENCODER: Encoder | None = None


def _start_worker(encoder: Encoder, parent: int) -> None:
    """An encoding worker's set-up: its encoder, and its death with the process that
    started it (`parent`), so that a killed prepare leaves no worker behind holding the
    caller's standard streams (or the pipe multiprocessing's resource tracker waits on)."""
    global _WORKER_ENCODER
    _WORKER_ENCODER = encoder
    die_with(parent)


def _encode_in_worker(raw: RawChunk) -> Encoded:
    if _WORKER_ENCODER is None:
        raise RuntimeError("a worker encodes only once its process has started with an encoder")
    return _WORKER_ENCODER(raw)


def smallest_type(largest: int) -> str:
    """The narrower of the arrays' two integer types that holds `largest`."""
    return "uint16" if largest <= np.iinfo(np.uint16).max else "int32"


def worker_count(requested: int | None, corpora: Sequence[ParallelFiles]) -> int:
    """The encoding processes for `corpora`: data.workers (`requested`) when set, else one
    for a small corpus and one per core available otherwise."""
    if requested is not None:
        return requested
    if total_bytes(corpora) <= SMALL_CORPUS_BYTES:
        return 1
    return len(os.sched_getaffinity(0))


def encoding(encoder: Encoder, workers: int, stack: ExitStack) -> Callable[[RawChunk], Future | Encoded]:
    """`encoder` itself for one worker; else a pool of `workers` processes running it,
    closed with `stack`, whose submit returns a chunk's future."""
    if workers <= 1:
        return encoder
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

    return encode

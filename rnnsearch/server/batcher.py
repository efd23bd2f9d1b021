"""Merging concurrent translation requests into few model calls.

Sentences (or recordings) decode faster in a batch than one request at a time, so
requests that wait at the same moment with the same settings (one checked request,
rnnsearch.translation.request: its search and what the alignments come from) are merged
into one model call: `Translator.translate_with` for texts, `Translator.transcribe` for
audio. The model runs in one worker thread:
off the event loop, so the server keeps accepting requests while it decodes, and
never concurrently with itself, as torch modules are not meant to be.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass

import numpy as np

from rnnsearch.search.rules import SearchCancelled
from rnnsearch.translation.request import Request
from rnnsearch.translation.translator import Translation

Item = tuple[str, str, Request] | np.ndarray
"""What one request item is: a text, its target prefix ("" for none) and its request (whose
glossary is the text's own), or a recording's samples."""

TranslateFn = Callable[..., list[Translation]]
"""(items, *settings, cancelled) → one Translation per item, in order, the settings being
those the requests were merged by (the server's: one checked request); `cancelled()` turns True when no
request of the call still waits, and the call may then stop early by raising."""


@dataclass(eq=False)
class _Job:
    """One request's items, waiting for its share of a model call."""

    items: list[Item]
    key: tuple
    future: asyncio.Future[list[Translation]]
    arrived: float
    bulk: bool = False


class Batcher:
    """Queues requests and feeds them to the model in merged batches, one batch at a time.

    A batch starts when the oldest waiting request has waited `max_wait` seconds, or
    as soon as the requests waiting with its settings fill `max_batch` items. A
    request is never split, so one larger than `max_batch` makes a batch of its own.
    Bulk requests (a document's batches of sentences) are served after every other
    request waiting, so that however many documents are being translated, a request
    waits for at most the call under way before its own.

    `requests` and `calls` count the requests received and the model calls made, so
    that callers (tests, monitoring) can see how much merging happened; `cancelled_calls`
    counts the calls stopped early because every request in them had been given up on.
    """

    def __init__(self, translate: TranslateFn, max_batch: int, max_wait: float):
        self._translate = translate
        self.max_batch = max_batch
        self.max_wait = max_wait
        self.requests = 0
        self.calls = 0
        self.cancelled_calls = 0
        self._pending: list[_Job] = []
        self._arrival = asyncio.Event()
        self._worker: ThreadPoolExecutor | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the worker thread and the batching task on the running event loop."""
        self._arrival = asyncio.Event()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rnnsearch-model")
        self._task = asyncio.create_task(self._serve(), name="rnnsearch-batcher")

    async def stop(self) -> None:
        """Stop batching and cancel waiting requests; a model call under way finishes unobserved."""
        if self._task is not None:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
        for job in self._pending:
            job.future.cancel()
        self._pending.clear()
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)
        self._task = self._worker = None

    async def translate(self, items: list[Item], *settings: object, bulk: bool = False) -> list[Translation]:
        """Translate `items` (texts or recordings) as part of whatever batch they join, with
        `settings` (the server's checked request: only requests with equal ones are merged);
        `bulk`: one batch of many (a document's), served after the other requests;
        cancelling withdraws the request."""
        if self._task is None:
            raise RuntimeError("Batcher.start() must be awaited before translating")
        loop = asyncio.get_running_loop()
        job = _Job(list(items), settings, loop.create_future(), loop.time(), bulk)
        self._pending.append(job)
        self.requests += 1
        self._arrival.set()
        return await job.future

    async def _serve(self) -> None:
        while True:
            await self._gather()
            await self._run(self._take_batch())

    async def _gather(self) -> None:
        """Wait until the oldest waiting request has waited `max_wait`, or its batch is full."""
        loop = asyncio.get_running_loop()
        while True:
            pending = self._drop_withdrawn()
            left = None  # nothing waits: wait for an arrival however long
            if pending:
                left = _leader(pending).arrived + self.max_wait - loop.time()
                if left <= 0 or self._batch_is_full(pending):
                    return
            self._arrival.clear()
            with suppress(TimeoutError):
                await asyncio.wait_for(self._arrival.wait(), left)

    def _drop_withdrawn(self) -> list[_Job]:
        """Forget requests whose caller stopped waiting (timed out or disconnected); return those left."""
        self._pending = [job for job in self._pending if not job.future.done()]
        return self._pending

    def _batch_is_full(self, pending: list[_Job]) -> bool:
        leader = _leader(pending)
        return sum(len(job.items) for job in pending if _joins(job, leader)) >= self.max_batch

    def _take_batch(self) -> list[_Job]:
        """The leading request (`_leader`) and, in order, the others with its settings
        and its kind (bulk or not) that still fit in `max_batch`.

        Called straight after `_gather`, with no await between, so some request is waiting.
        """
        leader = _leader(self._pending)
        batch: list[_Job] = []
        size = 0
        for job in self._pending:
            if _joins(job, leader) and (not batch or size + len(job.items) <= self.max_batch):
                batch.append(job)
                size += len(job.items)
        self._pending = [job for job in self._pending if job not in batch]
        return batch

    async def _run(self, batch: list[_Job]) -> None:
        """One model call for the whole batch; if it fails, each request is retried alone so that
        one bad request gets its own error instead of failing the others merged with it.

        Once every request of the call has been given up on (timed out, disconnected), the
        call is told so, and the model thread is free for the requests that still wait.
        """
        items = [item for job in batch for item in job.items]
        settings = batch[0].key
        self.calls += 1
        loop = asyncio.get_running_loop()

        def cancelled() -> bool:  # asked from the model thread; done() only reads a flag
            return all(job.future.done() for job in batch)

        try:
            translating = functools.partial(self._translate, items, *settings, cancelled)
            results = await loop.run_in_executor(self._worker, translating)
        except SearchCancelled:  # raised only once cancelled() is True: no request is left to answer
            self.cancelled_calls += 1
            return
        except Exception as error:
            if len(batch) == 1:
                _settle(batch[0].future, error)
                return
            for job in batch:
                if not job.future.done():
                    await self._run([job])
            return
        start = 0
        for job in batch:
            _settle(job.future, results[start : start + len(job.items)])
            start += len(job.items)


def _leader(pending: list[_Job]) -> _Job:
    """The request the next batch is made for: the oldest that is not bulk, else the oldest."""
    return next((job for job in pending if not job.bulk), pending[0])


def _joins(job: _Job, leader: _Job) -> bool:
    """Whether `job` may share the batch of `leader`: the same settings and the same kind."""
    return job.key == leader.key and job.bulk == leader.bulk


def _settle(future: asyncio.Future[list[Translation]], outcome: list[Translation] | Exception) -> None:
    """Complete `future` with a result or an error, unless its caller has already given up on it."""
    if future.done():
        return
    if isinstance(outcome, Exception):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)

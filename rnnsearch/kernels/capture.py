"""What capturing a CUDA graph asks of the Python process."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def garbage_collector_paused() -> Iterator[None]:
    """No garbage collection while CUDA work is captured into a graph.

    A collection in the middle of a capture can free another graph (one left in a
    reference cycle, as `make_graphed_callables` leaves the modules it patches), and
    destroying a graph is not allowed while a capture is running: the capture fails.
    Such garbage waits for the next collection after the capture; collecting before
    every capture would cost a full collection each time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

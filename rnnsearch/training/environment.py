"""The training process's set-up, apart from the loop: its generators seeded, its
threads, malloc arenas and oneDNN cache matched to the machine, and denormal floats
flushed while it trains."""

from __future__ import annotations

import ctypes
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager

import torch

M_ARENA_MAX = -8  # a mallopt() parameter, from glibc's malloc.h
ONEDNN_CACHE_CAPACITY = "128"  # compiled oneDNN primitives kept, against oneDNN's default of 1,024


def seed_generators(seed: int, rank: int, step: int) -> None:
    """Seed torch's generators (the CPU's and every CUDA device's) from the run's seed,
    this process's rank and the step, so that each rank draws its own dropout masks and
    a run resumed at `step` draws the same ones as a run that never stopped."""
    digest = hashlib.blake2b(f"{seed}:{rank}:{step}".encode(), digest_size=8).digest()
    torch.manual_seed(int.from_bytes(digest, "little"))


def configure_cpu(threads: int | None) -> None:
    """Threads matched to the cores, one malloc arena for all of them, and a smaller
    oneDNN cache.

    glibc gives each allocating thread an arena whose freed blocks only that arena
    reuses. One arena, with glibc's default return of freed memory to the system,
    lowered the trainer's peak RSS at the same speed.

    In bf16, the CPU's matrix products run on oneDNN, which compiles code for every
    shape it meets and keeps up to 1,024 of them; batches of varying size meet many
    shapes, and a bf16 run's memory kept growing. Keeping 128 lowers the peak, with the
    same losses and no loss of speed. Both are measured in BENCHMARKS.md, "Where the
    time goes, and how close to the machine's ceiling". oneDNN reads the capacity when
    it first runs, so a value set in the environment wins.
    """
    os.environ.setdefault("ONEDNN_PRIMITIVE_CACHE_CAPACITY", ONEDNN_CACHE_CAPACITY)
    torch.set_num_threads(threads or len(os.sched_getaffinity(0)))
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(M_ARENA_MAX, 1)


@contextmanager
def flushing_denormals() -> Iterator[None]:
    """Denormal floats flushed to zero while training, and the processor's default after.

    Tiny values (below 1e-38) that reach the weights or Adam's moments make every
    matrix product that touches them run in slow microcode, which slowed training many
    times over (BENCHMARKS.md, "Where the time goes, and how close to the machine's
    ceiling"). Flushing changes only values below float32's normal range. The setting
    is process-wide, so it is undone afterwards for whatever else runs in the process.
    """
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)

"""The processor a benchmark ran on, in words: every figure in BENCHMARKS.md names it.

PyTorch, MKL and oneDNN choose their kernels by instruction set, so the same code runs
at different speeds (and rounds differently) on an AVX2-only CPU and an AVX-512 one;
the kernels in use are named next to the model name.
"""

from __future__ import annotations

import platform
from pathlib import Path


def processor_name() -> str:
    """The CPU's model name from /proc/cpuinfo, or what `platform` knows where there is none."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_cpu(threads: int) -> str:
    """Model name, the instruction set torch's CPU kernels use (AVX512, AVX2, …), threads and torch."""
    import torch

    kernels = torch.backends.cpu.get_cpu_capability()
    return f"{processor_name()}, {kernels} kernels, {threads} threads, torch {torch.__version__}"

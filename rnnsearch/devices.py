"""Where a model runs: a device named in a flag, a config key or a call, checked."""

from __future__ import annotations

import torch

from rnnsearch.errors import ArgumentTypeError, UserError


def resolve_device(name: str, key: str = "device") -> torch.device:
    """cpu, cuda, cuda:N, or auto (the GPU where PyTorch sees one); anything else, or a GPU
    that is not there, is a one-line error naming `key`, where it was asked for."""
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{key}: expected a str such as 'cpu' or 'auto', got {type(name).__name__}")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        device = None
    if device is None or device.type not in ("cpu", "cuda"):
        raise UserError(f"{key}: unknown device {name!r}; choose cpu, cuda, cuda:N or auto")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise UserError(f"{key}: {name!r} asked for, but this PyTorch sees no CUDA GPU; use cpu or auto")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise UserError(f"{key}: {name!r} asked for, but only {torch.cuda.device_count()} GPU(s) are visible")
    return device

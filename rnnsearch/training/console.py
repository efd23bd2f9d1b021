"""How training speaks: one line at a time on standard error, above the progress bar."""

from __future__ import annotations

import sys

from tqdm import tqdm


def say(message: str) -> None:
    """Write `message` as a line to standard error without breaking tqdm's bar."""
    tqdm.write(message, file=sys.stderr)

"""Processes a command starts, kept from outliving it.

A worker or an external program that a command starts must end with it, however the
command ends: killed outright, a child would be re-parented to init and go on using the
CPU, and holding files and pipes, for nothing. `die_with` asks Linux to kill the calling
process when its parent dies (PR_SET_PDEATHSIG), which survives exec, so it covers
programs such as eflomal as well as Python workers. `terminating_as_interrupt` makes a
SIGTERM interrupt the command as Ctrl-C does, so that its context managers remove their
temporaries before it exits.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

PR_SET_PDEATHSIG = 1  # prctl's option: the signal a process gets when its parent dies (linux/prctl.h)


def die_with(parent: int) -> None:
    """Have the kernel kill this process when `parent` dies (Linux's PR_SET_PDEATHSIG);
    if it died already, before the request was made, exit now. Elsewhere a child
    outlives its parent only until it next waits for work from it."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        return
    if os.getppid() != parent:
        os._exit(1)


@contextmanager
def terminating_as_interrupt() -> Iterator[None]:
    """For the block, a SIGTERM raises KeyboardInterrupt in the main thread, as Ctrl-C
    does, instead of ending the process where it stands; elsewhere than the main thread
    the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(number: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)

"""A command's scratch directory that Ctrl-C cannot leak.

``tempfile.TemporaryDirectory`` removes its directory on the way out of its ``with`` block
and, failing that, at exit (a finalizer registered when it is made). Only one moment is
unguarded: a SIGINT between ``mkdir`` inside ``mkdtemp`` and that registration raises
``KeyboardInterrupt`` with the directory made and nobody holding it. ``scratch_directory``
holds SIGINT back for that moment; a Ctrl-C pressed then takes effect right after, when the
directory is already owned. It swaps the Python-level handler rather than blocking the signal
in the main thread: the kernel hands a process-directed signal to any thread that does not
block it (a thread pool's, say), and Python then runs its handler in the main thread at once.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType


@contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """A temporary directory (removed on the way out, Ctrl-C included) as a ``Path``."""
    # Handlers live in the main thread only; one installed from C (getsignal: None) cannot be
    # put back from Python, so it is left alone
    guard = (threading.current_thread() is threading.main_thread()
             and signal.getsignal(signal.SIGINT) is not None)
    pending: list[FrameType | None] = []
    previous = signal.signal(signal.SIGINT, lambda _n, frame: pending.append(frame)) \
        if guard else None
    try:
        scratch = tempfile.TemporaryDirectory(prefix=prefix)
    finally:
        if guard:
            signal.signal(signal.SIGINT, previous)
    with scratch as name:
        if pending:  # the Ctrl-C held back, now that the directory is owned and removed on exit
            if callable(previous):
                previous(signal.SIGINT, pending[0])
            elif previous == signal.SIG_DFL:
                os.kill(os.getpid(), signal.SIGINT)
        yield Path(name)

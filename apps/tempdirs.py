"""A command's scratch directory that Ctrl-C cannot leak.

``tempfile.TemporaryDirectory`` removes its directory on the way out of its ``with`` block
and, failing that, at exit (a finalizer registered when it is made). Only one moment is
unguarded: a SIGINT between ``mkdir`` inside ``mkdtemp`` and that registration raises
``KeyboardInterrupt`` with the directory made and nobody holding it. ``scratch_directory``
holds SIGINT back (blocks it) for that moment; a Ctrl-C pressed then arrives right after,
when the directory is already owned.
"""

from __future__ import annotations

import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def scratch_directory(prefix: str) -> Iterator[Path]:
    """A temporary directory (removed on the way out, Ctrl-C included) as a ``Path``."""
    guard = threading.current_thread() is threading.main_thread()  # signals go to main only
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if guard else None
    try:
        scratch = tempfile.TemporaryDirectory(prefix=prefix)
    finally:
        if held is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    with scratch as name:
        yield Path(name)

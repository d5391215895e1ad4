"""Ctrl-C during a replay: the replay stops *between* blocks, never inside one.

Python turns SIGINT into ``KeyboardInterrupt`` at whatever bytecode the main thread is running.
Inside a block's connection that is in the middle of the coins cache's update (a coin spent,
the block's new coins not yet added, the tip not moved) or of a queue's lock; closing the node
after that would flush a half-changed UTXO set, and a reader thread could wait forever on a
queue whose lock the interrupt left held. Bitcoin Core's answer is ours: the signal handler only
*asks* for a shutdown (src/init.cpp ``HandleSIGTERM`` → ``StartShutdown``, src/shutdown.cpp) and
the import and connect loops look at the request between blocks (``ActivateBestChain`` in
src/validation.cpp breaks out when ``ShutdownRequested()``).

``StopRequest`` is that handler for the duration of a replay:

- the first Ctrl-C sets ``requested``; the driver raises ``KeyboardInterrupt`` at the next block
  boundary (``check``), where the node is consistent: blocks whose proofs were not verified yet
  are taken out and the data directory closes at its last verified block;
- a second Ctrl-C stops at once: ``on_force`` runs (the driver abandons the node: nothing more
  is written, exactly as if the process had been killed, which the stores survive by design,
  docs/durability.md) and ``KeyboardInterrupt`` is raised where the main thread is.

Installed only from the main thread (where handlers live) and only over Python's default
handler: a program that installed its own SIGINT handler keeps it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType


class StopRequest:
    """SIGINT as a request to stop at the next block boundary (module docstring)."""

    def __init__(self, *, on_force: Callable[[], None] | None = None) -> None:
        self.requested = False
        self.forced = False
        self.on_force = on_force
        self._previous: object = None
        self._installed = False

    def check(self) -> None:
        """``KeyboardInterrupt`` if a stop was asked for (call it where stopping is safe)."""
        if self.requested:
            raise KeyboardInterrupt

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        if not self.requested:
            self.requested = True  # nothing printed here: a handler may run mid-render
            return
        self.forced = True
        if self.on_force is not None:
            self.on_force()
        raise KeyboardInterrupt

    def __enter__(self) -> StopRequest:
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, _kind: type[BaseException] | None, _exc: BaseException | None,
                 _tb: TracebackType | None) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)  # type: ignore[arg-type]
            self._installed = False

"""Durable writes of one data directory: the stop after the first failure, and the test seam.

Bitcoin Core aborts on the first durable write that fails (``AbortNode`` / ``fatalError``,
src/node/abort.cpp; "Disk space is too low!", src/node/blockstorage.cpp): continuing would
leave a block file, the block index and the chainstate that disagree. ``WriteGuard`` is that
rule for our stores (docs/durability.md §3): every durable write of a data directory (block and
undo records, block-file fsync, block-index batches, chainstate flush batches, proof-cache
batches) runs through ``WriteGuard.write``; an ``OSError`` or LevelDB error there becomes a
``DiskWriteError``, remembered as ``failure``, and every later write through the same guard is
refused with it, so nothing more reaches the disk. ``on_failure`` tells the owner (the RPC node
shuts down); a corruption a store detects is reported the same way (``WriteGuard.fatal``).

Fault injection (tests only): the environment variable ``CTPLUGIN_FAULT_WRITE`` holds
``SITE:N[:ERRNO]`` items separated by commas; the N-th write at SITE (1-based, counted per
guard) and every later one there fail before reaching the disk with ERRNO (an ``errno`` name,
ENOSPC by default: a full disk; EIO a failing one, EROFS a file system remounted read-only).
SITE is one of ``WRITE_SITES`` or ``any`` (every site counted together). Unset, the seam costs
nothing but a truth test per write.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import TypeVar

import plyvel

from validator.store.errors import DiskWriteError, StoreFatalError, StoreValueError

FAULT_ENV = "CTPLUGIN_FAULT_WRITE"
WRITE_SITES = ("block files", "undo files", "block index", "chainstate", "proof cache",
               "wallet")
"""The durable write sites, named as the stores are in messages (``DiskWriteError.site``)."""

T = TypeVar("T")


def parse_faults(text: str) -> dict[str, tuple[int, int]]:
    """``SITE:N[:ERRNO],...`` → {site: (first failing write, errno)}; ``StoreValueError`` for
    a bad item."""
    plan: dict[str, tuple[int, int]] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        site, _, rest = item.partition(":")
        count, _, name = rest.partition(":")
        code = getattr(errno, name or "ENOSPC", None)
        if site not in (*WRITE_SITES, "any") or not count.isdigit() or int(count) < 1 \
                or not isinstance(code, int):
            raise StoreValueError(f"{FAULT_ENV}: bad item {item!r} (SITE:N[:ERRNO], SITE one "
                                  f"of {', '.join(WRITE_SITES)}, any)")
        plan[site] = (int(count), code)
    return plan


def is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return "no space left" in str(exc).lower()


class WriteGuard:
    """The durable writes of one data directory (module docstring)."""

    def __init__(self, faults: dict[str, tuple[int, int]] | None = None) -> None:
        self.failure: StoreFatalError | None = None
        self.on_failure: Callable[[StoreFatalError], None] | None = None
        self._faults = faults if faults is not None else parse_faults(
            os.environ.get(FAULT_ENV, ""))
        self._counts: dict[str, int] = {}

    def _inject(self, site: str) -> None:
        counts = self._counts
        for key in (site, "any"):
            fault = self._faults.get(key)
            if fault is not None:
                counts[key] = counts.get(key, 0) + 1
                if counts[key] >= fault[0]:
                    raise OSError(fault[1], os.strerror(fault[1]))

    def check(self) -> None:
        """Refuse to go on after a failure (``failure`` raised again)."""
        if self.failure is not None:
            raise self.failure

    def write(self, site: str, operation: Callable[[], T]) -> T:
        """Run one durable write; a failure stops every later one (module docstring)."""
        self.check()
        try:
            if self._faults:
                self._inject(site)
            return operation()
        except (OSError, plyvel.IOError, plyvel.CorruptionError) as exc:
            text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise self.fatal(DiskWriteError(site, text, full=is_disk_full(exc))) from None

    def fatal(self, error: StoreFatalError) -> StoreFatalError:
        """Record ``error`` as the directory's failure (the first one stays) and tell the
        owner; returns it for ``raise``."""
        if self.failure is None:
            self.failure = error
            if self.on_failure is not None:
                self.on_failure(error)
        return error

"""``Closeable``: the one ``close`` / ``with`` protocol of every object that owns a resource
(databases, data directories, nodes, servers, worker pools), written once.

A subclass implements ``close()`` (idempotent: a second call does nothing); ``with obj:`` then
closes it on leaving the block, exception or not, and returns ``obj`` itself from ``__enter__``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Closeable:
    """Base of resource owners: ``close()`` plus the context-manager protocol around it."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

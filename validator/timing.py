"""One way to time the stages of block connection: ``StageTimer``.

``with timer.stage(Stage.RESOLVE): ...`` adds the wall time of the block to ``timer.seconds
["resolve"]`` (stages entered twice accumulate). ``ConnectReport.timings`` is the timer's
``seconds``; leaf stages only, so their sum is the connect's total.
"""

from __future__ import annotations

import time
from enum import StrEnum
from types import TracebackType


class Stage(StrEnum):
    """The stages ``ConnectReport.timings`` names (docs/design.md "Data flow"), in the order a
    block goes through them. Stage 5 also times each check family under its
    ``validator.items.Family`` name ("surjection", "ecdsa", ...)."""

    PARSE = "parse"
    STORE = "store"  # the node's block file and index write (submit_block)
    CHECK = "check"
    RESOLVE = "resolve"
    PLAN = "plan"
    CACHE = "cache"
    SCRIPTS = "scripts"
    CLAIMS = "claims"
    MSM = "msm"
    PREFETCH = "prefetch"  # waiting for the check verdicts computed beside the MSM
    COMMIT = "commit"
    CHAIN = "chain"  # the rest of submit_block: undo record, index, mempool, events


class StageTimer:
    """Seconds per named stage (see the module docstring)."""

    __slots__ = ("seconds",)

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def stage(self, name: str) -> _Stage:
        return _Stage(self.seconds, name)

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


class _Stage:
    __slots__ = ("_name", "_seconds", "_start")

    def __init__(self, seconds: dict[str, float], name: str) -> None:
        self._seconds = seconds
        self._name = name
        self._start = 0.0

    def __enter__(self) -> None:
        self._start = time.perf_counter()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        elapsed = time.perf_counter() - self._start
        self._seconds[self._name] = self._seconds.get(self._name, 0.0) + elapsed

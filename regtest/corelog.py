"""Core's log line shapes shared by the node's debug.log (``rpc.chainlog``) and replay's
progress lines (``replay.progress``), so both read as bitcoind's (Bitcoin Core
``src/validation.cpp`` ``UpdateTipLog``, ``src/util/time.cpp`` ``FormatISO8601DateTime``).

Chain work: our chains are signed-block chains, where Elements counts one unit of work per
block (``GetBlockProof``), so ``log2_work`` is log2(height + 1).
"""

from __future__ import annotations

import math
import time


def format_timestamp(seconds: float, micros: bool = False) -> str:
    """ISO 8601 in UTC, whatever TZ says: ``2026-12-01T21:25:13Z``; with ``micros``
    ``2026-12-01T21:25:13.123456Z`` (Core's ``-logtimemicros``)."""
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    if micros:
        text += f".{int(seconds * 1_000_000) % 1_000_000:06d}"
    return text + "Z"


def log2_work(height: int) -> float:
    return math.log2(height + 1)


def update_tip_line(hash_hex: str, height: int, version: int, block_time: int, chain_tx: int,
                    progress: float, cache_mib: float, txo: int | None) -> str:
    """``UpdateTip: new best=… height=… version=0x… log2_work=… tx=… date='…' progress=…
    cache=…MiB(…txo)`` (the ``(…txo)`` left out when ``txo`` is None)."""
    coins = f"({txo}txo)" if txo is not None else ""
    return (f"UpdateTip: new best={hash_hex} height={height} version=0x{version:08x} "
            f"log2_work={log2_work(height):.6f} tx={chain_tx} "
            f"date='{format_timestamp(block_time)}' progress={progress:.6f} "
            f"cache={cache_mib:.1f}MiB{coins}")

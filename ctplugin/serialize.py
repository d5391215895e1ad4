"""Variable-length integers of the wire formats, one place for each (pure functions over ints).

- ``compact_size``: Bitcoin's CompactSize (little-endian after a 0xfd/0xfe/0xff marker), as in
  Elements transactions, blocks, scripts and witnesses; canonical (shortest) encoding.
- ``bigsize``: Lightning's BigSize (the same markers, big-endian), as in the DLC TLV formats.
- ``var_bytes``: ``compact_size(len(data)) ‖ data``.

Both take an integer in [0, 2^64); anything else is an ``EncodingError``. (The C walker reads
compact sizes itself, with Elements' MAX_SIZE bound.)
"""

from __future__ import annotations

from typing import Literal

from ctplugin.errors import EncodingError

_U64_MAX = (1 << 64) - 1


def _varint(n: int, order: Literal["little", "big"]) -> bytes:
    if not 0 <= n <= _U64_MAX:
        raise EncodingError(f"varint {n} outside [0, 2^64)", reason="value-range")
    if n < 0xFD:
        return bytes((n,))
    if n <= 0xFFFF:
        return b"\xfd" + n.to_bytes(2, order)
    if n <= 0xFFFF_FFFF:
        return b"\xfe" + n.to_bytes(4, order)
    return b"\xff" + n.to_bytes(8, order)


def compact_size(n: int) -> bytes:
    """Bitcoin CompactSize of ``n`` (canonical)."""
    return _varint(n, "little")


def bigsize(n: int) -> bytes:
    """Lightning BigSize of ``n`` (canonical)."""
    return _varint(n, "big")


def var_bytes(data: bytes) -> bytes:
    """``data`` prefixed with its CompactSize length."""
    return compact_size(len(data)) + data

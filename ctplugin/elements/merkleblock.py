"""Elements' merkle block (``gettxoutproof``'s proof; Bitcoin Core ``merkleblock.h``/``.cpp``,
BIP37's partial Merkle tree; docs/elements-format.md §1.3 for the header).

A proof is the block header as Elements serializes it (signed-block fields included) followed
by the partial Merkle tree: the transaction count (u32 LE), the hashes (CompactSize count, 32
bytes each, internal order) and the flag bits (CompactSize byte count, bits packed least
significant first). The tree is the block's Bitcoin Merkle tree of txids (double SHA256 of
each pair, the last node paired with itself on odd levels).

- ``build_proof(header, txids, wanted)``: the serialized proof of the ``wanted`` txids;
- ``block_header_end(data, pos)``: where a serialized header ends (a proof's header is
  followed by the tree, so its length comes from walking it);
- ``parse_proof(data)``: (header, transaction count, matched txids, root) or ``ParseError``
  for bytes that do not deserialize; the root is None for a tree ``ExtractMatches`` refuses
  (no transactions, too many, unused or missing hashes or bits, identical siblings), and the
  caller compares it with the header's.
"""

from __future__ import annotations

import struct
from collections.abc import Collection, Sequence

from ctplugin.elements.model import BlockHeader, parse_block_header
from ctplugin.errors import EncodingError, ParseError
from ctplugin.hashes import sha256d
from ctplugin.serialize import compact_size

MAX_BLOCK_WEIGHT = 4_000_000
MIN_TRANSACTION_WEIGHT = 4 * 60  # Core: the smallest transaction's weight bounds the count
_LEGACY_FIXED = 4 + 32 + 32 + 4 + 4  # version, prev, merkle root, time, height
_DYNAFED_BIT = 1 << 31


def _width(n_transactions: int, height: int) -> int:
    return (n_transactions + (1 << height) - 1) >> height


def _tree_height(n_transactions: int) -> int:
    height = 0
    while _width(n_transactions, height) > 1:
        height += 1
    return height


def _calc_hash(height: int, pos: int, txids: Sequence[bytes]) -> bytes:
    if height == 0:
        return txids[pos]
    left = _calc_hash(height - 1, pos * 2, txids)
    if pos * 2 + 1 < _width(len(txids), height - 1):
        right = _calc_hash(height - 1, pos * 2 + 1, txids)
    else:
        right = left
    return sha256d(left + right)


def build_proof(header: BlockHeader, txids: Sequence[bytes], wanted: Collection[bytes]) -> bytes:
    """``CMerkleBlock(block, txids)`` serialized: ``txids`` are the block's, in order."""
    matches = [t in wanted for t in txids]
    bits: list[bool] = []
    hashes: list[bytes] = []

    def traverse(height: int, pos: int) -> None:
        start = pos << height
        end = min((pos + 1) << height, len(txids))
        parent_of_match = any(matches[start:end])
        bits.append(parent_of_match)
        if height == 0 or not parent_of_match:
            hashes.append(_calc_hash(height, pos, txids))
            return
        traverse(height - 1, pos * 2)
        if pos * 2 + 1 < _width(len(txids), height - 1):
            traverse(height - 1, pos * 2 + 1)

    traverse(_tree_height(len(txids)), 0)
    packed = bytearray((len(bits) + 7) // 8)
    for i, bit in enumerate(bits):
        packed[i // 8] |= bit << (i % 8)
    return (header.serialize() + struct.pack("<I", len(txids)) + compact_size(len(hashes))
            + b"".join(hashes) + compact_size(len(packed)) + bytes(packed))


def _read_compact(data: bytes, pos: int) -> tuple[int, int]:
    if pos >= len(data):
        raise ParseError(len(data), "truncated merkle block")
    first = data[pos]
    if first < 0xFD:
        return first, pos + 1
    size = {0xFD: 2, 0xFE: 4, 0xFF: 8}[first]
    if pos + 1 + size > len(data):
        raise ParseError(len(data), "truncated merkle block")
    value = int.from_bytes(data[pos + 1:pos + 1 + size], "little")
    if value < (0xFD, 0x10000, 0x100000000)[size.bit_length() - 2]:
        raise ParseError(pos, "non-canonical CompactSize")
    return value, pos + 1 + size


def block_header_end(data: bytes, pos: int = 0) -> int:
    """Where the serialized block header starting at ``pos`` ends (docs/elements-format.md
    §1.4): a legacy signed-block header is its fixed fields, the challenge and the solution;
    a dynamic-federation header (version bit 31) is its fixed fields, the current and
    proposed parameter entries and the signblock witness. ``ParseError`` when it is cut
    short or names an unknown entry type."""
    def need(n: int) -> None:
        if pos + n > len(data):
            raise ParseError(len(data), "truncated block header")

    def var_bytes() -> None:
        nonlocal pos
        length, pos = _read_compact(data, pos)
        need(length)
        pos += length

    need(_LEGACY_FIXED)
    version = int.from_bytes(data[pos:pos + 4], "little")
    pos += _LEGACY_FIXED
    if not version & _DYNAFED_BIT:
        var_bytes()  # challenge
        var_bytes()  # solution
        return pos
    for _ in range(2):  # current, proposed
        need(1)
        kind = data[pos]
        pos += 1
        if kind == 0:
            continue
        if kind not in (1, 2):
            raise ParseError(pos - 1, "unknown dynamic federation parameters type")
        var_bytes()  # signblockscript
        need(4)
        pos += 4  # signblock witness limit
        if kind == 1:
            need(32)
            pos += 32  # elided root
        else:
            var_bytes()  # fedpeg program
            var_bytes()  # fedpegscript
            count, pos = _read_compact(data, pos)  # extension space
            for _ in range(count):
                var_bytes()
    count, pos = _read_compact(data, pos)  # signblock witness
    for _ in range(count):
        var_bytes()
    return pos


class _BadTree(Exception):
    """A tree ExtractMatches refuses (its root is then the null hash)."""


def parse_proof(data: bytes) -> tuple[BlockHeader, int, list[bytes], bytes | None]:
    """(header, transaction count, matched txids in block order, computed root or None):
    Core's ``CPartialMerkleTree::ExtractMatches`` (module docstring)."""
    end = block_header_end(data)
    try:
        header = parse_block_header(data[:end])
    except EncodingError as exc:
        raise ParseError(0, f"bad block header ({exc})") from None
    if end + 4 > len(data):
        raise ParseError(len(data), "truncated merkle block")
    (n_transactions,) = struct.unpack_from("<I", data, end)
    count, pos = _read_compact(data, end + 4)
    if pos + 32 * count > len(data):
        raise ParseError(len(data), "truncated merkle block")
    hashes = [data[pos + 32 * i:pos + 32 * (i + 1)] for i in range(count)]
    pos += 32 * count
    n_bytes, pos = _read_compact(data, pos)
    if pos + n_bytes != len(data):
        raise ParseError(pos, "merkle block has trailing or missing bytes")
    bits = [bool(data[pos + i // 8] >> (i % 8) & 1) for i in range(8 * n_bytes)]
    if (n_transactions == 0 or n_transactions > MAX_BLOCK_WEIGHT // MIN_TRANSACTION_WEIGHT
            or len(hashes) > n_transactions or len(bits) < len(hashes)):
        return header, n_transactions, [], None
    used = {"bits": 0, "hashes": 0}
    matched: list[bytes] = []

    def extract(height: int, pos: int) -> bytes:
        if used["bits"] >= len(bits):
            raise _BadTree
        parent_of_match = bits[used["bits"]]
        used["bits"] += 1
        if height == 0 or not parent_of_match:
            if used["hashes"] >= len(hashes):
                raise _BadTree
            node = hashes[used["hashes"]]
            used["hashes"] += 1
            if height == 0 and parent_of_match:
                matched.append(node)
            return node
        left = extract(height - 1, pos * 2)
        if pos * 2 + 1 < _width(n_transactions, height - 1):
            right = extract(height - 1, pos * 2 + 1)
            if right == left:  # CVE-2012-2459: identical siblings are refused
                raise _BadTree
        else:
            right = left
        return sha256d(left + right)

    try:
        root = extract(_tree_height(n_transactions), 0)
    except _BadTree:
        return header, n_transactions, [], None
    if (used["bits"] + 7) // 8 != len(bits) // 8 or used["hashes"] != len(hashes):
        return header, n_transactions, [], None
    return header, n_transactions, matched, root

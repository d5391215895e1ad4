"""Where replayed blocks come from: a chain file of ours, a Core / Elements ``blocks/``
directory, or an elementsd-compatible node over JSON-RPC (docs/replay.md §4).

Every source yields ``SourceBlock(height, raw, where)`` in height order, starting at the height
asked for, with ``where`` naming the block's location for error messages. Reads stream: a source
holds one block (RPC: one small batch) at a time, plus for a ``blocks/`` directory an index of
every record's position (about 100 bytes per block). ``prefetch`` runs a source on a thread so
disk and network reads overlap validation (bounded queue).

- ``ChainFileSource``: chain files (``validator.write_chain``), height order, strict framing.
- ``BlocksDirSource``: ``blk*.dat`` records (magic ‖ LE32 size ‖ block) in arrival order, read
  by the block-I/O room's lax ``RecordReader`` (junk and zero-padded tails skipped, ``xor.dat``
  obfuscation undone, cut records reported), stale branches dropped: the best chain from
  genesis (most blocks, first seen on ties) is found from prev-hash links, as Core's
  ``-reindex`` does, then read in height order.
- ``RpcSource``: ``getblockcount``, ``getblockhash`` and ``getblock HASH 0`` (batched JSON-RPC),
  cookie or user/password authentication.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import rpcclient
from ctplugin.elements import parse_block
from ctplugin.errors import CtpluginError, ParseError
from regtest.params import NETWORK_MAGIC
from validator import (
    RECORD_HEADER_SIZE,
    BlockFileError,
    RecordError,
    RecordFile,
    RecordReader,
    block_files,
    read_xor_key,
)

HEIGHT_OFFSET = 72  # version ‖ prev ‖ merkle root ‖ time, then the LE32 height (both headers)
PREV_OFFSET = 4


class SourceError(CtpluginError):
    """A block source cannot be read (missing files, bad framing, node unreachable, auth...)."""


class SourceBlock(NamedTuple):
    height: int
    raw: bytes
    where: str


class BlockSource(Protocol):
    """What the replay driver reads blocks from."""

    description: str

    def last_height(self) -> int | None:
        """The height of the last block the source will yield, if known up front (ETA)."""
        ...

    def blocks(self, start_height: int) -> Iterator[SourceBlock]:
        """Blocks from ``start_height`` upwards, in height order."""
        ...

    def close(self) -> None: ...


def header_height(raw: bytes) -> int:
    if len(raw) < HEIGHT_OFFSET + 4:
        raise ParseError(len(raw), "block shorter than its header")
    return int.from_bytes(raw[HEIGHT_OFFSET:HEIGHT_OFFSET + 4], "little")


# ------------------------------------------------------------------------------------------------
# Chain files
# ------------------------------------------------------------------------------------------------


class ChainFileSource:
    """A chain file written by ``validator.write_chain`` (genesis first, height order)."""

    def __init__(self, path: str | os.PathLike[str], magic: bytes = NETWORK_MAGIC) -> None:
        self.path = Path(path)
        self.magic = magic
        if not self.path.is_file():
            raise SourceError(f"no such file or directory: {self.path}")
        self.description = f"chain file {self.path}"
        self._last: int | None = None
        self._cut: str | None = None  # the last record is cut short: why it is not replayed

    def last_height(self) -> int | None:
        if self._last is None:
            last = -1
            try:
                for _ in RecordReader(self.path, self.magic, strict=True,
                                      skip=lambda head: True):
                    last += 1
            except RecordError as exc:
                self._cut = self._cut_tail(last + 1)
                if self._cut is None:
                    raise SourceError(f"{self.description}: {exc.reason} at offset "
                                      f"{exc.offset}") from None
            self._last = last
        return self._last

    def _cut_tail(self, complete: int) -> str | None:
        """After a strict read failed past ``complete`` records: if the only trouble is the
        file's last record cut short (a copy or a write interrupted), what to tell the
        operator; else None. A lax scan (as ``-reindex`` reads, and as a ``blocks/``
        directory is read) must find the same records and nothing but the cut tail."""
        reader = RecordReader(self.path, self.magic, strict=False, skip=lambda head: True)
        if sum(1 for _ in reader) != complete:
            return None
        size = self.path.stat().st_size
        frames = reader.bad_frames
        if len(frames) == 1 and frames[0].offset + frames[0].length > size:
            cut = frames[0]
            return (f"{self.path.name}: the last record (block data at offset {cut.offset}) "
                    f"is cut short, {size - cut.offset} of its {cut.length} bytes: not "
                    f"replayed; the {complete} complete records before it (genesis to height "
                    f"{complete - 1}) are")
        if not frames and 0 < reader.skipped_bytes < RECORD_HEADER_SIZE:
            return (f"{self.path.name}: the file ends in a cut record header "
                    f"({reader.skipped_bytes} bytes at offset {size - reader.skipped_bytes}): "
                    f"the {complete} complete records before it (genesis to height "
                    f"{complete - 1}) are replayed")
        return None

    def warnings(self) -> list[str]:
        """A cut last record, found when the file is first scanned (else nothing)."""
        try:
            self.last_height()
        except SourceError:
            return []  # the replay reports it
        return [self._cut] if self._cut is not None else []

    def blocks(self, start_height: int) -> Iterator[SourceBlock]:
        expected = 0
        records = RecordReader(self.path, self.magic, strict=True,
                               skip=lambda head: header_height(head) < start_height)
        try:
            for record in records:
                offset, raw = record.offset - RECORD_HEADER_SIZE, record.payload
                if raw:
                    height = header_height(raw)
                    if height != expected:
                        raise SourceError(f"{self.description}: block at offset {offset} has "
                                          f"height {height}, expected {expected} (chain files "
                                          "are in height order)")
                    yield SourceBlock(height, raw, f"{self.path.name} offset {offset}")
                expected += 1
        except RecordError as exc:
            if self.last_height() is not None and self._cut is not None:
                return  # the cut last record: warned about (``warnings``), not replayed
            raise SourceError(f"{self.description}: {exc.reason} at offset "
                              f"{exc.offset}") from None
        except ParseError as exc:  # a block shorter than its header
            raise SourceError(f"{self.description}: {exc}") from None

    def close(self) -> None:
        pass


# ------------------------------------------------------------------------------------------------
# Core-style blocks/ directories
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordPos:
    """A record of a blk file: file number, offset of the block (after the 8-byte header),
    size, and its position in arrival order (first seen wins ties)."""

    file: int
    offset: int
    size: int
    seq: int


@dataclass(frozen=True, slots=True)
class BadRecord:
    """A record whose block does not parse (or is cut short): where, why, and the parent it
    names (bytes 4..36 of any Elements header), so a chain that runs into it is stopped there
    with the reason rather than silently ending early."""

    file: int
    offset: int
    prev_hash: bytes | None
    error: str


class _IndexEntry(NamedTuple):
    prev: bytes
    pos: RecordPos


class BlocksDirSource:
    """A Bitcoin Core / Elements ``blocks/`` directory (``regtest.blocksdir`` writes one).

    Opening it scans every ``blk*.dat`` once, in file order (Core's reindex), with the lax
    ``RecordReader``: each record's block is parsed for its hash and parent, and only its
    position is kept. ``blocks()`` then reads the best chain in height order by position.
    """

    def __init__(self, directory: str | os.PathLike[str], genesis_hash: bytes,
                 magic: bytes = NETWORK_MAGIC) -> None:
        self.root = Path(directory)
        self.description = f"blocks directory {self.root}"
        self.magic = magic
        self.genesis_hash = genesis_hash
        try:
            self.files = block_files(self.root)
            if not self.files:
                raise SourceError(f"{self.description} holds no blk*.dat files")
            self.xor_key = read_xor_key(self.root)
        except BlockFileError as exc:
            raise SourceError(f"{self.description}: {exc}") from None
        self.index: dict[bytes, _IndexEntry] = {}
        self.bad: list[BadRecord] = []
        self.skipped_bytes = 0
        self.duplicates = 0
        self.unconnected: list[bytes] = []  # indexed blocks whose ancestry misses a block
        self._scan()
        self.chain, self.orphans = self._best_chain()

    # --- scanning ------------------------------------------------------------------------

    def _scan(self) -> None:
        seq = 0
        for number, path in enumerate(self.files):
            records = RecordReader(path, self.magic, strict=False, xor_key=self.xor_key)
            for record in records:
                self._add(record.payload,
                          RecordPos(number, record.offset, len(record.payload), seq))
                seq += 1
            self.skipped_bytes += records.skipped_bytes
            for frame in records.bad_frames:
                prev = frame.head[PREV_OFFSET:36] if len(frame.head) >= 36 else None
                self.bad.append(BadRecord(number, frame.offset, prev, frame.reason))

    def _add(self, raw: bytes, pos: RecordPos) -> None:
        try:
            block_hash = parse_block(raw).hash
        except ParseError as exc:
            prev = raw[PREV_OFFSET:36] if len(raw) >= 36 else None
            self.bad.append(BadRecord(pos.file, pos.offset, prev, f"undecodable block: {exc}"))
            return
        if block_hash in self.index:
            self.duplicates += 1  # the same block stored twice: the first copy is used
            return
        self.index[block_hash] = _IndexEntry(raw[PREV_OFFSET:36], pos)

    # --- best chain ------------------------------------------------------------------------

    def _best_chain(self) -> tuple[list[bytes], int]:
        """Hashes of the best chain from genesis (most blocks; first seen wins ties) and the
        number of indexed blocks off it (stale branches and orphans)."""
        if self.genesis_hash not in self.index:
            raise SourceError(f"{self.description} does not contain our genesis block "
                              f"{self.genesis_hash[::-1].hex()} (another chain?)")
        children: dict[bytes, list[bytes]] = {}
        for block_hash, entry in self.index.items():
            if block_hash != self.genesis_hash:
                children.setdefault(entry.prev, []).append(block_hash)
        # Depth of every block reachable from genesis, iteratively (chains are long).
        depth = {self.genesis_hash: 0}
        stack = [self.genesis_hash]
        best = self.genesis_hash
        while stack:
            node = stack.pop()
            d = depth[node]
            if d > depth[best] or (d == depth[best]
                                   and self.index[node].pos.seq < self.index[best].pos.seq):
                best = node
            for child in children.get(node, ()):
                depth[child] = d + 1
                stack.append(child)
        chain = [best]
        while chain[-1] != self.genesis_hash:
            chain.append(self.index[chain[-1]].prev)
        chain.reverse()
        self.unconnected = [h for h in self.index if h not in depth]
        return chain, len(self.index) - len(chain)

    def warnings(self) -> list[str]:
        """What the scan found that the replay will not connect, for the operator: blocks
        that do not lead back to genesis (their first missing ancestor named: the directory is
        incomplete), blocks on stale branches, unreadable or cut-short records (one right
        after the tip is an error of ``blocks()`` instead)."""
        out = []
        if self.unconnected:
            missing: dict[bytes, int] = {}
            for block_hash in self.unconnected:
                prev = self.index[block_hash].prev
                while prev in self.index:
                    prev = self.index[prev].prev
                missing[prev] = missing.get(prev, 0) + 1
            parents = ", ".join(p[::-1].hex() for p in list(missing)[:3])
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            out.append(f"{self.description}: {len(self.unconnected)} blocks do not connect to "
                       f"genesis (missing parent {parents}{more}): they will not be replayed")
        stale = self.orphans - len(self.unconnected)
        if stale == 1:
            out.append(f"{self.description}: 1 block on a stale branch is skipped")
        elif stale:
            out.append(f"{self.description}: {stale} blocks on stale branches are skipped")
        tip = self.chain[-1]
        for bad in self.bad:
            if bad.prev_hash != tip:
                out.append(f"{self.description}: {self.files[bad.file].name} offset "
                           f"{bad.offset - RECORD_HEADER_SIZE} skipped: {bad.error}")
        return out

    def last_height(self) -> int | None:
        return len(self.chain) - 1

    def blocks(self, start_height: int) -> Iterator[SourceBlock]:
        readers: dict[int, RecordFile] = {}
        try:
            for height in range(start_height, len(self.chain)):
                pos = self.index[self.chain[height]].pos
                reader = readers.get(pos.file)
                if reader is None:
                    reader = readers[pos.file] = RecordFile(self.files[pos.file], self.magic,
                                                            xor_key=self.xor_key)
                where = f"{self.files[pos.file].name} offset {pos.offset - RECORD_HEADER_SIZE}"
                try:
                    raw = reader.read(pos.offset)[0]
                except BlockFileError as exc:  # the file changed since the scan
                    raise SourceError(f"{self.description}: {where}: {exc}") from None
                yield SourceBlock(height, raw, where)
            tip = self.chain[-1]
            for bad in self.bad:
                if bad.prev_hash == tip:
                    raise SourceError(
                        f"{self.description}: the block after height {len(self.chain) - 1} "
                        f"({self.files[bad.file].name} offset "
                        f"{bad.offset - RECORD_HEADER_SIZE}) is unreadable: {bad.error}")
        finally:
            for reader in readers.values():
                reader.close()

    def close(self) -> None:
        pass


# ------------------------------------------------------------------------------------------------
# A node over JSON-RPC
# ------------------------------------------------------------------------------------------------


class RpcAuthError(SourceError):
    """The node refused the credentials (HTTP 401)."""


def read_cookie(path: str | os.PathLike[str]) -> tuple[str, str]:
    """(user, password) from a bitcoind-style ``.cookie`` file (``__cookie__:HEX``), as
    ``rpcclient.read_cookie`` reads it; a ``SourceError`` when it cannot."""
    try:
        return rpcclient.read_cookie(path)
    except rpcclient.RPCCredentialsError:
        raise SourceError(f"cannot read the RPC cookie {path} (missing, unreadable or not "
                          "USER:PASSWORD)") from None


class RpcSource:
    """Blocks of an elementsd-compatible node: ``getblockhash`` then ``getblock HASH 0``, in
    batches of ``batch_size`` heights, up to the node's height when the replay started. The
    calls go through ``rpcclient.RPCClient`` (one keep-alive connection); its errors are
    reported as ``SourceError`` naming the node (never its credentials)."""

    def __init__(self, url: str, auth: tuple[str, str] | None = None,
                 batch_size: int = 16, timeout: float = 120.0) -> None:
        try:
            self.client = rpcclient.RPCClient.from_url(url, auth=auth, timeout=timeout)
        except ValueError:
            raise SourceError(f"RPC source {url!r}: expected http://HOST:PORT") from None
        self.description = f"node {self.client.url}"
        self.batch_size = batch_size
        self._count: int | None = None

    def batch(self, calls: list[tuple[str, list[object]]]) -> list[Any]:
        """``RPCClient.batch``, its errors as ``SourceError`` (``RpcAuthError`` for a 401)."""
        try:
            return self.client.batch(calls)
        except rpcclient.RPCAuthError:
            raise RpcAuthError(f"RPC node {self.client.url} refused the credentials "
                               "(HTTP 401)") from None
        except rpcclient.RPCConnectionError as exc:
            raise SourceError(f"RPC node {self.client.url} unreachable: {exc}") from None
        except rpcclient.RPCError as exc:
            raise SourceError(f"RPC node {self.client.url}: {exc.method} {exc.params} "
                              f"failed: {exc}") from None
        except rpcclient.RPCClientError as exc:
            raise SourceError(f"RPC node {self.client.url}: {exc}") from None

    def last_height(self) -> int | None:
        if self._count is None:
            [count] = self.batch([("getblockcount", [])])
            if not isinstance(count, int):
                raise SourceError(f"{self.description}: getblockcount returned {count!r}")
            self._count = count
        return self._count

    def blocks(self, start_height: int) -> Iterator[SourceBlock]:
        last = self.last_height()
        assert last is not None
        for first in range(start_height, last + 1, self.batch_size):
            heights = range(first, min(first + self.batch_size, last + 1))
            hashes = self.batch([("getblockhash", [h]) for h in heights])
            blocks = self.batch([("getblock", [h, 0]) for h in hashes])
            for height, block_hash, hex_block in zip(heights, hashes, blocks, strict=True):
                try:
                    raw = bytes.fromhex(hex_block)
                except (TypeError, ValueError):
                    raise SourceError(f"{self.description}: getblock {block_hash} did not "
                                      "return hex") from None
                yield SourceBlock(height, raw, f"{self.description} height {height} "
                                               f"hash {block_hash}")

    def close(self) -> None:
        self.client.close()


# ------------------------------------------------------------------------------------------------
# Choosing a source, read-ahead
# ------------------------------------------------------------------------------------------------


def open_source(spec: str, genesis_hash: bytes, *, rpc_auth: tuple[str, str] | None = None,
                magic: bytes = NETWORK_MAGIC) -> BlockSource:
    """``http://…`` → RpcSource; a directory → BlocksDirSource; a file → ChainFileSource
    (``magic``: the chain's record magic, ``ChainParams.network_magic``)."""
    if spec.startswith(("http://", "https://")):
        return RpcSource(spec, rpc_auth)
    path = Path(spec)
    if path.is_dir():
        return BlocksDirSource(path, genesis_hash, magic)
    if path.is_file():
        return ChainFileSource(path, magic)
    if not path.exists():
        raise SourceError(f"no such file or directory: {spec}")
    raise SourceError(f"source {spec!r} is neither a chain file, a blocks/ directory nor "
                      "an http:// node URL")


_DONE = object()


def prefetch(blocks: Iterator[SourceBlock], depth: int = 8, *,
             check: Callable[[], None] | None = None) -> Generator[SourceBlock, None, None]:
    """``blocks`` read on a background thread, at most ``depth`` blocks ahead (back-pressure:
    the reader waits while the queue is full, so memory stays at ``depth`` blocks). Errors are
    re-raised in the consumer, in order. ``check`` runs every 0.1 s while the consumer waits
    for a block (``StopRequest.check``: a slow source does not delay a requested stop). Close
    the generator when done with it (``contextlib.closing``): that stops and joins the reader
    now, not whenever the generator is collected."""
    slots: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for block in blocks:
                if not put(block):
                    return
        except BaseException as exc:  # handed to the consumer
            put(exc)
            return
        put(_DONE)

    thread = threading.Thread(target=run, name="replay-read", daemon=True)
    thread.start()
    try:
        while True:
            try:
                item = slots.get(timeout=0.1)
            except queue.Empty:
                if check is not None:
                    check()
                continue
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, SourceBlock)
            yield item
    finally:
        stop.set()
        # The reader notices ``stop`` within 0.1 s unless a read of the source itself is
        # slow (a node over RPC): a daemon thread is not waited for past that, the source is
        # closed under it and its error is dropped (``put`` refuses once ``stop`` is set).
        thread.join(timeout=1.0)

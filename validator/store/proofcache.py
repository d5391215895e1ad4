"""The proof cache: keys of proofs that verified, so block connection can skip re-verifying them.

Rules (docs/design.md "Proof caches"; docs/elements-format.md §2.3):

- Only successes are stored. A key is SHA256(salt ‖ domain tag ‖ every verification input),
  each field length-prefixed, so two different verifications can never share a key. Leaving an
  input out of the key would let a proof valid in one context pass in another (an inflation
  bug), so ``rangeproof_key`` / ``borromean_key`` / ``surjection_key`` take every input the
  verifier takes.
- Mempool acceptance ``insert``s; block connection looks keys up (``lookup_many``) and
  ``consume``s its hits: a consumed entry stops counting at once but its records are deleted
  lazily, in the next write batch (an insert, an eviction, or ``flush``), as Elements'
  CuckooCache only marks erased entries collectable. Never a synchronous delete per block.
- An in-memory front (``_front``: salted key → sequence number, bounded, oldest dropped first)
  answers lookups of keys this handle inserted or found before any LevelDB read. The keys are
  salted digests, so nobody can aim collisions at it; the LOCK makes this handle the only writer,
  so the front can only lag LevelDB by entries it never saw (which a LevelDB read then finds).
- Bounded size, oldest-first eviction: entries carry an insertion sequence number.
- The cache is an optimization. Anything unexpected (foreign files in its directory, an unknown
  format version, a different salt, a LevelDB corruption error, an unparsable record, counts
  that do not add up) wipes it and starts empty; it is never trusted partially. ``wipes``
  counts those events and ``last_wipe_reason`` says why.

Key layout::

    b"V"                  format version ‖ SHA256(domain ‖ salt) (binds the cache to its salt)
    b"N"                  entry count (u64 BE) ‖ next sequence number (u64 BE)
    b"k" ‖ key (32)       sequence number (u64 BE)
    b"q" ‖ seq (u64 BE)   key (32)   -- iteration order = insertion order, for eviction

Every insert/erase/eviction updates ``N`` in the same write batch.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import os
import shutil
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar, cast

import plyvel

from ctplugin.hashes import length_prefixed_sha256
from validator.store.durability import WriteGuard
from validator.store.errors import (
    DataDirLockedError,
    StoreError,
    StoreValueError,
    UnwritableDataDirError,
)
from validator.store.leveldb import LevelDbHandle, is_leveldb_file, open_db

FORMAT_VERSION = b"\x01"
DEFAULT_MAX_ENTRIES = 262_144  # about Elements' 8 MiB CuckooCache (docs/elements-format.md §2.3)
_KEY_VERSION = b"V"
_KEY_COUNT = b"N"
_PREFIX_KEY = b"k"
_PREFIX_SEQ = b"q"
_U64 = struct.Struct(">Q")
_U32BE = struct.Struct(">I")
_COUNT = struct.Struct(">QQ")
_SALT_BINDING_TAG = b"ctplugin/proofcache/salt-binding"
FRONT_MAX = 1 << 17  # in-memory front: keys known present (about 20 MB at most)
CONSUMED_MAX = 1 << 16  # consumed entries held before their deletion is written anyway

DOMAIN_RANGEPROOF = b"ctplugin/proofcache/rangeproof/v1"
DOMAIN_SURJECTION = b"ctplugin/proofcache/surjection/v1"
DOMAIN_BORROMEAN = b"ctplugin/proofcache/borromean/v1"
DOMAIN_SCRIPT = b"ctplugin/proofcache/script/v1"
DOMAIN_BALANCE = b"ctplugin/proofcache/balance/v1"

T = TypeVar("T")


class CacheCorrupt(Exception):
    """Internal signal: the cache cannot be trusted; it gets wiped."""


BytesLike = bytes | bytearray | memoryview


def _field(value: object) -> bytes:
    """A verification input as bytes: raw bytes, or a value type with ``serialize()``."""
    if type(value) is bytes:
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    serialize = getattr(value, "serialize", None)
    if serialize is None:
        raise StoreValueError(f"cannot use {type(value).__name__} in a cache key")
    return bytes(serialize())


def _lp(data: bytes) -> bytes:
    return _U32BE.pack(len(data)) + data


def cache_key(salt: bytes, domain: bytes, fields: Iterable[bytes]) -> bytes:
    """SHA256(salt ‖ lp(domain) ‖ lp(field_0) ‖ …), lp = u32 BE length ‖ bytes."""
    return _key_from(_prefix_bytes(salt, domain), fields)


def _prefix_bytes(salt: bytes, domain: bytes) -> bytes:
    return salt + _lp(domain)


def _key_from(prefix: bytes, fields: Iterable[bytes]) -> bytes:
    """``cache_key`` with salt ‖ lp(domain) given: the length-prefixed fields hashed after it
    in one native call (``ctplugin.hashes.length_prefixed_sha256``)."""
    return length_prefixed_sha256(prefix, fields)


@dataclass(frozen=True, slots=True)
class CacheStats:
    entries: int
    max_entries: int
    hits: int
    misses: int
    inserts: int
    evictions: int
    wipes: int


class ProofCache(LevelDbHandle):
    """A persistent, bounded set of 32-byte keys of verified proofs."""

    KIND = "proof cache"

    def __init__(self, path: str, salt: bytes, max_entries: int, sync: bool) -> None:
        if len(salt) != 32:
            raise StoreValueError("proof cache salt must be 32 bytes")
        if max_entries < 1:
            raise StoreValueError("proof cache needs room for at least one entry")
        self.path = path
        self.salt = bytes(salt)
        self.max_entries = max_entries
        self.sync = sync
        self.hits = 0
        self.misses = 0
        self.inserts = 0
        self.evictions = 0
        self.wipes = 0
        self.last_wipe_reason: str | None = None
        self._binding = FORMAT_VERSION + hashlib.sha256(_SALT_BINDING_TAG + self.salt).digest()
        # salt ‖ lp(domain) per domain: every key of a domain is hashed after it.
        self._prefixes: dict[bytes, bytes] = {}
        self._range_prefix = self._prefix(DOMAIN_RANGEPROOF)
        self._surjection_prefix = self._prefix(DOMAIN_SURJECTION)
        self._borromean_prefix = self._prefix(DOMAIN_BORROMEAN)
        self._script_prefix = self._prefix(DOMAIN_SCRIPT)
        self._balance_prefix = self._prefix(DOMAIN_BALANCE)
        self._db: plyvel.DB | None = None
        self._count = 0  # records in LevelDB, consumed ones not yet deleted included
        self._next_seq = 0
        # key → sequence number of entries known present and not consumed (bounded, oldest
        # dropped first): lookups of keys mempool acceptance just inserted cost no LevelDB read.
        self._front: dict[bytes, bytes] = {}
        # key → sequence number of entries blocks consumed; deleted in the next write batch.
        self._consumed: dict[bytes, bytes] = {}
        self.guard = WriteGuard()  # the data directory's (``DataDir`` shares one)
        self._open_checked()

    @classmethod
    def open(cls, path: str, salt: bytes, *, max_entries: int = DEFAULT_MAX_ENTRIES,
             sync: bool = False) -> ProofCache:
        """Open the cache at ``path``; a corrupt or foreign one is wiped and rebuilt empty.

        ``sync`` defaults to False: losing the last entries in a power cut only costs a
        re-verification. ``DataDirLockedError`` if another owner holds it.
        """
        return cls(path, salt, max_entries, sync)

    # --- keys ------------------------------------------------------------------------------

    def _prefix(self, domain: bytes) -> bytes:
        prefix = self._prefixes.get(domain)
        if prefix is None:
            prefix = self._prefixes[domain] = _prefix_bytes(self.salt, domain)
        return prefix

    def key(self, domain: bytes, fields: Iterable[bytes]) -> bytes:
        """The salted key of one verification in ``domain`` (a versioned tag such as
        ``DOMAIN_RANGEPROOF``) over its inputs, each length-prefixed: ``cache_key`` with this
        cache's salt. Domain-specific key functions (below) fix which inputs a domain takes;
        a new kind of check adds a domain tag and one such function."""
        return _key_from(self._prefix(domain), fields)

    def rangeproof_key(self, proof: BytesLike, commitment: object, value_generator: object,
                       extra_commit: BytesLike, nbits: int, n_gens: int) -> bytes:
        """Key of one range proof verification: every input of the verifier."""
        return _key_from(self._range_prefix, (
            _field(proof), _field(commitment), _field(value_generator), _field(extra_commit),
            _U64.pack(nbits), _U64.pack(n_gens)))

    def borromean_key(self, proof: BytesLike, commitment: object, value_generator: object,
                      extra_commit: BytesLike) -> bytes:
        """Key of one Borromean range proof verification: proof, commitment, value generator
        and extra commit (every input of ``secp256k1_rangeproof_verify``)."""
        return _key_from(self._borromean_prefix, (
            _field(proof), _field(commitment), _field(value_generator), _field(extra_commit)))

    def surjection_key(self, proof: BytesLike, output_generator: object,
                       input_generators: Iterable[object]) -> bytes:
        """Key of one surjection proof verification: proof, output and the full target list."""
        inputs = [_field(g) for g in input_generators]
        return _key_from(self._surjection_prefix, (
            _field(proof), _field(output_generator), _U64.pack(len(inputs)), *inputs))

    def script_key(self, wtxid: bytes, flags: int) -> bytes:
        """Key of one transaction's script execution (Elements' script-execution cache: the
        wtxid commits to every witness — signatures, range and surjection proofs — and the
        spent outputs are fixed by the prevouts; the flags say under which rules it passed)."""
        return _key_from(self._script_prefix, (_field(wtxid), flags.to_bytes(4, "little")))

    def balance_key(self, wtxid: bytes, spent_outputs: Iterable[BytesLike]) -> bytes:
        """Key of one transaction's balance equation: the wtxid fixes every output commitment,
        issuance and fee, the spent outputs' serializations (as the UTXO set stores them, in
        input order) every input commitment and generator — every input of the equation."""
        spent = [_field(o) for o in spent_outputs]
        return _key_from(self._balance_prefix, (_field(wtxid), _U64.pack(len(spent)), *spent))

    # --- operations ------------------------------------------------------------------------

    def contains(self, key: bytes) -> bool:
        """True if ``key`` is cached and not consumed (no statistics counted)."""
        return self._guard(lambda db: self._present(db, [key])[0], False)

    __contains__ = contains

    def lookup_many(self, keys: Iterable[bytes]) -> list[bool]:
        """Which keys are cached (block connection's lookup; hits and misses are counted).
        The front answers first; the rest are read through one LevelDB snapshot."""
        keys = list(keys)
        self._check_keys(keys)
        hits = self._guard(lambda db: self._present(db, keys), [False] * len(keys))
        n_hits = sum(hits)
        self.hits += n_hits
        self.misses += len(keys) - n_hits
        return hits

    def consume(self, keys: Iterable[bytes]) -> None:
        """Mark entries a block used as consumed: they stop being hits and counting now, and
        their records are deleted with the next write batch (never one delete per block)."""
        self._guard(lambda db: self._consume(db, list(keys)), None)

    def insert(self, key: bytes) -> None:
        """Record a successful verification (mempool acceptance). Evicts the oldest if full."""
        self.insert_many([key])

    def insert_many(self, keys: Iterable[bytes]) -> None:
        """``insert`` for several keys in ONE write batch (eviction as for one at a time:
        if they overflow the bound, the oldest go first, new ones included). The batch also
        carries the deletions of consumed entries; a consumed key inserted again is simply
        live again."""
        keys = list(keys)
        self._check_keys(keys)
        if keys:
            self._guard(lambda db: self._insert_many(db, keys), None)

    def lookup_and_erase(self, key: bytes) -> bool:
        """``lookup_and_erase_many`` for one key."""
        return self.lookup_and_erase_many([key])[0]

    def lookup_and_erase_many(self, keys: Iterable[bytes]) -> list[bool]:
        """Look a block's keys up and consume the hits (a key listed twice hits once)."""
        keys = list(keys)
        hits = self.lookup_many(keys)
        seen: set[bytes] = set()
        consumed = []
        for i, (key, hit) in enumerate(zip(keys, hits, strict=True)):
            if hit:
                if key in seen:
                    hits[i] = False
                    self.hits -= 1
                    self.misses += 1
                else:
                    seen.add(key)
                    consumed.append(key)
        self.consume(consumed)
        return hits

    def flush(self) -> None:
        """Write the pending deletions of consumed entries now (one batch)."""
        if self._consumed and self._db is not None:
            self._guard(self._write_consumed, None)

    def __len__(self) -> int:
        return self._count - len(self._consumed)

    def stats(self) -> CacheStats:
        return CacheStats(len(self), self.max_entries, self.hits, self.misses, self.inserts,
                          self.evictions, self.wipes)

    def clear(self, reason: str = "cleared by caller") -> None:
        self._wipe(reason)

    def close(self) -> None:
        if self._db is not None:
            self.flush()
        super().close()

    # --- internals -------------------------------------------------------------------------

    @staticmethod
    def _check_keys(keys: list[bytes]) -> None:
        if keys and set(map(len, keys)) != {32}:
            raise StoreValueError("proof cache keys are 32 bytes")

    def _guard(self, operation: Callable[[plyvel.DB], T], on_wipe: T) -> T:
        """Run an operation; on corruption wipe the cache and answer as an empty cache would."""
        if self._db is None:
            raise StoreError("proof cache is closed")
        try:
            return operation(self._db)
        except (CacheCorrupt, plyvel.CorruptionError, plyvel.IOError) as exc:
            # a read failed its checksum (or lost a table file): a cache is rebuilt, not
            # trusted; failed writes are the guard's (DiskWriteError passes through)
            self._wipe(f"{type(exc).__name__}: {exc}")
            return on_wipe

    def _remember(self, key: bytes, seq: bytes) -> None:
        front = self._front
        front[key] = seq
        if len(front) > FRONT_MAX:
            for old in list(itertools.islice(front, len(front) - FRONT_MAX)):
                del front[old]

    def _present(self, db: plyvel.DB, keys: list[bytes]) -> list[bool]:
        front = self._front
        consumed = self._consumed
        answers = list(map(front.__contains__, keys))
        if all(answers):
            return answers
        with db.snapshot() as snap:
            get = functools.partial(snap.get, verify_checksums=True)
            for i, key in enumerate(keys):
                if answers[i] or key in consumed:
                    continue
                seq = get(_PREFIX_KEY + key)
                if seq is None:
                    continue
                if len(seq) != 8:
                    raise CacheCorrupt("malformed entry")
                answers[i] = True
                self._remember(key, seq)
        return answers

    def _consume(self, db: plyvel.DB, keys: list[bytes]) -> None:
        front = self._front
        consumed = self._consumed
        seqs: list[bytes | None] = list(map(front.pop, keys, itertools.repeat(None)))
        unknown: list[bytes] = []
        if None not in seqs:  # all in the front (the usual case: just looked up)
            consumed.update(zip(keys, cast(list[bytes], seqs)))
        else:
            for key, seq in zip(keys, seqs):
                if seq is not None:
                    consumed[key] = seq
                elif key not in consumed:
                    unknown.append(key)
        if unknown:  # not in the front (dropped from it since the lookup): read the records
            with db.snapshot() as snap:
                for key in unknown:
                    seq = snap.get(_PREFIX_KEY + key, verify_checksums=True)
                    if seq is not None:
                        if len(seq) != 8:
                            raise CacheCorrupt("malformed entry")
                        consumed[key] = seq
        if len(consumed) > CONSUMED_MAX:
            self._write_consumed(db)

    def _delete_consumed(self, batch: plyvel.WriteBatch) -> int:
        consumed = self._consumed
        for key, seq in consumed.items():
            batch.delete(_PREFIX_KEY + key)
            batch.delete(_PREFIX_SEQ + seq)
        n = len(consumed)
        if n > self._count:
            raise CacheCorrupt("more consumed entries than the recorded count")
        return n

    def _write_consumed(self, db: plyvel.DB) -> None:
        batch = db.write_batch(sync=self.sync)
        n = self._delete_consumed(batch)
        self._write_count(batch, self._count - n, self._next_seq)
        self.guard.write("proof cache", batch.write)
        self._count -= n
        self._consumed.clear()

    def _write_count(self, batch: plyvel.WriteBatch, count: int, next_seq: int) -> None:
        batch.put(_KEY_COUNT, _COUNT.pack(count, next_seq))

    def _insert_many(self, db: plyvel.DB, keys: list[bytes]) -> None:
        front = self._front
        consumed = self._consumed
        new: list[bytes] = []
        unknown: list[bytes] = []
        for key in dict.fromkeys(keys):  # once each, in order
            if key in front:
                continue
            seq = consumed.pop(key, None)
            if seq is not None:  # consumed but its records are still there: live again
                self._remember(key, seq)
                continue
            unknown.append(key)
        if unknown:
            with db.snapshot() as snap:
                for key in unknown:
                    seq = snap.get(_PREFIX_KEY + key, verify_checksums=True)
                    if seq is None:
                        new.append(key)
                    elif len(seq) != 8:
                        raise CacheCorrupt("malformed entry")
                    else:
                        self._remember(key, seq)
        if not new and not consumed:
            return
        batch = db.write_batch(sync=self.sync)
        deleted = set(consumed)
        n_deleted = self._delete_consumed(batch)
        count = self._count - n_deleted + len(new)
        next_seq = self._next_seq + len(new)
        excess = max(count - self.max_entries, 0)
        evicted = 0
        evicted_keys: list[bytes] = []
        if excess:
            # Oldest first: stored entries in sequence order (skipping the consumed ones this
            # batch deletes anyway), then the first of the new keys.
            with db.iterator(prefix=_PREFIX_SEQ, verify_checksums=True) as it:
                for old_seq_key, old_key in it:
                    if evicted == excess:
                        break
                    if len(old_seq_key) != 9 or len(old_key) != 32:
                        raise CacheCorrupt("malformed sequence record")
                    if old_key in deleted:
                        continue
                    batch.delete(old_seq_key)
                    batch.delete(_PREFIX_KEY + old_key)
                    evicted_keys.append(old_key)
                    evicted += 1
            if evicted < excess and evicted < self._count - n_deleted:
                raise CacheCorrupt("entry count exceeds the records present")
        dropped = excess - evicted  # new keys evicted at once (more new keys than room)
        first_seq = self._next_seq
        written: list[tuple[bytes, bytes]] = []
        for i, key in enumerate(new):
            if i < dropped:
                continue
            seq = _U64.pack(first_seq + i)
            batch.put(_PREFIX_KEY + key, seq)
            batch.put(_PREFIX_SEQ + seq, key)
            written.append((key, seq))
        self._write_count(batch, count - excess, next_seq)
        self.guard.write("proof cache", batch.write)
        self._count, self._next_seq = count - excess, next_seq
        consumed.clear()
        for key in evicted_keys:
            front.pop(key, None)
        for key, seq in written:
            self._remember(key, seq)
        self.inserts += len(new)
        self.evictions += excess

    def _open_checked(self) -> None:
        """Open and fully validate; any problem → wipe and reopen empty.

        The LevelDB lock is taken first, so a cache another process owns is reported
        (``DataDirLockedError``) and never wiped.
        """
        if os.path.lexists(self.path) and not os.path.isdir(self.path):
            self._wipe("cache path is not a directory")
            return
        try:
            self._db = open_db(self.path, paranoid=True)
        except (DataDirLockedError, UnwritableDataDirError):  # not the cache's fault: no wipe
            raise
        except (StoreError, plyvel.Error) as exc:  # corruption, unreadable files
            self._wipe(f"{type(exc).__name__}: {exc}")
            return
        try:
            reason = self._foreign_files()
            if reason is None:
                self._load_and_validate()
                return
        except (CacheCorrupt, plyvel.CorruptionError, plyvel.IOError) as exc:
            reason = f"{type(exc).__name__}: {exc}"
        self._wipe(reason)

    def _foreign_files(self) -> str | None:
        for name in os.listdir(self.path):
            if not is_leveldb_file(name) or not os.path.isfile(os.path.join(self.path, name)):
                return f"unexpected file {name!r} in the cache directory"
        return None

    def _load_and_validate(self) -> None:
        db = self.db
        version = db.get(_KEY_VERSION, verify_checksums=True)
        if version is None:
            if next(db.iterator(include_value=False), None) is not None:
                raise CacheCorrupt("cache has records but no format version")
            self._initialize(db)
            return
        if version != self._binding:
            raise CacheCorrupt("unknown format version or a different salt")
        raw = db.get(_KEY_COUNT, verify_checksums=True)
        if raw is None or len(raw) != 16:
            raise CacheCorrupt("missing or malformed entry count")
        count, next_seq = _COUNT.unpack(raw)
        # Every record must parse and the two indexes must mirror each other exactly. Keys sort
        # before sequence records ("k" < "q"), so by the time a sequence record is read every
        # entry is known; each must point back at it, and equal counts make that a bijection.
        by_key: dict[bytes, bytes] = {}
        n_seq = 0
        with db.iterator(verify_checksums=True) as it:
            for k, v in it:
                tag = k[:1]
                if tag == _PREFIX_KEY:
                    if len(k) != 33 or len(v) != 8:
                        raise CacheCorrupt("malformed entry record")
                    by_key[k[1:]] = v
                elif tag == _PREFIX_SEQ:
                    if len(k) != 9 or len(v) != 32 or _U64.unpack_from(k, 1)[0] >= next_seq:
                        raise CacheCorrupt("malformed sequence record")
                    if by_key.get(v) != k[1:]:
                        raise CacheCorrupt("entry and sequence records disagree")
                    n_seq += 1
                elif k not in (_KEY_VERSION, _KEY_COUNT):
                    raise CacheCorrupt(f"unknown record {k[:8].hex()}")
        if len(by_key) != count or n_seq != count:
            raise CacheCorrupt(f"count {count} does not match {len(by_key)}/{n_seq} records")
        self._count, self._next_seq = count, next_seq
        if count > self.max_entries:  # the bound shrank since last time: evict down to it
            self._shrink(db)

    def _shrink(self, db: plyvel.DB) -> None:
        excess = self._count - self.max_entries
        batch = db.write_batch(sync=self.sync)
        with db.iterator(prefix=_PREFIX_SEQ, verify_checksums=True) as it:
            for _, (seq_key, key) in zip(range(excess), it):
                batch.delete(seq_key)
                batch.delete(_PREFIX_KEY + key)
                self._front.pop(key, None)
        self._write_count(batch, self.max_entries, self._next_seq)
        self.guard.write("proof cache", batch.write)
        self.evictions += excess
        self._count = self.max_entries

    def _initialize(self, db: plyvel.DB) -> None:
        batch = db.write_batch(sync=True)
        batch.put(_KEY_VERSION, self._binding)
        self._write_count(batch, 0, 0)
        self.guard.write("proof cache", batch.write)
        self._count, self._next_seq = 0, 0

    def _wipe(self, reason: str) -> None:
        """Delete everything and reopen empty (the directory's lock is re-taken at once)."""
        if self._db is not None:
            self._db.close()
            self._db = None
        self._front.clear()
        self._consumed.clear()
        self.wipes += 1
        self.last_wipe_reason = reason
        if os.path.isdir(self.path) and not os.path.islink(self.path):
            shutil.rmtree(self.path)
        elif os.path.lexists(self.path):
            os.remove(self.path)
        self._db = open_db(self.path)
        self._initialize(self._db)

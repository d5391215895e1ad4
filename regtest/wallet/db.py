"""A node-side wallet's LevelDB: everything a restart needs, every change in one write batch.

Keys (one-byte prefixes)::

    b"V"               format version (1)
    b"M"               meta: seed, key/randomness counters, change keys, best block, key
                       scheme, master blinding key, imported private keys (JSON)
    b"A"               assets: known assets, issuance entropy, reissuance tokens (JSON)
    b"x" ‖ txid        a wallet transaction's raw bytes (written once)
    b"t" ‖ txid        its state: confirmation, openings, comments (JSON, rewritten on change)
    b"l" ‖ script      the label of an address (UTF-8)
    b"k" ‖ script      an imported blinding key (32 bytes)
    b"o" ‖ script      a watch-only script (importaddress, importpubkey): b""
    b"D" ‖ descriptor  an imported descriptor (importdescriptors): its record (JSON)
    b"d" ‖ id          a DLC contract of the wallet (``regtest.wallet.dlc_store``)
    b"u" ‖ outpoint    a locked coin (``Wallet.locked``: coin selection leaves it alone), b""
    b"w" ‖ outpoint    a watched outpoint: its spenders are wallet transactions (a DLC's funding
                       output, half of whose 2-of-2 is ours); txid ‖ index (4 bytes LE) → b""

A write is ``WalletDB.commit(changes)``: one LevelDB batch, so a killed process reopens with the
wallet either before or after the change, never half of it (LevelDB appends a batch to its log
in one write). Every batch that changes keys or coins — the wallet state (seed, key counters,
change keys, assets), transactions, imported blinding keys, labels, locked or watched coins,
other modules' records — is synced, so a power cut cannot lose it (Core syncs its wallet
batches, src/wallet/walletdb.cpp): a rescan finds only coins paid to keys the wallet knows it
handed out, so a lost key counter hides coins. Only a batch that merely moves the last processed
block is left unsynced (losing it makes the next start scan a few blocks again). A failed write
is a ``DiskWriteError`` ("Disk space is too low!"): the caller stops, nothing half-written.

Integrity (docs/durability.md §2): the database is opened with LevelDB's paranoid checks and read
with checksums verified, so a damaged record is never skipped or served: the wallet is refused
(``WalletDBError`` naming the database) instead of loading with coins missing or altered.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import plyvel

from ctplugin.closing import Closeable
from ctplugin.elements import parse_transaction
from ctplugin.errors import CtpluginError
from regtest.wallet.keys import HDScheme
from regtest.wallet.ledger import Outpoint, TxState, WalletTx
from regtest.wallet.wallet import Opening, WalletError, WalletState
from validator import WriteGuard

FORMAT_VERSION = b"1"
_VERSION = b"V"
_META = b"M"
_ASSETS = b"A"
_TX = b"t"
_RAW = b"x"
_LABEL = b"l"
_BLINDING_KEY = b"k"
_WATCHED = b"w"
_LOCKED = b"u"
_WATCH_ONLY = b"o"
_DESCRIPTOR = b"D"


class WalletDBError(WalletError):
    """The wallet database is missing, locked, of another format or corrupt."""


@dataclass(slots=True)
class Changes:
    """What one commit writes."""

    state: WalletState | None = None
    best_block: tuple[bytes, int] | None = None
    txs: list[WalletTx] = field(default_factory=list)
    removed_txs: list[bytes] = field(default_factory=list)
    labels: dict[bytes, str] = field(default_factory=dict)
    extra: dict[bytes, bytes | None] = field(default_factory=dict)
    """Records of other wallet modules under their own key prefix (DLCs: ``b"d"``); None
    deletes."""
    blinding_keys: dict[bytes, bytes] = field(default_factory=dict)
    watched: list[Outpoint] = field(default_factory=list)
    locked: list[Outpoint] = field(default_factory=list)
    unlocked: list[Outpoint] = field(default_factory=list)
    watch_only: list[bytes] = field(default_factory=list)
    descriptors: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def durable(self) -> bool:
        """True when the batch changes keys or coins (anything but the best block): it is
        synced whatever the caller asks (module docstring)."""
        return bool(self.state is not None or self.txs or self.removed_txs or self.labels
                    or self.extra or self.blinding_keys or self.watched or self.locked
                    or self.unlocked)


def _opening_json(o: Opening) -> list[Any]:
    return [o.asset.hex(), o.value, f"{o.abf:064x}", f"{o.vbf:064x}"]


def _opening(data: list[Any]) -> Opening:
    return Opening(bytes.fromhex(data[0]), int(data[1]), int(data[2], 16), int(data[3], 16))


def _hex(value: bytes | None) -> str | None:
    return None if value is None else value.hex()


def _bytes(value: str | None) -> bytes | None:
    return None if value is None else bytes.fromhex(value)


def encode_wtx(wtx: WalletTx) -> bytes:
    return json.dumps({
        "time": wtx.time_received, "state": wtx.state.value,
        "block": _hex(wtx.block_hash), "height": wtx.height, "pos": wtx.position,
        "blocktime": wtx.block_time, "conflict": _hex(wtx.conflict_hash),
        "conflict_height": wtx.conflict_height,
        "mine": {str(n): _opening_json(o) for n, o in wtx.mine.items()},
        "known": {str(n): _opening_json(o) for n, o in wtx.known.items()},
        "change": sorted(wtx.change), "comment": wtx.comment, "comment_to": wtx.comment_to,
        "genesis": wtx.coinbase_at_genesis, "order": wtx.order,
        "issuance": _opening_json(wtx.issuance) if wtx.issuance is not None else None,
    }, separators=(",", ":")).encode()


def decode_wtx(raw: bytes, data: bytes) -> WalletTx:
    try:
        record = json.loads(data)
        return WalletTx(
            tx=parse_transaction(raw), time_received=record["time"],
            state=TxState(record["state"]), block_hash=_bytes(record["block"]),
            height=record["height"], position=record["pos"], block_time=record["blocktime"],
            conflict_hash=_bytes(record["conflict"]),
            conflict_height=record["conflict_height"],
            mine={int(n): _opening(o) for n, o in record["mine"].items()},
            known={int(n): _opening(o) for n, o in record["known"].items()},
            change=frozenset(record["change"]), comment=record["comment"],
            comment_to=record["comment_to"], coinbase_at_genesis=record["genesis"],
            order=record["order"],
            issuance=_opening(record["issuance"]) if record["issuance"] else None)
    except (ValueError, KeyError, TypeError, IndexError, CtpluginError) as exc:
        raise WalletDBError(f"corrupt wallet transaction record: {exc}") from None


def encode_state(state: WalletState) -> tuple[bytes, bytes]:
    meta = {"seed": state.seed.hex(), "next_key": state.next_key,
            "rng_counter": state.rng_counter, "change_keys": sorted(state.change_keys),
            "scheme": state.scheme.value,
            "master_blinding_key": _hex(state.master_blinding_key),
            "imported": [f"{k:064x}" for k in state.imported],
            "next_change": state.next_change, "blank": state.blank,
            "private_keys": state.private_keys}
    assets = {"known": sorted(a.hex() for a in state.known_assets.values()),
              "entropy": {a.hex(): e.hex() for a, e in state.entropy.items()},
              "token_of": {a.hex(): t.hex() for a, t in state.token_of.items()}}
    return (json.dumps(meta, separators=(",", ":")).encode(),
            json.dumps(assets, separators=(",", ":")).encode())


class WalletDB(Closeable):
    """One wallet's database directory (module docstring)."""

    def __init__(self, db: plyvel.DB, path: str) -> None:
        self.db = db
        self.path = path
        self.guard = WriteGuard()  # the fault seam of tests, and the stop after a failure
        self._stored_raw: set[bytes] = {key[1:] for key in self._iterate(
            prefix=_RAW, include_value=False)}

    def _corrupt(self, exc: BaseException) -> WalletDBError:
        return WalletDBError(f"wallet database {self.path} is corrupt ({exc}); the wallet is "
                             "not loaded: restore it from a backup")

    def _get(self, key: bytes) -> bytes | None:
        try:
            value: bytes | None = self.db.get(key, verify_checksums=True)
        except (plyvel.CorruptionError, plyvel.IOError) as exc:
            raise self._corrupt(exc) from None
        return value

    def _iterate(self, **options: Any) -> Iterator[Any]:
        """``db.iterator`` with checksums verified; a failure is ``WalletDBError``."""
        try:
            with self.db.iterator(verify_checksums=True, **options) as records:
                yield from records
        except (plyvel.CorruptionError, plyvel.IOError) as exc:
            raise self._corrupt(exc) from None

    @classmethod
    def open(cls, path: str, *, create: bool) -> WalletDB:
        exists = os.path.isdir(path) and os.path.exists(os.path.join(path, "CURRENT"))
        if create and exists:
            raise WalletDBError(f"wallet database {path} already exists")
        if not create and not exists:
            raise WalletDBError(f"wallet database {path} not found")
        os.makedirs(path, exist_ok=True)
        try:
            db = plyvel.DB(path, create_if_missing=create, paranoid_checks=True)
        except plyvel.IOError as exc:
            raise WalletDBError(f"cannot open wallet database {path}: {exc}") from None
        except plyvel.Error as exc:
            raise WalletDBError(f"wallet database {path} is damaged: {exc}") from None
        try:
            handle = cls(db, path)
        except BaseException:
            db.close()
            raise
        version = handle._get(_VERSION)
        if create:
            db.put(_VERSION, FORMAT_VERSION, sync=True)
        elif version != FORMAT_VERSION:
            db.close()
            raise WalletDBError(f"wallet database {path} has format {version!r}, "
                                f"want {FORMAT_VERSION!r}")
        return handle

    def close(self) -> None:
        if not self.db.closed:
            self.db.close()

    def commit(self, changes: Changes, *, sync: bool = False) -> None:
        """Write ``changes`` in one batch, synced when ``sync`` or ``changes.durable``; through
        the guard (a failed write is ``DiskWriteError``, and the last one)."""
        self.guard.write("wallet", lambda: self._write(changes, sync or changes.durable))

    def _write(self, changes: Changes, sync: bool) -> None:
        # transaction=True: an error while the batch is filled discards it (plyvel writes a
        # plain batch on leaving the block even then: half a change)
        with self.db.write_batch(sync=sync, transaction=True) as batch:
            if changes.state is not None:
                meta, assets = encode_state(changes.state)
                record = json.loads(meta)
                if changes.best_block is not None:
                    record["best"] = [changes.best_block[0].hex(), changes.best_block[1]]
                else:
                    old = self._get(_META)
                    if old is not None:
                        record["best"] = json.loads(old).get("best")
                batch.put(_META, json.dumps(record, separators=(",", ":")).encode())
                batch.put(_ASSETS, assets)
            elif changes.best_block is not None:
                old = self._get(_META)
                record = json.loads(old) if old is not None else {}
                record["best"] = [changes.best_block[0].hex(), changes.best_block[1]]
                batch.put(_META, json.dumps(record, separators=(",", ":")).encode())
            for wtx in changes.txs:
                if wtx.txid not in self._stored_raw:
                    batch.put(_RAW + wtx.txid, wtx.tx.serialize())
                    self._stored_raw.add(wtx.txid)
                batch.put(_TX + wtx.txid, encode_wtx(wtx))
            for txid in changes.removed_txs:
                batch.delete(_TX + txid)
                batch.delete(_RAW + txid)
                self._stored_raw.discard(txid)
            for script, label in changes.labels.items():
                batch.put(_LABEL + script, label.encode())
            for script, key in changes.blinding_keys.items():
                batch.put(_BLINDING_KEY + script, key)
            for txid, index in changes.watched:
                batch.put(_WATCHED + txid + index.to_bytes(4, "little"), b"")
            for txid, index in changes.locked:
                batch.put(_LOCKED + txid + index.to_bytes(4, "little"), b"")
            for txid, index in changes.unlocked:
                batch.delete(_LOCKED + txid + index.to_bytes(4, "little"))
            for script in changes.watch_only:
                batch.put(_WATCH_ONLY + script, b"")
            for text, record in changes.descriptors.items():
                batch.put(_DESCRIPTOR + text.encode(), json.dumps(record).encode())
            for key, value in changes.extra.items():
                if value is None:
                    batch.delete(key)
                else:
                    batch.put(key, value)

    # --- reading back -------------------------------------------------------------------------

    def load_state(self) -> tuple[WalletState, tuple[bytes, int] | None]:
        meta_raw, assets_raw = self._get(_META), self._get(_ASSETS)
        if meta_raw is None or assets_raw is None:
            raise WalletDBError(f"wallet database {self.path} has no wallet record")
        try:
            meta, assets = json.loads(meta_raw), json.loads(assets_raw)
            known = {bytes.fromhex(a)[:20]: bytes.fromhex(a) for a in assets["known"]}
            state = WalletState(
                bytes.fromhex(meta["seed"]), int(meta["next_key"]), int(meta["rng_counter"]),
                frozenset(meta["change_keys"]), known,
                {bytes.fromhex(a): bytes.fromhex(e) for a, e in assets["entropy"].items()},
                {bytes.fromhex(a): bytes.fromhex(t) for a, t in assets["token_of"].items()},
                HDScheme(meta.get("scheme", HDScheme.TAGGED.value)),
                _bytes(meta.get("master_blinding_key")),
                tuple(int(k, 16) for k in meta.get("imported", ())),
                int(meta.get("next_change", 0)), bool(meta.get("blank", False)),
                bool(meta.get("private_keys", True)))
            best = meta.get("best")
            return state, (bytes.fromhex(best[0]), int(best[1])) if best else None
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise WalletDBError(f"corrupt wallet record in {self.path}: {exc}") from None

    def transactions(self) -> Iterator[WalletTx]:
        for key, value in self._iterate(prefix=_TX):
            raw = self._get(_RAW + key[1:])
            if raw is None:
                raise WalletDBError(f"wallet transaction {key[1:][::-1].hex()} has no data")
            yield decode_wtx(raw, value)

    def labels(self) -> dict[bytes, str]:
        return {key[1:]: value.decode() for key, value in self._iterate(prefix=_LABEL)}

    def records(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) of every record under ``prefix`` (another module's, see ``Changes``)."""
        yield from self._iterate(prefix=prefix)

    def _outpoints(self, prefix: bytes) -> set[Outpoint]:
        return {(key[1:33], int.from_bytes(key[33:37], "little"))
                for key, _ in self._iterate(prefix=prefix)}

    def watched(self) -> set[Outpoint]:
        return self._outpoints(_WATCHED)

    def locked(self) -> set[Outpoint]:
        return self._outpoints(_LOCKED)

    def watch_only(self) -> set[bytes]:
        return {key[1:] for key, _ in self.db.iterator(prefix=_WATCH_ONLY)}

    def descriptors(self) -> dict[str, dict[str, Any]]:
        try:
            return {key[1:].decode(): json.loads(value)
                    for key, value in self.db.iterator(prefix=_DESCRIPTOR)}
        except ValueError as exc:
            raise WalletDBError(f"corrupt descriptor record in {self.path}: {exc}") from None

    def blinding_keys(self) -> dict[bytes, bytes]:
        return {key[1:]: value for key, value in self._iterate(prefix=_BLINDING_KEY)}

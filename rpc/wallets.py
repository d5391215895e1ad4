"""The node's loaded wallets: create / load / unload, ``/wallet/<name>`` routing, chain events.

Wallets live in ``DATADIR/wallets/<encoded name>/`` (``Node.wallet_path``), each its own LevelDB
(``regtest.wallet.db``). A fresh node creates the default wallet "" from the documented regtest
seed, so it owns the genesis coins at once (as Elements' test setups give their wallets the
initial free coins); ``createwallet`` makes wallets with fresh random seeds. Wallets named in
``DATADIR/settings.json`` (``load_on_startup``) and by ``--wallet`` load at start-up, and every
loaded wallet catches up with the chain before warm-up ends.

Request routing as bitcoind's ``GetWalletForJSONRPCRequest``: ``/wallet/<name>`` selects a loaded
wallet (-18 if it is not loaded); the bare ``/`` works while exactly one wallet is loaded, is -19
with several and -18 with none.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import threading
from collections.abc import Iterator
from urllib.parse import unquote

from ctplugin.closing import Closeable
from ctplugin.elements import Block, Transaction
from regtest.params import REGTEST_SEED
from regtest.wallet.db import WalletDBError
from regtest.wallet.node_wallet import NodeWallet, WalletSettings
from rpc.errors import RpcCode, RpcError
from validator import REMOVED_BLOCK, ChainListener, Node

log = logging.getLogger("ctplugin.rpc")
MAX_NAME_BYTES = 255  # a wallet is a directory: one file name (NAME_MAX on Linux and macOS)

SETTINGS_FILE = "settings.json"


class WalletManager(ChainListener, Closeable):
    """``settings``: the node's wallet options (``WalletSettings``), the same for every
    wallet it loads."""

    def __init__(self, node: Node, datadir: str, settings: WalletSettings | None = None) -> None:
        self.node = node
        self.datadir = datadir
        self.settings = settings if settings is not None else WalletSettings()
        self.wallets: dict[str, NodeWallet] = {}
        self._lock = threading.RLock()  # guards the table, not the wallets

    # --- routing --------------------------------------------------------------------------------

    def for_request(self, uri_wallet: str | None) -> NodeWallet:
        with self._lock:
            if uri_wallet is not None:
                wallet = self.wallets.get(uri_wallet)
                if wallet is None:
                    raise RpcError(RpcCode.WALLET_NOT_FOUND,
                                   "Requested wallet does not exist or is not loaded")
                return wallet
            if len(self.wallets) == 1:
                return next(iter(self.wallets.values()))
            if not self.wallets:
                raise RpcError(RpcCode.WALLET_NOT_FOUND,
                               "No wallet is loaded. Load a wallet using loadwallet or create a "
                               "new one with createwallet. (Note: A default wallet is no longer "
                               "automatically created)")
            raise RpcError(RpcCode.WALLET_NOT_SPECIFIED,
                           "Wallet file not specified (must request wallet RPC through "
                           "/wallet/<filename> uri-path).")

    def names(self) -> list[str]:
        with self._lock:
            return list(self.wallets)

    # --- files ----------------------------------------------------------------------------------

    def path(self, name: str) -> str:
        try:
            path = self.node.wallet_path(name)
        except Exception as exc:  # a StoreError for names no directory can carry
            raise RpcError(RpcCode.WALLET_ERROR, f"Invalid wallet name: {exc}") from None
        if len(os.fsencode(os.path.basename(path))) > MAX_NAME_BYTES:
            raise RpcError(RpcCode.WALLET_ERROR,
                           "Wallet file verification failed. Invalid wallet name (too long: "
                           f"{MAX_NAME_BYTES} bytes at most once percent-encoded)")
        return path

    def exists(self, name: str) -> bool:
        return os.path.exists(os.path.join(self.path(name), "CURRENT"))

    def on_disk(self) -> list[str]:
        """listwalletdir: every wallet directory, by name."""
        root = os.path.dirname(self.path(""))
        default = os.path.basename(self.path(""))
        names = []
        with contextlib.suppress(FileNotFoundError):
            for entry in sorted(os.listdir(root)):
                if os.path.exists(os.path.join(root, entry, "CURRENT")):
                    names.append("" if entry == default else unquote(entry))
        return names

    def _settings(self) -> list[str]:
        try:
            with open(os.path.join(self.datadir, SETTINGS_FILE), encoding="utf-8") as handle:
                value = json.load(handle).get("wallet", [])
        except (FileNotFoundError, ValueError, AttributeError):
            return []
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def _set_load_on_startup(self, name: str, load: bool | None) -> None:
        if load is None:
            return
        current = self._settings()
        updated = [n for n in current if n != name] + ([name] if load else [])
        if updated == current:
            return
        path = os.path.join(self.datadir, SETTINGS_FILE)
        tmp = path + ".tmp"
        try:
            with open(path, encoding="utf-8") as handle:
                settings = json.load(handle)
            if not isinstance(settings, dict):
                settings = {}
        except (FileNotFoundError, ValueError):
            settings = {}
        settings["wallet"] = updated
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(settings, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)

    # --- create / load / unload (call with the node's chain lock held) --------------------------

    def create(self, name: str, *, seed: bytes | None = None,
               load_on_startup: bool | None = None) -> NodeWallet:
        with self._lock:
            if name in self.wallets or self.exists(name):
                raise RpcError(RpcCode.WALLET_ERROR, f"Wallet file verification failed. Failed "
                                                     f"to create database path '{self.path(name)}'"
                                                     ". Database already exists.")
            wallet = NodeWallet.create(self.path(name), name, seed or secrets.token_bytes(32),
                                       self.node.params, self.settings)
            wallet.best = (self.node.tip.hash, self.node.tip.height) if seed is None else None
            with wallet.lock:
                if wallet.best is None:  # a known seed may own coins already: scan the chain
                    wallet.catch_up(self.node)
                else:
                    wallet.commit(state=True, sync=True)
            wallet.db.guard = self.node.data.guard  # a failed write stops the node
            self.wallets[name] = wallet
            self._set_load_on_startup(name, load_on_startup)
            log.info("wallet %r created", name)
            return wallet

    def load(self, name: str, *, load_on_startup: bool | None = None) -> NodeWallet:
        with self._lock:
            if name in self.wallets:
                raise RpcError(RpcCode.WALLET_ALREADY_LOADED,
                               f"Wallet \"{name}\" is already loaded.")
            if not self.exists(name):
                raise RpcError(RpcCode.WALLET_NOT_FOUND,
                               f"Wallet file verification failed. Failed to load database path "
                               f"'{self.path(name)}'. Path does not exist.")
            try:
                wallet = NodeWallet.load(self.path(name), name, self.node.params,
                                         self.settings)
            except WalletDBError as exc:
                raise RpcError(RpcCode.WALLET_ERROR, f"Wallet loading failed: {exc}") from None
            with wallet.lock:
                wallet.catch_up(self.node)
            wallet.db.guard = self.node.data.guard  # a failed write stops the node
            self.wallets[name] = wallet
            self._set_load_on_startup(name, load_on_startup)
            log.info("wallet %r loaded at height %d", name, wallet.tip_height)
            return wallet

    def unload(self, name: str, *, load_on_startup: bool | None = None) -> None:
        with self._lock:
            wallet = self.wallets.pop(name, None)
            if wallet is None:
                raise RpcError(RpcCode.WALLET_NOT_FOUND,
                               "Requested wallet does not exist or is not loaded")
            with wallet.lock:
                wallet.close()
            self._set_load_on_startup(name, load_on_startup)

    def start(self, extra: tuple[str, ...]) -> None:
        """Start-up: the default wallet (created on the first start), the settings' wallets and
        ``--wallet`` ones (created when missing)."""
        if self.exists(""):
            self.load("")
        else:
            self.create("", seed=REGTEST_SEED)
        for name in [*self._settings(), *extra]:
            if name in self.wallets:
                continue
            if self.exists(name):
                self.load(name)
            else:
                self.create(name)

    def close(self) -> None:
        with self._lock:
            for wallet in self.wallets.values():
                with wallet.lock:
                    wallet.close()
            self.wallets.clear()

    # --- events (under the node's chain lock) ---------------------------------------------------

    def _each(self) -> Iterator[NodeWallet]:
        with self._lock:
            wallets = list(self.wallets.values())
        for wallet in wallets:
            with wallet.lock:
                yield wallet

    def block_connected(self, block: Block, height: int) -> None:
        for wallet in self._each():
            wallet.block_connected(block, height)

    def block_disconnected(self, block: Block, height: int) -> None:
        for wallet in self._each():
            wallet.block_disconnected(block, height)

    def transaction_added(self, tx: Transaction) -> None:
        for wallet in self._each():
            wallet.transaction_added(tx)

    def transaction_removed(self, tx: Transaction, reason: str) -> None:
        if reason == REMOVED_BLOCK:  # the block_connected that follows covers it
            return
        for wallet in self._each():
            wallet.transaction_removed(tx, reason)

"""The node's loaded wallets: create / load / unload, ``/wallet/<name>`` routing, chain events.

Wallets live in ``DATADIR/wallets/<encoded name>/`` (``Node.wallet_path``), each its own LevelDB
(``regtest.wallet.db``). Two models (``WalletSettings.default_wallet``):

- our chains: a fresh node creates the default wallet "" from the documented regtest seed, so
  it owns the genesis coins at once; ``--wallet`` names missing wallets to create;
- elementsregtest, as elementsd (docs/elements-regtest.md §5.3, Elements'
  ``src/wallet/load.cpp``): no wallet exists unless asked for (``createwallet``); a "" wallet
  already on disk loads when no ``-wallet`` is given; a ``-wallet`` or settings entry whose
  wallet is missing is skipped with bitcoind's warning, never re-created empty. Its wallets
  are legacy (``descriptors=false``: Core's HD chain) or descriptor wallets (BIP44/49/84/86),
  with a random master blinding key (``regtest.wallet.keys``).

``createwallet`` makes wallets with fresh random seeds. Wallets named in
``DATADIR/settings.json`` (``load_on_startup``) and by ``--wallet`` load at start-up, and every
loaded wallet catches up with the chain before warm-up ends. A ``settings.json`` that is not a
JSON object stops the start, as bitcoind's "Settings file could not be read".

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
from regtest.wallet.keys import HDScheme
from regtest.wallet.node_wallet import NodeWallet, WalletSettings
from rpc.errors import RpcCode, RpcError
from validator import REMOVED_BLOCK, ChainListener, Node

log = logging.getLogger("ctplugin.rpc")
MAX_NAME_BYTES = 255  # a wallet is a directory: one file name (NAME_MAX on Linux and macOS)

SETTINGS_FILE = "settings.json"


class SettingsFileError(RuntimeError):
    """settings.json cannot be read (bitcoind refuses to start: "Settings file could not be
    read")."""


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
        value = self.read_settings().get("wallet", [])
        if isinstance(value, str):  # bitcoind writes a single wallet as a string too
            value = [value]
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    def read_settings(self) -> dict[str, object]:
        """settings.json as an object ({} when absent); ``SettingsFileError`` with bitcoind's
        details when it is not a JSON object (common/settings.cpp ReadSettings)."""
        path = os.path.join(self.datadir, SETTINGS_FILE)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except FileNotFoundError:
            return {}
        except OSError:
            raise SettingsFileError(f"Settings file could not be read:\n{path}. Please check "
                                    "permissions.") from None
        try:
            value = json.loads(text)
        except ValueError:
            raise SettingsFileError(
                f"Settings file could not be read:\nSettings file {path} does not contain "
                "valid JSON. This is probably caused by disk corruption or a crash, and can be "
                "fixed by removing the file, which will reset settings to default "
                "values.") from None
        if not isinstance(value, dict):
            raise SettingsFileError(f"Settings file could not be read:\nFound non-object value "
                                    f"{text.strip()} in settings file {path}")
        return value

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
            settings = self.read_settings()
        except SettingsFileError:  # checked at start-up; replaced only if broken since
            settings = {}
        settings["wallet"] = updated
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(settings, handle, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)

    # --- create / load / unload (call with the node's chain lock held) --------------------------

    def create(self, name: str, *, seed: bytes | None = None,
               load_on_startup: bool | None = None, descriptors: bool = True,
               blank: bool = False, private_keys: bool = True) -> NodeWallet:
        """A new wallet (``seed``: a known one, scanned from genesis; else random). On
        elementsregtest ``descriptors`` picks a descriptor or a legacy wallet; ``blank`` /
        ``private_keys`` as createwallet's (no keys until imported or ``sethdseed``; watch-only
        for good)."""
        with self._lock:
            if name in self.wallets or self.exists(name):
                raise RpcError(RpcCode.WALLET_ERROR, f"Wallet file verification failed. Failed "
                                                     f"to create database path '{self.path(name)}'"
                                                     ". Database already exists.")
            scheme = HDScheme.TAGGED
            if self.settings.elements_keys:
                scheme = HDScheme.DESCRIPTORS if descriptors else HDScheme.LEGACY
            wallet = NodeWallet.create(self.path(name), name, seed or secrets.token_bytes(32),
                                       self.node.params, self.settings, scheme=scheme,
                                       blank=blank, private_keys=private_keys)
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

    def start(self, extra: tuple[str, ...], *, nowallet: bool = False) -> None:
        """Start-up (module docstring): our chains' default wallet (created on the first
        start), then the ``--wallet`` and settings wallets; a missing settings wallet is
        skipped with bitcoind's warning, a missing ``--wallet`` one is created on our chains
        and skipped on elementsregtest. ``nowallet`` (-nowallet): none of the listed ones."""
        listed = self._settings()
        if nowallet:
            listed, extra = [], ()
        if self.settings.default_wallet:
            if self.exists(""):
                self.load("")
            else:
                self.create("", seed=REGTEST_SEED)
        elif not nowallet and not extra and "wallet" not in self.read_settings() \
                and self.exists(""):
            listed = [""]  # Core: an unnamed wallet on disk loads when no -wallet is set
        for name in [*extra, *listed]:
            if name in self.wallets:
                continue
            if self.exists(name):
                self.load(name)
            elif self.settings.default_wallet and name in extra:
                self.create(name)
            else:
                log.warning("Skipping -wallet path that doesn't exist. Failed to load database "
                            "path '%s'. Path does not exist.", self.path(name))

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

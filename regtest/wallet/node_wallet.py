"""A wallet that lives in a node: persistent (``regtest.wallet.db``), following the chain.

``NodeWallet`` = the deterministic ``Wallet`` (keys, unblinding, building and proving) + the
``Ledger`` of its transactions (states, coins, balances) + its database, fed by the node's chain
events (``validator.ChainListener``):

- ``block_connected``: its transactions in the block become confirmed (others that pay us or
  spend our coins are added), wallet transactions spending the same inputs as a block
  transaction become conflicted (with their descendants);
- ``block_disconnected``: its transactions in the block become inactive (the node returns the
  still-valid ones to the mempool, which makes them ``MEMPOOL`` again), transactions conflicted
  by the block become inactive;
- ``transaction_added`` / ``transaction_removed``: mempool state.

Every issuance the wallet sees (in blocks and in the mempool) teaches it the asset and token
ids, so payments of any issued asset unblind: a Bulletproof's message carries only the first
20 bytes of the asset id (``regtest.wallet.blinding``).

``WalletSettings`` are elementsd's wallet options on the chain the node runs
(docs/elements-regtest.md §5.1, §6): with ``anyonecanspendaremine`` the bare ``OP_TRUE`` outputs
(the genesis free coins, ``-initialfreecoins``) are the wallet's, spent with an empty scriptSig
and witness, as Elements' solver classifies them; the other settings shape the node's address and
asset-label defaults. A genesis whose outputs are not in the UTXO set
(``-con_connect_genesis_outputs=0``) gives the wallet nothing.

Each event is one database commit, including the last block the wallet processed. At load
``catch_up`` brings the wallet to the node's tip from that block — undoing blocks of a branch
that lost, then scanning forward — so a wallet is consistent with its node after any crash.

The spendable coin view of ``Wallet`` (``Wallet.coins``, used by coin selection) is kept equal
to the ledger's trusted coins: remade when next read after a change, not at every event.
Callers hold ``lock`` around every call (the node calls events under its chain lock, then this
lock).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ctplugin.closing import Closeable
from ctplugin.elements import Block, Transaction, TxIn, parse_block
from ctplugin.elements.address import Destination, has_address
from ctplugin.elements.issuance import input_issuance_ids
from ctplugin.secp256k1 import ct
from regtest.elements import DEFAULT_PEGGED_ASSET_NAME, ElementsChainOptions
from regtest.wallet.address import ConfidentialAddress
from regtest.wallet.crypter import EncryptedSeed
from regtest.wallet.db import Changes, WalletDB
from regtest.wallet.keys import (
    IMPORT_KINDS,
    P2TR,
    P2WPKH,
    AddressKind,
    HDScheme,
    KeyPair,
    issuance_blinding_script,
    slip77_blinding_secret,
)
from regtest.wallet.ledger import Ledger, Outpoint, TxState, WalletTx
from regtest.wallet.wallet import (
    DEFAULT_KEYPOOL_SIZE,
    LOOKAHEAD,
    BuiltTransaction,
    Opening,
    OwnedCoin,
    Wallet,
)
from validator import REMOVED_BLOCK, BlockRef, ChainListener, ChainParams, Node

ENCRYPTION_RECORD = b"E"
"""The wallet database record of its encryption (``EncryptedSeed.to_bytes``)."""
MAX_BLINDED = 256  # blindrawtransaction results remembered until their transaction shows up
OP_TRUE = b"\x51"

log = logging.getLogger("ctplugin.wallet")


@dataclass(frozen=True, slots=True)
class WalletSettings:
    """elementsd's wallet options as the node's wallets apply them (module docstring):

    - ``anyonecanspendaremine``: bare ``OP_TRUE`` outputs are the wallet's
      (``-anyonecanspendaremine``);
    - ``blinded_addresses``: ``getnewaddress`` / ``getrawchangeaddress`` give confidential
      addresses unless the address type says otherwise (``-blindedaddresses``);
    - ``address_kind``: the script of a new address when no type is asked for (elementsd's
      ``-addresstype`` default bech32: P2WPKH);
    - ``pegged_asset_label``: the policy (pegged) asset's label — getbalance's key, what
      ``assetlabel`` arguments accept, listissuances' ``assetlabel``
      (``-defaultpeggedassetname``);
    - ``default_wallet``: the node creates and loads the public-seed wallet "" that owns the
      genesis coins (our chains); elementsd creates no wallet unless asked
      (docs/elements-regtest.md §5.3);
    - ``elements_keys``: wallets are elementsd's (BIP32 keys as legacy or descriptor
      wallets, a random master blinding key; ``regtest.wallet.keys``), not our chains'
      tagged-hash keys;
    - ``keypool``: keys derived beyond the last one handed out (``-keypool``);
    - ``change_kind``: the script change pays.

    The defaults are our ctregtest chains' behaviour since they began: confidential taproot
    addresses (so blocks exercise the Schnorr batch) and no claim on ``OP_TRUE`` outputs.
    """

    anyonecanspendaremine: bool = False
    blinded_addresses: bool = True
    address_kind: AddressKind = P2TR
    pegged_asset_label: str = DEFAULT_PEGGED_ASSET_NAME
    default_wallet: bool = True
    elements_keys: bool = False
    keypool: int = LOOKAHEAD
    change_kind: AddressKind = P2TR

    @classmethod
    def for_elements(cls, options: ElementsChainOptions,
                     keypool: int = DEFAULT_KEYPOOL_SIZE) -> WalletSettings:
        """elementsd's defaults and the options given on an Elements chain."""
        return cls(anyonecanspendaremine=options.anyonecanspendaremine,
                   blinded_addresses=options.blinded_addresses, address_kind=P2WPKH,
                   pegged_asset_label=options.default_pegged_asset_name,
                   default_wallet=False, elements_keys=True, keypool=max(1, keypool),
                   change_kind=P2WPKH)


class NodeWallet(ChainListener, Closeable):
    def __init__(self, name: str, db: WalletDB, wallet: Wallet, params: ChainParams,
                 best: tuple[bytes, int] | None,
                 settings: WalletSettings | None = None) -> None:
        self.name = name
        self.db = db
        self.wallet = wallet
        self.params = params
        self.settings = settings if settings is not None else WalletSettings()
        wallet.change_kind = self.settings.address_kind  # change as the default addresses
        # Coin selection spends what the balance counts: Core's wallet (GetBlocksToMaturity)
        # wants maturity + 1 confirmations of a coinbase (``Ledger.is_immature``), one block
        # more than consensus, so a coin spent in the next block (the wallet's tip + 1) needs
        # maturity + 1 blocks between its coinbase and that block
        wallet.coinbase_maturity = params.coinbase_maturity + 1
        self.ledger = Ledger(params.coinbase_maturity)
        self.labels: dict[bytes, str] = {}
        self.blinding_keys: dict[bytes, int] = {}
        self.watch_only: set[bytes] = set()
        """Scripts watched without keys (importaddress / importpubkey): their payments are
        history, not spendable coins."""
        self.descriptors: dict[str, dict[str, object]] = {}
        """Descriptors imported (importdescriptors, addmultisigaddress): text -> record
        (``rpc.methods.walletkeys``)."""
        self.redeem_scripts: dict[bytes, tuple[bytes | None, bytes | None]] = {}
        """scriptPubKey -> (redeem script, witness script) the wallet knows (solvable P2SH /
        P2WSH scripts: getaddressinfo)."""
        self.watched: set[Outpoint] = set()
        """Outpoints not ours whose spenders are wallet transactions (``commit(watch=)``)."""
        self.blinded: dict[bytes, dict[int, Opening]] = {}
        """txid -> openings of the outputs blindrawtransaction blinded (the most recent
        ``MAX_BLINDED`` transactions, in memory): when the transaction shows up, outputs paid to
        others keep their amounts and blinders in the history, as after sendtoaddress."""
        self.best = best
        self.lock = threading.RLock()
        self.encryption: EncryptedSeed | None = None
        """The passphrase-encrypted master key and seed (``regtest.wallet.crypter``), once
        ``encrypt`` ran; while locked nothing signs."""
        self._master_key: bytes | None = None
        self._unlocked_until = 0.0
        # Randomness never repeats across openings, whatever reached the disk (Wallet docs):
        # so recording a transaction this wallet made needs no fsync of its own.
        wallet.rng_salt = secrets.token_bytes(32)

    # --- lifecycle ------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str, name: str, seed: bytes, params: ChainParams,
               settings: WalletSettings | None = None, *,
               scheme: HDScheme = HDScheme.TAGGED, blank: bool = False,
               private_keys: bool = True) -> NodeWallet:
        """A new wallet; an HD ``scheme`` (elementsd's wallets) also draws a random master
        blinding key, as elementsd does for a new wallet (``blank`` / ``private_keys``: as
        ``Wallet``'s)."""
        settings = settings if settings is not None else WalletSettings()
        db = WalletDB.open(path, create=True)
        try:
            master = secrets.token_bytes(32) if scheme is not HDScheme.TAGGED else None
            wallet = Wallet.for_chain(seed, params, scheme=scheme, master_blinding_key=master,
                                      lookahead=settings.keypool,
                                      change_kind=settings.change_kind, blank=blank,
                                      private_keys=private_keys)
            node_wallet = cls(name, db, wallet, params, None, settings)
            db.commit(Changes(state=wallet.state()), sync=True)
            return node_wallet
        except BaseException:
            db.close()
            raise

    @classmethod
    def load(cls, path: str, name: str, params: ChainParams,
             settings: WalletSettings | None = None) -> NodeWallet:
        settings = settings if settings is not None else WalletSettings()
        db = WalletDB.open(path, create=False)
        try:
            state, best = db.load_state()
            wallet = Wallet.restore(state, policy_asset=params.policy_asset,
                                    range_proofs=params.wallet_range_proof,
                                    genesis_hash=params.genesis_hash, ct_bits=params.ct_bits,
                                    ct_exponent=params.ct_exponent,
                                    lookahead=settings.keypool,
                                    change_kind=settings.change_kind)
            node_wallet = cls(name, db, wallet, params, best, settings)
            for wtx in db.transactions():
                node_wallet.ledger.add(wtx)
            node_wallet.labels = db.labels()
            node_wallet.blinding_keys = {script: int.from_bytes(key, "big")
                                         for script, key in db.blinding_keys().items()}
            node_wallet.watched = db.watched()
            node_wallet.watch_only = db.watch_only()
            node_wallet.descriptors = dict(db.descriptors())
            for record in node_wallet.descriptors.values():
                solving = record.get("solving")
                if isinstance(solving, dict):
                    for script, (redeem, witness) in solving.items():
                        node_wallet.add_solving(bytes.fromhex(script), _bytes(redeem),
                                                _bytes(witness))
            wallet.locked = db.locked()
            for _key, raw in db.records(ENCRYPTION_RECORD):
                node_wallet.encryption = EncryptedSeed.from_bytes(raw)
            node_wallet.sync_coins()
            return node_wallet
        except BaseException:
            db.close()
            raise

    def close(self) -> None:
        self.db.close()

    @property
    def tip_height(self) -> int:
        """Height of the last block this wallet processed (-1 before the first)."""
        return self.best[1] if self.best is not None else -1

    def commit(self, txs: Iterable[WalletTx] = (), *, state: bool = False,
               labels: dict[bytes, str] | None = None,
               blinding_keys: dict[bytes, bytes] | None = None,
               removed: Sequence[bytes] = (), sync: bool = False,
               extra: dict[bytes, bytes | None] | None = None,
               watch: Sequence[Outpoint] = (), lock: Sequence[Outpoint] = (),
               unlock: Sequence[Outpoint] = ()) -> None:
        """One database batch; ``sync`` for what a rescan could not rebuild (``db``);
        ``extra``: other modules' records (``Changes.extra``); ``watch``: outpoints to watch
        from now on (a DLC's funding output: the closing transaction that spends it becomes a
        wallet transaction even when it pays this wallet nothing); ``lock`` / ``unlock``:
        coins coin selection leaves alone (``Wallet.locked``), or no longer."""
        self.db.commit(Changes(state=self.wallet.state() if state else None,
                               best_block=self.best, txs=list(txs),
                               removed_txs=list(removed), labels=labels or {},
                               blinding_keys=blinding_keys or {}, extra=extra or {},
                               watched=list(watch), locked=list(lock), unlocked=list(unlock)),
                       sync=sync)
        self.watched.update(watch)
        self.wallet.locked.update(lock)
        self.wallet.locked.difference_update(unlock)

    # --- the spendable coin view ----------------------------------------------------------------

    def sync_coins(self) -> None:
        """``Wallet.coins`` := the ledger's trusted, unspent coins (immature ones included:
        coin selection checks maturity at the spending height), as the ledger is when they
        are next read: every change of the ledger calls this, and a burst of events makes
        the view once."""
        self.wallet.coins_from(self._trusted_coins)

    def _trusted_coins(self) -> dict[Outpoint, OwnedCoin]:
        with self.lock:  # a reader outside the events' lock still sees a ledger at rest
            coins = {}
            for coin in self.ledger.coins(self.tip_height, trusted_only=True,
                                          include_immature=True):
                wtx = coin.wtx
                out = wtx.tx.outputs[coin.n]
                o = coin.opening
                height = wtx.height if wtx.state is TxState.CONFIRMED else None
                coins[coin.outpoint] = OwnedCoin(wtx.txid, coin.n, out, o.asset, o.value,
                                                 o.abf, o.vbf, height, wtx.is_coinbase)
            return coins

    # --- recognising transactions ---------------------------------------------------------------

    def _openings(self, tx: Transaction) -> tuple[dict[int, Opening], dict[int, Opening]]:
        """(ours, others we can open) among the outputs of ``tx``, a transaction the node
        accepted (mempool or block): its range proofs are known to verify."""
        mine: dict[int, Opening] = {}
        known: dict[int, Opening] = {}
        for n, out in enumerate(tx.outputs):
            if self.wallet.keys.owner_of(out.script_pubkey) is not None:
                opened = self.wallet.unblind(out, known_valid=True)
                if opened is not None:
                    mine[n] = Opening(*opened)
                continue
            if self.wallet.keys.multisig_of(out.script_pubkey) is not None:
                secret = self.blinding_secret(out.script_pubkey)
                assert secret is not None  # a multisig of ours has a blinding key
                opened = self.wallet.open_output(out, secret, known_valid=True)
                if opened is not None:
                    mine[n] = Opening(*opened)
                continue
            if self._anyone_can_spend(out.script_pubkey):
                # blinded to our key for that script (as Elements' wallet blinds to itself)
                opened = self.wallet.open_output(out, self._op_true_blinding_secret(),
                                                   known_valid=True)
                if opened is not None:
                    mine[n] = Opening(*opened)
                continue
            secret = self.blinding_keys.get(out.script_pubkey)
            if secret is None and out.script_pubkey in self.watch_only:
                secret = self._master_blinding_secret(out.script_pubkey)
            if secret is not None:
                opened = self.wallet.open_output(out, secret, known_valid=True)
                if opened is not None:
                    known[n] = Opening(*opened)
        return mine, known

    def _concerns_us(self, tx: Transaction) -> bool:
        """A quick, exact filter for block scanning: ``tx`` is ours, spends or double-spends
        our coins, issues an asset, or pays a script we own or hold a blinding key for."""
        ledger = self.ledger
        if tx.txid in ledger.txs:
            return True
        if not tx.is_coinbase:
            for txin in tx.inputs:
                if txin.issuance is not None:
                    return True
                outpoint = (txin.prevout_hash, txin.prevout_index)
                if outpoint in ledger.spenders or outpoint in self.watched:
                    return True
                parent = ledger.txs.get(txin.prevout_hash)
                if parent is not None and txin.prevout_index in parent.mine:
                    return True
        return any(self.is_mine(out.script_pubkey) or out.script_pubkey in self.blinding_keys
                   or out.script_pubkey in self.watch_only for out in tx.outputs)

    def _learn_assets(self, tx: Transaction) -> bool:
        """Remember the asset and token ids issued by ``tx`` (public: derived from the issuance
        entropy), so outputs of those assets sent to us unblind — a Bulletproof's message
        carries only an asset-id prefix. True when something was new."""
        learned = False
        if tx.is_coinbase:
            return False
        for txin in tx.inputs:
            ids = input_issuance_ids(txin) if txin.issuance is not None else None
            if ids is None:
                continue
            for asset in (ids.asset, ids.token):
                if self.wallet.known_assets.get(asset[:20]) != asset:
                    self.wallet.add_known_asset(asset)
                    learned = True
        return learned

    def _recognise(self, tx: Transaction, genesis: bool = False) -> WalletTx | None:
        """The wallet's record of ``tx``: the existing one, a new one if it pays us or spends
        our coins, else None."""
        wtx = self.ledger.get(tx.txid)
        if wtx is not None:
            return wtx
        spends_ours = not tx.is_coinbase and any(
            self.ledger.is_mine(outpoint) or outpoint in self.watched
            for outpoint in ((t.prevout_hash, t.prevout_index) for t in tx.inputs))
        mine, known = self._openings(tx)
        watches = any(out.script_pubkey in self.watch_only for out in tx.outputs)
        if not mine and not spends_ours and not watches:
            return None
        for n, opening in self.blinded.pop(tx.txid, {}).items():
            if n not in mine:
                known.setdefault(n, opening)
        change: frozenset[int] = frozenset()
        if spends_ours:  # Core's IsChange: our outputs to change keys of a transaction we paid
            change = frozenset(n for n in mine if self.is_change(tx.outputs[n].script_pubkey))
        self._learn_token_types(tx)
        return self.ledger.add(WalletTx(tx, int(time.time()), mine=mine, known=known,
                                        change=change, coinbase_at_genesis=genesis))

    def _learn_token_types(self, tx: Transaction) -> bool:
        """The new issuances of a wallet transaction (one of ours, or one it watches) join the
        reissuance-token map: elementsd's reissueasset finds the token of an asset among the
        wallet's transactions (CWallet::GetReissuanceTokenTypes, src/wallet/wallet.cpp), so
        importing the issuance's address lets a holder of the token reissue. True when new."""
        learned = False
        for txin in tx.inputs:
            if txin.issuance is None or txin.issuance.is_reissuance:
                continue
            ids = input_issuance_ids(txin)
            if ids is not None and self.wallet.token_of.get(ids.asset) != ids.token:
                self.wallet.learn_issuance(ids.asset, ids.token, ids.entropy)
                learned = True
        return learned

    def is_change(self, script: bytes) -> bool:
        """Core's ScriptIsChange: in an HD (elementsd) wallet, a script of ours without an
        address-book entry (no label: change keys, and any script without an address);
        in our chains' wallets, one of the keys handed out as change."""
        if self.wallet.keys.has_internal_chain:
            return self.is_mine(script) and (script not in self.labels
                                             or not has_address(script))
        pair = self.wallet.keys.owner_of(script)
        return pair is not None and self.wallet.is_change_key(pair)

    def remember_blinded(self, txid: bytes, openings: dict[int, Opening]) -> None:
        """blindrawtransaction's openings of ``txid``'s outputs (see ``blinded``)."""
        self.blinded[txid] = dict(openings)
        while len(self.blinded) > MAX_BLINDED:
            del self.blinded[next(iter(self.blinded))]

    def add_own(self, built: BuiltTransaction, comment: str = "",
                comment_to: str = "") -> WalletTx:
        """Record a transaction this wallet just built (before it goes to the mempool)."""
        tx = built.tx
        mine: dict[int, Opening] = {}
        known: dict[int, Opening] = {}
        for n, opening in built.openings.items():
            if self.is_mine(tx.outputs[n].script_pubkey):
                mine[n] = opening
            else:
                known[n] = opening
        wtx = self.ledger.add(WalletTx(tx, int(time.time()), mine=mine, known=known,
                                       change=built.change, comment=comment,
                                       comment_to=comment_to, issuance=built.issuance))
        self.commit([wtx], state=True)
        return wtx

    def abandon(self, txid: bytes) -> None:
        """Core's ``AbandonTransaction``: the transaction (unconfirmed, not in the mempool) and
        its unconfirmed descendants become ``ABANDONED``, so the coins they spend are free
        again. The caller checks eligibility."""
        wtx = self.ledger.txs[txid]
        changed = []
        for victim in (wtx, *self.ledger.descendants(txid)):
            if victim.state in (TxState.MEMPOOL, TxState.INACTIVE):
                victim.set_unconfirmed(TxState.ABANDONED)
                changed.append(victim)
        self.commit(changed)
        self.sync_coins()

    def lock_coins(self, outpoints: Sequence[Outpoint], *, persistent: bool) -> None:
        """lockunspent: coin selection leaves these alone; only a persistent lock is written
        (Core keeps the others in memory until the wallet unloads)."""
        if persistent:
            self.commit(lock=outpoints)
        else:
            self.wallet.locked.update(outpoints)

    def unlock_coins(self, outpoints: Sequence[Outpoint] | None = None) -> None:
        """Unlock ``outpoints`` (every locked coin when None); always written, as Core's."""
        chosen = list(self.wallet.locked) if outpoints is None else list(outpoints)
        self.commit(unlock=chosen)

    # --- encryption (Core's encryptwallet / walletpassphrase / walletlock) ---------------------

    @property
    def is_locked(self) -> bool:
        """Encrypted and not unlocked (or the unlock timed out): its keys may not sign."""
        if self.encryption is None:
            return False
        if self._master_key is not None and time.monotonic() >= self._unlocked_until:
            self._master_key = None  # the timeout passed: forget the key, as Core's relock
        return self._master_key is None

    @property
    def unlocked_until(self) -> int:
        """getwalletinfo's ``unlocked_until``: the UNIX time the wallet locks again, 0 while
        locked (Core's ``nRelockTime``)."""
        if self.is_locked:
            return 0
        return int(time.time() + self._unlocked_until - time.monotonic())

    def encrypt(self, passphrase: str) -> None:
        """Encrypt the seed under ``passphrase`` (written synced); the wallet is then locked."""
        record, _master = EncryptedSeed.create(self.wallet.keys.seed, passphrase)
        self.commit(extra={ENCRYPTION_RECORD: record.to_bytes()}, sync=True)
        self.encryption = record
        self.lock_keys()

    def unlock_keys(self, passphrase: str, timeout: float) -> None:
        """Open the master key for ``timeout`` seconds (``CrypterError`` for a wrong
        passphrase)."""
        assert self.encryption is not None
        self._master_key = self.encryption.master_key(passphrase)
        self._unlocked_until = time.monotonic() + timeout

    def lock_keys(self) -> None:
        self._master_key = None
        self._unlocked_until = 0.0

    def change_passphrase(self, old: str, new: str) -> None:
        """The master key under ``new`` (``CrypterError`` when ``old`` does not open it)."""
        assert self.encryption is not None
        master = self.encryption.master_key(old)
        record = self.encryption.with_passphrase(master, new)
        self.commit(extra={ENCRYPTION_RECORD: record.to_bytes()}, sync=True)
        self.encryption = record

    def forget(self, txid: bytes) -> None:
        """Drop a transaction the wallet built but the node refused; restore the coin view."""
        self.ledger.remove(txid)
        self.commit(removed=[txid], state=True, sync=True)
        self.sync_coins()

    # --- chain events ---------------------------------------------------------------------------

    def block_connected(self, block: Block, height: int) -> None:
        changed, learned = self._scan_block(block, height)
        self.best = (block.hash, height)
        self.commit(changed, state=bool(changed) or learned)
        if changed:
            self.sync_coins()

    def rescan(self, node: Node, start: int = 0, stop: int | None = None) -> None:
        """The main chain's blocks ``start``..``stop`` (default: up to the wallet's tip) and the
        mempool scanned again, so payments to keys, scripts or blinding keys learnt since show
        up (Core's ScanForWalletTransactions: rescanblockchain, and after an import)."""
        last = min(node.tip.height, self.tip_height) if stop is None else stop
        changed: list[WalletTx] = []
        learned = False
        for height in range(max(0, start), last + 1):
            block_hash = node.block_hash(height)
            if block_hash is None:
                break
            found, new = self._scan_block(_read(node, block_hash), height)
            changed += found
            learned |= new
        self.commit(changed, state=bool(changed) or learned, sync=True)
        self.scan_mempool(node)
        self.sync_coins()

    def _scan_block(self, block: Block, height: int) -> tuple[list[WalletTx], bool]:
        """The wallet transactions a main-chain block confirms or conflicts, and whether it
        taught the wallet new assets (nothing committed)."""
        changed: list[WalletTx] = []
        learned = False
        # A genesis left out of the UTXO set has no coins for anyone (Elements' ConnectBlock)
        spendable = height != 0 or self.params.connect_genesis_outputs
        for position, tx in enumerate(block.transactions if spendable else ()):
            if not self._concerns_us(tx):
                continue
            learned |= self._learn_assets(tx)
            if height == 0:  # the pegged asset's genesis issuance (docs/elements-regtest.md
                # §5.2): whoever holds its -initialreissuancetokens can reissue it
                learned |= self._learn_token_types(tx)
            for other in self.ledger.conflicts_of(tx):
                conflicted = self.ledger.txs[other]
                for victim in (conflicted, *self.ledger.descendants(other)):
                    if victim.state is not TxState.CONFLICTED:
                        victim.set_conflicted(block.hash, height)
                        changed.append(victim)
            wtx = self._recognise(tx, genesis=height == 0)
            if wtx is not None:
                wtx.set_confirmed(block.hash, height, position, block.header.time)
                changed.append(wtx)
        return changed, learned

    def scan_mempool(self, node: Node) -> None:
        """Unconfirmed transactions already in the node's mempool that pay or spend this
        wallet, as if just added (Core's ``CWallet::postInitProcess`` →
        ``requestMempoolTransactions``): a wallet that loads or imports sees them."""
        for tx in node.mempool.transactions():
            if self._concerns_us(tx):
                self.transaction_added(tx)

    def block_disconnected(self, block: Block, height: int) -> None:
        changed: list[WalletTx] = []
        for wtx in self.ledger.txs.values():
            confirmed_here = wtx.state is TxState.CONFIRMED and wtx.block_hash == block.hash
            conflicted_here = (wtx.state is TxState.CONFLICTED
                               and wtx.conflict_hash == block.hash)
            if confirmed_here or conflicted_here:
                wtx.set_unconfirmed(TxState.INACTIVE)
                changed.append(wtx)
        self.best = (block.header.prev_hash, height - 1)
        self.commit(changed)
        self.sync_coins()

    def transaction_added(self, tx: Transaction) -> None:
        if self._learn_assets(tx):
            self.commit(state=True)
        wtx = self._recognise(tx)
        if wtx is None or wtx.state is TxState.CONFIRMED:
            return
        was_spendable = wtx.state is TxState.MEMPOOL
        wtx.set_unconfirmed(TxState.MEMPOOL)
        self.commit([wtx], state=True)  # _recognise may have learned its token types
        if not was_spendable:
            self.sync_coins()

    def transaction_removed(self, tx: Transaction, reason: str) -> None:
        if reason == REMOVED_BLOCK:
            return
        wtx = self.ledger.get(tx.txid)
        if wtx is None or wtx.state is not TxState.MEMPOOL:
            return
        wtx.set_unconfirmed(TxState.INACTIVE)
        self.commit([wtx])
        self.sync_coins()

    # --- catching up with the node --------------------------------------------------------------

    def catch_up(self, node: Node) -> int:
        """Follow the node from the last processed block to its tip (module docstring), then
        put unconfirmed transactions back in the mempool where they are still valid. Returns
        the number of blocks processed."""
        processed = 0
        start = 0
        if self.best is not None:
            info = node.block_info(self.best[0])
            if info is None:
                log.warning("wallet %r: last block unknown to the node, rescanning", self.name)
                for wtx in self.ledger.txs.values():
                    wtx.set_unconfirmed(TxState.INACTIVE)
                self.commit(self.ledger.txs.values())
            while info is not None and not info.in_active_chain:
                self.block_disconnected(_read(node, info.hash), info.height)
                processed += 1
                info = node.block_info(info.prev_hash)
            start = info.height + 1 if info is not None else 0
        tip: BlockRef = node.tip
        for height in range(start, tip.height + 1):
            block_hash = node.block_hash(height)
            assert block_hash is not None
            self.block_connected(_read(node, block_hash), height)
            processed += 1
        self.resubmit(node)
        self.scan_mempool(node)
        return processed

    def resubmit(self, node: Node) -> None:
        """Unconfirmed wallet transactions: mark those in the mempool, offer the others to it
        (Core's ResubmitWalletTransactions at start-up)."""
        for wtx in sorted(self.ledger.unconfirmed(), key=lambda w: w.order):
            if wtx.txid in node.mempool.entries:
                if wtx.state is not TxState.MEMPOOL:
                    wtx.set_unconfirmed(TxState.MEMPOOL)
                    self.commit([wtx])
                continue
            try:
                node.accept_transaction(wtx.tx)
            except Exception as exc:  # not valid any more: stays inactive
                log.info("wallet %r: %s not resubmitted: %s", self.name, wtx.tx.txid_hex, exc)
                continue
            if wtx.state is not TxState.MEMPOOL:  # loading: not yet among the listeners
                wtx.set_unconfirmed(TxState.MEMPOOL)
                self.commit([wtx])
        self.sync_coins()

    # --- addresses ------------------------------------------------------------------------------

    def new_destination(self, label: str = "", *, change: bool = False,
                        confidential: bool = True, kind: AddressKind = P2TR) -> Destination:
        address: ConfidentialAddress = self.wallet.new_address(kind, change=change)
        labels = {} if change else {address.script_pubkey: label}
        self.labels.update(labels)
        self.commit(state=True, labels=labels, sync=True)
        return Destination(address.script_pubkey,
                           address.blinding_pubkey if confidential else None)

    def import_keys(self, secrets_: Sequence[int], label: str | None = None,
                    kinds: tuple[AddressKind, ...] = IMPORT_KINDS) -> list[KeyPair]:
        """Own the ``kinds`` scripts of imported private keys (``KeyChain.import_secret``);
        ``label`` names their addresses. Durable at once (a rescan cannot rebuild keys)."""
        added: list[KeyPair] = []
        for secret in secrets_:
            added += self.wallet.keys.import_secret(secret, kinds)
        labels = ({pair.script_pubkey: label for pair in added} if label is not None else {})
        self.labels.update(labels)
        self.commit(state=True, labels=labels, sync=True)
        return added

    def set_labels(self, labels: dict[bytes, str]) -> None:
        self.labels.update(labels)
        self.commit(labels=labels, sync=True)

    def import_watch_only(self, scripts: Sequence[bytes], label: str | None = None) -> None:
        """Watch scripts without their keys (importaddress, importpubkey)."""
        new = [s for s in scripts if s not in self.watch_only and not self.is_mine(s)]
        labels = {s: label for s in scripts} if label is not None else {}
        self.watch_only.update(new)
        self.labels.update(labels)
        self.db.commit(Changes(watch_only=new, labels=labels), sync=True)

    def record_descriptor(self, text: str, record: dict[str, object],
                          solving: dict[bytes, tuple[bytes | None, bytes | None]] | None = None
                          ) -> None:
        """Remember an imported descriptor (listdescriptors; ``solving``: the redeem and
        witness scripts of its P2SH / P2WSH outputs, kept in the record for the next load)."""
        record = dict(record)
        for script, (redeem, witness) in (solving or {}).items():
            self.add_solving(script, redeem, witness)
        if solving:
            record["solving"] = {script.hex(): [_hex(r), _hex(w)]
                                 for script, (r, w) in solving.items()}
        self.descriptors[text] = record
        self.db.commit(Changes(descriptors={text: record}), sync=True)

    def add_solving(self, script: bytes, redeem: bytes | None, witness: bytes | None) -> None:
        """Know a P2SH / P2WSH output's scripts (solvable); an m-of-n one whose every key the
        wallet holds becomes spendable (``KeyChain.add_multisig``)."""
        self.redeem_scripts[script] = (redeem, witness)
        multisig = witness if witness is not None else redeem
        if multisig is not None:
            self.wallet.keys.add_multisig(script, multisig, witness=witness is not None,
                                          redeem_script=redeem)

    def set_seed(self, seed: bytes) -> None:
        """sethdseed (``Wallet.set_seed``), durable at once."""
        self.wallet.set_seed(seed)
        self.commit(state=True, sync=True)

    def set_master_blinding_key(self, key: bytes) -> None:
        """importmasterblindingkey: every script's blinding key follows from the new key."""
        self.wallet.keys.set_master_blinding_key(key)
        self.commit(state=True, sync=True)

    def _master_blinding_secret(self, script: bytes) -> int:
        return slip77_blinding_secret(self.wallet.keys.master_blinding_key, script)

    def is_mine(self, script: bytes) -> bool:
        """The wallet spends ``script``: one of its keys', or ``OP_TRUE`` with
        ``anyonecanspendaremine``."""
        keys = self.wallet.keys
        return (keys.owner_of(script) is not None or keys.multisig_of(script) is not None
                or self._anyone_can_spend(script))

    def _anyone_can_spend(self, script: bytes) -> bool:
        return script == OP_TRUE and self.settings.anyonecanspendaremine

    def _op_true_blinding_secret(self) -> int:
        return slip77_blinding_secret(self.wallet.keys.master_blinding_key, OP_TRUE)

    def blinding_secret(self, script: bytes) -> int | None:
        """The blinding key the wallet uses for ``script``: imported, else its own (SLIP-77)
        for its own scripts."""
        imported = self.blinding_keys.get(script)
        if imported is not None:
            return imported
        if self._anyone_can_spend(script):
            return self._op_true_blinding_secret()
        pair = self.wallet.keys.owner_of(script)
        if pair is not None:
            return pair.blinding_secret
        if self.wallet.keys.multisig_of(script) is not None:
            return self._master_blinding_secret(script)
        return None

    def blinding_pubkey(self, script: bytes) -> bytes:
        """The blinding public key the wallet gives ``script`` in a confidential address:
        an imported key's, else the master blinding key's for that script (Elements'
        GetBlindingPubKey)."""
        secret = self.blinding_keys.get(script)
        pair = self.wallet.keys.owner_of(script)
        if secret is None and pair is not None:
            return pair.blinding_pubkey
        if secret is None:
            secret = self._master_blinding_secret(script)
        return ct.base_mul(secret).to_bytes()

    def issuance_blinding_secret(self, prevout_hash: bytes, prevout_index: int) -> int:
        """The key blinding an issuance on the input spending that prevout: one imported
        (importissuanceblindingkey), else the master blinding key's (Elements'
        GetBlindingKey of the issuance script)."""
        imported = self.blinding_keys.get(issuance_blinding_script(prevout_hash, prevout_index))
        if imported is not None:
            return imported
        return self.wallet.keys.issuance_blinding_secret(prevout_hash, prevout_index)

    def open_issuance_amount(self, txin: TxIn, *, tokens: bool = False
                             ) -> tuple[int, int] | None:
        """(amount, blind) of the blinded issuance amount on ``txin`` (``tokens``: its
        reissuance tokens) when the wallet's own or an imported issuance blinding key opens it,
        else None (also for an explicit amount or no issuance)."""
        issuance = txin.issuance
        value = None if issuance is None else issuance.inflation_keys if tokens else issuance.amount
        ids = input_issuance_ids(txin)
        if ids is None or not isinstance(value, bytes):
            return None
        proof = txin.inflation_keys_rangeproof if tokens else txin.issuance_amount_rangeproof
        return self.wallet.open_issuance(
            value, proof, ids.token if tokens else ids.asset,
            self.issuance_blinding_secret(txin.prevout_hash, txin.prevout_index))

    def import_blinding_key(self, script: bytes, secret: int) -> None:
        """importblindingkey: the key of ``script``, and the outputs to it the wallet already
        holds open with it (elementsd's MarkDirty: amounts are recomputed with the new key,
        so a watch-only auditor sees what it could not before)."""
        self.blinding_keys[script] = secret
        reopened: dict[bytes, WalletTx] = {}
        for wtx in self.ledger.txs.values():
            for n, out in enumerate(wtx.tx.outputs):
                if out.script_pubkey != script or n in wtx.mine or n in wtx.known:
                    continue
                opened = self.wallet.open_output(out, secret)
                if opened is not None:
                    wtx.known[n] = Opening(*opened)
                    reopened[wtx.txid] = wtx
        self.commit(list(reopened.values()),
                    blinding_keys={script: secret.to_bytes(32, "big")}, sync=True)



def _hex(data: bytes | None) -> str | None:
    return data.hex() if data is not None else None


def _bytes(text: str | None) -> bytes | None:
    return bytes.fromhex(text) if text is not None else None


def _read(node: Node, block_hash: bytes) -> Block:
    return parse_block(node.read_block(block_hash))

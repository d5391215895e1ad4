"""A wallet's transaction history and what follows from it: coins, balances, confirmations.

Bitcoin Core's model (``CWalletTx`` states): every transaction that pays the wallet or spends
its coins is kept with its state —

- ``CONFIRMED`` in a block of the active chain (hash, height, position, block time);
- ``MEMPOOL``: unconfirmed and in the node's mempool;
- ``INACTIVE``: unconfirmed and not in the mempool (e.g. just disconnected by a reorg);
- ``CONFLICTED``: a transaction in the active chain spends one of its inputs (the block is
  recorded, so disconnecting it makes the transaction inactive again);
- ``ABANDONED``: given up by the user (abandontransaction).

A transaction's depth is ``tip - height + 1`` when confirmed, ``-(tip - conflict height + 1)``
when conflicted, else 0. An output of ours is spent when any wallet transaction that is neither
conflicted nor abandoned spends it. Balances as Core's ``GetBalance``: *trusted* = depth ≥ 1, or
depth 0 and in the mempool with every input ours and from trusted transactions; *untrusted
pending* = other depth-0 mempool transactions; coinbase outputs before maturity are *immature*.
All amounts are per asset.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field

from ctplugin.elements import Transaction
from regtest.wallet.wallet import Opening

Outpoint = tuple[bytes, int]


class TxState(enum.Enum):
    CONFIRMED = "confirmed"
    MEMPOOL = "mempool"
    INACTIVE = "inactive"
    CONFLICTED = "conflicted"
    ABANDONED = "abandoned"


@dataclass(slots=True)
class WalletTx:
    """One transaction of the wallet (module docstring).

    ``mine``: output index → opening of the outputs that pay the wallet (spendable);
    ``known``: openings of other outputs the wallet can open (those it built for others, or
    opened with an imported blinding key), for amounts shown in the history.
    """

    tx: Transaction
    time_received: int
    state: TxState = TxState.INACTIVE
    block_hash: bytes | None = None
    height: int | None = None
    position: int | None = None
    block_time: int | None = None
    conflict_hash: bytes | None = None
    conflict_height: int | None = None
    mine: dict[int, Opening] = field(default_factory=dict)
    known: dict[int, Opening] = field(default_factory=dict)
    change: frozenset[int] = frozenset()
    comment: str = ""
    comment_to: str = ""
    coinbase_at_genesis: bool = False
    order: int = 0  # arrival order in this wallet (Core's nOrderPos)
    issuance: Opening | None = None  # the (re)issued asset, amount and amount blind, if built here

    @property
    def txid(self) -> bytes:
        return self.tx.txid

    @property
    def is_coinbase(self) -> bool:
        return self.tx.is_coinbase and not self.coinbase_at_genesis

    def opening(self, n: int) -> Opening | None:
        return self.mine.get(n) or self.known.get(n)

    def depth(self, tip_height: int) -> int:
        if self.state is TxState.CONFIRMED and self.height is not None:
            return tip_height - self.height + 1
        if self.state is TxState.CONFLICTED and self.conflict_height is not None:
            return -(tip_height - self.conflict_height + 1)
        return 0

    def set_confirmed(self, block_hash: bytes, height: int, position: int,
                      block_time: int) -> None:
        self.state = TxState.CONFIRMED
        self.block_hash, self.height, self.position = block_hash, height, position
        self.block_time = block_time
        self.conflict_hash = self.conflict_height = None

    def set_unconfirmed(self, state: TxState) -> None:
        self.state = state
        self.block_hash = self.height = self.position = self.block_time = None
        self.conflict_hash = self.conflict_height = None

    def set_conflicted(self, block_hash: bytes, height: int) -> None:
        self.set_unconfirmed(TxState.CONFLICTED)
        self.conflict_hash, self.conflict_height = block_hash, height


def watched_openings(wtx: WalletTx, watch_only: Collection[bytes]) -> dict[int, Opening]:
    """The openings of ``wtx``'s outputs to scripts the wallet watches without keys (Core's
    ISMINE_WATCH_ONLY): kept with the other ``known`` ones, told apart by their script."""
    return {n: o for n, o in wtx.known.items()
            if wtx.tx.outputs[n].script_pubkey in watch_only}


@dataclass(frozen=True, slots=True)
class Coin:
    """An unspent output of ours with the transaction it belongs to."""

    wtx: WalletTx
    n: int
    opening: Opening

    @property
    def outpoint(self) -> Outpoint:
        return (self.wtx.txid, self.n)


@dataclass(slots=True)
class Balances:
    trusted: dict[bytes, int] = field(default_factory=dict)
    untrusted_pending: dict[bytes, int] = field(default_factory=dict)
    immature: dict[bytes, int] = field(default_factory=dict)


def _add(totals: dict[bytes, int], asset: bytes, amount: int) -> None:
    totals[asset] = totals.get(asset, 0) + amount


class Ledger:
    """The wallet transactions and the spend index over them."""

    def __init__(self, coinbase_maturity: int) -> None:
        self.coinbase_maturity = coinbase_maturity
        self.txs: dict[bytes, WalletTx] = {}
        self.spenders: dict[Outpoint, set[bytes]] = {}
        self._next_order = 0

    def __contains__(self, txid: object) -> bool:
        return txid in self.txs

    def __len__(self) -> int:
        return len(self.txs)

    def get(self, txid: bytes) -> WalletTx | None:
        return self.txs.get(txid)

    def add(self, wtx: WalletTx) -> WalletTx:
        """Add (or replace the record of) a transaction and index what it spends."""
        previous = self.txs.get(wtx.txid)
        if previous is not None:
            wtx.order = previous.order
        elif not wtx.order:
            self._next_order += 1
            wtx.order = self._next_order
        else:
            self._next_order = max(self._next_order, wtx.order)
        self.txs[wtx.txid] = wtx
        if not wtx.tx.is_coinbase:
            for txin in wtx.tx.inputs:
                self.spenders.setdefault((txin.prevout_hash, txin.prevout_index),
                                         set()).add(wtx.txid)
        return wtx

    def remove(self, txid: bytes) -> None:
        wtx = self.txs.pop(txid, None)
        if wtx is None or wtx.tx.is_coinbase:
            return
        for txin in wtx.tx.inputs:
            spenders = self.spenders.get((txin.prevout_hash, txin.prevout_index))
            if spenders is not None:
                spenders.discard(txid)
                if not spenders:
                    del self.spenders[(txin.prevout_hash, txin.prevout_index)]

    # --- relations ------------------------------------------------------------------------------

    def is_spent(self, outpoint: Outpoint) -> bool:
        for txid in self.spenders.get(outpoint, ()):
            spender = self.txs[txid]
            if spender.state not in (TxState.CONFLICTED, TxState.ABANDONED):
                return True
        return False

    def is_mine(self, outpoint: Outpoint) -> bool:
        wtx = self.txs.get(outpoint[0])
        return wtx is not None and outpoint[1] in wtx.mine

    def spent_openings(self, wtx: WalletTx) -> list[Opening | None]:
        """Per input: the opening of our coin it spends, or None for a foreign input."""
        if wtx.tx.is_coinbase:
            return [None] * len(wtx.tx.inputs)
        out: list[Opening | None] = []
        for txin in wtx.tx.inputs:
            parent = self.txs.get(txin.prevout_hash)
            out.append(parent.mine.get(txin.prevout_index) if parent is not None else None)
        return out

    def debit(self, wtx: WalletTx) -> dict[bytes, int]:
        totals: dict[bytes, int] = {}
        for opening in self.spent_openings(wtx):
            if opening is not None:
                _add(totals, opening.asset, opening.value)
        return totals

    def credit(self, wtx: WalletTx) -> dict[bytes, int]:
        totals: dict[bytes, int] = {}
        for opening in wtx.mine.values():
            _add(totals, opening.asset, opening.value)
        return totals

    def is_from_me(self, wtx: WalletTx) -> bool:
        return any(o is not None for o in self.spent_openings(wtx))

    def descendants(self, txid: bytes) -> Iterator[WalletTx]:
        """Wallet transactions spending outputs of ``txid``, transitively (not itself)."""
        seen = {txid}
        pending = [txid]
        while pending:
            current = self.txs.get(pending.pop())
            if current is None:
                continue
            for n in range(len(current.tx.outputs)):
                for child in self.spenders.get((current.txid, n), ()):
                    if child not in seen:
                        seen.add(child)
                        pending.append(child)
                        if child in self.txs:
                            yield self.txs[child]

    def conflicts_of(self, tx: Transaction) -> set[bytes]:
        """Wallet transactions other than ``tx`` that spend one of its inputs."""
        if tx.is_coinbase:
            return set()
        found: set[bytes] = set()
        for txin in tx.inputs:
            found |= self.spenders.get((txin.prevout_hash, txin.prevout_index), set())
        found.discard(tx.txid)
        return found

    # --- coins and balances ---------------------------------------------------------------------

    def is_trusted(self, wtx: WalletTx, tip_height: int, _seen: set[bytes] | None = None) -> bool:
        """Core's CachedTxIsTrusted (module docstring)."""
        depth = wtx.depth(tip_height)
        if depth >= 1:
            return True
        if depth < 0 or wtx.state is not TxState.MEMPOOL:
            return False
        seen = _seen if _seen is not None else set()
        seen.add(wtx.txid)
        for txin in wtx.tx.inputs:
            parent = self.txs.get(txin.prevout_hash)
            if parent is None or txin.prevout_index not in parent.mine:
                return False
            if parent.txid not in seen and not self.is_trusted(parent, tip_height, seen):
                return False
        return True

    def is_immature(self, wtx: WalletTx, tip_height: int) -> bool:
        """A coinbase with fewer than maturity + 1 confirmations: Core's wallet
        (``GetBlocksToMaturity``) waits one block longer than consensus, so after 101 blocks
        only the first coinbase is spendable (docs/elements-regtest.md §3.1)."""
        if not wtx.is_coinbase:
            return False
        depth = wtx.depth(tip_height)
        return depth > 0 and depth <= self.coinbase_maturity

    def coins(self, tip_height: int, *, min_depth: int = 0, max_depth: int = 1 << 31,
              trusted_only: bool = False, include_immature: bool = False,
              watch_only: Collection[bytes] = frozenset()) -> list[Coin]:
        """Unspent outputs of ours (module docstring), oldest transactions first.
        ``watch_only``: scripts watched without keys; their outputs the wallet could open
        (``known``) count too (Core's listunspent lists them, not spendable)."""
        found = []
        for wtx in self.txs.values():
            openings = wtx.mine
            if watch_only:
                openings = {**watched_openings(wtx, watch_only), **wtx.mine}
            if not openings or wtx.state in (TxState.CONFLICTED, TxState.ABANDONED):
                continue
            depth = wtx.depth(tip_height)
            if not min_depth <= depth <= max_depth:
                continue
            if not include_immature and self.is_immature(wtx, tip_height):
                continue
            if depth == 0 and wtx.state is not TxState.MEMPOOL:
                continue
            if trusted_only and not self.is_trusted(wtx, tip_height):
                continue
            for n, opening in sorted(openings.items()):
                if not self.is_spent((wtx.txid, n)):
                    found.append(Coin(wtx, n, opening))
        return found

    def balances(self, tip_height: int, min_depth: int = 0) -> Balances:
        result = Balances()
        for wtx in self.txs.values():
            if not wtx.mine:
                continue
            depth = wtx.depth(tip_height)
            if depth < 0 or wtx.state is TxState.ABANDONED:
                continue
            unspent = [o for n, o in wtx.mine.items() if not self.is_spent((wtx.txid, n))]
            if not unspent:
                continue
            if self.is_immature(wtx, tip_height):
                target = result.immature
            elif self.is_trusted(wtx, tip_height) and depth >= min_depth:
                target = result.trusted
            elif depth == 0 and wtx.state is TxState.MEMPOOL:
                target = result.untrusted_pending
            else:
                continue
            for opening in unspent:
                _add(target, opening.asset, opening.value)
        return result

    def by_time(self) -> list[WalletTx]:
        """In arrival order (Core's wtxOrdered)."""
        return sorted(self.txs.values(), key=lambda w: w.order)

    def unconfirmed(self) -> Iterable[WalletTx]:
        return [w for w in self.txs.values()
                if w.state in (TxState.MEMPOOL, TxState.INACTIVE)]

"""Cheap block trees for chain-manager tests: explicit transactions spending ``OP_TRUE`` coins.

``fanout_block()`` (height 1) pays ``N_COINS`` explicit coins to bare ``OP_TRUE`` from the
genesis coins (the regtest wallet). ``TreeBuilder`` then grows any tree of blocks on it: each
block spends some coins its own branch still has ("spend"), or one its branch already spent
("invalid": connecting it fails with bad-txns-inputs-missingorspent), or nothing ("empty").
No proofs are involved, so hundreds of blocks cost milliseconds.

``TreeModel`` is the oracle: validity of every block from its ancestry, the expected best tip
(most blocks, first seen wins ties, failed and invalidated branches excluded) and the UTXO set
of a chain, computed independently of the node.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache

from ctplugin.elements import Block, Transaction, TxIn, TxOut
from ctplugin.elements.consensus import COIN
from ctplugin.elements.script import is_unspendable
from regtest.builder import make_block
from regtest.params import CTREGTEST, GENESIS_TIME, POLICY_ASSET, REGTEST_SEED, select_chain
from regtest.wallet import Payment, Wallet

OP_TRUE = b"\x51"
N_COINS = 48
COIN_VALUE = COIN
FEE = 1000


@cache
def fanout_block() -> Block:
    wallet = Wallet(REGTEST_SEED)
    wallet.scan_block(select_chain(CTREGTEST).genesis)
    tx = wallet.build_transaction([Payment(COIN_VALUE, script_pubkey=OP_TRUE)
                                   for _ in range(N_COINS)], fee=FEE, height=1,
                                  blind_change=False)
    return make_block(select_chain(CTREGTEST).genesis_hash, 1, GENESIS_TIME + 60, [tx], OP_TRUE)


def spend(coins: list[tuple[bytes, int, int]], tag: int) -> Transaction:
    """A transaction spending OP_TRUE coins (txid, index, value) into one OP_TRUE output."""
    total = sum(value for _, _, value in coins)
    return Transaction(
        version=2,
        inputs=tuple(TxIn(prevout_hash=txid, prevout_index=n, sequence=0xFFFF_FFFE - tag)
                     for txid, n, _ in coins),
        outputs=(TxOut(asset=POLICY_ASSET, value=total - FEE, script_pubkey=OP_TRUE),
                 TxOut(asset=POLICY_ASSET, value=FEE, script_pubkey=b"")))


@dataclass
class TreeBlock:
    block: Block
    parent: int | None  # index in TreeBuilder.blocks; None: the fan-out block's parent
    kind: str
    valid: bool

    @property
    def hash(self) -> bytes:
        return self.block.hash

    @property
    def height(self) -> int:
        return self.block.header.height


@dataclass
class TreeBuilder:
    """Blocks on the fan-out block; ``blocks[0]`` is the fan-out block itself."""

    blocks: list[TreeBlock] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.blocks:
            self.blocks.append(TreeBlock(fanout_block(), None, "fanout", True))

    def branch(self, index: int) -> list[TreeBlock]:
        chain = []
        at: int | None = index
        while at is not None:
            chain.append(self.blocks[at])
            at = self.blocks[at].parent
        chain.reverse()
        return chain

    def coins(self, index: int) -> tuple[list[tuple[bytes, int, int]], set[tuple[bytes, int]]]:
        """(OP_TRUE coins unspent at the tip of ``index``'s branch, coins it spent)."""
        live: dict[tuple[bytes, int], int] = {}
        spent: set[tuple[bytes, int]] = set()
        for tb in self.branch(index):
            for tx in tb.block.transactions[1:]:
                for txin in tx.inputs:
                    live.pop(txin.prevout, None)
                    spent.add(txin.prevout)
                for n, out in enumerate(tx.outputs):
                    if out.script_pubkey == OP_TRUE:
                        live[(tx.txid, n)] = out.value  # type: ignore[assignment]
        return [(t, n, v) for (t, n), v in live.items()], spent

    def add(self, parent: int, kind: str, rng: random.Random) -> int:
        parent_block = self.blocks[parent].block
        height = parent_block.header.height + 1
        txs: list[Transaction] = []
        live, spent = self.coins(parent)
        tag = len(self.blocks)
        if kind == "spend" and live:
            picked = rng.sample(live, min(len(live), rng.randint(1, 3)))
            txs = [spend([coin], tag + i) for i, coin in enumerate(picked)]
        elif kind == "invalid":
            gone = sorted(spent)
            if gone:
                txid, n = rng.choice(gone)
                txs = [spend([(txid, n, COIN_VALUE)], tag)]
            else:
                txs = [spend([(bytes([tag % 256]) * 32, 7, COIN_VALUE)], tag)]
        else:
            kind = "empty"
        block = make_block(parent_block.hash, height, GENESIS_TIME + 60 * height + tag, txs,
                           OP_TRUE)
        valid = self.blocks[parent].valid and kind != "invalid"
        self.blocks.append(TreeBlock(block, parent, kind, valid))
        return len(self.blocks) - 1

    @classmethod
    def random(cls, n: int, seed: int, p_invalid: float = 0.15) -> TreeBuilder:
        rng = random.Random(seed)
        tree = cls()
        for _ in range(n):
            # prefer recent blocks so branches grow long, but fork often; invalid branches
            # mostly die out (a few children show that descendants of a failure fail too)
            parent = max(0, len(tree.blocks) - 1 - int(rng.expovariate(0.5)))
            while not tree.blocks[parent].valid and rng.random() < 0.8:
                parent = tree.blocks[parent].parent or 0
            r = rng.random()
            kind = "invalid" if r < p_invalid else ("spend" if r < 0.75 else "empty")
            tree.add(parent, kind, rng)
        return tree


def expected_tip(tree: TreeBuilder, seen: list[int], invalidated: set[int]) -> int | None:
    """The index of the best block among the ``seen`` ones (indexes in submission order):
    valid, every ancestor seen, no ancestor-or-self invalidated by the caller; most blocks,
    first seen wins ties. None: only genesis qualifies."""
    order = {index: i for i, index in enumerate(seen)}
    best: tuple[tuple[int, int], int] | None = None
    for index in seen:
        tb = tree.blocks[index]
        path = []
        at: int | None = index
        while at is not None:
            path.append(at)
            at = tree.blocks[at].parent
        if not tb.valid or any(p not in order or p in invalidated for p in path):
            continue
        key = (tb.height, -order[index])
        if best is None or key > best[0]:
            best = (key, index)
    return None if best is None else best[1]


def utxo_model(blocks: list[Block]) -> dict[tuple[bytes, int], tuple[int, bool, bytes]]:
    """(txid, n) → (height, coinbase, serialized txout) after genesis + ``blocks``."""
    utxos: dict[tuple[bytes, int], tuple[int, bool, bytes]] = {}
    for tx in select_chain(CTREGTEST).genesis.transactions:
        for n, out in enumerate(tx.outputs):
            if not is_unspendable(out.script_pubkey):
                utxos[(tx.txid, n)] = (0, False, out.serialize())
    for block in blocks:
        height = block.header.height
        for i, tx in enumerate(block.transactions):
            if i:
                for txin in tx.inputs:
                    del utxos[txin.prevout]
            for n, out in enumerate(tx.outputs):
                if not is_unspendable(out.script_pubkey):
                    utxos[(tx.txid, n)] = (height, i == 0, out.serialize())
    return utxos

"""Block assembly for the node's miner (generatetoaddress, generateblock, getnewblockhex).

``select_transactions`` is Core's ancestor-feerate selection (``BlockAssembler``): each mempool
transaction is scored by the fee rate of its *package* (itself plus its not yet selected in-pool
ancestors, fee in the policy asset over virtual size); the best package goes in whole, parents
first, while it fits under the weight limit minus the coinbase reserve; scores of packages that
lost ancestors to earlier picks are recomputed lazily when they come up. Transactions in
acceptance order are topologically sorted, so a package is emitted in that order.

``assemble_block`` builds the block on the tip with ``regtest.chain``'s block maker: coinbase
with the BIP34 height, the block's fees per asset paid to the miner's script, and the witness
commitment; header time now, but after the tip's median time past.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ctplugin.elements import Block, Transaction, TxOut
from ctplugin.elements.consensus import MAX_BLOCK_WEIGHT
from regtest.chain import make_block
from validator import MempoolEntry, Node

COINBASE_RESERVED_WEIGHT = 4000  # Core's DEFAULT_BLOCK_RESERVED_WEIGHT
MAX_TEMPLATE_WEIGHT = MAX_BLOCK_WEIGHT - COINBASE_RESERVED_WEIGHT


@dataclass(slots=True)
class _Node:
    index: int
    tx: Transaction
    fee: int
    vsize: int
    weight: int
    parents: list[int]


def select_transactions(entries: Sequence[MempoolEntry], policy_asset: bytes,
                        max_weight: int = MAX_TEMPLATE_WEIGHT) -> list[Transaction]:
    """Mempool transactions for the next block (module docstring), in a valid order."""
    by_txid: dict[bytes, int] = {}
    nodes: list[_Node] = []
    for i, entry in enumerate(entries):
        tx = entry.tx
        parents = sorted({by_txid[t.prevout_hash] for t in tx.inputs
                          if t.prevout_hash in by_txid})
        nodes.append(_Node(i, tx, entry.fees.get(policy_asset, 0), tx.vsize, tx.weight,
                           parents))
        by_txid[tx.txid] = i
    selected = [False] * len(nodes)
    failed = [False] * len(nodes)

    def package(i: int) -> list[int]:
        """i and its unselected ancestors, in acceptance (topological) order."""
        seen = {i}
        pending = [i]
        while pending:
            for p in nodes[pending.pop()].parents:
                if not selected[p] and p not in seen:
                    seen.add(p)
                    pending.append(p)
        return sorted(seen)

    def score(members: list[int]) -> tuple[int, int]:
        return sum(nodes[m].fee for m in members), sum(nodes[m].vsize for m in members)

    heap: list[tuple[float, int, int]] = []
    for node in nodes:
        fee, vsize = score(package(node.index))
        heapq.heappush(heap, (-fee / vsize, node.index, vsize))
    weight = 0
    order: list[int] = []
    while heap:
        _, i, vsize = heapq.heappop(heap)
        if selected[i] or failed[i]:
            continue
        members = package(i)
        fee, new_vsize = score(members)
        if new_vsize != vsize:  # some ancestors went in since it was scored: rescore
            heapq.heappush(heap, (-fee / new_vsize, i, new_vsize))
            continue
        package_weight = sum(nodes[m].weight for m in members)
        if weight + package_weight > max_weight:
            failed[i] = True
            continue
        weight += package_weight
        for m in members:
            selected[m] = True
        order.extend(members)
    return [nodes[i].tx for i in order]


def block_time(node: Node) -> int:
    """Now, but strictly after the tip's median time past (Core's rule for a new block)."""
    return max(int(time.time()), node.median_time_past() + 1)


def assemble_block(node: Node, txs: Sequence[Transaction], miner_script: bytes,
                   extra_outputs: Sequence[TxOut] = ()) -> Block:
    """A block on the tip holding ``txs`` and paying their fees to ``miner_script``."""
    tip = node.tip
    return make_block(tip.hash, tip.height + 1, block_time(node), txs, miner_script,
                      extra_outputs)

"""Block assembly for the node's miner (generatetoaddress, generateblock, getnewblockhex).

``select_transactions`` is Core's ancestor-feerate selection (``BlockAssembler``): each mempool
transaction is scored by the fee rate of its *package* (itself plus its not yet selected in-pool
ancestors, fee in the policy asset over virtual size); the best package goes in whole, parents
first, while it fits under the weight limit minus the coinbase reserve; scores of packages that
lost ancestors to earlier picks are recomputed lazily when they come up. Transactions in
acceptance order are topologically sorted, so a package is emitted in that order.

``assemble_block`` builds the block on the tip of the node's chain (``ChainParams``: challenge,
subsidy, policy asset) with ``regtest.builder``'s block maker — Elements' coinbase: the BIP34
height, data commitments, the policy-asset fees plus the subsidy paid to the miner's script, the
witness commitment (docs/elements-regtest.md §3.1); header time now, but after the tip's median
time past.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence

from ctplugin.elements import Block, Transaction, TxOut
from ctplugin.elements.consensus import MAX_BLOCK_WEIGHT
from regtest.builder import make_block
from validator import MempoolEntry, Node

COINBASE_RESERVED_WEIGHT = 4000  # Core's DEFAULT_BLOCK_RESERVED_WEIGHT
MAX_TEMPLATE_WEIGHT = MAX_BLOCK_WEIGHT - COINBASE_RESERVED_WEIGHT


def select_transactions(entries: Sequence[MempoolEntry], policy_asset: bytes,
                        max_weight: int = MAX_TEMPLATE_WEIGHT) -> tuple[list[Transaction],
                                                                         dict[bytes, int]]:
    """Mempool transactions for the next block (module docstring), in a valid order, and the
    fees they pay per asset. When the whole mempool fits, it is the block, in acceptance order
    (the same set the selection would pick, parents before children)."""
    if sum(entry.weight for entry in entries) <= max_weight:
        fees: dict[bytes, int] = {}
        for entry in entries:
            for asset, amount in entry.fees.items():
                fees[asset] = fees.get(asset, 0) + amount
        return [entry.tx for entry in entries], fees
    index: dict[bytes, int] = {}
    parents: list[tuple[int, ...]] = []
    fee: list[int] = []
    weight: list[int] = []
    for i, entry in enumerate(entries):
        tx = entry.tx
        index[tx.txid] = i
        parents.append(tuple({index[t.prevout_hash] for t in tx.inputs
                              if t.prevout_hash in index and index[t.prevout_hash] != i}))
        fee.append(entry.fees.get(policy_asset, 0))
        weight.append(entry.weight)
    vsize = [(w + 3) // 4 for w in weight]
    selected = [False] * len(entries)
    failed = [False] * len(entries)

    def package(i: int) -> list[int]:
        """i and its unselected ancestors, in acceptance (topological) order."""
        if not parents[i]:
            return [i]
        seen = {i}
        pending = [i]
        while pending:
            for p in parents[pending.pop()]:
                if not selected[p] and p not in seen:
                    seen.add(p)
                    pending.append(p)
        return sorted(seen)

    heap: list[tuple[float, int, int]] = []
    for i in range(len(entries)):
        members = package(i)
        size = sum(vsize[m] for m in members)
        heap.append((-sum(fee[m] for m in members) / size, i, size))
    heapq.heapify(heap)
    total = 0
    order: list[int] = []
    while heap:
        _, i, size = heapq.heappop(heap)
        if selected[i] or failed[i]:
            continue
        members = package(i)
        new_size = sum(vsize[m] for m in members)
        if new_size != size:  # some ancestors went in since it was scored: rescore
            heapq.heappush(heap, (-sum(fee[m] for m in members) / new_size, i, new_size))
            continue
        package_weight = sum(weight[m] for m in members)
        if total + package_weight > max_weight:
            failed[i] = True
            continue
        total += package_weight
        for m in members:
            selected[m] = True
        order.extend(members)
    fees = {}
    for i in order:
        for asset, amount in entries[i].fees.items():
            fees[asset] = fees.get(asset, 0) + amount
    return [entries[i].tx for i in order], fees


def block_time(node: Node, now: int | None = None) -> int:
    """Now (``now``: the node's clock, setmocktime's), but strictly after the tip's median time
    past (Core's rule for a new block)."""
    return max(int(time.time()) if now is None else now, node.median_time_past() + 1)


def assemble_block(node: Node, txs: Sequence[Transaction], miner_script: bytes,
                   commitments: Sequence[TxOut] = (),
                   fees: dict[bytes, int] | None = None, now: int | None = None) -> Block:
    """A block on the tip holding ``txs`` and paying their fees (``fees`` when the caller knows
    them) and the subsidy to ``miner_script``, after the ``commitments`` outputs, timed ``now``
    (default: the wall clock)."""
    tip = node.tip
    return make_block(tip.hash, tip.height + 1, block_time(node, now), txs, miner_script,
                      commitments, fees, params=node.params)

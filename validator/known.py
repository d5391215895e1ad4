"""What mempool acceptance computed for a transaction, kept for the block that confirms it
(``KnownTransaction``), and the UTXO entries a transaction creates (``created_entries``).

Its own room because two floors share it: the mempool (``validator.mempool``) writes it, block
connection (``validator.block``) reads it, and neither should import the other for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ctplugin.elements import Transaction
from ctplugin.elements.script import is_unspendable
from validator.cachekeys import CacheKeys
from validator.coins import encode_txout
from validator.rules import AmountPlan
from validator.store import Outpoint, UtxoEntry
from validator.timelocks import is_timeless


def created_entries(tx: Transaction, height: int, coinbase: bool
                    ) -> list[tuple[Outpoint, UtxoEntry]]:
    """The UTXO entries ``tx`` creates in a block at ``height``: its spendable outputs (an
    unspendable one never enters the UTXO set), as the chainstate stores them."""
    txid = tx.txid
    trusted = Outpoint.trusted
    return [(trusted(txid, n), UtxoEntry.trusted(height, coinbase, encode_txout(out)))
            for n, out in enumerate(tx.outputs) if not is_unspendable(out.script_pubkey)]


PlanCounts = tuple[int, int, int]
"""An amount plan's numbers of range, surjection and Borromean items."""


def plan_counts(plan: AmountPlan) -> PlanCounts:
    return len(plan.ranges), len(plan.surjections), len(plan.borromeans)


@dataclass(frozen=True, slots=True)
class KnownTransaction:
    """What mempool acceptance computed for a transaction, for a block that confirms the very
    same bytes (same wtxid) to reuse. Every field but ``created`` is a pure function of the
    transaction's bytes and of the outputs it spends, which its prevouts fix (an outpoint's
    content never changes): the block would compute the same values again. What depends on
    the block — its height and time, the other transactions, the UTXO set — is evaluated for
    the block as for any transaction (``BlockValidator``).

    - ``tx``: the pool's transaction object (txid, wtxid and withash computed);
    - ``fees``: its fees per asset; ``counts``: how many range, surjection and Borromean items
      its amount plan has (the plan itself is not kept: a block whose cache vouches for all of
      it never needs it, and one that must verify something of it plans the transaction
      again — keeping thousands of decoded plans alive only to free them when the block
      confirms them cost more than the plan stage of a warm block);
      ``keys``: the cache keys of its proofs;
      ``script_key`` / ``balance_key``: of its script execution under the block flags and of
      its balance equation (None without a cache);
    - ``spent_points``: the outpoints its inputs spend, in input order;
    - ``sigops``: its signature-operation cost (``transaction_sigop_cost``);
    - ``withash``: its witness hash;
    - ``timeless``: ``validator.timelocks.is_timeless`` — final at every height and time and
      no BIP68 lock, so a block has no timelock of it to evaluate;
    - ``created``: ``created_entries`` for a block at ``height`` (the height acceptance
      expected); a block at another height makes its own.
    """

    tx: Transaction
    fees: dict[bytes, int]
    counts: PlanCounts
    keys: CacheKeys | None
    script_key: bytes | None
    balance_key: bytes | None
    spent_points: tuple[Outpoint, ...]
    sigops: int
    withash: bytes
    timeless: bool
    height: int
    created: tuple[tuple[Outpoint, UtxoEntry], ...]

    @classmethod
    def of(cls, tx: Transaction, plan: AmountPlan, spent_points: Sequence[Outpoint],
           sigops: int, height: int, keys: CacheKeys | None = None,
           script_key: bytes | None = None,
           balance_key: bytes | None = None) -> KnownTransaction:
        """The record of a transaction that passed every check of a block at ``height`` with
        the outputs at ``spent_points`` (its amount plan ``plan``, its sigop cost ``sigops``)."""
        return cls(tx, plan.fees, plan_counts(plan), keys, script_key, balance_key,
                   tuple(spent_points), sigops,
                   tx.withash, is_timeless(tx), height,
                   tuple(created_entries(tx, height, False)))

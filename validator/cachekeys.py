"""Proof-cache key composition: which salted key vouches for which piece of work
(docs/design.md "Proof caches"; Elements' CuckooCache entries of ``validation.cpp``).

One room for it because two floors compute the same keys and must agree byte for byte:
mempool acceptance inserts them, block connection (``validator.block``'s cache and scripts
stages) looks them up — a block confirming a pool transaction reuses the pool's keys
(``validator.known.KnownTransaction``). The salted hashing itself is ``ProofCache``'s
(``balance_key``, ``script_key``, each item's ``cache_key``); this module says what goes in.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctplugin.elements import Transaction, TxOut
from validator.coins import encode_txout
from validator.items import BorromeanItem, SurjectionItem
from validator.rules import AmountPlan, SpentOutput
from validator.store import ProofCache

CacheKeys = tuple[list[bytes], list[bytes]]
"""(batch-item keys, check-item keys) of one transaction, in plan order: the Bulletproofs',
then the surjection proofs' followed by the Borromean proofs'."""


def check_items(plan: AmountPlan) -> list[SurjectionItem | BorromeanItem]:
    """A plan's check items in cache-key order: surjection proofs, then Borromean proofs."""
    return [*plan.surjections, *plan.borromeans]


def cache_keys(cache: ProofCache, plan: AmountPlan) -> CacheKeys:
    """The keys of a plan's range and check items (``CacheKeys``)."""
    return ([r.cache_key(cache) for r in plan.ranges],
            [c.cache_key(cache) for c in check_items(plan)])


def balance_cache_key(cache: ProofCache, tx: Transaction,
                      spent: Sequence[SpentOutput | bytes]) -> bytes:
    """The balance-equation entry of ``tx`` spending ``spent`` (stored bytes or outputs, in
    input order): ``ProofCache.balance_key`` over its wtxid and the spent outputs' bytes."""
    stored = []
    for out in spent:
        if isinstance(out, TxOut):  # created earlier in the same block
            stored.append(encode_txout(out))
        elif isinstance(out, bytes):
            stored.append(out)
        else:
            raise TypeError("a spent output is stored bytes or a TxOut")
    return cache.balance_key(tx.wtxid, stored)


def script_cache_key(cache: ProofCache, tx: Transaction, flags: int) -> bytes:
    """The script-execution cache entry of ``tx`` under ``flags`` (a transaction valid under
    the mempool's stricter flags is valid under the block's, so the pool inserts the
    block-flags key and the block finds it)."""
    return cache.script_key(tx.wtxid, flags)

"""Validation of our Elements-style chain: rules, block connect/disconnect, mempool, node core.

This module is the validator's public surface: layers above it (``regtest``, ``rpc``,
``replay``, ``apps``, ``bench``) import only the names in ``__all__`` (``lint-imports`` checks it).

Modules (data flow of ``../shared/notes/design.md``):

- ``reasons``: every reject reason as a named constant (``reasons.BAD_TXNS_IN_NE_OUT``).
- ``rules``: consensus rules; ``check_transaction`` (context-free) and
  ``plan_amounts`` (contextual: fees, encodings, issuance; the balance claim and the range /
  surjection items to verify).
- ``balance``: a transaction's Pedersen balance as a batch claim.
- ``block``: ``BlockValidator.connect`` in six stages, one method each, timed by one
  ``StageTimer`` (``timing``): ``check_block``, ``resolve_inputs`` (one snapshot read),
  ``plan`` (items, nothing verified), ``cache_pass`` (proof cache) → ``ProofWork``,
  ``verify`` (stage 5), ``commit`` (one atomic chainstate write); ``disconnect_tip``.
- ``items``: the items of stage 5 — ``ItemLabel`` (what a culprit is named by), batch items
  (``RangeItem``: a Bulletproof) and check items (``SurjectionItem``), immutable and picklable.
- ``verify``: stage 5, stateless: ``verify(work)`` — ONE batch (one MSM) for every balance and
  batch item with the first failing item named, then the check items; ``verify_blocks(works)``
  does several blocks in one batch and names the first failing block.
- ``mempool``: acceptance against chainstate + unconfirmed parents; writes the proof cache.
- ``node``: ``Node.open(path, genesis, params)`` ties the data directory (``validator.store``),
  the block validator and the mempool: ``submit_block(raw)``, ``accept_transaction(raw)``,
  ``disconnect_tip()``, ``stats()``.
- ``coins``: UTXO records.
- ``audit``: ``audit_transactions(txs, prevouts, policy_asset)`` re-validates real Elements /
  Liquid transactions (every range proof; surjection proofs and balances where the spent
  outputs are known), trusting no cache (``ctplugin audit``).

Errors: ``ctplugin.errors.ParseError`` for undecodable bytes, ``ctplugin.errors.ValidationError``
(``reason`` — one of ``reasons`` —, ``tx_index``, ``input_index``, ``output_index``) for rule
violations, only from the validator; ``StoreError`` and its subclasses for data-directory
problems (the store never gives a consensus verdict).
"""

from ctplugin.elements.chainparams import ChainParams
from validator import reasons
from validator.audit import TransactionAudit, audit_transactions
from validator.block import ConnectReport
from validator.mempool import MempoolEntry
from validator.node import Node, NodeStats
from validator.store import (
    BlockRef,
    CacheStats,
    ChainstateCorruptError,
    DataDirLockedError,
    StoreError,
)
from validator.timing import StageTimer
from validator.verify import ProofWork, verify, verify_blocks

__all__ = [
    "BlockRef",
    "CacheStats",
    "ChainParams",
    "ChainstateCorruptError",
    "ConnectReport",
    "DataDirLockedError",
    "MempoolEntry",
    "Node",
    "NodeStats",
    "ProofWork",
    "StageTimer",
    "StoreError",
    "TransactionAudit",
    "audit_transactions",
    "reasons",
    "verify",
    "verify_blocks",
]

"""Validation of our Elements-style chain: rules, block connect/disconnect, mempool, node core.

This module is the validator's public surface: layers above it (``regtest``, ``rpc``,
``replay``, ``apps``, ``bench``) import only the names in ``__all__`` (``lint-imports`` checks it).

Modules (data flow of ``docs/design.md`` §1):

- ``reasons``: every reject reason as a named constant (``reasons.BAD_TXNS_IN_NE_OUT``).
- ``rules``: consensus rules; ``check_transaction`` (context-free) and
  ``plan_amounts`` (contextual: fees, encodings, issuance; the balance claim and the range /
  surjection items to verify).
- ``balance``: a transaction's Pedersen balance as a batch claim.
- ``block``: ``BlockValidator.connect`` in stages, one method each, timed by one
  ``StageTimer`` (``timing``, stage names ``Stage``): ``check_block``, ``resolve_inputs`` (one
  snapshot read), ``plan`` (items, nothing verified), ``cache_pass`` (proof cache),
  ``script_pass`` (scripts, below) → ``PreparedBlock``, ``verify`` (stage 5), ``commit`` (the
  chainstate's coins cache); ``disconnect``.
- ``prepared``: the values handed between stages: ``ResolvedInputs``, the ONE
  ``PreparedBlock`` from ``BlockValidator.prepare`` to commit (the node's stage API and every
  replay mode hold it), ``ConnectReport``.
- ``cachekeys``: what each proof-cache key covers (mempool and block connection share it);
  ``known``: the mempool's record of a transaction for the block that confirms it.
- ``scripts``: scripts and signatures: every input script (any Elements script) run
  with its BIP340 signatures and taproot tweaks deferred to the block's batch (one
  ``SchnorrClaims`` group) and its ECDSA signatures to check items (verified over threads),
  Elements' ``mandatory-`` / ``non-mandatory-script-verify-flag`` reasons, the
  script-execution cache; ``timelocks``: nLockTime finality and BIP68 relative locks.
- ``items``: the items of stage 5 — ``ItemLabel`` (what a culprit is named by), batch items
  (``RangeItem``: a Bulletproof; the script stage's Schnorr and tweak items) and check items
  (``SurjectionItem``, ``BorromeanItem``, ECDSA), immutable and picklable; ``Family`` names
  each kind of work in reports.
- ``verify``: stage 5, stateless: ``verify(work)`` — ONE batch (one MSM) for every balance and
  batch item with the first failing item named, then the check items; ``verify_blocks(works)``
  does several blocks in one batch and names the first failing block.
- ``mempool``: acceptance against chainstate + unconfirmed parents; writes the proof cache.
- ``policy``: Elements' mempool policy (standardness, dust, CT policy rules, relay fee) with
  its settings as one value, ``PolicySettings`` (``Node.open(..., relay=settings)``);
  ``POLICY_REASONS`` tells a policy refusal from a consensus verdict.
- ``chain``: the chain manager: block index with side branches, best chain (most blocks,
  first seen wins ties), reorganisations, invalid-branch fallback, flush policy, crash recovery.
- ``node``: ``Node.open(path, params, *, sync, dbcache, flush_interval,
  max_unflushed_blocks, reindex, reindex_chainstate, check_blocks, check_level)`` ties the data
  directory (``validator.store``), the chain manager, the block validator and the mempool
  (start-up verification, ``-reindex`` and the stop after a failed write: docs/durability.md):

  - ``submit_block(raw, block=None) -> SubmitResult`` (``status``, ``error``, ``report``,
    ``bip22``, ``accepted``, ``new_tip``; ``block``: ``raw`` already parsed);
  - stage by stage: ``prepare_block(raw, block=None) -> PreparedBlock`` (stages 1–4,
    ``.work`` for stage 5 anywhere), ``commit_block(prepared, verified=True)`` (stage 6;
    ``verified=False`` keeps the block pending — in memory, not indexed, no flush — until
    ``mark_verified(hash)``; ``reject_block(hash)`` / ``abort_pending()`` take pending
    blocks back out);
  - ``accept_transaction(raw)``, ``test_accept_transaction(raw) -> MempoolEntry``,
    ``remove_transactions(txids)``, ``mempool.entries`` (fees, weight, vsize, time);
  - ``invalidate_block(hash)``, ``reconsider_block(hash)`` (disconnected transactions return
    to the mempool when still valid);
  - ``tip``, ``block_hash(height)``, ``block_info(hash) -> BlockInfo``, ``read_block(hash)``,
    ``block_undo(hash) -> BlockUndo``, ``block_spent_outputs(hash)`` (per tx, per input),
    ``chain_tips() -> [ChainTip]``,
    ``median_time_past(hash)``, ``utxo((txid, n)) -> UtxoEntry``, ``utxo_stats() -> UtxoStats``
    (``utxo_set_hash``);
  - ``subscribe(ChainListener)``: block_connected / block_disconnected / transaction_added /
    transaction_removed, in order, once durable;
  - ``wallet_path(name)``: where a wallet keeps its database under the data directory;
  - ``flush()``, ``stats() -> NodeStats``, ``close()`` (a context manager).
- ``store.blockio``: block I/O, the one room for the ``magic ‖ LE32 length ‖ payload`` record
  framing of blk files: ``RecordReader`` (streaming, strict or lax as ``-reindex``: junk
  skipped, cut records reported as ``BadFrame`` values), ``RecordFile`` (positional reads),
  ``write_record``, ``xor.dat`` (``read_xor_key`` / ``write_xor_key``, ``xor_obfuscate``),
  chain files (``write_chain`` / ``read_chain``); errors are ``RecordError`` (a
  ``BlockFileError`` and a ``ParseError``, naming file and offset).
- ``coins``: UTXO records (``decode_txout`` reads a stored output back).
- ``collector``: the garbage collector's thresholds for a validating process
  (``tune_collector``: the node's, a replay's and its workers').
- ``audit``: ``audit_transactions(txs, prevouts, policy_asset)`` re-validates real Elements /
  Liquid transactions (every range proof; surjection proofs and balances where the spent
  outputs are known), trusting no cache (``ctplugin audit``).

Errors: ``ctplugin.errors.ParseError`` for undecodable bytes, ``ctplugin.errors.ValidationError``
(``reason`` — one of ``reasons`` —, ``tx_index``, ``input_index``, ``output_index``) for rule
violations, only from the validator; ``StoreError`` and its subclasses for data-directory
problems (the store never gives a consensus verdict); ``StoreFatalError`` when the node must stop
— ``CorruptDatabaseError`` (Core's "Corrupted block database detected", naming the store and the
recovery command) or ``DiskWriteError`` (a failed durable write: "Disk space is too low!") —
and ``WriteGuard``, the data directory's record of it (docs/durability.md).
"""

from ctplugin.elements.chainparams import ChainParams
from validator import reasons
from validator.audit import TransactionAudit, UtxoAudit, audit_transactions, audit_utxo_set
from validator.chain import DEFAULT_CHECKBLOCKS, DEFAULT_CHECKLEVEL
from validator.coins import decode_txout
from validator.collector import VALIDATING_THRESHOLDS, tune_collector
from validator.mempool import (
    REMOVED_BLOCK,
    REMOVED_BY_CALLER,
    REMOVED_CONFLICT,
    REMOVED_REORG,
    MempoolEntry,
)
from validator.node import (
    DEFAULT_DBCACHE_MIB,
    BlockInfo,
    ChainListener,
    ChainTip,
    Node,
    NodeStats,
    SubmitResult,
    UtxoStats,
)
from validator.policy import POLICY_REASONS, PolicySettings
from validator.prepared import ConnectReport, PreparedBlock
from validator.store import (
    BlockFileError,
    BlockIndexCorruptError,
    BlockRef,
    BlockUndo,
    CacheStats,
    ChainstateConflictError,
    ChainstateCorruptError,
    CorruptDatabaseError,
    DataDirLockedError,
    DiskWriteError,
    Outpoint,
    StoreError,
    StoreFatalError,
    StoreValueError,
    UnknownBlockError,
    UtxoEntry,
    WriteGuard,
)
from validator.store.blockio import (
    BLOCK_FILE_CHUNK_SIZE,
    MAX_BLOCK_FILE_SIZE,
    MAX_BLOCK_SERIALIZED_SIZE,
    NO_XOR_KEY,
    RECORD_HEADER_SIZE,
    XOR_FILE,
    XOR_KEY_SIZE,
    BadFrame,
    Record,
    RecordError,
    RecordFile,
    RecordReader,
    block_file_name,
    block_files,
    read_chain,
    read_xor_key,
    unwritable,
    write_chain,
    write_record,
    write_xor_key,
    xor_obfuscate,
)
from validator.timing import Stage, StageTimer
from validator.verify import ProofWork, verify, verify_blocks

__all__ = [
    "BLOCK_FILE_CHUNK_SIZE",
    "DEFAULT_CHECKBLOCKS",
    "DEFAULT_CHECKLEVEL",
    "DEFAULT_DBCACHE_MIB",
    "MAX_BLOCK_FILE_SIZE",
    "MAX_BLOCK_SERIALIZED_SIZE",
    "NO_XOR_KEY",
    "POLICY_REASONS",
    "RECORD_HEADER_SIZE",
    "REMOVED_BLOCK",
    "REMOVED_BY_CALLER",
    "REMOVED_CONFLICT",
    "REMOVED_REORG",
    "VALIDATING_THRESHOLDS",
    "XOR_FILE",
    "XOR_KEY_SIZE",
    "BadFrame",
    "BlockFileError",
    "BlockIndexCorruptError",
    "BlockInfo",
    "BlockRef",
    "BlockUndo",
    "CacheStats",
    "ChainListener",
    "ChainParams",
    "ChainTip",
    "ChainstateConflictError",
    "ChainstateCorruptError",
    "ConnectReport",
    "CorruptDatabaseError",
    "DataDirLockedError",
    "DiskWriteError",
    "MempoolEntry",
    "Node",
    "NodeStats",
    "Outpoint",
    "PolicySettings",
    "PreparedBlock",
    "ProofWork",
    "Record",
    "RecordError",
    "RecordFile",
    "RecordReader",
    "Stage",
    "StageTimer",
    "StoreError",
    "StoreFatalError",
    "StoreValueError",
    "SubmitResult",
    "TransactionAudit",
    "UnknownBlockError",
    "UtxoAudit",
    "UtxoEntry",
    "UtxoStats",
    "WriteGuard",
    "audit_transactions",
    "audit_utxo_set",
    "block_file_name",
    "block_files",
    "decode_txout",
    "read_chain",
    "read_xor_key",
    "reasons",
    "tune_collector",
    "unwritable",
    "verify",
    "verify_blocks",
    "write_chain",
    "write_record",
    "write_xor_key",
    "xor_obfuscate",
]

"""Transaction timelocks: nLockTime finality (IsFinalTx) and BIP68 relative locks
(SequenceLocks) — the consensus half of CHECKLOCKTIMEVERIFY / CHECKSEQUENCEVERIFY, which only
compare a script's operand with the transaction's own fields.

- ``check_final``: a transaction is final when its nLockTime is 0, below the block height
  (height locks, < 500,000,000) or below the lock-time cutoff (time locks), or when every input
  has nSequence 0xffffffff. The cutoff for time locks is the block's own time, not the
  parent's median time past (BIP113): the median time past lives in the chain manager's block
  index (``validator.chain``, which judges header times with it), which block connection does
  not see.
- ``check_sequence_locks``: for version ≥ 2, an input whose nSequence has the disable bit (1<<31)
  clear must wait ``nSequence & 0xffff`` blocks after its coin's block. Time-based relative locks
  (bit 22) need the median time past of the coin's block, which our chain does not keep: they
  are refused as unsupported (stricter than Elements, never looser).

Reasons (Elements'): ``bad-txns-nonfinal`` in blocks; in the mempool ``non-final`` and
``non-BIP68-final``; ``bad-txns-script-unsupported`` (ours) for a time-based relative lock.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctplugin.elements import Transaction
from ctplugin.errors import ValidationError
from ctplugin.script.checker import (
    LOCKTIME_THRESHOLD,
    SEQUENCE_FINAL,
    SEQUENCE_LOCKTIME_DISABLE_FLAG,
    SEQUENCE_LOCKTIME_MASK,
    SEQUENCE_LOCKTIME_TYPE_FLAG,
)
from validator import reasons


def is_final(tx: Transaction, height: int, lock_time_cutoff: int) -> bool:
    """IsFinalTx for a transaction in a block at ``height``."""
    if tx.locktime == 0:
        return True
    limit = height if tx.locktime < LOCKTIME_THRESHOLD else lock_time_cutoff
    if tx.locktime < limit:
        return True
    return all(txin.sequence == SEQUENCE_FINAL for txin in tx.inputs)


def is_timeless(tx: Transaction) -> bool:
    """No height or time makes ``tx`` non-final and no BIP68 lock applies to it: nLockTime 0
    or every nSequence final, and (version < 2 or every input's relative lock disabled) — so
    ``check_final`` and ``check_sequence_locks`` pass in every block, whatever its height, time
    and the spent coins' heights (a pure function of the transaction's bytes)."""
    inputs = tx.inputs
    if tx.locktime != 0 and any(txin.sequence != SEQUENCE_FINAL for txin in inputs):
        return False
    return (tx.version < 2 or tx.is_coinbase
            or all(txin.sequence & SEQUENCE_LOCKTIME_DISABLE_FLAG for txin in inputs))


def check_final(tx: Transaction, tx_index: int | None, height: int, lock_time_cutoff: int,
                reason: str = reasons.BAD_TXNS_NONFINAL) -> None:
    if not is_final(tx, height, lock_time_cutoff):
        raise ValidationError(reason, tx_index=tx_index,
                              detail=f"nLockTime {tx.locktime} not reached at height {height}")


def check_sequence_locks(tx: Transaction, tx_index: int | None, coin_heights: Sequence[int],
                         height: int, reason: str = reasons.BAD_TXNS_NONFINAL) -> None:
    """BIP68 for a transaction in a block at ``height`` whose inputs spend coins confirmed at
    ``coin_heights`` (a coin created in the same block, or unconfirmed in the mempool, counts
    at ``height``)."""
    if tx.version < 2 or tx.is_coinbase:
        return
    for n, (txin, coin_height) in enumerate(zip(tx.inputs, coin_heights)):
        sequence = txin.sequence
        if sequence & SEQUENCE_LOCKTIME_DISABLE_FLAG:
            continue
        if sequence & SEQUENCE_LOCKTIME_TYPE_FLAG:
            raise ValidationError(reasons.BAD_TXNS_SCRIPT_UNSUPPORTED, tx_index=tx_index,
                                  input_index=n,
                                  detail="time-based relative lock (no median time past here)")
        if coin_height + (sequence & SEQUENCE_LOCKTIME_MASK) - 1 >= height:
            raise ValidationError(reason, tx_index=tx_index, input_index=n,
                                  detail="relative lock time (BIP68) not reached")

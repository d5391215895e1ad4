"""Transaction timelocks as Elements: nLockTime finality (IsFinalTx, with BIP113's median time
past) and BIP68 relative locks by height and by time (CalculateSequenceLocks /
EvaluateSequenceLocks) — the consensus half of CHECKLOCKTIMEVERIFY / CHECKSEQUENCEVERIFY, which
only compare a script's operand with the transaction's own fields. Source: Elements
``src/consensus/tx_verify.cpp``, ``src/validation.cpp`` (ContextualCheckBlock, ConnectBlock,
CheckFinalTxAtTip, CheckSequenceLocksAtTip); docs/elements-regtest.md §3.3.

- ``check_final``: a transaction is final when its nLockTime is 0, below the block height
  (height locks, < 500,000,000) or below the lock-time cutoff (time locks), or when every input
  has nSequence 0xffffffff. The cutoff is the caller's: from the chain's CSV height (BIP113,
  LOCKTIME_MEDIAN_TIME_PAST) a block passes its parent's median time past, below it the block's
  own header time; the mempool always passes the tip's median time past (the next block's).
- ``check_sequence_locks``: for version ≥ 2 (as an unsigned number), an input whose nSequence
  has the disable bit (1<<31) clear waits ``nSequence & 0xffff`` blocks after its coin's block
  (height locks), or, with the type bit (1<<22), ``(nSequence & 0xffff) * 512`` seconds after
  the median time past of the block *before* its coin's block (time locks); the transaction's
  block must come after both, its parent's median time past being the block's time.

The median times are read from the chain (``MedianTimes``: ``validator.chain`` computes them
from the header times of the block index): one per block for the cutoff, one per input only
for an input with a time-based lock.

Reasons (Elements'): ``bad-txns-nonfinal`` in blocks; in the mempool ``non-final`` and
``non-BIP68-final``.
"""

from __future__ import annotations

from collections.abc import Callable

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

SEQUENCE_LOCKTIME_GRANULARITY = 9
"""A time-based relative lock counts in units of 2**9 = 512 seconds (BIP68)."""

MedianTimes = Callable[[int], int]
"""``median_times(height)``: the median time past (BIP113: the median of the header times of
the block at ``height`` and its 10 predecessors) of the active chain's block at ``height``,
for 0 ≤ height ≤ the tip's height."""


def is_final(tx: Transaction, height: int, lock_time_cutoff: int) -> bool:
    """IsFinalTx for a transaction in a block at ``height``."""
    if tx.locktime == 0:
        return True
    limit = height if tx.locktime < LOCKTIME_THRESHOLD else lock_time_cutoff
    if tx.locktime < limit:
        return True
    return all(txin.sequence == SEQUENCE_FINAL for txin in tx.inputs)


def enforces_bip68(tx: Transaction) -> bool:
    """Does BIP68 apply to ``tx`` at all: version ≥ 2 read as Elements' uint32 (a negative
    version is above 2 there) and not a coinbase."""
    return (tx.version & 0xFFFF_FFFF) >= 2 and not tx.is_coinbase


def is_timeless(tx: Transaction) -> bool:
    """No height or time makes ``tx`` non-final and no BIP68 lock applies to it: nLockTime 0
    or every nSequence final, and (BIP68 not enforced or every input's relative lock disabled)
    — so ``check_final`` and ``check_sequence_locks`` pass in every block, whatever its height,
    time and the spent coins' heights (a pure function of the transaction's bytes)."""
    inputs = tx.inputs
    if tx.locktime != 0 and any(txin.sequence != SEQUENCE_FINAL for txin in inputs):
        return False
    return (not enforces_bip68(tx)
            or all(txin.sequence & SEQUENCE_LOCKTIME_DISABLE_FLAG for txin in inputs))


def check_final(tx: Transaction, tx_index: int | None, height: int, lock_time_cutoff: int,
                reason: str = reasons.BAD_TXNS_NONFINAL) -> None:
    """IsFinalTx for a block at ``height`` whose time locks are judged against
    ``lock_time_cutoff`` (see the module docstring), or ``reason``."""
    if not is_final(tx, height, lock_time_cutoff):
        kind = (f"height {height}" if tx.locktime < LOCKTIME_THRESHOLD
                else f"lock-time cutoff {lock_time_cutoff}")
        raise ValidationError(reason, tx_index=tx_index,
                              detail=f"nLockTime {tx.locktime} not reached at {kind}")


def check_sequence_locks(tx: Transaction, tx_index: int | None,
                         coin_height: Callable[[int], int], height: int,
                         median_times: MedianTimes,
                         reason: str = reasons.BAD_TXNS_NONFINAL) -> None:
    """BIP68 for a transaction in a block at ``height`` (its parent, at ``height - 1``, is the
    active chain's tip). ``coin_height(n)``: the height of the block that confirmed the coin
    input ``n`` spends (a coin created in the same block, or unconfirmed in the mempool,
    counts at ``height``), asked only for an input with a relative lock. ``median_times``: the
    chain's (``MedianTimes``), asked only for time-based locks: the coin's time is the median
    time past of the block before its coin's block (of the genesis for a genesis coin), the
    block's time its parent's median time past."""
    if not enforces_bip68(tx):
        return
    block_time: int | None = None
    for n, txin in enumerate(tx.inputs):
        sequence = txin.sequence
        if sequence & SEQUENCE_LOCKTIME_DISABLE_FLAG:
            continue
        value = sequence & SEQUENCE_LOCKTIME_MASK
        if sequence & SEQUENCE_LOCKTIME_TYPE_FLAG:
            if block_time is None:
                block_time = median_times(height - 1)
            coin_time = median_times(max(coin_height(n) - 1, 0))
            if coin_time + (value << SEQUENCE_LOCKTIME_GRANULARITY) - 1 >= block_time:
                raise ValidationError(reason, tx_index=tx_index, input_index=n,
                                      detail="time-based relative lock (BIP68) not reached")
        elif coin_height(n) + value - 1 >= height:
            raise ValidationError(reason, tx_index=tx_index, input_index=n,
                                  detail="height-based relative lock (BIP68) not reached")

"""Signature-operation counting (Elements' GetTransactionSigOpCost), for the block limit.

- ``sigop_count(script, accurate)``: CScript::GetSigOpCount — CHECKSIG(VERIFY) and
  CHECKSIGFROMSTACK(VERIFY) count 1; CHECKMULTISIG(VERIFY) counts its key count when
  ``accurate`` and an OP_1..OP_16 precedes it, else 20. Counting stops at a truncated push.
- ``transaction_sigop_cost(tx, spent)``: legacy sigops (scriptSigs and output scripts, not
  accurate) × 4, plus P2SH sigops (the redeemScript's accurate count, found as the last push
  of a push-only scriptSig) × 4, plus each input's witness sigops, bare or nested in P2SH: 1
  for P2WPKH, the witness script's accurate count for P2WSH, 0 for taproot (tapscript has its
  own budget). A coinbase counts its legacy sigops only. (Elements
  ``consensus/tx_verify.cpp`` GetTransactionSigOpCost with SCRIPT_VERIFY_P2SH and WITNESS,
  which every flag set of our chain includes.)

Limits (consensus and policy, Elements' values): ``MAX_BLOCK_SIGOPS_COST`` per block,
``MAX_STANDARD_TX_SIGOPS_COST`` per mempool transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctplugin.elements import Transaction, _speedups
from ctplugin.elements.consensus import WITNESS_SCALE_FACTOR
from ctplugin.elements.script import next_op
from ctplugin.script.interpreter import MAX_PUBKEYS_PER_MULTISIG
from ctplugin.script.sighash import SpentOutput

MAX_BLOCK_SIGOPS_COST = 80_000
MAX_STANDARD_TX_SIGOPS_COST = MAX_BLOCK_SIGOPS_COST // 5

_ONE_SIGOP = frozenset((0xAC, 0xAD, 0xC1, 0xC2))  # CHECKSIG(VERIFY), CHECKSIGFROMSTACK(VERIFY)
_MULTISIG = frozenset((0xAE, 0xAF))


def _sigop_count_py(script: bytes, accurate: bool) -> int:
    """CScript::GetSigOpCount (see the module docstring), opcode by opcode: the definition
    ``sigop_count``'s native walk is tested against."""
    n = 0
    last = 0xFF
    pos = 0
    while pos < len(script):
        step = next_op(script, pos)
        if step is None:
            break
        op, _, pos = step
        if op in _ONE_SIGOP:
            n += 1
        elif op in _MULTISIG:
            n += last - 0x50 if accurate and 0x51 <= last <= 0x60 else MAX_PUBKEYS_PER_MULTISIG
        last = op
    return n


def sigop_count(script: bytes, accurate: bool) -> int:
    """CScript::GetSigOpCount (see the module docstring), in one native walk of the script
    (every script of a block is counted: opcode by opcode in Python it was a tenth of the
    script stage)."""
    return _speedups.sigop_count(script, accurate)


def _last_push(script_sig: bytes) -> bytes | None:
    """The data of the last push of a push-only scriptSig (empty after OP_0 … OP_16); None if
    an opcode does not decode or is not a push."""
    data = b""
    pos = 0
    while pos < len(script_sig):
        step = next_op(script_sig, pos)
        if step is None or step[0] > 0x60:
            return None
        _, pushed, pos = step
        data = pushed if pushed is not None else b""
    return data


def p2sh_sigops(script_pubkey: bytes, script_sig: bytes) -> int:
    """CScript::GetSigOpCount(scriptSig) for a P2SH scriptPubKey: the redeemScript's accurate
    count (0 when the scriptSig is not push-only)."""
    redeem = _last_push(script_sig)
    return 0 if redeem is None else sigop_count(redeem, accurate=True)


def _is_p2sh(script: bytes) -> bool:
    return len(script) == 23 and script[:2] == b"\xa9\x14" and script[22] == 0x87


def _witness_program_sigops(program_script: bytes, witness: Sequence[bytes]) -> int:
    """WitnessSigOps: P2WPKH 1, P2WSH the witness script's accurate count, others 0."""
    if len(program_script) == 22 and program_script[:2] == b"\x00\x14":
        return 1
    if len(program_script) == 34 and program_script[:2] == b"\x00\x20" and witness:
        return sigop_count(witness[-1], accurate=True)
    return 0


def witness_sigops(script_pubkey: bytes, witness: Sequence[bytes],
                   script_sig: bytes = b"") -> int:
    """CountWitnessSigOps: of a bare witness program, or of one a P2SH scriptSig pushes."""
    if _is_p2sh(script_pubkey):
        redeem = _last_push(script_sig)
        return 0 if redeem is None else _witness_program_sigops(redeem, witness)
    return _witness_program_sigops(script_pubkey, witness)


def transaction_sigop_cost(tx: Transaction, spent: Sequence[SpentOutput]) -> int:
    """GetTransactionSigOpCost (see the module docstring); ``spent`` is empty for a coinbase."""
    legacy = sum(sigop_count(t.script_sig, False) for t in tx.inputs) + sum(
        sigop_count(o.script_pubkey, False) for o in tx.outputs)
    cost = legacy * WITNESS_SCALE_FACTOR
    if tx.is_coinbase:
        return cost
    for txin, prev in zip(tx.inputs, spent):
        if _is_p2sh(prev.script_pubkey):
            cost += p2sh_sigops(prev.script_pubkey, txin.script_sig) * WITNESS_SCALE_FACTOR
        cost += witness_sigops(prev.script_pubkey, txin.script_witness, txin.script_sig)
    return cost

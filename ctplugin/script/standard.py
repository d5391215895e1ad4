"""Output-script templates: Elements' ``Solver`` (``src/script/solver.cpp``), the classification
the mempool's standardness rules and the RPC ``type`` names rest on (docs/elements-regtest.md §8).

``solve(script, anyonecanspend_aremine)`` gives the template (``TxoutType``, whose value is
Elements' ``GetTxnOutputType`` name) and its solutions (the pushed data a signer needs), tried in
Elements' order:

1. ``OP_TRUE`` (the single byte 0x51) is its own type only with ``-anyonecanspendaremine``
   (otherwise it is non-standard); the empty script is Elements' fee output (``FEE``);
2. P2SH (``OP_HASH160 <20> OP_EQUAL``), then witness programs (BIP141: v0 key hash / script
   hash, v1 taproot (BIP341), the pay-to-anchor ``OP_1 <4e73>``, any other version
   ``WITNESS_UNKNOWN``; a v0 program of another length is non-standard);
3. ``OP_RETURN`` followed only by pushes (``NULL_DATA``; its size limit is policy, not the
   template's), P2PK (a valid-size public key then ``OP_CHECKSIG``), P2PKH, bare multisig
   (``m <keys> n OP_CHECKMULTISIG``, numbers minimally encoded, 1 ≤ m ≤ n ≤ 20).

Also here: ``is_push_only`` (CScript::IsPushOnly: OP_RESERVED counts as a push, as in Elements)
and ``push_stack`` (the stack a push-only script leaves when evaluated without flags, what
``AreInputsStandard`` reads a P2SH redeem script from).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from ctplugin.elements.script import next_op, script_num_decode
from ctplugin.errors import EncodingError
from ctplugin.script.interpreter import (
    MAX_PUBKEYS_PER_MULTISIG,
    MAX_SCRIPT_ELEMENT_SIZE,
    MAX_SCRIPT_SIZE,
    MAX_STACK_SIZE,
    check_minimal_push,
    is_push_only,
)

OP_0 = 0x00
OP_PUSHDATA4 = 0x4E
OP_1NEGATE = 0x4F
OP_RESERVED = 0x50
OP_1 = 0x51
OP_16 = 0x60
OP_RETURN = 0x6A
OP_CHECKSIG = 0xAC
OP_CHECKMULTISIG = 0xAE
_PUBKEY_SIZES = {2: 33, 3: 33, 4: 65, 6: 65, 7: 65}  # CPubKey::GetLen by the first byte


class TxoutType(enum.Enum):
    """Elements' ``TxoutType``; the value is its ``GetTxnOutputType`` name."""

    NONSTANDARD = "nonstandard"
    PUBKEY = "pubkey"
    PUBKEYHASH = "pubkeyhash"
    SCRIPTHASH = "scripthash"
    MULTISIG = "multisig"
    NULL_DATA = "nulldata"
    ANCHOR = "anchor"
    WITNESS_V0_KEYHASH = "witness_v0_keyhash"
    WITNESS_V0_SCRIPTHASH = "witness_v0_scripthash"
    WITNESS_V1_TAPROOT = "witness_v1_taproot"
    WITNESS_UNKNOWN = "witness_unknown"
    OP_TRUE = "true"
    FEE = "fee"


class Solution(NamedTuple):
    """A template and its solutions: the key hash, script hash or program (one item); the
    public key (P2PK); for multisig ``bytes([m])``, the keys, ``bytes([n])``; for an unknown
    witness version ``bytes([version])`` and the program; nothing otherwise."""

    type: TxoutType
    solutions: tuple[bytes, ...] = ()


_NONSTANDARD = Solution(TxoutType.NONSTANDARD)
_OP_TRUE = Solution(TxoutType.OP_TRUE)
_FEE = Solution(TxoutType.FEE)
_NULL_DATA = Solution(TxoutType.NULL_DATA)
_ANCHOR = Solution(TxoutType.ANCHOR)


def is_valid_pubkey_size(data: bytes) -> bool:
    """CPubKey::ValidSize: the length the first byte announces (33 or 65)."""
    return bool(data) and _PUBKEY_SIZES.get(data[0]) == len(data)


def is_witness_program(script: bytes) -> bool:
    """CScript::IsWitnessProgram (BIP141): a version opcode then one push of 2..40 bytes."""
    return (4 <= len(script) <= 42 and (script[0] == OP_0 or OP_1 <= script[0] <= OP_16)
            and script[1] + 2 == len(script))


def is_pay_to_script_hash(script: bytes) -> bool:
    return len(script) == 23 and script[0] == 0xA9 and script[1] == 0x14 and script[22] == 0x87


def is_pay_to_anchor(script: bytes) -> bool:
    """CScript::IsPayToAnchor: ``OP_1 <0x4e73>``."""
    return script == b"\x51\x02\x4e\x73"


def push_stack(script: bytes) -> list[bytes] | None:
    """The stack a push-only ``script`` leaves when Elements' EvalScript runs it with no flags,
    or None where that evaluation fails (a non-push, OP_RESERVED, a push over 520 bytes, a
    script over 10,000 bytes, more than 1,000 items, a truncated push)."""
    if len(script) > MAX_SCRIPT_SIZE:
        return None
    stack: list[bytes] = []
    pos, end = 0, len(script)
    while pos < end:
        step = next_op(script, pos)
        if step is None:
            return None
        op, data, pos = step
        if data is not None:
            if len(data) > MAX_SCRIPT_ELEMENT_SIZE:
                return None
            stack.append(data)
        elif op == OP_1NEGATE:
            stack.append(b"\x81")
        elif OP_1 <= op <= OP_16:
            stack.append(bytes((op - OP_RESERVED,)))
        else:
            return None
        if len(stack) > MAX_STACK_SIZE:
            return None
    return stack


def _script_number(op: int, data: bytes | None, low: int, high: int) -> int | None:
    """Solver's GetScriptNumber: OP_1..OP_16 or a minimal push of a minimally encoded number,
    within [low, high]."""
    if OP_1 <= op <= OP_16:
        count = op - OP_RESERVED
    elif data is not None and OP_0 < op <= OP_PUSHDATA4:
        if not check_minimal_push(data, op):
            return None
        try:
            count = script_num_decode(data, require_minimal=True)
        except EncodingError:
            return None
    else:
        return None
    return count if low <= count <= high else None


def _match_multisig(script: bytes) -> Solution | None:
    """Solver's MatchMultisig."""
    end = len(script)
    step = next_op(script, 0)
    if step is None:
        return None
    required = _script_number(step[0], step[1], 1, MAX_PUBKEYS_PER_MULTISIG)
    if required is None:
        return None
    keys: list[bytes] = []
    pos = step[2]
    op, data = -1, None  # a failed GetOp leaves OP_INVALIDOPCODE, which is no number
    while pos < end:
        step = next_op(script, pos)
        if step is None:
            op, data = -1, None
            break
        op, data, pos = step
        if data is None or not is_valid_pubkey_size(data):
            break
        keys.append(data)
    else:
        op, data = -1, None
    count = _script_number(op, data, required, MAX_PUBKEYS_PER_MULTISIG)
    if count is None or count != len(keys) or pos + 1 != end:
        return None
    return Solution(TxoutType.MULTISIG, (bytes((required,)), *keys, bytes((count,))))


def solve(script: bytes, anyonecanspend_aremine: bool = False) -> Solution:
    """Elements' Solver (see the module docstring)."""
    size = len(script)
    if size == 1 and script[0] == OP_1 and anyonecanspend_aremine:
        return _OP_TRUE
    if not size:
        return _FEE
    if is_pay_to_script_hash(script):
        return Solution(TxoutType.SCRIPTHASH, (script[2:22],))
    if is_witness_program(script):
        version = 0 if script[0] == OP_0 else script[0] - OP_RESERVED
        program = script[2:]
        if version == 0 and len(program) == 20:
            return Solution(TxoutType.WITNESS_V0_KEYHASH, (program,))
        if version == 0 and len(program) == 32:
            return Solution(TxoutType.WITNESS_V0_SCRIPTHASH, (program,))
        if version == 1 and len(program) == 32:
            return Solution(TxoutType.WITNESS_V1_TAPROOT, (program,))
        if is_pay_to_anchor(script):
            return _ANCHOR
        if version != 0:
            return Solution(TxoutType.WITNESS_UNKNOWN, (bytes((version,)), program))
        return _NONSTANDARD
    if script[0] == OP_RETURN and is_push_only(script, 1):
        return _NULL_DATA
    if (size in (35, 67) and script[0] == size - 2 and script[-1] == OP_CHECKSIG
            and is_valid_pubkey_size(script[1:-1])):
        return Solution(TxoutType.PUBKEY, (script[1:-1],))
    if size == 25 and script[:3] == b"\x76\xa9\x14" and script[23:] == b"\x88\xac":
        return Solution(TxoutType.PUBKEYHASH, (script[3:23],))
    if script[-1] == OP_CHECKMULTISIG:
        multisig = _match_multisig(script)
        if multisig is not None:
            return multisig
    return _NONSTANDARD

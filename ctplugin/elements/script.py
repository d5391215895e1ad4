"""Script disassembly and output classification, as elementsd prints them in decoded JSON.

``script_to_asm`` follows Bitcoin Core's ScriptToAsmStr (pushes of <= 4 bytes as CScriptNum
decimals, longer pushes as hex, optional sighash decoding of DER signatures in scriptSigs,
``[error]`` on a truncated push); ``script_type`` follows Solver's type names plus Elements'
``fee`` for the empty script.
"""

from __future__ import annotations

from enum import IntEnum

from ctplugin.elements.consensus import MAX_SCRIPT_SIZE, WITNESS_COMMITMENT_HEADER
from ctplugin.errors import EncodingError


class Op(IntEnum):
    """Elements' opcodes (``script.h``): Bitcoin's, with OP_CAT … OP_RSHIFT re-enabled, and the
    Elements additions 0xC0–0xE4 (OP_SUCCESS and tapscript-only status: ``ctplugin.script``)."""

    OP_0 = 0x00
    OP_PUSHDATA1 = 0x4C
    OP_PUSHDATA2 = 0x4D
    OP_PUSHDATA4 = 0x4E
    OP_1NEGATE = 0x4F
    OP_RESERVED = 0x50
    OP_1 = 0x51
    OP_2 = 0x52
    OP_3 = 0x53
    OP_4 = 0x54
    OP_5 = 0x55
    OP_6 = 0x56
    OP_7 = 0x57
    OP_8 = 0x58
    OP_9 = 0x59
    OP_10 = 0x5A
    OP_11 = 0x5B
    OP_12 = 0x5C
    OP_13 = 0x5D
    OP_14 = 0x5E
    OP_15 = 0x5F
    OP_16 = 0x60
    OP_NOP = 0x61
    OP_VER = 0x62
    OP_IF = 0x63
    OP_NOTIF = 0x64
    OP_VERIF = 0x65
    OP_VERNOTIF = 0x66
    OP_ELSE = 0x67
    OP_ENDIF = 0x68
    OP_VERIFY = 0x69
    OP_RETURN = 0x6A
    OP_TOALTSTACK = 0x6B
    OP_FROMALTSTACK = 0x6C
    OP_2DROP = 0x6D
    OP_2DUP = 0x6E
    OP_3DUP = 0x6F
    OP_2OVER = 0x70
    OP_2ROT = 0x71
    OP_2SWAP = 0x72
    OP_IFDUP = 0x73
    OP_DEPTH = 0x74
    OP_DROP = 0x75
    OP_DUP = 0x76
    OP_NIP = 0x77
    OP_OVER = 0x78
    OP_PICK = 0x79
    OP_ROLL = 0x7A
    OP_ROT = 0x7B
    OP_SWAP = 0x7C
    OP_TUCK = 0x7D
    OP_CAT = 0x7E
    OP_SUBSTR = 0x7F
    OP_LEFT = 0x80
    OP_RIGHT = 0x81
    OP_SIZE = 0x82
    OP_INVERT = 0x83
    OP_AND = 0x84
    OP_OR = 0x85
    OP_XOR = 0x86
    OP_EQUAL = 0x87
    OP_EQUALVERIFY = 0x88
    OP_RESERVED1 = 0x89
    OP_RESERVED2 = 0x8A
    OP_1ADD = 0x8B
    OP_1SUB = 0x8C
    OP_2MUL = 0x8D
    OP_2DIV = 0x8E
    OP_NEGATE = 0x8F
    OP_ABS = 0x90
    OP_NOT = 0x91
    OP_0NOTEQUAL = 0x92
    OP_ADD = 0x93
    OP_SUB = 0x94
    OP_MUL = 0x95
    OP_DIV = 0x96
    OP_MOD = 0x97
    OP_LSHIFT = 0x98
    OP_RSHIFT = 0x99
    OP_BOOLAND = 0x9A
    OP_BOOLOR = 0x9B
    OP_NUMEQUAL = 0x9C
    OP_NUMEQUALVERIFY = 0x9D
    OP_NUMNOTEQUAL = 0x9E
    OP_LESSTHAN = 0x9F
    OP_GREATERTHAN = 0xA0
    OP_LESSTHANOREQUAL = 0xA1
    OP_GREATERTHANOREQUAL = 0xA2
    OP_MIN = 0xA3
    OP_MAX = 0xA4
    OP_WITHIN = 0xA5
    OP_RIPEMD160 = 0xA6
    OP_SHA1 = 0xA7
    OP_SHA256 = 0xA8
    OP_HASH160 = 0xA9
    OP_HASH256 = 0xAA
    OP_CODESEPARATOR = 0xAB
    OP_CHECKSIG = 0xAC
    OP_CHECKSIGVERIFY = 0xAD
    OP_CHECKMULTISIG = 0xAE
    OP_CHECKMULTISIGVERIFY = 0xAF
    OP_NOP1 = 0xB0
    OP_CHECKLOCKTIMEVERIFY = 0xB1
    OP_CHECKSEQUENCEVERIFY = 0xB2
    OP_NOP4 = 0xB3
    OP_NOP5 = 0xB4
    OP_NOP6 = 0xB5
    OP_NOP7 = 0xB6
    OP_NOP8 = 0xB7
    OP_NOP9 = 0xB8
    OP_NOP10 = 0xB9
    OP_CHECKSIGADD = 0xBA
    OP_DETERMINISTICRANDOM = 0xC0
    OP_CHECKSIGFROMSTACK = 0xC1
    OP_CHECKSIGFROMSTACKVERIFY = 0xC2
    OP_SUBSTR_LAZY = 0xC3
    OP_SHA256INITIALIZE = 0xC4
    OP_SHA256UPDATE = 0xC5
    OP_SHA256FINALIZE = 0xC6
    OP_INSPECTINPUTOUTPOINT = 0xC7
    OP_INSPECTINPUTASSET = 0xC8
    OP_INSPECTINPUTVALUE = 0xC9
    OP_INSPECTINPUTSCRIPTPUBKEY = 0xCA
    OP_INSPECTINPUTSEQUENCE = 0xCB
    OP_INSPECTINPUTISSUANCE = 0xCC
    OP_PUSHCURRENTINPUTINDEX = 0xCD
    OP_INSPECTOUTPUTASSET = 0xCE
    OP_INSPECTOUTPUTVALUE = 0xCF
    OP_INSPECTOUTPUTNONCE = 0xD0
    OP_INSPECTOUTPUTSCRIPTPUBKEY = 0xD1
    OP_INSPECTVERSION = 0xD2
    OP_INSPECTLOCKTIME = 0xD3
    OP_INSPECTNUMINPUTS = 0xD4
    OP_INSPECTNUMOUTPUTS = 0xD5
    OP_TXWEIGHT = 0xD6
    OP_ADD64 = 0xD7
    OP_SUB64 = 0xD8
    OP_MUL64 = 0xD9
    OP_DIV64 = 0xDA
    OP_NEG64 = 0xDB
    OP_LESSTHAN64 = 0xDC
    OP_LESSTHANOREQUAL64 = 0xDD
    OP_GREATERTHAN64 = 0xDE
    OP_GREATERTHANOREQUAL64 = 0xDF
    OP_SCRIPTNUMTOLE64 = 0xE0
    OP_LE64TOSCRIPTNUM = 0xE1
    OP_LE32TOLE64 = 0xE2
    OP_ECMULSCALARVERIFY = 0xE3
    OP_TWEAKVERIFY = 0xE4
    OP_INVALIDOPCODE = 0xFF
    # aliases
    OP_FALSE = 0x00
    OP_TRUE = 0x51
    OP_NOP2 = 0xB1
    OP_NOP3 = 0xB2


OP_PUSHDATA1, OP_PUSHDATA2, OP_PUSHDATA4 = Op.OP_PUSHDATA1, Op.OP_PUSHDATA2, Op.OP_PUSHDATA4
OP_RETURN = Op.OP_RETURN
OP_CHECKSIG = Op.OP_CHECKSIG
OP_CHECKMULTISIG = Op.OP_CHECKMULTISIG

# Names as ScriptToAsmStr prints them: small-number opcodes as numbers, the rest by name.
_NAMES = {op.value: op.name for op in Op}
_NAMES.update({0x00: "0", 0x4F: "-1"})
_NAMES.update({0x50 + n: str(n) for n in range(1, 17)})

_SIGHASH_NAMES = {0x01: "ALL", 0x02: "NONE", 0x03: "SINGLE", 0x81: "ALL|ANYONECANPAY",
                  0x82: "NONE|ANYONECANPAY", 0x83: "SINGLE|ANYONECANPAY"}


_PUSH_WIDTH = {0x4C: 1, 0x4D: 2, 0x4E: 4}


def next_op(script: bytes, pos: int) -> tuple[int, bytes | None, int] | None:
    """The instruction at ``pos`` (Elements' ``GetOp``): (opcode, push data or None, position of
    the next instruction); None if a push runs past the end. ``pos`` must be < len(script)."""
    op = script[pos]
    pos += 1
    if op > 0x4E:
        return op, None, pos
    if op < 0x4C:
        size = op
    else:
        width = _PUSH_WIDTH[op]
        if len(script) - pos < width:
            return None
        size = int.from_bytes(script[pos:pos + width], "little")
        pos += width
    if len(script) - pos < size:
        return None
    return op, script[pos:pos + size], pos + size


def script_ops(script: bytes) -> list[tuple[int, bytes | None]] | None:
    """Split a script into (opcode, push data or None); None if a push runs past the end."""
    ops: list[tuple[int, bytes | None]] = []
    pos = 0
    while pos < len(script):
        step = next_op(script, pos)
        if step is None:
            return None
        op, data, pos = step
        ops.append((op, data))
    return ops


def script_num_encode(n: int) -> bytes:
    """CScriptNum::serialize: minimal little-endian magnitude, sign in the top bit (0 is b"")."""
    out = bytearray()
    value = abs(n)
    while value:
        out.append(value & 0xFF)
        value >>= 8
    if out and out[-1] & 0x80:
        out.append(0x80 if n < 0 else 0)
    elif n < 0:
        out[-1] |= 0x80
    return bytes(out)


def script_num_decode(data: bytes, require_minimal: bool = False, max_size: int = 4) -> int:
    """CScriptNum(data, fRequireMinimal, nMaxNumSize): ``EncodingError`` if ``data`` is longer
    than ``max_size`` or, with ``require_minimal``, not minimally encoded (Elements throws
    scriptnum_error in both cases)."""
    if len(data) > max_size:
        raise EncodingError("script number overflow", reason="value-range")
    if require_minimal and data and not data[-1] & 0x7F and (
            len(data) == 1 or not data[-2] & 0x80):
        raise EncodingError("non-minimally encoded script number", reason="non-minimal")
    if not data:
        return 0
    value = int.from_bytes(data, "little")
    if data[-1] & 0x80:
        return -(value & ~(0x80 << (8 * (len(data) - 1))))
    return value


def is_valid_der_signature(sig: bytes) -> bool:
    """BIP66 strict DER check of a signature followed by its one-byte sighash type."""
    if not 9 <= len(sig) <= 73 or sig[0] != 0x30 or sig[1] != len(sig) - 3:
        return False
    len_r = sig[3]
    if 5 + len_r >= len(sig):
        return False
    len_s = sig[5 + len_r]
    if len_r + len_s + 7 != len(sig) or sig[2] != 0x02 or len_r == 0 or sig[4] & 0x80:
        return False
    if len_r > 1 and sig[4] == 0 and not sig[5] & 0x80:
        return False
    s_at = len_r + 6
    if sig[len_r + 4] != 0x02 or len_s == 0 or sig[s_at] & 0x80:
        return False
    return not (len_s > 1 and sig[s_at] == 0 and not sig[s_at + 1] & 0x80)


def is_unspendable(script: bytes) -> bool:
    """Elements' CScript::IsUnspendable: OP_RETURN first, longer than MAX_SCRIPT_SIZE, or empty
    (in Elements mode the empty script is the fee output's and cannot be spent)."""
    return not script or script[0] == OP_RETURN or len(script) > MAX_SCRIPT_SIZE


def script_num(n: int) -> bytes:
    """The push of ``CScript() << n`` (BIP34 coinbase heights use it): OP_0, OP_1NEGATE,
    OP_1..OP_16, else the minimal little-endian sign-magnitude CScriptNum bytes after their
    length byte."""
    if n == 0:
        return b"\x00"
    if n == -1:
        return b"\x4f"
    if 1 <= n <= 16:
        return bytes((0x50 + n,))
    data = script_num_encode(n)
    return bytes((len(data),)) + data


def push_data(data: bytes) -> bytes:
    """The minimal push of ``CScript() << data`` (OP_0 for empty, direct push up to 75 bytes,
    then OP_PUSHDATA1/2/4)."""
    n = len(data)
    if n == 0:
        return b"\x00"
    if n <= 75:
        return bytes((n,)) + data
    if n <= 0xFF:
        return b"\x4c" + bytes((n,)) + data
    if n <= 0xFFFF:
        return b"\x4d" + n.to_bytes(2, "little") + data
    return b"\x4e" + n.to_bytes(4, "little") + data


def witness_commitment_script(commitment: bytes) -> bytes:
    """The coinbase output script committing to a block's witness root (BIP141 layout)."""
    return WITNESS_COMMITMENT_HEADER + commitment


def script_to_asm(script: bytes, attempt_sighash_decode: bool = False) -> str:
    """Bitcoin Core ScriptToAsmStr."""
    parts: list[str] = []
    i, n = 0, len(script)
    while i < n:
        op = script[i]
        i += 1
        if op > OP_PUSHDATA4:
            parts.append(_NAMES.get(op, "OP_UNKNOWN"))
            continue
        size = op
        if op >= OP_PUSHDATA1:
            width = _PUSH_WIDTH[op]
            if n - i < width:
                parts.append("[error]")
                break
            size = int.from_bytes(script[i:i + width], "little")
            i += width
        if n - i < size:
            parts.append("[error]")
            break
        data = script[i:i + size]
        i += size
        if len(data) <= 4:
            parts.append(str(script_num_decode(data, max_size=len(data))))
        elif attempt_sighash_decode and not is_unspendable(script):
            suffix = ""
            if is_valid_der_signature(data) and data[-1] in _SIGHASH_NAMES:
                suffix = f"[{_SIGHASH_NAMES[data[-1]]}]"
                data = data[:-1]
            parts.append(data.hex() + suffix)
        else:
            parts.append(data.hex())
    return " ".join(parts)


def _small_int(op: int) -> int | None:
    if op == 0:
        return 0
    if 0x51 <= op <= 0x60:
        return op - 0x50
    return None


def witness_program(script: bytes) -> tuple[int, bytes] | None:
    """(version, program) if the script is a segwit output (BIP141 IsWitnessProgram)."""
    if not 4 <= len(script) <= 42 or script[1] + 2 != len(script):
        return None
    version = _small_int(script[0])
    if version is None:
        return None
    return version, script[2:]


def script_type(script: bytes) -> str:
    """Solver's output type name (``fee`` for Elements' empty fee script)."""
    if not script:
        return "fee"
    if len(script) == 23 and script[0] == 0xA9 and script[1] == 20 and script[22] == 0x87:
        return "scripthash"
    program = witness_program(script)
    if program is not None:
        version, prog = program
        if version == 0 and len(prog) == 20:
            return "witness_v0_keyhash"
        if version == 0 and len(prog) == 32:
            return "witness_v0_scripthash"
        if version == 1 and len(prog) == 32:
            return "witness_v1_taproot"
        if version != 0:
            return "witness_unknown"
        return "nonstandard"
    ops = script_ops(script)
    if ops is None:
        return "nonstandard"
    if script[0] == OP_RETURN and all(op <= 0x60 for op, _ in ops[1:]):
        return "nulldata"
    if (len(ops) == 2 and ops[1] == (OP_CHECKSIG, None) and ops[0][1] is not None
            and _is_pubkey(ops[0][1])):
        return "pubkey"
    if (len(script) == 25 and script[:3] == b"\x76\xa9\x14" and script[23:] == b"\x88\xac"):
        return "pubkeyhash"
    if len(ops) >= 4 and ops[-1] == (OP_CHECKMULTISIG, None):
        m, n = _small_int(ops[0][0]), _small_int(ops[-2][0])
        keys = ops[1:-2]
        if (m and n and 1 <= m <= n == len(keys)
                and all(d is not None and _is_pubkey(d) for _, d in keys)):
            return "multisig"
    return "nonstandard"


def _is_pubkey(data: bytes) -> bool:
    return (len(data) == 33 and data[0] in (2, 3)) or (len(data) == 65 and data[0] == 4)

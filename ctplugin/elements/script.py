"""Script disassembly and output classification, as elementsd prints them in decoded JSON.

``script_to_asm`` follows Bitcoin Core's ScriptToAsmStr (pushes of <= 4 bytes as CScriptNum
decimals, longer pushes as hex, optional sighash decoding of DER signatures in scriptSigs,
``[error]`` on a truncated push); ``script_type`` follows Solver's type names plus Elements'
``fee`` for the empty script.
"""

from __future__ import annotations

from ctplugin.elements.consensus import MAX_SCRIPT_SIZE, WITNESS_COMMITMENT_HEADER

OP_PUSHDATA1, OP_PUSHDATA2, OP_PUSHDATA4 = 0x4C, 0x4D, 0x4E
OP_RETURN = 0x6A
OP_CHECKSIG = 0xAC
OP_CHECKMULTISIG = 0xAE

_NAMES = {
    0x00: "0", 0x4C: "OP_PUSHDATA1", 0x4D: "OP_PUSHDATA2", 0x4E: "OP_PUSHDATA4", 0x4F: "-1",
    0x50: "OP_RESERVED", 0x61: "OP_NOP", 0x62: "OP_VER", 0x63: "OP_IF", 0x64: "OP_NOTIF",
    0x65: "OP_VERIF", 0x66: "OP_VERNOTIF", 0x67: "OP_ELSE", 0x68: "OP_ENDIF", 0x69: "OP_VERIFY",
    0x6A: "OP_RETURN", 0x6B: "OP_TOALTSTACK", 0x6C: "OP_FROMALTSTACK", 0x6D: "OP_2DROP",
    0x6E: "OP_2DUP", 0x6F: "OP_3DUP", 0x70: "OP_2OVER", 0x71: "OP_2ROT", 0x72: "OP_2SWAP",
    0x73: "OP_IFDUP", 0x74: "OP_DEPTH", 0x75: "OP_DROP", 0x76: "OP_DUP", 0x77: "OP_NIP",
    0x78: "OP_OVER", 0x79: "OP_PICK", 0x7A: "OP_ROLL", 0x7B: "OP_ROT", 0x7C: "OP_SWAP",
    0x7D: "OP_TUCK", 0x7E: "OP_CAT", 0x7F: "OP_SUBSTR", 0x80: "OP_LEFT", 0x81: "OP_RIGHT",
    0x82: "OP_SIZE", 0x83: "OP_INVERT", 0x84: "OP_AND", 0x85: "OP_OR", 0x86: "OP_XOR",
    0x87: "OP_EQUAL", 0x88: "OP_EQUALVERIFY", 0x89: "OP_RESERVED1", 0x8A: "OP_RESERVED2",
    0x8B: "OP_1ADD", 0x8C: "OP_1SUB", 0x8D: "OP_2MUL", 0x8E: "OP_2DIV", 0x8F: "OP_NEGATE",
    0x90: "OP_ABS", 0x91: "OP_NOT", 0x92: "OP_0NOTEQUAL", 0x93: "OP_ADD", 0x94: "OP_SUB",
    0x95: "OP_MUL", 0x96: "OP_DIV", 0x97: "OP_MOD", 0x98: "OP_LSHIFT", 0x99: "OP_RSHIFT",
    0x9A: "OP_BOOLAND", 0x9B: "OP_BOOLOR", 0x9C: "OP_NUMEQUAL", 0x9D: "OP_NUMEQUALVERIFY",
    0x9E: "OP_NUMNOTEQUAL", 0x9F: "OP_LESSTHAN", 0xA0: "OP_GREATERTHAN",
    0xA1: "OP_LESSTHANOREQUAL", 0xA2: "OP_GREATERTHANOREQUAL", 0xA3: "OP_MIN", 0xA4: "OP_MAX",
    0xA5: "OP_WITHIN", 0xA6: "OP_RIPEMD160", 0xA7: "OP_SHA1", 0xA8: "OP_SHA256",
    0xA9: "OP_HASH160", 0xAA: "OP_HASH256", 0xAB: "OP_CODESEPARATOR", 0xAC: "OP_CHECKSIG",
    0xAD: "OP_CHECKSIGVERIFY", 0xAE: "OP_CHECKMULTISIG", 0xAF: "OP_CHECKMULTISIGVERIFY",
    0xB0: "OP_NOP1", 0xB1: "OP_CHECKLOCKTIMEVERIFY", 0xB2: "OP_CHECKSEQUENCEVERIFY",
    0xB3: "OP_NOP4", 0xB4: "OP_NOP5", 0xB5: "OP_NOP6", 0xB6: "OP_NOP7", 0xB7: "OP_NOP8",
    0xB8: "OP_NOP9", 0xB9: "OP_NOP10", 0xBA: "OP_CHECKSIGADD",
    # Elements additions
    0xC1: "OP_CHECKSIGFROMSTACK", 0xC2: "OP_CHECKSIGFROMSTACKVERIFY", 0xC3: "OP_SUBSTR_LAZY",
    0xC4: "OP_SHA256INITIALIZE", 0xC5: "OP_SHA256UPDATE", 0xC6: "OP_SHA256FINALIZE",
    0xC7: "OP_INSPECTINPUTOUTPOINT", 0xC8: "OP_INSPECTINPUTASSET", 0xC9: "OP_INSPECTINPUTVALUE",
    0xCA: "OP_INSPECTINPUTSCRIPTPUBKEY", 0xCB: "OP_INSPECTINPUTSEQUENCE",
    0xCC: "OP_INSPECTINPUTISSUANCE", 0xCD: "OP_PUSHCURRENTINPUTINDEX",
    0xCE: "OP_INSPECTOUTPUTASSET", 0xCF: "OP_INSPECTOUTPUTVALUE", 0xD0: "OP_INSPECTOUTPUTNONCE",
    0xD1: "OP_INSPECTOUTPUTSCRIPTPUBKEY", 0xD2: "OP_INSPECTVERSION", 0xD3: "OP_INSPECTLOCKTIME",
    0xD4: "OP_INSPECTNUMINPUTS", 0xD5: "OP_INSPECTNUMOUTPUTS", 0xD6: "OP_TXWEIGHT",
    0xD7: "OP_ADD64", 0xD8: "OP_SUB64", 0xD9: "OP_MUL64", 0xDA: "OP_DIV64", 0xDB: "OP_NEG64",
    0xDC: "OP_LESSTHAN64", 0xDD: "OP_LESSTHANOREQUAL64", 0xDE: "OP_GREATERTHAN64",
    0xDF: "OP_GREATERTHANOREQUAL64", 0xE0: "OP_SCRIPTNUMTOLE64", 0xE1: "OP_LE64TOSCRIPTNUM",
    0xE2: "OP_LE32TOLE64", 0xE3: "OP_ECMULSCALARVERIFY", 0xE4: "OP_TWEAKVERIFY",
    0xFF: "OP_INVALIDOPCODE",
}  # fmt: skip
_NAMES.update({0x50 + n: str(n) for n in range(1, 17)})

_SIGHASH_NAMES = {0x01: "ALL", 0x02: "NONE", 0x03: "SINGLE", 0x81: "ALL|ANYONECANPAY",
                  0x82: "NONE|ANYONECANPAY", 0x83: "SINGLE|ANYONECANPAY"}


def script_ops(script: bytes) -> list[tuple[int, bytes | None]] | None:
    """Split a script into (opcode, push data or None); None if a push runs past the end."""
    ops: list[tuple[int, bytes | None]] = []
    i, n = 0, len(script)
    while i < n:
        op = script[i]
        i += 1
        if op <= OP_PUSHDATA4:
            if op < OP_PUSHDATA1:
                size = op
            else:
                width = {OP_PUSHDATA1: 1, OP_PUSHDATA2: 2, OP_PUSHDATA4: 4}[op]
                if n - i < width:
                    return None
                size = int.from_bytes(script[i:i + width], "little")
                i += width
            if n - i < size:
                return None
            ops.append((op, script[i:i + size]))
            i += size
        else:
            ops.append((op, None))
    return ops


def _script_num(data: bytes) -> int:
    """CScriptNum of up to 4 bytes: little-endian magnitude, sign in the top bit."""
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
    out = bytearray()
    value = abs(n)
    while value:
        out.append(value & 0xFF)
        value >>= 8
    if out[-1] & 0x80:
        out.append(0x80 if n < 0 else 0)
    elif n < 0:
        out[-1] |= 0x80
    return bytes((len(out),)) + bytes(out)


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
            width = {OP_PUSHDATA1: 1, OP_PUSHDATA2: 2, OP_PUSHDATA4: 4}[op]
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
            parts.append(str(_script_num(data)))
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

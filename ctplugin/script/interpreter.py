"""Elements' script interpreter: ``EvalScript``, ``VerifyScript`` and ``VerifyWitnessProgram``
of Elements ``src/script/interpreter.cpp``, with every opcode and every verification flag.

- ``verify_script(script_sig, script_pubkey, witness, flags, checker)``: VerifyScript — the
  scriptSig and scriptPubKey on one stack; P2SH (BIP16) with its redeemScript; bare and
  P2SH-nested witness programs: P2WPKH and P2WSH (BIP141/143), taproot key and script path
  (BIP341/342: annex, leaf versions, OP_SUCCESSx, the validation-weight budget, unknown
  public-key types), pay-to-anchor, and unknown witness versions as upgrade room;
- ``verify_input(pre, index, flags, checker)``: the same for input ``index`` of a transaction
  against its spent output (what the validator calls);
- ``eval_script(stack, script, flags, checker, sigversion)``: EvalScript.

Every flag of Elements' ``interpreter.h`` is honoured (``flags.ScriptFlags``): P2SH, STRICTENC,
DERSIG, LOW_S, NULLDUMMY, SIGPUSHONLY, MINIMALDATA, DISCOURAGE_UPGRADABLE_NOPS, CLEANSTACK,
CHECKLOCKTIMEVERIFY, CHECKSEQUENCEVERIFY, WITNESS, DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM,
MINIMALIF, NULLFAIL, WITNESS_PUBKEYTYPE, CONST_SCRIPTCODE (OP_CODESEPARATOR and FindAndDelete
in legacy scripts), TAPROOT, DISCOURAGE_UPGRADABLE_TAPROOT_VERSION, DISCOURAGE_OP_SUCCESS,
DISCOURAGE_UPGRADABLE_PUBKEYTYPE, NO_SIGHASH_BYTE and SIGHASH_RANGEPROOF.

Opcode set: Elements', not Bitcoin's — OP_CAT, OP_SUBSTR, OP_LEFT, OP_RIGHT, OP_INVERT, OP_AND,
OP_OR, OP_XOR, OP_LSHIFT and OP_RSHIFT work in every script (only 2MUL, 2DIV, MUL, DIV and MOD
are disabled), so do OP_DETERMINISTICRANDOM, OP_CHECKSIGFROMSTACK(VERIFY) (ECDSA over the SHA256
of the data before tapscript, BIP340 over the data itself in tapscript) and OP_SUBSTR_LAZY;
tapscript adds streaming SHA256 (OP_SHA256INITIALIZE/UPDATE/FINALIZE, with Elements' context
serialization), introspection (OP_INSPECT*, OP_PUSHCURRENTINPUTINDEX, OP_TXWEIGHT), 64-bit
arithmetic (OP_ADD64 … OP_LE32TOLE64), OP_ECMULSCALARVERIFY and OP_TWEAKVERIFY; its OP_SUCCESS
set is Elements' (80, 98, 137–138, 141–142, 149–151, 187–191, 229–254). Errors are Elements'
(``errors.ScriptErrorCode``); where Elements catches an exception (a script number too long or
not minimal, a missing stack item read with ``at()``) the error is UNKNOWN_ERROR, as there.

The one spend Elements evaluates and we cannot is a Simplicity leaf (version 0xbe under
SCRIPT_VERIFY_SIMPLICITY): ``ScriptError(UNSUPPORTED)``.

Signatures are asked of a ``checker.Checker`` (Elements' ``BaseSignatureChecker``): our chain's
``SignatureChecker`` (Elements digests, optionally deferring checks into the block's batch) or
``BitcoinSignatureChecker`` (Elements' unit-test vectors, read with Elements mode off). ECDSA
checks are marked deferrable only where a false result fails the verification anyway (a
CHECKSIGVERIFY, an m-of-m CHECKMULTISIGVERIFY, or the last opcode of a script whose final stack
decides), so a run with deferred checks that all hold equals the immediate run.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Final

import coincurve

from ctplugin.elements.script import next_op, push_data, script_num_decode, script_num_encode
from ctplugin.errors import EncodingError
from ctplugin.hashes import SHA256_IV, hash160, ripemd160, sha256, sha256_compress
from ctplugin.script.checker import Checker, ExecData, SigVersion
from ctplugin.script.errors import ScriptError, ScriptErrorCode
from ctplugin.script.flags import Bits as F
from ctplugin.script.sighash import PrecomputedTransaction, SpentOutput
from ctplugin.script.taproot import (
    ANNEX_TAG,
    CONTROL_BASE_SIZE,
    CONTROL_MAX_SIZE,
    CONTROL_NODE_SIZE,
    LEAF_MASK,
    LEAF_VERSION_TAPSCRIPT,
    branch_hash,
    leaf_hash,
    tweak_hash,
)
from ctplugin.secp256k1 import libsecp
from ctplugin.serialize import compact_size, var_bytes

E = ScriptErrorCode

MAX_SCRIPT_ELEMENT_SIZE = 520
MAX_OPS_PER_SCRIPT = 201
MAX_PUBKEYS_PER_MULTISIG = 20
MAX_SCRIPT_SIZE = 10_000
MAX_STACK_SIZE = 1000
MAX_SIZE = 0x0200_0000  # serialize.h: the largest vector a node deserializes
VALIDATION_WEIGHT_PER_SIGOP_PASSED = 50
VALIDATION_WEIGHT_OFFSET = 50
LEAF_VERSION_SIMPLICITY = 0xBE

_TRUE = b"\x01"
_FALSE = b""
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_SHA256_MAX = 0x1FFF_FFFF_FFFF_FFFF  # CSHA256::SafeWrite: the longest message in bytes

DISABLED_OPCODES = frozenset((0x8D, 0x8E, 0x95, 0x96, 0x97))  # 2MUL 2DIV MUL DIV MOD

_SMALL_INTS = {0x4F: -1, **{0x50 + n: n for n in range(1, 17)}}
_HASH_OPS = frozenset((0xA6, 0xA7, 0xA8, 0xA9, 0xAA))
_UNARY_NUM = frozenset((0x8B, 0x8C, 0x8F, 0x90, 0x91, 0x92))
_BINARY_NUM = frozenset((0x93, 0x94, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xA2, 0xA3,
                         0xA4))
_UPGRADABLE_NOPS = frozenset((0xB0, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9))
_TAPSCRIPT_ONLY = frozenset(range(0xC4, 0xE5))  # OP_SHA256INITIALIZE … OP_TWEAKVERIFY
_ARITH64_BINARY = frozenset(range(0xD7, 0xDB)) | frozenset(range(0xDC, 0xE0))


def is_op_success(op: int) -> bool:
    """Elements' IsOpSuccess (tapscript): 80, 98, 137–138, 141–142, 149–151, 187–191,
    229–254 — not Bitcoin's list (OP_CAT … OP_RSHIFT and 0xC0–0xE4 are real opcodes here)."""
    return (op == 80 or op == 98 or 137 <= op <= 138 or 141 <= op <= 142 or 149 <= op <= 151
            or 187 <= op <= 191 or 229 <= op <= 254)


def cast_to_bool(data: bytes) -> bool:
    """CastToBool: any non-zero byte, except a final 0x80 alone (negative zero)."""
    for i, byte in enumerate(data):
        if byte:
            return not (i == len(data) - 1 and byte == 0x80)
    return False


def check_minimal_push(data: bytes, op: int) -> bool:
    """CheckMinimalPush: the push uses the shortest opcode for its data."""
    size = len(data)
    if size == 0:
        return op == 0
    if size == 1 and 1 <= data[0] <= 16:
        return False
    if size == 1 and data[0] == 0x81:
        return False
    if size <= 75:
        return op == size
    if size <= 255:
        return op == 0x4C
    if size <= 65535:
        return op == 0x4D
    return True


def is_push_only(script: bytes, start: int = 0) -> bool:
    """CScript::IsPushOnly from ``start``: every opcode decodes and is at most OP_16
    (OP_RESERVED counts)."""
    pos, end = start, len(script)
    while pos < end:
        step = next_op(script, pos)
        if step is None or step[0] > 0x60:
            return False
        pos = step[2]
    return True


def witness_program(script: bytes) -> tuple[int, bytes] | None:
    """CScript::IsWitnessProgram: (version, program) for OP_n followed by one 2–40 byte push."""
    size = len(script)
    if size < 4 or size > 42:
        return None
    if script[0] != 0 and not 0x51 <= script[0] <= 0x60:
        return None
    if script[1] + 2 != size:
        return None
    return (0 if script[0] == 0 else script[0] - 0x50), script[2:]


def is_pay_to_script_hash(script: bytes) -> bool:
    """CScript::IsPayToScriptHash: OP_HASH160 <20> OP_EQUAL."""
    return len(script) == 23 and script[0] == 0xA9 and script[1] == 0x14 and script[22] == 0x87


def find_and_delete(script: bytes, pattern: bytes) -> tuple[bytes, int]:
    """FindAndDelete: the script without every occurrence of ``pattern`` that starts at an
    opcode boundary (matches are removed repeatedly at the same position), and the count."""
    if not pattern:
        return script, 0
    found = 0
    result = bytearray()
    pc = pc2 = 0
    end, width = len(script), len(pattern)
    while True:
        result += script[pc2:pc]
        while end - pc >= width and script[pc:pc + width] == pattern:
            pc += width
            found += 1
        pc2 = pc
        if pc >= end:
            break
        step = next_op(script, pc)
        if step is None:
            break
        pc = step[2]
    if not found:
        return script, 0
    result += script[pc2:]
    return bytes(result), found


def _num(data: bytes, minimal: bool, max_size: int = 4) -> int:
    try:
        return script_num_decode(data, minimal, max_size)
    except EncodingError:  # Elements throws scriptnum_error, caught as UNKNOWN_ERROR
        raise ScriptError(E.UNKNOWN_ERROR, "bad script number") from None


def _hash(op: int, data: bytes) -> bytes:
    if op == 0xA6:
        return ripemd160(data)
    if op == 0xA7:
        return hashlib.sha1(data).digest()  # OP_SHA1 is consensus, not a security choice
    if op == 0xA8:
        return sha256(data)
    if op == 0xA9:
        return hash160(data)
    return sha256(sha256(data))


def _le8(value: int) -> bytes:
    return (value & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little")


def _read_le8_signed(data: bytes) -> int:
    return int.from_bytes(data, "little", signed=True)


def serialized_stack_size(stack: tuple[bytes, ...] | list[bytes]) -> int:
    """GetSerializeSize of a witness stack (compact sizes plus the items)."""
    return len(compact_size(len(stack))) + sum(len(var_bytes(item)) for item in stack)


# --- streaming SHA256 (Elements' CSHA256 Save/Load) ----------------------------------------------

class Sha256Context:
    """CSHA256 as the tapscript stack carries it: ``save`` gives Elements' 40 + (n mod 64)
    bytes (state big-endian, bit count little-endian, the buffered tail)."""

    __slots__ = ("buf", "count", "state")

    def __init__(self) -> None:
        self.state = list(SHA256_IV)
        self.count = 0
        self.buf = b""

    @classmethod
    def load(cls, data: bytes) -> Sha256Context:
        """CSHA256::Load; SHA2_CONTEXT_LOAD for a malformed context."""
        if len(data) < 40:
            raise ScriptError(E.SHA2_CONTEXT_LOAD)
        bits = int.from_bytes(data[32:40], "little")
        tail = (bits >> 3) % 64
        if bits & 7 or len(data) != 40 + tail:
            raise ScriptError(E.SHA2_CONTEXT_LOAD)
        ctx = cls()
        ctx.state = list(struct.unpack(">8I", data[:32]))
        ctx.count = bits >> 3
        ctx.buf = data[40:]
        return ctx

    def write(self, data: bytes) -> None:
        """CSHA256::SafeWrite; SHA2_CONTEXT_WRITE past SHA-256's message length limit."""
        if self.count > _SHA256_MAX or _SHA256_MAX - self.count < len(data):
            raise ScriptError(E.SHA2_CONTEXT_WRITE)
        self._absorb(data)

    def _absorb(self, data: bytes) -> None:
        self.count += len(data)
        buf = self.buf + data
        full = len(buf) - len(buf) % 64
        for i in range(0, full, 64):
            self.state = list(sha256_compress(self.state, buf[i:i + 64]))
        self.buf = buf[full:]

    def save(self) -> bytes:
        return (struct.pack(">8I", *self.state)
                + ((self.count << 3) & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little") + self.buf)

    def finalize(self) -> bytes:
        length = ((self.count << 3) & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "big")
        self._absorb(b"\x80" + bytes((119 - self.count % 64) % 64))
        self._absorb(length)
        return struct.pack(">8I", *self.state)


# --- introspection pushes -------------------------------------------------------------------------

def _asset_items(asset: bytes) -> list[bytes]:
    """pushasset: the commitment without its prefix, then the prefix."""
    full = b"\x01" + asset if len(asset) == 32 else asset
    return [full[1:], full[:1]]


def _value_items(value: int | bytes | None) -> list[bytes]:
    """pushvalue: explicit values as 8 bytes little-endian (null: zero) with prefix 0x01;
    commitments as their 32 bytes after the prefix, then the prefix."""
    if value is None:
        return [bytes(8), b"\x01"]
    if isinstance(value, int):
        return [value.to_bytes(8, "little"), b"\x01"]
    return [value[1:], value[:1]]


def _spk_items(script: bytes) -> list[bytes]:
    """pushspk: a witness program and its version, else SHA256(script) and -1."""
    program = witness_program(script)
    if program is not None:
        return [program[1], script_num_encode(program[0])]
    return [sha256(script), script_num_encode(-1)]


class _Machine:
    """One EvalScript run: the stacks, the condition stack and the position in the script.
    ``decisive``: the script's final stack decides the verification (a false top fails it),
    so its last CHECKSIG may be deferred."""

    __slots__ = ("alt", "checker", "code_start", "decisive", "execdata", "falses", "flags",
                 "minimal", "op_count", "script", "sigversion", "stack", "vexec")

    def __init__(self, stack: list[bytes], script: bytes, flags: int, checker: Checker,
                 sigversion: SigVersion, execdata: ExecData, decisive: bool = False) -> None:
        self.stack = stack
        self.alt: list[bytes] = []
        self.script = script
        self.flags = flags
        self.minimal = bool(flags & F.MINIMALDATA)
        self.checker = checker
        self.sigversion = sigversion
        self.execdata = execdata
        self.decisive = decisive
        self.vexec: list[bool] = []
        self.falses = 0
        self.op_count = 0
        self.code_start = 0

    # stack helpers ------------------------------------------------------------------------

    def need(self, n: int) -> None:
        if len(self.stack) < n:
            raise ScriptError(E.INVALID_STACK_OPERATION)

    def at(self, n: int) -> None:
        """A read through ``stacktop(-n)`` without a size check: Elements' ``at()`` throws,
        and the exception becomes UNKNOWN_ERROR."""
        if len(self.stack) < n:
            raise ScriptError(E.UNKNOWN_ERROR, "stack item missing")

    def num(self, item: bytes, max_size: int = 4) -> int:
        return _num(item, self.minimal, max_size)

    def push_num(self, n: int) -> None:
        self.stack.append(script_num_encode(n))

    def push_bool(self, value: bool) -> None:
        self.stack.append(_TRUE if value else _FALSE)

    def pre_tapscript(self) -> None:
        """Tapscript-only opcodes are BAD_OPCODE in legacy and v0 scripts."""
        if self.sigversion in (SigVersion.BASE, SigVersion.WITNESS_V0):
            raise ScriptError(E.BAD_OPCODE)

    def spend_weight(self) -> None:
        """update_validation_weight: one signature-sized operation of the tapscript budget."""
        self.execdata.weight_left -= VALIDATION_WEIGHT_PER_SIGOP_PASSED
        if self.execdata.weight_left < 0:
            raise ScriptError(E.TAPSCRIPT_VALIDATION_WEIGHT)

    # the loop -----------------------------------------------------------------------------

    def run(self) -> None:
        script, end = self.script, len(self.script)
        legacy = self.sigversion in (SigVersion.BASE, SigVersion.WITNESS_V0)
        if legacy and end > MAX_SCRIPT_SIZE:
            raise ScriptError(E.SCRIPT_SIZE)
        const_code = self.sigversion == SigVersion.BASE and bool(self.flags & F.CONST_SCRIPTCODE)
        self.execdata.codesep_pos = 0xFFFF_FFFF
        pos = opcode_pos = 0
        while pos < end:
            executing = self.falses == 0
            step = next_op(script, pos)
            if step is None:
                raise ScriptError(E.BAD_OPCODE)
            op, data, pos = step
            if data is not None:
                if len(data) > MAX_SCRIPT_ELEMENT_SIZE:
                    raise ScriptError(E.PUSH_SIZE)
                if executing:
                    if self.minimal and not check_minimal_push(data, op):
                        raise ScriptError(E.MINIMALDATA)
                    self.stack.append(data)
            else:
                if legacy and op > 0x60:
                    self.op_count += 1
                    if self.op_count > MAX_OPS_PER_SCRIPT:
                        raise ScriptError(E.OP_COUNT)
                if op in DISABLED_OPCODES:
                    raise ScriptError(E.DISABLED_OPCODE)
                if op == 0xAB and const_code:  # even in an unexecuted branch
                    raise ScriptError(E.OP_CODESEPARATOR)
                if executing or 0x63 <= op <= 0x68:
                    self.step(op, pos, opcode_pos, executing)
            if len(self.stack) + len(self.alt) > MAX_STACK_SIZE:
                raise ScriptError(E.STACK_SIZE)
            opcode_pos += 1
        if self.vexec:
            raise ScriptError(E.UNBALANCED_CONDITIONAL)

    # one opcode (executing, or a conditional opcode in an unexecuted branch) --------------

    def step(self, op: int, pos: int, opcode_pos: int, executing: bool) -> None:
        """Dispatch by opcode family (the ranges of Elements' ``opcodetype``)."""
        if op in _SMALL_INTS:
            self.push_num(_SMALL_INTS[op])
        elif 0x61 <= op <= 0x6A:
            self.control_op(op, executing)
        elif 0x6B <= op <= 0x82:
            self.stack_op(op)
        elif 0x83 <= op <= 0x86:
            self.string_op(op)
        elif op in (0x87, 0x88):  # OP_EQUAL / OP_EQUALVERIFY
            self.need(2)
            self.push_bool(self.stack.pop() == self.stack.pop())
            if op == 0x88:
                self.verify(E.EQUALVERIFY)
        elif op in _UNARY_NUM:
            self.unary_num(op)
        elif op in _BINARY_NUM:
            self.binary_num(op)
        elif op in (0x98, 0x99):
            self.shift_op(op)
        elif op == 0xA5:  # OP_WITHIN
            self.need(3)
            x, lo, hi = (self.num(item) for item in self.stack[-3:])
            del self.stack[-3:]
            self.push_bool(lo <= x < hi)
        elif op in _HASH_OPS:
            self.need(1)
            self.stack.append(_hash(op, self.stack.pop()))
        elif op == 0xAB:  # OP_CODESEPARATOR
            self.code_start = pos
            self.execdata.codesep_pos = opcode_pos
        elif op in (0xAC, 0xAD):
            self.checksig_op(op, pos)
        elif op == 0xBA:
            self.checksigadd()
        elif op in (0xAE, 0xAF):
            self.checkmultisig(op, pos)
        elif op == 0xB1:
            self.checklocktimeverify()
        elif op == 0xB2:
            self.checksequenceverify()
        elif op in _UPGRADABLE_NOPS:
            if self.flags & F.DISCOURAGE_UPGRADABLE_NOPS:
                raise ScriptError(E.DISCOURAGE_UPGRADABLE_NOPS)
        elif op == 0xC0:
            self.deterministic_random()
        elif op in (0xC1, 0xC2):
            self.checksigfromstack(op)
        elif op == 0xC3:
            self.substr(lazy=True)
        elif op in _TAPSCRIPT_ONLY:
            self.pre_tapscript()
            self.tapscript_op(op)
        else:  # OP_RESERVED, OP_VER, OP_RESERVED1/2, 0xBB–0xBF, 0xE5 and above
            raise ScriptError(E.BAD_OPCODE)

    def verify(self, failure: ScriptErrorCode) -> None:
        """The VERIFY half of an opcode: pop the result just pushed, ``failure`` if false."""
        if not cast_to_bool(self.stack[-1]):
            raise ScriptError(failure)
        self.stack.pop()

    # flow control -------------------------------------------------------------------------

    def control_op(self, op: int, executing: bool) -> None:
        """OP_NOP, the conditionals (also run in unexecuted branches), OP_VERIFY, OP_RETURN."""
        if op == 0x61:  # OP_NOP
            pass
        elif op in (0x63, 0x64):  # OP_IF / OP_NOTIF
            value = self.branch_condition(op) if executing else False
            self.vexec.append(value)
            self.falses += not value
        elif op == 0x67:  # OP_ELSE
            if not self.vexec:
                raise ScriptError(E.UNBALANCED_CONDITIONAL)
            # flip the innermost branch (Elements' ConditionStack only tracks whether any
            # entry is false, which this count answers the same way)
            was_true = self.vexec[-1]
            self.vexec[-1] = not was_true
            self.falses += 1 if was_true else -1
        elif op == 0x68:  # OP_ENDIF
            if not self.vexec:
                raise ScriptError(E.UNBALANCED_CONDITIONAL)
            self.falses -= not self.vexec.pop()
        elif op == 0x69:  # OP_VERIFY
            self.need(1)
            self.verify(E.VERIFY)
        elif op == 0x6A:
            raise ScriptError(E.OP_RETURN)
        else:  # OP_VER, OP_VERIF, OP_VERNOTIF (the latter two even in an unexecuted branch)
            raise ScriptError(E.BAD_OPCODE)

    def branch_condition(self, op: int) -> bool:
        """The executed OP_IF / OP_NOTIF's condition, popped: in tapscript empty or 0x01 only
        (consensus); in witness v0 the same under MINIMALIF (policy); anything in legacy."""
        if not self.stack:
            raise ScriptError(E.UNBALANCED_CONDITIONAL)
        top = self.stack[-1]
        if len(top) > 1 or (len(top) == 1 and top[0] != 1):
            if self.sigversion == SigVersion.TAPSCRIPT:
                raise ScriptError(E.TAPSCRIPT_MINIMALIF)
            if self.sigversion == SigVersion.WITNESS_V0 and self.flags & F.MINIMALIF:
                raise ScriptError(E.MINIMALIF)
        value = cast_to_bool(top)
        self.stack.pop()
        return not value if op == 0x64 else value

    # stack, splice and bitwise ------------------------------------------------------------

    def stack_op(self, op: int) -> None:
        stack = self.stack
        if op == 0x6B:  # OP_TOALTSTACK
            self.need(1)
            self.alt.append(stack.pop())
        elif op == 0x6C:  # OP_FROMALTSTACK
            if not self.alt:
                raise ScriptError(E.INVALID_ALTSTACK_OPERATION)
            stack.append(self.alt.pop())
        elif op == 0x6D:  # OP_2DROP
            self.need(2)
            del stack[-2:]
        elif op == 0x6E:  # OP_2DUP
            self.need(2)
            stack.extend(stack[-2:])
        elif op == 0x6F:  # OP_3DUP
            self.need(3)
            stack.extend(stack[-3:])
        elif op == 0x70:  # OP_2OVER
            self.need(4)
            stack.extend(stack[-4:-2])
        elif op == 0x71:  # OP_2ROT
            self.need(6)
            moved = stack[-6:-4]
            del stack[-6:-4]
            stack.extend(moved)
        elif op == 0x72:  # OP_2SWAP
            self.need(4)
            stack[-4:] = stack[-2:] + stack[-4:-2]
        elif op == 0x73:  # OP_IFDUP
            self.need(1)
            if cast_to_bool(stack[-1]):
                stack.append(stack[-1])
        elif op == 0x74:  # OP_DEPTH
            self.push_num(len(stack))
        elif op == 0x75:  # OP_DROP
            self.need(1)
            stack.pop()
        elif op == 0x76:  # OP_DUP
            self.need(1)
            stack.append(stack[-1])
        elif op == 0x77:  # OP_NIP
            self.need(2)
            del stack[-2]
        elif op == 0x78:  # OP_OVER
            self.need(2)
            stack.append(stack[-2])
        elif op in (0x79, 0x7A):  # OP_PICK / OP_ROLL
            self.need(2)
            n = self.num(stack[-1])
            stack.pop()
            if n < 0 or n >= len(stack):
                raise ScriptError(E.INVALID_STACK_OPERATION)
            item = stack[-n - 1]
            if op == 0x7A:
                del stack[-n - 1]
            stack.append(item)
        elif op == 0x7B:  # OP_ROT
            self.need(3)
            stack[-3:] = [stack[-2], stack[-1], stack[-3]]
        elif op == 0x7C:  # OP_SWAP
            self.need(2)
            stack[-2], stack[-1] = stack[-1], stack[-2]
        elif op == 0x7D:  # OP_TUCK
            self.need(2)
            stack.insert(-2, stack[-1])
        elif op == 0x7E:  # OP_CAT
            self.need(2)
            if len(stack[-2]) + len(stack[-1]) > MAX_SCRIPT_ELEMENT_SIZE:
                raise ScriptError(E.INVALID_STACK_OPERATION)
            stack[-2:] = [stack[-2] + stack[-1]]
        elif op == 0x7F:  # OP_SUBSTR
            self.substr(lazy=False)
        elif op in (0x80, 0x81):  # OP_LEFT / OP_RIGHT
            self.need(2)
            data = stack[-2]
            start = self.num(stack[-1])
            if start < 0:
                raise ScriptError(E.UNKNOWN_ERROR, "negative OP_LEFT/OP_RIGHT length")
            if op == 0x81:
                out = b"" if start >= len(data) else data[start:]
            else:
                out = data if start >= len(data) else data[:start]
            stack[-2:] = [out]
        else:  # 0x82 OP_SIZE
            self.need(1)
            self.push_num(len(stack[-1]))

    def substr(self, lazy: bool) -> None:
        """OP_SUBSTR (strict bounds) and OP_SUBSTR_LAZY (clamped bounds)."""
        stack = self.stack
        self.need(3)
        data = stack[-3]
        start = self.num(stack[-2])
        length = self.num(stack[-1])
        if lazy:
            start, length = max(start, 0), max(length, 0)
            if start >= len(data):
                stack[-3:] = [b""]
                return
            length = min(length, MAX_SCRIPT_ELEMENT_SIZE)
            if start + length > len(data):
                length = len(data) - start
        if (length < 0 or start < 0 or start >= len(data) or length > len(data)
                or start + length > len(data)):
            raise ScriptError(E.INVALID_STACK_OPERATION)
        stack[-3:] = [data[start:start + length]]

    def string_op(self, op: int) -> None:
        """OP_INVERT, OP_AND, OP_OR, OP_XOR (equal lengths for the binary ones)."""
        stack = self.stack
        if op == 0x83:
            self.need(1)
            stack[-1] = bytes(b ^ 0xFF for b in stack[-1])
            return
        self.need(2)
        a, b = stack[-1], stack[-2]
        if len(a) != len(b):
            raise ScriptError(E.INVALID_STACK_OPERATION)
        x, y = int.from_bytes(a, "little"), int.from_bytes(b, "little")
        r = x & y if op == 0x84 else x | y if op == 0x85 else x ^ y
        stack[-2:] = [r.to_bytes(len(a), "little")]

    def shift_op(self, op: int) -> None:
        """OP_LSHIFT / OP_RSHIFT on a little-endian byte string, result without trailing zero
        bytes (Elements' byte-wise loops)."""
        stack = self.stack
        self.need(2)
        data = stack[-2]
        n = self.num(stack[-1])
        if n < 0:
            raise ScriptError(E.UNKNOWN_ERROR if op == 0x99 else E.INVALID_STACK_OPERATION)
        full_bytes, bits = divmod(n, 8)
        if op == 0x99:  # OP_RSHIFT
            if full_bytes >= len(data):
                stack[-2:] = [b""]
                return
            value = int.from_bytes(data[full_bytes:], "little") >> bits
            out = value.to_bytes(len(data) - full_bytes, "little")
        else:  # OP_LSHIFT
            if len(data) + full_bytes + (1 if bits else 0) > MAX_SCRIPT_ELEMENT_SIZE:
                raise ScriptError(E.INVALID_STACK_OPERATION)
            value = int.from_bytes(data, "little") << bits
            out = bytes(full_bytes) + value.to_bytes(len(data) + 1, "little")
        stack[-2:] = [out.rstrip(b"\x00")]

    # numbers ------------------------------------------------------------------------------

    def unary_num(self, op: int) -> None:
        self.need(1)
        n = self.num(self.stack[-1])
        self.stack.pop()
        if op == 0x8B:
            n += 1
        elif op == 0x8C:
            n -= 1
        elif op == 0x8F:
            n = -n
        elif op == 0x90:
            n = abs(n)
        elif op == 0x91:
            n = int(n == 0)
        else:
            n = int(n != 0)
        self.push_num(n)

    def binary_num(self, op: int) -> None:
        stack = self.stack
        self.need(2)
        a, b = self.num(stack[-2]), self.num(stack[-1])
        del stack[-2:]
        if op == 0x93:
            r = a + b
        elif op == 0x94:
            r = a - b
        elif op == 0x9A:
            r = int(a != 0 and b != 0)
        elif op == 0x9B:
            r = int(a != 0 or b != 0)
        elif op in (0x9C, 0x9D):
            r = int(a == b)
        elif op == 0x9E:
            r = int(a != b)
        elif op == 0x9F:
            r = int(a < b)
        elif op == 0xA0:
            r = int(a > b)
        elif op == 0xA1:
            r = int(a <= b)
        elif op == 0xA2:
            r = int(a >= b)
        elif op == 0xA3:
            r = min(a, b)
        else:
            r = max(a, b)
        self.push_num(r)
        if op == 0x9D:
            self.verify(E.NUMEQUALVERIFY)

    def deterministic_random(self) -> None:
        """OP_DETERMINISTICRANDOM: a value in [min, max) from SHA256(seed ‖ counter) words,
        rejection-sampled to a multiple of the range."""
        stack = self.stack
        self.need(3)
        seed = stack[-3]
        lo, hi = self.num(stack[-2]), self.num(stack[-1])
        if lo > hi:
            raise ScriptError(E.UNKNOWN_ERROR, "OP_DETERMINISTICRANDOM min above max")
        if lo == hi:
            stack[-3:] = [script_num_encode(lo)]
            return
        span = min(hi - lo, 0x7FFF_FFFF)  # CScriptNum::getint clamps to int
        limit = ((1 << 64) - 1) // span * span
        counter = 0
        while True:
            digest = hashlib.sha256(seed + counter.to_bytes(8, "little")).digest()
            counter += 1
            words = [int.from_bytes(digest[8 * i: 8 * i + 8], "little") for i in range(3)]
            chosen = next((w for w in words if w <= limit), None)
            if chosen is not None:
                break
        stack[-3:] = [script_num_encode(chosen % span + lo)]

    # signatures ---------------------------------------------------------------------------

    def ecdsa_failure(self, op: int, pos: int, verify_op: int,
                      fail: ScriptErrorCode) -> ScriptErrorCode | None:
        """The error a false ECDSA result certainly leads to (so the check may be deferred):
        a VERIFY opcode's, or EVAL_FALSE for the last opcode of a decisive script."""
        if op == verify_op:
            return fail
        if self.decisive and pos == len(self.script):
            return E.EVAL_FALSE
        return None

    def checksig_op(self, op: int, pos: int) -> None:
        """OP_CHECKSIG / OP_CHECKSIGVERIFY."""
        stack = self.stack
        self.need(2)
        sig, pubkey = stack[-2], stack[-1]
        ok = self.checksig(sig, pubkey, self.ecdsa_failure(op, pos, 0xAD, E.CHECKSIGVERIFY))
        del stack[-2:]
        self.push_bool(ok)
        if op == 0xAD:
            self.verify(E.CHECKSIGVERIFY)

    def checksigadd(self) -> None:
        """OP_CHECKSIGADD (tapscript only): n + (the signature is valid)."""
        self.pre_tapscript()
        stack = self.stack
        self.need(3)
        sig, n, pubkey = stack[-3], self.num(stack[-2]), stack[-1]
        ok = self.checksig(sig, pubkey, None)
        del stack[-3:]
        self.push_num(n + ok)

    def script_code(self) -> bytes:
        """The script from the last executed OP_CODESEPARATOR on."""
        return self.script[self.code_start:]

    def checksig(self, sig: bytes, pubkey: bytes, failure: ScriptErrorCode | None) -> bool:
        """EvalChecksig: the result of the check (False = the push of false); raises for the
        failures that end the script. ``failure``: the error a false result leads to, if it
        must lead to one (the ECDSA check may then be deferred)."""
        if self.sigversion == SigVersion.TAPSCRIPT:
            return self.checksig_tapscript(sig, pubkey)
        code = self.script_code()
        if self.sigversion == SigVersion.BASE:
            code, found = find_and_delete(code, push_data(sig))
            if found and self.flags & F.CONST_SCRIPTCODE:
                raise ScriptError(E.SIG_FINDANDDELETE)
        check_signature_encoding(sig, self.flags)
        check_pubkey_encoding(pubkey, self.flags, self.sigversion)
        ok = self.checker.check_ecdsa(sig, pubkey, code, self.sigversion, failure)
        if not ok and self.flags & F.NULLFAIL and sig:
            raise ScriptError(E.SIG_NULLFAIL)
        return ok

    def tapscript_key_rules(self, sig: bytes, pubkey: bytes) -> bool:
        """The order EvalChecksigTapscript and EvalTapScriptCheckSigFromStack share: the
        budget for a non-empty signature, an empty key fails, a key of unknown type succeeds
        (or is discouraged). True when a 32-byte key's non-empty signature must be checked."""
        if sig:
            self.spend_weight()
        if not pubkey:
            raise ScriptError(E.PUBKEYTYPE)
        if len(pubkey) != 32:
            if self.flags & F.DISCOURAGE_UPGRADABLE_PUBKEYTYPE:
                raise ScriptError(E.DISCOURAGE_UPGRADABLE_PUBKEYTYPE)
            return False
        return bool(sig)

    def checksig_tapscript(self, sig: bytes, pubkey: bytes) -> bool:
        if self.tapscript_key_rules(sig, pubkey):
            self.checker.check_schnorr(sig, pubkey, SigVersion.TAPSCRIPT, self.execdata)
        return bool(sig)

    def checksigfromstack(self, op: int) -> None:
        """OP_CHECKSIGFROMSTACK(VERIFY) (sig data pubkey): before tapscript an ECDSA
        signature (no hash-type byte) over SHA256(data) that must verify; in tapscript BIP340
        over the data, with CHECKSIG's tapscript rules."""
        stack = self.stack
        self.need(3)
        sig, data, pubkey = stack[-3], stack[-2], stack[-1]
        if self.sigversion in (SigVersion.BASE, SigVersion.WITNESS_V0):
            check_signature_encoding(sig, self.flags | F.NO_SIGHASH_BYTE)
            check_pubkey_encoding(pubkey, self.flags, self.sigversion)
            if not libsecp.ecdsa_verify(pubkey, sig, sha256(data)):
                raise ScriptError(E.CHECKSIGVERIFY)
            ok = True
        else:
            if self.tapscript_key_rules(sig, pubkey):
                self.checker.check_schnorr_message(sig, pubkey, data)
            ok = bool(sig)
        del stack[-3:]
        self.push_bool(ok)
        if op == 0xC2:
            self.verify(E.CHECKSIGVERIFY)

    def checkmultisig(self, op: int, pos: int) -> None:
        if self.sigversion == SigVersion.TAPSCRIPT:
            raise ScriptError(E.TAPSCRIPT_CHECKMULTISIG)
        stack = self.stack
        i = 1
        self.need(i)
        n_keys = self.num(stack[-i])
        if n_keys < 0 or n_keys > MAX_PUBKEYS_PER_MULTISIG:
            raise ScriptError(E.PUBKEY_COUNT)
        self.op_count += n_keys
        if self.op_count > MAX_OPS_PER_SCRIPT:
            raise ScriptError(E.OP_COUNT)
        i += 1
        ikey = i
        ikey2 = n_keys + 2  # items above the signatures: n, the keys, m
        i += n_keys
        self.need(i)
        n_sigs = self.num(stack[-i])
        if n_sigs < 0 or n_sigs > n_keys:
            raise ScriptError(E.SIG_COUNT)
        i += 1
        isig = i
        i += n_sigs
        self.need(i)
        code = self.script_code()
        if self.sigversion == SigVersion.BASE:  # drop every signature from a legacy scriptCode
            for k in range(n_sigs):
                code, found = find_and_delete(code, push_data(stack[-isig - k]))
                if found and self.flags & F.CONST_SCRIPTCODE:
                    raise ScriptError(E.SIG_FINDANDDELETE)
        # Only when every key must match a signature (m = n) does no check legitimately fail.
        failure = (self.ecdsa_failure(op, pos, 0xAF, E.CHECKMULTISIGVERIFY)
                   if n_sigs == n_keys else None)
        success = True
        while success and n_sigs > 0:
            sig, pubkey = stack[-isig], stack[-ikey]
            check_signature_encoding(sig, self.flags)
            check_pubkey_encoding(pubkey, self.flags, self.sigversion)
            if self.checker.check_ecdsa(sig, pubkey, code, self.sigversion, failure):
                isig += 1
                n_sigs -= 1
            ikey += 1
            n_keys -= 1
            if n_sigs > n_keys:
                success = False
        # clean up the arguments; with NULLFAIL a failed check needs every signature empty
        while i > 1:
            i -= 1
            if not success and self.flags & F.NULLFAIL and not ikey2 and stack[-1]:
                raise ScriptError(E.SIG_NULLFAIL)
            if ikey2 > 0:
                ikey2 -= 1
            stack.pop()
        # the extra argument CHECKMULTISIG consumes (NULLDUMMY: it must be empty)
        self.need(1)
        if self.flags & F.NULLDUMMY and stack[-1]:
            raise ScriptError(E.SIG_NULLDUMMY)
        stack.pop()
        self.push_bool(success)
        if op == 0xAF:
            self.verify(E.CHECKMULTISIGVERIFY)

    # timelocks ----------------------------------------------------------------------------

    def checklocktimeverify(self) -> None:
        if not self.flags & F.CHECKLOCKTIMEVERIFY:  # a NOP then (Elements does not discourage it)
            return
        self.need(1)
        lock_time = self.num(self.stack[-1], 5)
        if lock_time < 0:
            raise ScriptError(E.NEGATIVE_LOCKTIME)
        if not self.checker.check_locktime(lock_time):
            raise ScriptError(E.UNSATISFIED_LOCKTIME)

    def checksequenceverify(self) -> None:
        if not self.flags & F.CHECKSEQUENCEVERIFY:  # a NOP then (Elements does not discourage it)
            return
        self.need(1)
        sequence = self.num(self.stack[-1], 5)
        if sequence < 0:
            raise ScriptError(E.NEGATIVE_LOCKTIME)
        if sequence & (1 << 31):  # disabled: a NOP (upgrade room)
            return
        if not self.checker.check_sequence(sequence):
            raise ScriptError(E.UNSATISFIED_LOCKTIME)

    # tapscript-only Elements opcodes (0xC4–0xE4) ------------------------------------------

    def tapscript_op(self, op: int) -> None:
        if op <= 0xC6:
            self.sha256_op(op)
        elif op <= 0xCC:
            self.inspect_input(op)
        elif op == 0xCD:  # OP_PUSHCURRENTINPUTINDEX
            index = self.checker.index
            if index > MAX_SIZE:
                raise ScriptError(E.INTROSPECT_CONTEXT_UNAVAILABLE)
            self.push_num(index)
        elif op <= 0xD1:
            self.inspect_output(op)
        elif op <= 0xD6:
            self.inspect_tx(op)
        elif op <= 0xE2:
            self.arith64(op)
        elif op == 0xE3:
            self.ecmul_scalar_verify()
        else:
            self.tweak_verify()

    def sha256_op(self, op: int) -> None:
        """OP_SHA256INITIALIZE (in -- ctx), OP_SHA256UPDATE (ctx in -- ctx),
        OP_SHA256FINALIZE (ctx in -- hash)."""
        stack = self.stack
        if op == 0xC4:
            self.need(1)
            ctx = Sha256Context()
            ctx.write(stack[-1])
            stack[-1] = ctx.save()
            return
        self.need(2)
        ctx = Sha256Context.load(stack[-2])
        ctx.write(stack[-1])
        stack[-2:] = [ctx.save() if op == 0xC5 else ctx.finalize()]

    def context(self) -> PrecomputedTransaction:
        pre = self.checker.introspection
        if pre is None or pre.spent is None:
            raise ScriptError(E.INTROSPECT_CONTEXT_UNAVAILABLE)
        return pre

    def pop_index(self) -> int:
        self.need(1)
        index = self.num(self.stack[-1])
        self.stack.pop()
        return index

    def inspect_input(self, op: int) -> None:
        index = self.pop_index()
        pre = self.context()
        tx = pre.tx
        if not 0 <= index < len(tx.inputs):
            raise ScriptError(E.INTROSPECT_INDEX_OUT_OF_BOUNDS)
        txin = tx.inputs[index]
        assert pre.spent is not None  # context() checked it
        spent: SpentOutput = pre.spent[index]
        if op == 0xC7:  # OP_INSPECTINPUTOUTPOINT
            flag = (0x80 if txin.issuance is not None else 0) | (0x40 if txin.is_pegin else 0)
            items = [txin.prevout_hash, txin.prevout_index.to_bytes(4, "little"), bytes((flag,))]
        elif op == 0xC8:
            items = _asset_items(spent.asset)
        elif op == 0xC9:
            items = _value_items(spent.value)
        elif op == 0xCA:
            items = _spk_items(spent.script_pubkey)
        elif op == 0xCB:
            items = [txin.sequence.to_bytes(4, "little")]
        elif txin.issuance is None:  # OP_INSPECTINPUTISSUANCE: an empty top means none
            items = [_FALSE]
        else:
            issuance = txin.issuance
            items = [*_value_items(issuance.inflation_keys), *_value_items(issuance.amount),
                     issuance.asset_entropy, issuance.asset_blinding_nonce]
        self.stack.extend(items)

    def inspect_output(self, op: int) -> None:
        index = self.pop_index()
        tx = self.context().tx
        if not 0 <= index < len(tx.outputs):
            raise ScriptError(E.INTROSPECT_INDEX_OUT_OF_BOUNDS)
        out = tx.outputs[index]
        if op == 0xCE:
            items = _asset_items(out.asset)
        elif op == 0xCF:
            items = _value_items(out.value)
        elif op == 0xD0:  # OP_INSPECTOUTPUTNONCE: empty for a null nonce
            items = [out.nonce]
        else:
            items = _spk_items(out.script_pubkey)
        self.stack.extend(items)

    def inspect_tx(self, op: int) -> None:
        checker = self.checker
        if op == 0xD2:
            self.stack.append((checker.tx_version & 0xFFFF_FFFF).to_bytes(4, "little"))
        elif op == 0xD3:
            self.stack.append(checker.tx_locktime.to_bytes(4, "little"))
        elif op == 0xD4:
            self.push_num(checker.input_count)
        elif op == 0xD5:
            self.push_num(checker.output_count)
        else:  # OP_TXWEIGHT
            self.stack.append(_le8(self.context().tx.weight))

    def arith64(self, op: int) -> None:
        """The 64-bit arithmetic opcodes: 8-byte little-endian signed operands; an overflow
        pushes false on top of the operands, success replaces them and pushes true."""
        stack = self.stack
        if op in _ARITH64_BINARY:
            self.need(2)
            if len(stack[-1]) != 8 or len(stack[-2]) != 8:
                raise ScriptError(E.EXPECTED_8BYTES)
            a, b = _read_le8_signed(stack[-2]), _read_le8_signed(stack[-1])
            if op >= 0xDC:  # the comparisons
                holds = (a < b if op == 0xDC else a <= b if op == 0xDD else a > b if op == 0xDE
                         else a >= b)
                stack[-2:] = [_TRUE if holds else _FALSE]
                return
            if op == 0xDA:  # OP_DIV64: floor-style remainder 0 <= r < |b|
                if b == 0 or (b == -1 and a == _INT64_MIN):
                    stack.append(_FALSE)
                    return
                q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C++ truncation
                r = a - q * b
                if r < 0 and b > 0:
                    r, q = r + b, q - 1
                elif r < 0 and b < 0:
                    r, q = r - b, q + 1
                stack[-2:] = [_le8(r), _le8(q), _TRUE]
                return
            result = a + b if op == 0xD7 else a - b if op == 0xD8 else a * b
            if not _INT64_MIN <= result <= _INT64_MAX:
                stack.append(_FALSE)
                return
            stack[-2:] = [_le8(result), _TRUE]
            return
        self.need(1)
        top = stack[-1]
        if op == 0xDB:  # OP_NEG64
            if len(top) != 8:
                raise ScriptError(E.EXPECTED_8BYTES)
            a = _read_le8_signed(top)
            if a == _INT64_MIN:
                stack.append(_FALSE)
                return
            stack[-1:] = [_le8(-a), _TRUE]
        elif op == 0xE0:  # OP_SCRIPTNUMTOLE64
            stack[-1] = _le8(self.num(top))
        elif op == 0xE1:  # OP_LE64TOSCRIPTNUM
            if len(top) != 8:
                raise ScriptError(E.EXPECTED_8BYTES)
            encoded = script_num_encode(_read_le8_signed(top))
            if len(encoded) > 4:
                raise ScriptError(E.ARITHMETIC64)
            stack[-1] = encoded
        else:  # OP_LE32TOLE64
            if len(top) != 4:
                raise ScriptError(E.ARITHMETIC64)
            stack[-1] = _le8(int.from_bytes(top, "little"))

    def ecmul_scalar_verify(self) -> None:
        """OP_ECMULSCALARVERIFY (res generator scalar): res = scalar·generator, compressed."""
        self.at(3)
        res, generator, scalar = self.stack[-3:]
        if not (_is_compressed(generator) and _is_compressed(res)):
            raise ScriptError(E.PUBKEYTYPE)
        self.spend_weight()
        if len(scalar) != 32 or not _tweak_mul_verify(res, generator, scalar):
            raise ScriptError(E.ECMULTVERIFYFAIL)
        del self.stack[-3:]

    def tweak_verify(self) -> None:
        """OP_TWEAKVERIFY (tweaked tweak internal): tweaked = internal + tweak·G (x-only
        internal key, compressed tweaked key whose prefix gives the parity)."""
        self.at(3)
        tweaked, tweak, internal = self.stack[-3:]
        if not _is_compressed(tweaked) or len(internal) != 32 or len(tweak) != 32:
            raise ScriptError(E.PUBKEYTYPE)
        self.spend_weight()
        if not self.checker.check_tweak(tweaked[1:], tweaked[0] & 1, internal, tweak):
            raise ScriptError(E.ECMULTVERIFYFAIL)
        del self.stack[-3:]


def _is_compressed(key: bytes) -> bool:
    return len(key) == 33 and key[0] in (2, 3)


def _tweak_mul_verify(res: bytes, generator: bytes, scalar: bytes) -> bool:
    """CPubKey::TweakMulVerify: the generator parses, scalar·generator exists (0 < scalar < n)
    and its compressed encoding is ``res``."""
    try:
        product = coincurve.PublicKey(generator).multiply(scalar)
    except (ValueError, TypeError):
        return False
    return bool(product.format(compressed=True) == res)


def eval_script(stack: list[bytes], script: bytes, flags: int, checker: Checker,
                sigversion: SigVersion, execdata: ExecData | None = None) -> None:
    """Elements' EvalScript: runs ``script`` on ``stack`` in place; ``ScriptError`` on
    failure."""
    _Machine(stack, script, flags, checker, sigversion, execdata or ExecData()).run()


# --- signature and key encodings --------------------------------------------------------------

def is_valid_signature_encoding(sig: bytes) -> bool:
    """BIP66 strict DER (with the hash-type byte at the end): IsValidSignatureEncoding."""
    from ctplugin.elements.script import is_valid_der_signature

    return is_valid_der_signature(sig)


_HALF_N = 0x7FFFFFFF_FFFFFFFF_FFFFFFFF_FFFFFFFF_5D576E73_57A4501D_DFE92F46_681B20A0


def _is_low_s(sig: bytes) -> bool:
    """S ≤ n/2 of a strictly DER-encoded signature (hash-type byte at the end)."""
    len_r = sig[3]
    len_s = sig[5 + len_r]
    s = int.from_bytes(sig[6 + len_r: 6 + len_r + len_s], "big")
    return s <= _HALF_N


def check_signature_encoding(sig: bytes, flags: int) -> None:
    """CheckSignatureEncoding: empty is allowed; DERSIG/LOW_S/STRICTENC need strict DER,
    LOW_S a low S, STRICTENC a defined hash type (0x40 allowed with SIGHASH_RANGEPROOF).
    NO_SIGHASH_BYTE: the signature has no hash-type byte (one is assumed for the checks)."""
    if not sig:
        return
    if flags & F.NO_SIGHASH_BYTE:
        sig += b"\x01"
    if flags & (F.DERSIG | F.LOW_S | F.STRICTENC) and not is_valid_signature_encoding(sig):
        raise ScriptError(E.SIG_DER)
    if flags & F.LOW_S and not _is_low_s(sig):
        raise ScriptError(E.SIG_HIGH_S)
    if flags & F.STRICTENC:
        hash_type = sig[-1] & ~0x80
        if flags & F.SIGHASH_RANGEPROOF:
            hash_type &= ~0x40
        if not 1 <= hash_type <= 3:
            raise ScriptError(E.SIG_HASHTYPE)


def check_pubkey_encoding(pubkey: bytes, flags: int,
                          sigversion: SigVersion = SigVersion.WITNESS_V0) -> None:
    """CheckPubKeyEncoding: STRICTENC wants a compressed or uncompressed key; in witness v0
    WITNESS_PUBKEYTYPE wants a compressed one."""
    if flags & F.STRICTENC and not (
            (len(pubkey) == 33 and pubkey[0] in (2, 3)) or (len(pubkey) == 65 and pubkey[0] == 4)):
        raise ScriptError(E.PUBKEYTYPE)
    if (flags & F.WITNESS_PUBKEYTYPE and sigversion == SigVersion.WITNESS_V0
            and not _is_compressed(pubkey)):
        raise ScriptError(E.WITNESS_PUBKEYTYPE)


# --- witness programs and VerifyScript -----------------------------------------------------------

def _execute_witness_script(stack: list[bytes], script: bytes, flags: int,
                            checker: Checker, sigversion: SigVersion,
                            execdata: ExecData) -> None:
    """ExecuteWitnessScript: tapscript's OP_SUCCESSx pre-scan, item size limits, the run,
    then exactly one true element."""
    if sigversion == SigVersion.TAPSCRIPT:
        pos, end = 0, len(script)
        while pos < end:
            step = next_op(script, pos)
            if step is None:
                raise ScriptError(E.BAD_OPCODE)
            if step[1] is None and is_op_success(step[0]):
                if flags & F.DISCOURAGE_OP_SUCCESS:
                    raise ScriptError(E.DISCOURAGE_OP_SUCCESS)
                return  # OP_SUCCESSx: the spend is valid, whatever else the script says
            pos = step[2]
        if len(stack) > MAX_STACK_SIZE:
            raise ScriptError(E.STACK_SIZE)
    if any(len(item) > MAX_SCRIPT_ELEMENT_SIZE for item in stack):
        raise ScriptError(E.PUSH_SIZE)
    _Machine(stack, script, flags, checker, sigversion, execdata, decisive=True).run()
    if len(stack) != 1:
        raise ScriptError(E.CLEANSTACK)
    if not cast_to_bool(stack[0]):
        raise ScriptError(E.EVAL_FALSE)


def p2wpkh_script_code(program: bytes) -> bytes:
    """The script a P2WPKH spend runs (and signs as its scriptCode)."""
    return b"\x76\xa9\x14" + program + b"\x88\xac"


def _verify_taproot(witness: tuple[bytes, ...], program: bytes, flags: int,
                    checker: Checker) -> None:
    """BIP341/342 with Elements' tags and tapscript leaf version 0xc4."""
    if not witness:
        raise ScriptError(E.WITNESS_PROGRAM_WITNESS_EMPTY)
    stack = list(witness)
    execdata = ExecData()
    if len(stack) >= 2 and stack[-1] and stack[-1][0] == ANNEX_TAG:
        execdata.annex = stack.pop()  # non-standard (policy), committed to by the digest
    if len(stack) == 1:  # key path
        checker.check_schnorr(stack[0], program, SigVersion.TAPROOT, execdata)
        return
    control, script = stack.pop(), stack.pop()
    size = len(control)
    if (size < CONTROL_BASE_SIZE or size > CONTROL_MAX_SIZE
            or (size - CONTROL_BASE_SIZE) % CONTROL_NODE_SIZE):
        raise ScriptError(E.TAPROOT_WRONG_CONTROL_SIZE)
    version = control[0] & LEAF_MASK
    execdata.leaf_hash = leaf_hash(script, version)
    root = execdata.leaf_hash
    for i in range(CONTROL_BASE_SIZE, size, CONTROL_NODE_SIZE):
        node = control[i:i + CONTROL_NODE_SIZE]
        root = branch_hash(root, node)
    internal = control[1:CONTROL_BASE_SIZE]
    if not checker.check_tweak(program, control[0] & 1, internal, tweak_hash(internal, root)):
        raise ScriptError(E.WITNESS_PROGRAM_MISMATCH)
    if version == LEAF_VERSION_TAPSCRIPT:
        execdata.weight_left = serialized_stack_size(witness) + VALIDATION_WEIGHT_OFFSET
        _execute_witness_script(stack, script, flags, checker, SigVersion.TAPSCRIPT, execdata)
        return
    if flags & F.SIMPLICITY and version == LEAF_VERSION_SIMPLICITY:
        raise ScriptError(E.UNSUPPORTED, "Simplicity leaf")
    if flags & F.DISCOURAGE_UPGRADABLE_TAPROOT_VERSION:
        raise ScriptError(E.DISCOURAGE_UPGRADABLE_TAPROOT_VERSION)


def _verify_witness_program(witness: tuple[bytes, ...], version: int, program: bytes,
                            flags: int, checker: Checker, is_p2sh: bool) -> None:
    """VerifyWitnessProgram."""
    if version == 0:
        if len(program) == 32:  # P2WSH
            if not witness:
                raise ScriptError(E.WITNESS_PROGRAM_WITNESS_EMPTY)
            script = witness[-1]
            if sha256(script) != program:
                raise ScriptError(E.WITNESS_PROGRAM_MISMATCH)
            _execute_witness_script(list(witness[:-1]), script, flags, checker,
                                    SigVersion.WITNESS_V0, ExecData())
        elif len(program) == 20:  # P2WPKH
            if len(witness) != 2:
                raise ScriptError(E.WITNESS_PROGRAM_MISMATCH)
            _execute_witness_script(list(witness), p2wpkh_script_code(program), flags, checker,
                                    SigVersion.WITNESS_V0, ExecData())
        else:
            raise ScriptError(E.WITNESS_PROGRAM_WRONG_LENGTH)
        return
    if version == 1 and len(program) == 32 and not is_p2sh:
        if flags & F.TAPROOT:
            _verify_taproot(witness, program, flags, checker)
        return
    if not is_p2sh and version == 1 and program == b"\x4e\x73":  # pay-to-anchor
        return
    if flags & F.DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM:
        raise ScriptError(E.DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM)


_TAPROOT_KEY_PATH_FLAGS: Final = F.WITNESS | F.TAPROOT


def verify_script(script_sig: bytes, script_pubkey: bytes, witness: tuple[bytes, ...],
                  flags: int, checker: Checker) -> None:
    """Elements' VerifyScript; raises ``ScriptError``. Flags are expected in a valid
    combination (WITNESS needs P2SH, CLEANSTACK needs both), as Elements asserts."""
    if (not script_sig and len(witness) == 1 and len(script_pubkey) == 34
            and script_pubkey[0] == 0x51 and script_pubkey[1] == 0x20
            and flags & _TAPROOT_KEY_PATH_FLAGS == _TAPROOT_KEY_PATH_FLAGS):
        # The most common spend, a taproot key path, without the general walk below: with an
        # empty scriptSig and one witness item every other check there passes (no P2SH, a
        # clean stack after the witness program), except a false-valued program.
        output_key = script_pubkey[2:]
        if cast_to_bool(output_key):
            checker.check_schnorr(witness[0], output_key, SigVersion.TAPROOT, ExecData())
            return
    if flags & F.SIGPUSHONLY and not is_push_only(script_sig):
        raise ScriptError(E.SIG_PUSHONLY)
    stack: list[bytes] = []
    if script_sig:  # (an empty script changes nothing: skip building a machine)
        eval_script(stack, script_sig, flags, checker, SigVersion.BASE)
    stack_copy = list(stack) if flags & F.P2SH else []
    program = witness_program(script_pubkey)
    if program is None:
        _Machine(stack, script_pubkey, flags, checker, SigVersion.BASE, ExecData(),
                 decisive=True).run()
    else:  # OP_n <program>, both minimal pushes: the stack they leave, without a machine
        stack += (script_num_encode(program[0]), program[1])
    if not stack or not cast_to_bool(stack[-1]):
        raise ScriptError(E.EVAL_FALSE)
    had_witness = False
    if flags & F.WITNESS and program is not None:
        had_witness = True
        if script_sig:
            raise ScriptError(E.WITNESS_MALLEATED)
        _verify_witness_program(witness, program[0], program[1], flags, checker, False)
        del stack[1:]  # the stack is not clean for witness programs: bypass CLEANSTACK
    if flags & F.P2SH and is_pay_to_script_hash(script_pubkey):
        if not is_push_only(script_sig):
            raise ScriptError(E.SIG_PUSHONLY)
        stack = stack_copy
        redeem = stack.pop()
        _Machine(stack, redeem, flags, checker, SigVersion.BASE, ExecData(),
                 decisive=True).run()
        if not stack or not cast_to_bool(stack[-1]):
            raise ScriptError(E.EVAL_FALSE)
        if flags & F.WITNESS:
            program = witness_program(redeem)
            if program is not None:
                had_witness = True
                if script_sig != push_data(redeem):
                    raise ScriptError(E.WITNESS_MALLEATED_P2SH)
                _verify_witness_program(witness, program[0], program[1], flags, checker, True)
                del stack[1:]
    if flags & F.CLEANSTACK and len(stack) != 1:
        raise ScriptError(E.CLEANSTACK)
    if flags & F.WITNESS and not had_witness and witness:
        raise ScriptError(E.WITNESS_UNEXPECTED)


def verify_input(pre: PrecomputedTransaction, index: int, flags: int,
                 checker: Checker) -> None:
    """VerifyScript for input ``index`` of ``pre.tx`` against ``pre.spent[index]`` under
    ``flags``; raises ``ScriptError``."""
    if pre.spent is None:
        raise ScriptError(E.UNKNOWN_ERROR, "the spent outputs are needed")
    txin = pre.tx.inputs[index]
    verify_script(txin.script_sig, pre.spent[index].script_pubkey, txin.script_witness, flags,
                  checker)

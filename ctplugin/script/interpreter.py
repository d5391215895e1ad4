"""Script execution restricted to our chain's templates, with Elements' opcode sets and errors.

``verify_input(pre, index, flags, checker)`` is Elements' ``VerifyScript`` for one input, for the
scriptPubKeys our chain accepts (``docs/design.md`` "Scripts and signatures (our chain)"):

- bare ``OP_TRUE`` (0x51), with a push-only scriptSig and no witness;
- P2WPKH (``OP_0 <20>``): the implicit DUP HASH160 <20> EQUALVERIFY CHECKSIG;
- P2WSH (``OP_0 <32>``): the witnessScript, run by ``eval_script`` under witness v0 rules;
- P2TR (``OP_1 <32>``) key path (BIP340 against the output key) and script path with leaf
  version 0xC4 (tapscript rules: MINIMALIF, CHECKSIGADD, the validation-weight budget, empty
  signatures as false, no CHECKMULTISIG).

Everything else raises ``ScriptError(UNSUPPORTED)`` (our ``bad-txns-script-unsupported``) where
Elements would accept or offers an upgrade hook: other scriptPubKeys (P2PKH, P2SH, bare multisig,
unknown witness versions or lengths), a scriptSig that is not push-only, an annex, a leaf
version other than 0xC4, an OP_SUCCESSx in a tapscript, a tapscript public key that is neither
empty nor 32 bytes, and the Elements-only opcodes 0xC0–0xE4 (OP_CHECKSIGFROMSTACK, the
introspection and 64-bit arithmetic opcodes...) anywhere in a script we run (found by a scan
before execution). Stricter than Elements, never looser (``docs/sighash.md`` §3.7): every other
outcome — every error included — is Elements' own.

Opcode set: Elements', not Bitcoin's — OP_CAT, OP_SUBSTR, OP_LEFT, OP_RIGHT, OP_INVERT, OP_AND,
OP_OR, OP_XOR, OP_LSHIFT and OP_RSHIFT work (only 2MUL, 2DIV, MUL, DIV and MOD are disabled),
and tapscript's OP_SUCCESS set is Elements' (80, 98, 137–138, 141–142, 149–151, 187–191,
229–254).
"""

from __future__ import annotations

import hashlib

from ctplugin.elements.script import next_op, script_num_decode, script_num_encode
from ctplugin.errors import EncodingError
from ctplugin.hashes import hash160, ripemd160, sha256
from ctplugin.script.checker import ExecData, SignatureChecker, SigVersion
from ctplugin.script.errors import ScriptError, ScriptErrorCode
from ctplugin.script.flags import ScriptFlags as F
from ctplugin.script.sighash import PrecomputedTransaction, SpentOutput
from ctplugin.script.taproot import (
    ANNEX_TAG,
    LEAF_VERSION_TAPSCRIPT,
    ControlBlock,
    leaf_hash,
    tweak_hash,
)
from ctplugin.serialize import compact_size, var_bytes

E = ScriptErrorCode

MAX_SCRIPT_ELEMENT_SIZE = 520
MAX_OPS_PER_SCRIPT = 201
MAX_PUBKEYS_PER_MULTISIG = 20
MAX_SCRIPT_SIZE = 10_000
MAX_STACK_SIZE = 1000
VALIDATION_WEIGHT_PER_SIGOP_PASSED = 50
VALIDATION_WEIGHT_OFFSET = 50

_TRUE = b"\x01"
_FALSE = b""

DISABLED_OPCODES = frozenset((0x8D, 0x8E, 0x95, 0x96, 0x97))  # 2MUL 2DIV MUL DIV MOD
ELEMENTS_ONLY_OPCODES = frozenset(range(0xC0, 0xE5))
"""OP_DETERMINISTICRANDOM … OP_TWEAKVERIFY: valid Elements opcodes our chain does not run."""

_SMALL_INTS = {0x4F: -1, **{0x50 + n: n for n in range(1, 17)}}
_HASH_OPS = frozenset((0xA6, 0xA7, 0xA8, 0xA9, 0xAA))
_UNARY_NUM = frozenset((0x8B, 0x8C, 0x8F, 0x90, 0x91, 0x92))
_BINARY_NUM = frozenset((0x93, 0x94, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xA2, 0xA3,
                         0xA4))
_UPGRADABLE_NOPS = frozenset((0xB0, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9))


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


def serialized_stack_size(stack: tuple[bytes, ...] | list[bytes]) -> int:
    """GetSerializeSize of a witness stack (compact sizes plus the items)."""
    return len(compact_size(len(stack))) + sum(len(var_bytes(item)) for item in stack)


class _Machine:
    """One EvalScript run: the stacks, the condition stack and the position in the script."""

    __slots__ = ("alt", "checker", "code_start", "execdata", "falses", "flags", "minimal",
                 "op_count", "script", "sigversion", "stack", "vexec")

    def __init__(self, stack: list[bytes], script: bytes, flags: int, checker: SignatureChecker,
                 sigversion: SigVersion, execdata: ExecData) -> None:
        self.stack = stack
        self.alt: list[bytes] = []
        self.script = script
        self.flags = flags
        self.minimal = bool(flags & F.MINIMALDATA)
        self.checker = checker
        self.sigversion = sigversion
        self.execdata = execdata
        self.vexec: list[bool] = []
        self.falses = 0
        self.op_count = 0
        self.code_start = 0

    # stack helpers ------------------------------------------------------------------------

    def need(self, n: int) -> None:
        if len(self.stack) < n:
            raise ScriptError(E.INVALID_STACK_OPERATION)

    def pop(self) -> bytes:
        if not self.stack:
            raise ScriptError(E.INVALID_STACK_OPERATION)
        return self.stack.pop()

    def num(self, item: bytes, max_size: int = 4) -> int:
        return _num(item, self.minimal, max_size)

    def push_num(self, n: int) -> None:
        self.stack.append(script_num_encode(n))

    def push_bool(self, value: bool) -> None:
        self.stack.append(_TRUE if value else _FALSE)

    # the loop -----------------------------------------------------------------------------

    def run(self) -> None:
        script, end = self.script, len(self.script)
        tapscript = self.sigversion == SigVersion.TAPSCRIPT
        if not tapscript and end > MAX_SCRIPT_SIZE:
            raise ScriptError(E.SCRIPT_SIZE)
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
                if not tapscript and op > 0x60:
                    self.op_count += 1
                    if self.op_count > MAX_OPS_PER_SCRIPT:
                        raise ScriptError(E.OP_COUNT)
                if op in DISABLED_OPCODES:
                    raise ScriptError(E.DISABLED_OPCODE)
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
        elif self.sigversion == SigVersion.BASE:  # only push-only scriptSigs run as BASE here
            if op == 0x50:
                raise ScriptError(E.BAD_OPCODE)
            raise ScriptError(E.UNSUPPORTED, "scriptSig is not push-only")
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
        elif op in ELEMENTS_ONLY_OPCODES:
            # Tapscript-only Elements opcodes are BAD_OPCODE in witness v0 (as in Elements);
            # the others never get here (the scan before execution refuses them).
            raise ScriptError(E.BAD_OPCODE if op >= 0xC4 else E.UNSUPPORTED)
        else:  # OP_RESERVED, OP_VER, OP_VERIF, OP_VERNOTIF, OP_RESERVED1/2, unknown, 0xFF
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
        else:  # OP_VER, OP_VERIF, OP_VERNOTIF (even in an unexecuted branch)
            raise ScriptError(E.BAD_OPCODE)

    def branch_condition(self, op: int) -> bool:
        """The executed OP_IF / OP_NOTIF's condition, popped (MINIMALIF: empty or 0x01 only;
        always so in tapscript)."""
        if not self.stack:
            raise ScriptError(E.UNBALANCED_CONDITIONAL)
        top = self.stack[-1]
        if len(top) > 1 or (len(top) == 1 and top[0] != 1):
            if self.sigversion == SigVersion.TAPSCRIPT:
                raise ScriptError(E.TAPSCRIPT_MINIMALIF)
            if self.flags & F.MINIMALIF:
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
            n = self.num(stack.pop())
            if n < 0 or n >= len(stack):
                raise ScriptError(E.INVALID_STACK_OPERATION)
            item = stack[-n - 1]
            if op == 0x7A:
                del stack[-n - 1]
            stack.append(item)
        elif op == 0x7B:  # OP_ROT
            self.need(3)
            stack.append(stack.pop(-3))
        elif op == 0x7C:  # OP_SWAP
            self.need(2)
            stack[-2], stack[-1] = stack[-1], stack[-2]
        elif op == 0x7D:  # OP_TUCK
            self.need(2)
            stack.insert(-2, stack[-1])
        elif op == 0x82:  # OP_SIZE
            self.need(1)
            self.push_num(len(stack[-1]))
        else:  # 0x7E..0x81 are string ops
            self.string_op(op)

    def string_op(self, op: int) -> None:
        """Elements' re-enabled OP_CAT, OP_SUBSTR, OP_LEFT, OP_RIGHT and bitwise logic."""
        stack = self.stack
        if op == 0x7E:  # OP_CAT
            self.need(2)
            if len(stack[-2]) + len(stack[-1]) > MAX_SCRIPT_ELEMENT_SIZE:
                raise ScriptError(E.INVALID_STACK_OPERATION)
            second = stack.pop()
            stack[-1] = stack[-1] + second
        elif op == 0x7F:  # OP_SUBSTR
            self.need(3)
            data = stack[-3]
            start, length = self.num(stack[-2]), self.num(stack[-1])
            if (length < 0 or start < 0 or start >= len(data) or length > len(data)
                    or start + length > len(data)):
                raise ScriptError(E.INVALID_STACK_OPERATION)
            del stack[-3:]
            stack.append(data[start:start + length])
        elif op in (0x80, 0x81):  # OP_LEFT / OP_RIGHT
            self.need(2)
            data, start = stack[-2], self.num(stack[-1])
            if start < 0:
                raise ScriptError(E.UNKNOWN_ERROR)
            if op == 0x81:
                result = b"" if start >= len(data) else data[start:]
            else:
                result = data if start >= len(data) else data[:start]
            del stack[-2:]
            stack.append(result)
        elif op == 0x83:  # OP_INVERT
            self.need(1)
            stack[-1] = bytes(b ^ 0xFF for b in stack[-1])
        elif op in (0x84, 0x85, 0x86):  # OP_AND / OP_OR / OP_XOR
            self.need(2)
            a, b = stack[-1], stack[-2]
            if len(a) != len(b):
                raise ScriptError(E.INVALID_STACK_OPERATION)
            x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
            value = x & y if op == 0x84 else x | y if op == 0x85 else x ^ y
            del stack[-2:]
            stack.append(value.to_bytes(len(a), "big"))

    def shift_op(self, op: int) -> None:
        """OP_LSHIFT / OP_RSHIFT over the little-endian bit string (Elements semantics: the
        result is trimmed of trailing zero bytes)."""
        stack = self.stack
        self.need(2)
        data, n = stack[-2], self.num(stack[-1])
        if n < 0:
            raise ScriptError(E.UNKNOWN_ERROR if op == 0x99 else E.INVALID_STACK_OPERATION)
        full, bits = divmod(n, 8)
        if op == 0x98:  # OP_LSHIFT
            if len(data) + full + (1 if bits else 0) > MAX_SCRIPT_ELEMENT_SIZE:
                raise ScriptError(E.INVALID_STACK_OPERATION)
            value = int.from_bytes(data, "little") << n
            out = value.to_bytes(len(data) + full + 1, "little")
        else:  # OP_RSHIFT
            if full >= len(data):
                del stack[-2:]
                stack.append(b"")
                return
            value = int.from_bytes(data, "little") >> n
            out = value.to_bytes(len(data) - full, "little")
        del stack[-2:]
        stack.append(out.rstrip(b"\x00"))

    # arithmetic ---------------------------------------------------------------------------

    def unary_num(self, op: int) -> None:
        self.need(1)
        n = self.num(self.stack.pop())
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

    # signatures ---------------------------------------------------------------------------

    def checksig_op(self, op: int, pos: int) -> None:
        """OP_CHECKSIG / OP_CHECKSIGVERIFY."""
        stack = self.stack
        self.need(2)
        sig, pubkey = stack[-2], stack[-1]
        # a false result fails the script at a VERIFY, or at the end (false on top)
        failure = (E.CHECKSIGVERIFY if op == 0xAD
                   else E.EVAL_FALSE if pos == len(self.script) else None)
        ok = self.checksig(sig, pubkey, failure)
        del stack[-2:]
        self.push_bool(ok)
        if op == 0xAD:
            self.verify(E.CHECKSIGVERIFY)

    def checksigadd(self) -> None:
        """OP_CHECKSIGADD (tapscript only): n + (the signature is valid)."""
        if self.sigversion != SigVersion.TAPSCRIPT:
            raise ScriptError(E.BAD_OPCODE)
        stack = self.stack
        self.need(3)
        sig, n, pubkey = stack[-3], self.num(stack[-2]), stack[-1]
        ok = self.checksig(sig, pubkey, None)
        del stack[-3:]
        self.push_num(n + ok)

    def checksig(self, sig: bytes, pubkey: bytes, failure: ScriptErrorCode | None) -> bool:
        """EvalChecksig: the result of the check (False = the push of false); raises for the
        failures that end the script. ``failure``: the error a false result leads to, if it
        must lead to one (the ECDSA check may then be deferred)."""
        if self.sigversion == SigVersion.TAPSCRIPT:
            return self.checksig_tapscript(sig, pubkey)
        check_signature_encoding(sig, self.flags)
        check_pubkey_encoding(pubkey, self.flags)
        code = self.script[self.code_start:]
        ok = self.checker.check_ecdsa(sig, pubkey, code, failure)
        if not ok and self.flags & F.NULLFAIL and sig:
            raise ScriptError(E.SIG_NULLFAIL)
        return ok

    def checksig_tapscript(self, sig: bytes, pubkey: bytes) -> bool:
        ok = bool(sig)
        if ok:
            self.execdata.weight_left -= VALIDATION_WEIGHT_PER_SIGOP_PASSED
            if self.execdata.weight_left < 0:
                raise ScriptError(E.TAPSCRIPT_VALIDATION_WEIGHT)
        if not pubkey:
            raise ScriptError(E.PUBKEYTYPE)
        if len(pubkey) != 32:  # an upgradable key type: success in Elements, not on our chain
            raise ScriptError(E.UNSUPPORTED, "tapscript public key of an unknown type")
        if ok:
            self.checker.check_schnorr(sig, pubkey, SigVersion.TAPSCRIPT, self.execdata)
        return ok

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
        code = self.script[self.code_start:]
        # A false result fails the script when this is a VERIFY or the last opcode; and only
        # when every key must match a signature (m = n) does no check legitimately fail.
        failure = None
        if n_sigs == n_keys:
            failure = (E.CHECKMULTISIGVERIFY if op == 0xAF
                       else E.EVAL_FALSE if pos == len(self.script) else None)
        success = True
        while success and n_sigs > 0:
            sig, pubkey = stack[-isig], stack[-ikey]
            check_signature_encoding(sig, self.flags)
            check_pubkey_encoding(pubkey, self.flags)
            if self.checker.check_ecdsa(sig, pubkey, code, failure):
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


def eval_script(stack: list[bytes], script: bytes, flags: int, checker: SignatureChecker,
                sigversion: SigVersion, execdata: ExecData | None = None) -> None:
    """Elements' EvalScript for witness v0 and tapscript (BASE only for push-only scriptSigs):
    runs ``script`` on ``stack`` in place; ``ScriptError`` on failure."""
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
    LOW_S a low S, STRICTENC a defined hash type (0x40 allowed with SIGHASH_RANGEPROOF)."""
    if not sig:
        return
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


def check_pubkey_encoding(pubkey: bytes, flags: int) -> None:
    """CheckPubKeyEncoding (witness v0): STRICTENC wants a compressed or uncompressed key,
    WITNESS_PUBKEYTYPE a compressed one."""
    if flags & F.STRICTENC and not (
            (len(pubkey) == 33 and pubkey[0] in (2, 3)) or (len(pubkey) == 65 and pubkey[0] == 4)):
        raise ScriptError(E.PUBKEYTYPE)
    if flags & F.WITNESS_PUBKEYTYPE and not (len(pubkey) == 33 and pubkey[0] in (2, 3)):
        raise ScriptError(E.WITNESS_PUBKEYTYPE)


# --- templates --------------------------------------------------------------------------------

def _scan(script: bytes, tapscript: bool) -> None:
    """Before execution: refuse Elements-only opcodes (and OP_SUCCESSx in a tapscript) as
    UNSUPPORTED. A tapscript that does not decode is BAD_OPCODE (Elements' own pre-scan); in v0
    the decoding error is left to execution (Elements reports it only when reached)."""
    pos, end = 0, len(script)
    while pos < end:
        step = next_op(script, pos)
        if step is None:
            if tapscript:
                raise ScriptError(E.BAD_OPCODE)
            return
        op, data, pos = step
        if data is None:
            if tapscript and is_op_success(op):
                raise ScriptError(E.UNSUPPORTED, f"OP_SUCCESS opcode {op:#04x}")
            if op in ELEMENTS_ONLY_OPCODES and (tapscript or op < 0xC4):
                raise ScriptError(E.UNSUPPORTED, f"Elements-only opcode {op:#04x}")


def _execute_witness_script(stack: list[bytes], script: bytes, flags: int,
                            checker: SignatureChecker, sigversion: SigVersion,
                            execdata: ExecData) -> None:
    """ExecuteWitnessScript: item size limits, the run, then exactly one true element."""
    if sigversion == SigVersion.TAPSCRIPT and len(stack) > MAX_STACK_SIZE:
        raise ScriptError(E.STACK_SIZE)
    if any(len(item) > MAX_SCRIPT_ELEMENT_SIZE for item in stack):
        raise ScriptError(E.PUSH_SIZE)
    _Machine(stack, script, flags, checker, sigversion, execdata).run()
    if len(stack) != 1:
        raise ScriptError(E.CLEANSTACK)
    if not cast_to_bool(stack[0]):
        raise ScriptError(E.EVAL_FALSE)


def p2wpkh_script_code(program: bytes) -> bytes:
    """The script a P2WPKH spend runs (and signs as its scriptCode)."""
    return b"\x76\xa9\x14" + program + b"\x88\xac"


def _verify_taproot(witness: tuple[bytes, ...], program: bytes, flags: int,
                    checker: SignatureChecker) -> None:
    if not witness:
        raise ScriptError(E.WITNESS_PROGRAM_WITNESS_EMPTY)
    stack = list(witness)
    execdata = ExecData()
    if len(stack) >= 2 and stack[-1] and stack[-1][0] == ANNEX_TAG:
        raise ScriptError(E.UNSUPPORTED, "annex")
    if len(stack) == 1:  # key path
        checker.check_schnorr(stack[0], program, SigVersion.TAPROOT, execdata)
        return
    control, script = stack.pop(), stack.pop()
    try:
        block = ControlBlock.parse(control)
    except EncodingError:
        raise ScriptError(E.TAPROOT_WRONG_CONTROL_SIZE) from None
    execdata.leaf_hash = leaf_hash(script, block.leaf_version)
    root = block.merkle_root(execdata.leaf_hash)
    if not checker.check_tweak(program, block.parity, block.internal_key,
                               tweak_hash(block.internal_key, root)):
        raise ScriptError(E.WITNESS_PROGRAM_MISMATCH)
    if block.leaf_version != LEAF_VERSION_TAPSCRIPT:
        raise ScriptError(E.UNSUPPORTED, f"leaf version {block.leaf_version:#04x}")
    _scan(script, tapscript=True)
    execdata.weight_left = serialized_stack_size(witness) + VALIDATION_WEIGHT_OFFSET
    _execute_witness_script(stack, script, flags, checker, SigVersion.TAPSCRIPT, execdata)


def verify_input(pre: PrecomputedTransaction, index: int, flags: int,
                 checker: SignatureChecker) -> None:
    """VerifyScript for input ``index`` against ``pre.spent[index]`` under ``flags``, for our
    template set (module docstring); raises ``ScriptError``."""
    if pre.spent is None:
        raise ScriptError(E.UNKNOWN_ERROR, "the spent outputs are needed")
    spent: SpentOutput = pre.spent[index]
    txin = pre.tx.inputs[index]
    spk = spent.script_pubkey
    witness = txin.script_witness
    stack: list[bytes] = []
    if txin.script_sig:  # push-only scriptSigs run as Elements runs them; others: unsupported
        eval_script(stack, txin.script_sig, flags, checker, SigVersion.BASE)
    if spk == b"\x51":  # bare OP_TRUE
        stack.append(b"\x01")
        if flags & F.CLEANSTACK and len(stack) != 1:
            raise ScriptError(E.CLEANSTACK)
        if witness:
            raise ScriptError(E.WITNESS_UNEXPECTED)
        return
    if not (4 <= len(spk) <= 42 and spk[1] + 2 == len(spk)
            and (spk[0] == 0 or 0x51 <= spk[0] <= 0x60)):
        raise ScriptError(E.UNSUPPORTED, "scriptPubKey outside the template set")
    version = 0 if spk[0] == 0 else spk[0] - 0x50
    program = spk[2:]
    if version > 1 or (version == 1 and len(program) != 32):
        raise ScriptError(E.UNSUPPORTED, f"witness v{version} program of {len(program)} bytes")
    if not cast_to_bool(program):  # the scriptPubKey leaves its program on top of the stack
        raise ScriptError(E.EVAL_FALSE)
    if txin.script_sig:
        raise ScriptError(E.WITNESS_MALLEATED)
    if version == 1:
        _verify_taproot(witness, program, flags, checker)
        return
    if len(program) == 32:  # P2WSH
        if not witness:
            raise ScriptError(E.WITNESS_PROGRAM_WITNESS_EMPTY)
        script = witness[-1]
        if sha256(script) != program:
            raise ScriptError(E.WITNESS_PROGRAM_MISMATCH)
        _scan(script, tapscript=False)
        _execute_witness_script(list(witness[:-1]), script, flags, checker,
                                SigVersion.WITNESS_V0, ExecData())
    elif len(program) == 20:  # P2WPKH
        if len(witness) != 2:
            raise ScriptError(E.WITNESS_PROGRAM_MISMATCH)
        _execute_witness_script(list(witness), p2wpkh_script_code(program), flags, checker,
                                SigVersion.WITNESS_V0, ExecData())
    else:
        raise ScriptError(E.WITNESS_PROGRAM_WRONG_LENGTH)

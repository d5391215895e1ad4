"""Script verification errors: Elements' ScriptError codes with their ScriptErrorString texts.

A failed script check raises ``ScriptError``; ``code`` is a ``ScriptErrorCode`` whose value is
Elements' message (Elements ``src/script/script_error.cpp``), so the validator can build
Elements' reject reasons ``mandatory-script-verify-flag-failed (<message>)`` /
``non-mandatory-script-verify-flag (<message>)`` from it. ``UNSUPPORTED`` is ours: the one
spend the interpreter cannot evaluate although Elements can — a Simplicity leaf (leaf version
0xbe under ``SCRIPT_VERIFY_SIMPLICITY``) — reported by the validator as
``bad-txns-script-unsupported``.
"""

from __future__ import annotations

from enum import Enum

from ctplugin.errors import CtpluginError


class ScriptErrorCode(Enum):
    """Elements' ``ScriptError`` values the interpreter produces (``script_error.h``), and
    ours (UNSUPPORTED). Member names are Elements' without the ``SCRIPT_ERR_`` prefix."""

    EVAL_FALSE = "Script evaluated without error but finished with a false/empty top stack element"
    VERIFY = "Script failed an OP_VERIFY operation"
    EQUALVERIFY = "Script failed an OP_EQUALVERIFY operation"
    CHECKMULTISIGVERIFY = "Script failed an OP_CHECKMULTISIGVERIFY operation"
    CHECKSIGVERIFY = "Script failed an OP_CHECKSIGVERIFY operation"
    NUMEQUALVERIFY = "Script failed an OP_NUMEQUALVERIFY operation"
    SCRIPT_SIZE = "Script is too big"
    PUSH_SIZE = "Push value size limit exceeded"
    OP_COUNT = "Operation limit exceeded"
    STACK_SIZE = "Stack size limit exceeded"
    SIG_COUNT = "Signature count negative or greater than pubkey count"
    PUBKEY_COUNT = "Pubkey count negative or limit exceeded"
    BAD_OPCODE = "Opcode missing or not understood"
    DISABLED_OPCODE = "Attempted to use a disabled opcode"
    INVALID_STACK_OPERATION = "Operation not valid with the current stack size"
    INVALID_ALTSTACK_OPERATION = "Operation not valid with the current altstack size"
    OP_RETURN = "OP_RETURN was encountered"
    UNBALANCED_CONDITIONAL = "Invalid OP_IF construction"
    NEGATIVE_LOCKTIME = "Negative locktime"
    UNSATISFIED_LOCKTIME = "Locktime requirement not satisfied"
    SIG_HASHTYPE = "Signature hash type missing or not understood"
    SIG_DER = "Non-canonical DER signature"
    MINIMALDATA = "Data push larger than necessary"
    SIG_PUSHONLY = "Only push operators allowed in signatures"
    SIG_HIGH_S = "Non-canonical signature: S value is unnecessarily high"
    SIG_NULLDUMMY = "Dummy CHECKMULTISIG argument must be zero"
    MINIMALIF = "OP_IF/NOTIF argument must be minimal"
    SIG_NULLFAIL = "Signature must be zero for failed CHECK(MULTI)SIG operation"
    DISCOURAGE_UPGRADABLE_NOPS = "NOPx reserved for soft-fork upgrades"
    DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM = "Witness version reserved for soft-fork upgrades"
    DISCOURAGE_UPGRADABLE_TAPROOT_VERSION = "Taproot version reserved for soft-fork upgrades"
    DISCOURAGE_OP_SUCCESS = "OP_SUCCESSx reserved for soft-fork upgrades"
    DISCOURAGE_UPGRADABLE_PUBKEYTYPE = "Public key version reserved for soft-fork upgrades"
    PUBKEYTYPE = "Public key is neither compressed or uncompressed"
    CLEANSTACK = "Stack size must be exactly one after execution"
    WITNESS_PROGRAM_WRONG_LENGTH = "Witness program has incorrect length"
    WITNESS_PROGRAM_WITNESS_EMPTY = "Witness program was passed an empty witness"
    WITNESS_PROGRAM_MISMATCH = "Witness program hash mismatch"
    WITNESS_MALLEATED = "Witness requires empty scriptSig"
    WITNESS_MALLEATED_P2SH = "Witness requires only-redeemscript scriptSig"
    WITNESS_UNEXPECTED = "Witness provided for non-witness script"
    WITNESS_PUBKEYTYPE = "Using non-compressed keys in segwit"
    SCHNORR_SIG_SIZE = "Invalid Schnorr signature size"
    SCHNORR_SIG_HASHTYPE = "Invalid Schnorr signature hash type"
    SCHNORR_SIG = "Invalid Schnorr signature"
    TAPROOT_WRONG_CONTROL_SIZE = "Invalid Taproot control block size"
    TAPSCRIPT_VALIDATION_WEIGHT = "Too much signature validation relative to witness weight"
    TAPSCRIPT_CHECKMULTISIG = "OP_CHECKMULTISIG(VERIFY) is not available in tapscript"
    TAPSCRIPT_MINIMALIF = "OP_IF/NOTIF argument must be minimal in tapscript"
    OP_CODESEPARATOR = "Using OP_CODESEPARATOR in non-witness script"
    SIG_FINDANDDELETE = "Signature is found in scriptCode"
    SHA2_CONTEXT_LOAD = "Invalid Sha256 context object read"
    SHA2_CONTEXT_WRITE = "Invalid Sha256 context object write"
    INTROSPECT_CONTEXT_UNAVAILABLE = "Introspection opcode used without correct evaluation context"
    INTROSPECT_INDEX_OUT_OF_BOUNDS = "Introspection index out of bounds"
    EXPECTED_8BYTES = "Arithmetic opcodes expect 8 bytes operands"
    ARITHMETIC64 = "Arithmetic opcode error"
    ECMULTVERIFYFAIL = "EC scalar mult verify fail"
    UNKNOWN_ERROR = "unknown error"
    # Ours: not an Elements error — a spend Elements evaluates and we cannot (Simplicity).
    UNSUPPORTED = "script template not supported on this chain"

    @property
    def message(self) -> str:
        return self.value


class ScriptError(CtpluginError):
    """A script or signature check failed: ``code`` says which (Elements' error), ``detail``
    optionally says more (never needed to tell two failures apart)."""

    def __init__(self, code: ScriptErrorCode, detail: str = "") -> None:
        super().__init__(code.message + (f": {detail}" if detail else ""))
        self.code = code
        self.detail = detail

    @property
    def unsupported(self) -> bool:
        """True when the spend is one we cannot evaluate (not an Elements failure)."""
        return self.code is ScriptErrorCode.UNSUPPORTED

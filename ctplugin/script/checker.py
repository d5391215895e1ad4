"""Signature checkers: what the interpreter asks of the transaction (Elements'
``GenericTransactionSignatureChecker``, ``src/script/interpreter.cpp``), immediate or deferred.

A ``SignatureChecker`` is made per input. It computes digests from the shared
``PrecomputedTransaction`` and answers CHECKSIG-family questions, CHECKLOCKTIMEVERIFY and
CHECKSEQUENCEVERIFY. Signature verification is either immediate (libsecp256k1) or, when the
checker carries a ``DeferredChecks``, recorded for later:

- every non-empty BIP340 signature (taproot key path, tapscript CHECKSIG/CHECKSIGVERIFY/
  CHECKSIGADD/CHECKSIGFROMSTACK(VERIFY)) must be valid or the script fails (BIP341/342), so
  the checker records (key, message, signature) and answers "valid"; the caller puts the
  records in the block's one batch;
- an ECDSA check whose false result would fail the script anyway (legacy, P2SH or v0: a
  final CHECKSIG of a script whose result decides, CHECKSIGVERIFY, an m-of-m
  CHECKMULTISIG...) is recorded the same way and verified later, in parallel.

Soundness: a run with deferred checks equals the immediate run whenever every recorded check
holds; if one does not, the caller re-runs that input with an immediate checker, which gives the
exact verdict and Elements' error. Deterministic failures (bad sizes, hash types, s ≥ n) are never
deferred; keys and nonces that do not lift are found when the batch lifts them.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Protocol

from ctplugin.errors import EncodingError
from ctplugin.script.errors import ScriptError, ScriptErrorCode
from ctplugin.script.flags import Bits
from ctplugin.script.sighash import (
    BitcoinTransaction,
    PrecomputedTransaction,
    bitcoin_legacy_sighash,
    bitcoin_segwit_v0_sighash,
    legacy_sighash,
    segwit_v0_sighash,
    taproot_sighash,
)
from ctplugin.secp256k1 import libsecp
from ctplugin.secp256k1.params import N

LOCKTIME_THRESHOLD = 500_000_000
_RANGEPROOF = Bits.SIGHASH_RANGEPROOF
SEQUENCE_FINAL = 0xFFFF_FFFF
SEQUENCE_LOCKTIME_DISABLE_FLAG = 1 << 31
SEQUENCE_LOCKTIME_TYPE_FLAG = 1 << 22
SEQUENCE_LOCKTIME_MASK = 0x0000_FFFF

_PUBKEY_SIZES = {2: 33, 3: 33, 4: 65, 6: 65, 7: 65}


class SigVersion(IntEnum):
    BASE = 0
    WITNESS_V0 = 1
    TAPROOT = 2
    TAPSCRIPT = 3


@dataclass(slots=True)
class ExecData:
    """Per-input execution data of taproot spends (Elements' ScriptExecutionData)."""

    annex: bytes | None = None
    leaf_hash: bytes | None = None
    codesep_pos: int = 0xFFFF_FFFF
    weight_left: int = 0


@dataclass(frozen=True, slots=True)
class SchnorrCheck:
    """A BIP340 check to batch: lift_x(key) and (r, s) verify over ``msg``."""

    key: Hashable
    pubkey: bytes
    msg: bytes
    sig: bytes


@dataclass(frozen=True, slots=True)
class EcdsaCheck:
    """An ECDSA check to verify later; ``failure`` is the consensus error its failure means
    (where the script would have failed had the check returned false)."""

    key: Hashable
    pubkey: bytes
    der: bytes
    msg: bytes
    failure: ScriptErrorCode

    def verify(self) -> bool:
        return libsecp.ecdsa_verify(self.pubkey, self.der, self.msg)


@dataclass(frozen=True, slots=True)
class TweakCheck:
    """Q (x-only, with parity) = lift_x(P) + t·G, the commitment of a script-path spend."""

    key: Hashable
    output_key: bytes
    parity: int
    internal_key: bytes
    tweak: bytes

    def verify(self) -> bool:
        return libsecp.xonly_tweak_add_check(self.output_key, self.parity, self.internal_key,
                                             self.tweak)


@dataclass(slots=True)
class DeferredChecks:
    """Checks recorded during optimistic script runs, to be verified later."""

    schnorr: list[SchnorrCheck] = field(default_factory=list)
    ecdsa: list[EcdsaCheck] = field(default_factory=list)
    tweaks: list[TweakCheck] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.schnorr) + len(self.ecdsa) + len(self.tweaks)

    def extend(self, other: DeferredChecks) -> None:
        self.schnorr += other.schnorr
        self.ecdsa += other.ecdsa
        self.tweaks += other.tweaks


def _valid_pubkey_size(pubkey: bytes) -> bool:
    """CPubKey's size check by the first byte (IsValid after construction)."""
    return bool(pubkey) and _PUBKEY_SIZES.get(pubkey[0]) == len(pubkey)


class SignatureChecker:
    """Answers the interpreter's transaction questions for input ``index`` of ``pre.tx`` (an
    Elements transaction: Elements' digests, introspection of ``pre``).

    ``amount`` is the spent output's value as stored (v0 digests commit to it); ``deferred``
    (with ``key`` naming this input in it) turns on deferral (module docstring).
    """

    __slots__ = ("amount", "deferred", "flags", "index", "key", "pre")

    def __init__(self, pre: PrecomputedTransaction, index: int, amount: int | bytes,
                 flags: int, deferred: DeferredChecks | None = None,
                 key: Hashable = None) -> None:
        self.pre = pre
        self.index = index
        self.amount = amount
        self.flags = flags
        self.deferred = deferred
        self.key = key

    @property
    def introspection(self) -> PrecomputedTransaction | None:
        """The transaction and spent outputs the tapscript introspection opcodes read (None
        without the spent outputs: INTROSPECT_CONTEXT_UNAVAILABLE)."""
        return self.pre if self.pre.spent is not None else None

    @property
    def tx_version(self) -> int:
        return self.pre.tx.version

    @property
    def tx_locktime(self) -> int:
        return self.pre.tx.locktime

    @property
    def input_count(self) -> int:
        return len(self.pre.tx.inputs)

    @property
    def output_count(self) -> int:
        return len(self.pre.tx.outputs)

    # --- ECDSA (legacy and segwit v0) --------------------------------------------------------

    def check_ecdsa(self, sig: bytes, pubkey: bytes, script_code: bytes, sigversion: SigVersion,
                    failure: ScriptErrorCode | None) -> bool:
        """CheckECDSASignature: False for an invalid key size, an empty signature or a
        signature that does not verify against the legacy (BASE) or v0 digest of its hash
        type. ``failure`` (not None) says the script fails with that error if this check is
        false: the check may then be deferred."""
        if not _valid_pubkey_size(pubkey) or not sig:
            return False
        hash_type = sig[-1]
        rangeproof = bool(self.flags & _RANGEPROOF)
        if sigversion == SigVersion.BASE:
            digest = legacy_sighash(self.pre.tx, self.index, script_code, hash_type, rangeproof)
        else:
            digest = segwit_v0_sighash(self.pre, self.index, script_code, self.amount,
                                       hash_type, rangeproof)
        if self.deferred is not None and failure is not None:
            self.deferred.ecdsa.append(EcdsaCheck(self.key, pubkey, sig[:-1], digest, failure))
            return True
        return libsecp.ecdsa_verify(pubkey, sig[:-1], digest)

    def check_schnorr_message(self, sig: bytes, pubkey: bytes, msg: bytes) -> None:
        """Tapscript OP_CHECKSIGFROMSTACK(VERIFY) with a non-empty signature: BIP340 over
        ``msg`` itself; SCHNORR_SIG_SIZE unless 64 bytes, SCHNORR_SIG unless valid (deferred
        into the batch as valid when deferring)."""
        _check_message_signature(sig, pubkey, msg, self.deferred, self.key)

    # --- BIP340 (taproot key path and tapscript) ---------------------------------------------

    def check_schnorr(self, sig: bytes, pubkey: bytes, sigversion: SigVersion,
                      execdata: ExecData) -> None:
        """CheckSchnorrSignature: raises ScriptError (SCHNORR_SIG_SIZE, SCHNORR_SIG_HASHTYPE,
        SCHNORR_SIG) unless the signature is valid (or deferred as valid)."""
        if len(sig) not in (64, 65):
            raise ScriptError(ScriptErrorCode.SCHNORR_SIG_SIZE)
        hash_type = 0
        if len(sig) == 65:
            hash_type = sig[64]
            if hash_type == 0:
                raise ScriptError(ScriptErrorCode.SCHNORR_SIG_HASHTYPE)
        leaf = execdata.leaf_hash if sigversion == SigVersion.TAPSCRIPT else None
        digest = taproot_sighash(self.pre, self.index, hash_type, annex=execdata.annex,
                                 leaf_hash=leaf, codesep_pos=execdata.codesep_pos)
        sig64 = sig[:64]
        if self.deferred is not None:
            # s ≥ n fails now; R and P are lifted (or found not to lift) with the batch
            if int.from_bytes(sig64[32:], "big") >= N:
                raise ScriptError(ScriptErrorCode.SCHNORR_SIG)
            self.deferred.schnorr.append(SchnorrCheck(self.key, pubkey, digest, sig64))
            return
        if not libsecp.schnorr_verify(pubkey, digest, sig64):
            raise ScriptError(ScriptErrorCode.SCHNORR_SIG)

    def check_tweak(self, output_key: bytes, parity: int, internal_key: bytes,
                    tweak: bytes) -> bool:
        """VerifyTaprootCommitment's final check (deferred into the batch when possible)."""
        if self.deferred is not None and int.from_bytes(tweak, "big") < N:
            self.deferred.tweaks.append(TweakCheck(self.key, output_key, parity, internal_key,
                                                   tweak))
            return True
        return libsecp.xonly_tweak_add_check(output_key, parity, internal_key, tweak)

    # --- timelocks ---------------------------------------------------------------------------

    def check_locktime(self, lock_time: int) -> bool:
        """CheckLockTime (BIP65)."""
        tx = self.pre.tx
        return check_locktime(tx.locktime, tx.inputs[self.index].sequence, lock_time)

    def check_sequence(self, sequence: int) -> bool:
        """CheckSequence (BIP112)."""
        tx = self.pre.tx
        return check_sequence(tx.version, tx.inputs[self.index].sequence, sequence)


def check_locktime(tx_locktime: int, tx_sequence: int, lock_time: int) -> bool:
    """CheckLockTime (BIP65): same kind (height or time) as the tx's nLockTime, not above it,
    and the input not final."""
    if (tx_locktime < LOCKTIME_THRESHOLD) != (lock_time < LOCKTIME_THRESHOLD):
        return False
    if lock_time > tx_locktime:
        return False
    return tx_sequence != SEQUENCE_FINAL


def check_sequence(tx_version: int, tx_sequence: int, sequence: int) -> bool:
    """CheckSequence (BIP112): version ≥ 2 (unsigned: Elements' version is a uint32), the
    input's relative lock enabled and of the same kind, and not below the required one."""
    if (tx_version & 0xFFFF_FFFF) < 2:
        return False
    if tx_sequence & SEQUENCE_LOCKTIME_DISABLE_FLAG:
        return False
    mask = SEQUENCE_LOCKTIME_TYPE_FLAG | SEQUENCE_LOCKTIME_MASK
    have, want = tx_sequence & mask, sequence & mask
    if (have < SEQUENCE_LOCKTIME_TYPE_FLAG) != (want < SEQUENCE_LOCKTIME_TYPE_FLAG):
        return False
    return want <= have


def _check_message_signature(sig: bytes, pubkey: bytes, msg: bytes,
                             deferred: DeferredChecks | None, key: Hashable) -> None:
    """EvalTapScriptCheckSigFromStack's verification of a non-empty signature."""
    if len(sig) != 64:
        raise ScriptError(ScriptErrorCode.SCHNORR_SIG_SIZE)
    if deferred is not None:
        if int.from_bytes(sig[32:], "big") >= N:
            raise ScriptError(ScriptErrorCode.SCHNORR_SIG)
        deferred.schnorr.append(SchnorrCheck(key, pubkey, msg, sig))
        return
    if not libsecp.schnorr_verify(pubkey, msg, sig):
        raise ScriptError(ScriptErrorCode.SCHNORR_SIG)


class BitcoinSignatureChecker:
    """Elements' checker over a transaction read with Elements mode off (its unit tests):
    legacy SignatureHash and BIP143 digests, immediate verification. Taproot signatures need
    the spent outputs, which Elements' unit tests never give (``MissingDataBehavior``): they
    are UNKNOWN_ERROR here, and the introspection opcodes that read the spent outputs find
    no context."""

    __slots__ = ("amount", "flags", "index", "tx")

    introspection = None

    def __init__(self, tx: BitcoinTransaction, index: int, amount: int, flags: int) -> None:
        self.tx = tx
        self.index = index
        self.amount = amount
        self.flags = flags

    @property
    def tx_version(self) -> int:
        return self.tx.version

    @property
    def tx_locktime(self) -> int:
        return self.tx.locktime

    @property
    def input_count(self) -> int:
        return len(self.tx.inputs)

    @property
    def output_count(self) -> int:
        return len(self.tx.outputs)

    def check_ecdsa(self, sig: bytes, pubkey: bytes, script_code: bytes, sigversion: SigVersion,
                    failure: ScriptErrorCode | None) -> bool:
        if not _valid_pubkey_size(pubkey) or not sig:
            return False
        hash_type = sig[-1]
        rangeproof = bool(self.flags & _RANGEPROOF)
        if sigversion == SigVersion.BASE:
            digest = bitcoin_legacy_sighash(self.tx, self.index, script_code, hash_type,
                                            rangeproof)
        else:
            digest = bitcoin_segwit_v0_sighash(self.tx, self.index, script_code, self.amount,
                                               hash_type, rangeproof)
        return libsecp.ecdsa_verify(pubkey, sig[:-1], digest)

    def check_schnorr(self, sig: bytes, pubkey: bytes, sigversion: SigVersion,
                      execdata: ExecData) -> None:
        if len(sig) not in (64, 65):
            raise ScriptError(ScriptErrorCode.SCHNORR_SIG_SIZE)
        if len(sig) == 65 and sig[64] == 0:
            raise ScriptError(ScriptErrorCode.SCHNORR_SIG_HASHTYPE)
        raise ScriptError(ScriptErrorCode.UNKNOWN_ERROR,
                          "a taproot digest needs the spent outputs")

    def check_schnorr_message(self, sig: bytes, pubkey: bytes, msg: bytes) -> None:
        _check_message_signature(sig, pubkey, msg, None, None)

    def check_tweak(self, output_key: bytes, parity: int, internal_key: bytes,
                    tweak: bytes) -> bool:
        return libsecp.xonly_tweak_add_check(output_key, parity, internal_key, tweak)

    def check_locktime(self, lock_time: int) -> bool:
        return check_locktime(self.tx.locktime, self.tx.inputs[self.index].sequence, lock_time)

    def check_sequence(self, sequence: int) -> bool:
        return check_sequence(self.tx.version, self.tx.inputs[self.index].sequence, sequence)


class Checker(Protocol):
    """What the interpreter asks of a transaction (Elements' BaseSignatureChecker):
    ``SignatureChecker`` for our chain, ``BitcoinSignatureChecker`` for Elements' unit-test
    vectors."""

    @property
    def index(self) -> int: ...

    @property
    def introspection(self) -> PrecomputedTransaction | None: ...

    @property
    def tx_version(self) -> int: ...

    @property
    def tx_locktime(self) -> int: ...

    @property
    def input_count(self) -> int: ...

    @property
    def output_count(self) -> int: ...

    def check_ecdsa(self, sig: bytes, pubkey: bytes, script_code: bytes, sigversion: SigVersion,
                    failure: ScriptErrorCode | None) -> bool: ...

    def check_schnorr(self, sig: bytes, pubkey: bytes, sigversion: SigVersion,
                      execdata: ExecData) -> None: ...

    def check_schnorr_message(self, sig: bytes, pubkey: bytes, msg: bytes) -> None: ...

    def check_tweak(self, output_key: bytes, parity: int, internal_key: bytes,
                    tweak: bytes) -> bool: ...

    def check_locktime(self, lock_time: int) -> bool: ...

    def check_sequence(self, sequence: int) -> bool: ...


def checker_for(pre: PrecomputedTransaction, index: int, flags: int,
                deferred: DeferredChecks | None = None, key: Hashable = None) -> SignatureChecker:
    """A checker for input ``index`` whose spent output is ``pre.spent[index]``."""
    if pre.spent is None:
        raise EncodingError("the spent outputs are needed to check scripts",
                            reason="count-mismatch")
    return SignatureChecker(pre, index, pre.spent[index].value, flags, deferred, key)

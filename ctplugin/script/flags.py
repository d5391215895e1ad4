"""Script verification flags: Elements' ``SCRIPT_VERIFY_*`` bits, and the sets our chain uses.

The bit values are Elements' (``interpreter.h``), so a flags word means the same thing here as in
elementsd; the script-execution cache key includes it as 4 little-endian bytes, as Elements does.

- ``MANDATORY``: Elements' MANDATORY_SCRIPT_VERIFY_FLAGS (P2SH, DERSIG, NULLDUMMY, CLTV, CSV,
  WITNESS, TAPROOT) — consensus in Elements' policy split.
- ``BLOCK``: what a block on our chain is checked with: MANDATORY plus SIGHASH_RANGEPROOF
  (dynafed is always active on elementsregtest, and ``GetBlockScriptFlags`` adds the flag then).
- ``STANDARD``: the mempool's: BLOCK plus Elements' policy flags (STRICTENC, MINIMALDATA,
  DISCOURAGE_UPGRADABLE_NOPS, CLEANSTACK, MINIMALIF, NULLFAIL, LOW_S,
  DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM, WITNESS_PUBKEYTYPE, CONST_SCRIPTCODE,
  DISCOURAGE_UPGRADABLE_TAPROOT_VERSION, DISCOURAGE_OP_SUCCESS,
  DISCOURAGE_UPGRADABLE_PUBKEYTYPE). Every policy flag only adds failures, so a spend valid
  under STANDARD is valid under BLOCK.
- ``POLICY_ONLY``: STANDARD − MANDATORY (Elements' STANDARD_NOT_MANDATORY_VERIFY_FLAGS): a
  failure that disappears without them is ``non-mandatory-script-verify-flag (...)``.
"""

from __future__ import annotations

from enum import IntFlag
from typing import Final


class ScriptFlags(IntFlag):
    NONE = 0
    P2SH = 1 << 0
    STRICTENC = 1 << 1
    DERSIG = 1 << 2
    LOW_S = 1 << 3
    NULLDUMMY = 1 << 4
    SIGPUSHONLY = 1 << 5
    MINIMALDATA = 1 << 6
    DISCOURAGE_UPGRADABLE_NOPS = 1 << 7
    CLEANSTACK = 1 << 8
    CHECKLOCKTIMEVERIFY = 1 << 9
    CHECKSEQUENCEVERIFY = 1 << 10
    WITNESS = 1 << 11
    DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM = 1 << 12
    MINIMALIF = 1 << 13
    NULLFAIL = 1 << 14
    WITNESS_PUBKEYTYPE = 1 << 15
    CONST_SCRIPTCODE = 1 << 16
    TAPROOT = 1 << 17
    DISCOURAGE_UPGRADABLE_TAPROOT_VERSION = 1 << 18
    DISCOURAGE_OP_SUCCESS = 1 << 19
    DISCOURAGE_UPGRADABLE_PUBKEYTYPE = 1 << 20
    NO_SIGHASH_BYTE = 1 << 21
    SIGHASH_RANGEPROOF = 1 << 22
    SIMPLICITY = 1 << 23


class Bits:
    """The ``ScriptFlags`` bits as plain ints, for the interpreter's hot paths: ``int & IntFlag``
    goes through the enum machinery, several times slower than the opcode it guards
    (tests/unit/test_script_interpreter.py checks every bit against ``ScriptFlags``)."""

    P2SH: Final = int(ScriptFlags.P2SH)
    STRICTENC: Final = int(ScriptFlags.STRICTENC)
    DERSIG: Final = int(ScriptFlags.DERSIG)
    LOW_S: Final = int(ScriptFlags.LOW_S)
    NULLDUMMY: Final = int(ScriptFlags.NULLDUMMY)
    SIGPUSHONLY: Final = int(ScriptFlags.SIGPUSHONLY)
    MINIMALDATA: Final = int(ScriptFlags.MINIMALDATA)
    DISCOURAGE_UPGRADABLE_NOPS: Final = int(ScriptFlags.DISCOURAGE_UPGRADABLE_NOPS)
    CLEANSTACK: Final = int(ScriptFlags.CLEANSTACK)
    CHECKLOCKTIMEVERIFY: Final = int(ScriptFlags.CHECKLOCKTIMEVERIFY)
    CHECKSEQUENCEVERIFY: Final = int(ScriptFlags.CHECKSEQUENCEVERIFY)
    WITNESS: Final = int(ScriptFlags.WITNESS)
    DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM: Final = int(
        ScriptFlags.DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM)
    MINIMALIF: Final = int(ScriptFlags.MINIMALIF)
    NULLFAIL: Final = int(ScriptFlags.NULLFAIL)
    WITNESS_PUBKEYTYPE: Final = int(ScriptFlags.WITNESS_PUBKEYTYPE)
    CONST_SCRIPTCODE: Final = int(ScriptFlags.CONST_SCRIPTCODE)
    TAPROOT: Final = int(ScriptFlags.TAPROOT)
    DISCOURAGE_UPGRADABLE_TAPROOT_VERSION: Final = int(
        ScriptFlags.DISCOURAGE_UPGRADABLE_TAPROOT_VERSION)
    DISCOURAGE_OP_SUCCESS: Final = int(ScriptFlags.DISCOURAGE_OP_SUCCESS)
    DISCOURAGE_UPGRADABLE_PUBKEYTYPE: Final = int(ScriptFlags.DISCOURAGE_UPGRADABLE_PUBKEYTYPE)
    NO_SIGHASH_BYTE: Final = int(ScriptFlags.NO_SIGHASH_BYTE)
    SIGHASH_RANGEPROOF: Final = int(ScriptFlags.SIGHASH_RANGEPROOF)
    SIMPLICITY: Final = int(ScriptFlags.SIMPLICITY)


F = ScriptFlags

MANDATORY = (F.P2SH | F.DERSIG | F.NULLDUMMY | F.CHECKLOCKTIMEVERIFY | F.CHECKSEQUENCEVERIFY
             | F.WITNESS | F.TAPROOT)
BLOCK = MANDATORY | F.SIGHASH_RANGEPROOF
STANDARD = (BLOCK | F.STRICTENC | F.MINIMALDATA | F.DISCOURAGE_UPGRADABLE_NOPS | F.CLEANSTACK
            | F.MINIMALIF | F.NULLFAIL | F.LOW_S | F.DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM
            | F.WITNESS_PUBKEYTYPE | F.CONST_SCRIPTCODE | F.DISCOURAGE_UPGRADABLE_TAPROOT_VERSION
            | F.DISCOURAGE_OP_SUCCESS | F.DISCOURAGE_UPGRADABLE_PUBKEYTYPE)
POLICY_ONLY = STANDARD & ~MANDATORY & ~F.SIGHASH_RANGEPROOF

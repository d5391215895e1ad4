"""Elements' own script vectors (``src/test/data`` at the commit in
``../shared/elements-vectors/script/README.md``), run the way Elements' unit tests run them.

- ``script_tests.json`` (Elements ``src/test/script_tests.cpp``, ``script_json_test``): each
  entry's scriptSig / scriptPubKey / witness / amount spends a crediting transaction; the
  verdict and the error must be Elements' (``DoTest``), and — as ``DoTest`` does — removing
  flags from a passing entry or adding flags to a failing one must not change the verdict
  (16 random flag sets per entry, seeded here so a failure is reproducible).
- ``tx_valid.json`` / ``tx_invalid.json`` (``src/test/transaction_tests.cpp``): whole
  transactions with their prevouts; valid entries list EXCLUDED flags (every other bit of the
  32-bit word is set, so SIGHASH_RANGEPROOF is on), invalid entries INCLUDED ones
  (``BADTX``: ``CheckTransaction`` refuses the transaction). Each also runs the unit test's
  extra checks: every single flag removed (valid) or added (invalid) keeps the verdict, random
  flag sets too, and the flags are maximal (valid) / minimal (invalid).

Elements mode is off in those tests, so transactions are Bitcoin-serialized and signatures
hash with Bitcoin's legacy SignatureHash and BIP143 (``BitcoinSignatureChecker``). The
Bitcoin parser and ``ParseScript`` live here, not in the library: the library reads Elements
transactions only.

Without ``../shared`` the tests run on the subsets in ``tests/fixtures/elements-script/``
(every 8th script test, every 4th transaction, copied unmodified); with ``CI`` set a missing
shared file fails.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from ctplugin.elements.script import push_data
from ctplugin.script.checker import BitcoinSignatureChecker
from ctplugin.script.errors import ScriptError, ScriptErrorCode
from ctplugin.script.flags import ScriptFlags
from ctplugin.script.interpreter import verify_script
from ctplugin.serialize import compact_size
from tests.conftest import FIXTURES, load_json, shared_if_present

F = ScriptFlags

# --- the files -----------------------------------------------------------------------------------


def _vectors(name: str) -> list[Any]:
    path = shared_if_present("elements-vectors", "script", name)
    data = load_json(path if path is not None else FIXTURES / "elements-script" / name)
    assert isinstance(data, list)
    return data


def _minimum(shared: int, fixture: int, name: str) -> int:
    """How many entries the file must hold: all of Elements' file, or the fixture subset."""
    return shared if shared_if_present("elements-vectors", "script", name) else fixture


# --- ParseScript (Elements src/core_read.cpp) --------------------------------------------------

def _words(text: str) -> list[str]:
    return text.split()


_OPCODE_NAMES = _words(
    "NOP VER IF NOTIF VERIF VERNOTIF ELSE ENDIF VERIFY RETURN TOALTSTACK FROMALTSTACK 2DROP "
    "2DUP 3DUP 2OVER 2ROT 2SWAP IFDUP DEPTH DROP DUP NIP OVER PICK ROLL ROT SWAP TUCK CAT "
    "SUBSTR LEFT RIGHT SIZE INVERT AND OR XOR EQUAL EQUALVERIFY RESERVED1 RESERVED2 1ADD 1SUB "
    "2MUL 2DIV NEGATE ABS NOT 0NOTEQUAL ADD SUB MUL DIV MOD LSHIFT RSHIFT BOOLAND BOOLOR "
    "NUMEQUAL NUMEQUALVERIFY NUMNOTEQUAL LESSTHAN GREATERTHAN LESSTHANOREQUAL "
    "GREATERTHANOREQUAL MIN MAX WITHIN RIPEMD160 SHA1 SHA256 HASH160 HASH256 CODESEPARATOR "
    "CHECKSIG CHECKSIGVERIFY CHECKMULTISIG CHECKMULTISIGVERIFY NOP1 CHECKLOCKTIMEVERIFY "
    "CHECKSEQUENCEVERIFY NOP4 NOP5 NOP6 NOP7 NOP8 NOP9 NOP10 CHECKSIGADD")
_ELEMENTS_NAMES = _words(
    "DETERMINISTICRANDOM CHECKSIGFROMSTACK CHECKSIGFROMSTACKVERIFY SUBSTR_LAZY "
    "SHA256INITIALIZE SHA256UPDATE SHA256FINALIZE INSPECTINPUTOUTPOINT INSPECTINPUTASSET "
    "INSPECTINPUTVALUE INSPECTINPUTSCRIPTPUBKEY INSPECTINPUTSEQUENCE INSPECTINPUTISSUANCE "
    "PUSHCURRENTINPUTINDEX INSPECTOUTPUTASSET INSPECTOUTPUTVALUE INSPECTOUTPUTNONCE "
    "INSPECTOUTPUTSCRIPTPUBKEY INSPECTVERSION INSPECTLOCKTIME INSPECTNUMINPUTS "
    "INSPECTNUMOUTPUTS TXWEIGHT ADD64 SUB64 MUL64 DIV64 NEG64 LESSTHAN64 LESSTHANOREQUAL64 "
    "GREATERTHAN64 GREATERTHANOREQUAL64 SCRIPTNUMTOLE64 LE64TOSCRIPTNUM LE32TOLE64 "
    "ECMULSCALARVERIFY TWEAKVERIFY")


def _opcode_table() -> dict[str, int]:
    ops = {"PUSHDATA1": 0x4C, "PUSHDATA2": 0x4D, "PUSHDATA4": 0x4E, "RESERVED": 0x50}
    ops.update(zip(_OPCODE_NAMES, range(0x61, 0xBB), strict=True))
    ops.update(zip(_ELEMENTS_NAMES, range(0xC0, 0xE5), strict=True))
    # GetOpName names 1–16 by their numbers, so only the OP_ forms are opcode names
    table = {**ops, **{f"OP_{name}": op for name, op in ops.items()}}
    table.update({f"OP_{n}": 0x50 + n for n in range(1, 17)})
    table.update({"OP_1NEGATE": 0x4F, "1NEGATE": 0x4F, "OP_0": 0, "OP_FALSE": 0,
                  "OP_TRUE": 0x51, "OP_INVALIDOPCODE": 0xFF, "INVALIDOPCODE": 0xFF})
    return table


_OPCODES = _opcode_table()


def _script_num(n: int) -> bytes:
    """``CScript() << int64``: OP_0, OP_1NEGATE, OP_1 … OP_16, else a push of CScriptNum."""
    if n == 0:
        return b"\x00"
    if n == -1 or 1 <= n <= 16:
        return bytes((n + 0x50,))
    out = bytearray()
    value = abs(n)
    while value:
        out.append(value & 0xFF)
        value >>= 8
    if out[-1] & 0x80:
        out.append(0x80 if n < 0 else 0)
    elif n < 0:
        out[-1] |= 0x80
    return push_data(bytes(out))


def parse_script(text: str) -> bytes:
    """ParseScript: decimal numbers pushed as numbers, 0x… inserted raw, '…' pushed as data,
    opcode names with or without OP_."""
    out = bytearray()
    for word in text.split():
        if word.isdigit() or (word[0] == "-" and word[1:].isdigit()):
            n = int(word)
            assert -0xFFFF_FFFF <= n <= 0xFFFF_FFFF
            out += _script_num(n)
        elif word.startswith("0x") and len(word) > 2:
            out += bytes.fromhex(word[2:])
        elif len(word) >= 2 and word[0] == word[-1] == "'":
            out += push_data(word[1:-1].encode())
        else:
            out.append(_OPCODES[word])
    return bytes(out)


# --- flags and errors --------------------------------------------------------------------------

_FLAG_NAMES = _words("P2SH STRICTENC DERSIG LOW_S SIGPUSHONLY MINIMALDATA NULLDUMMY "
               "DISCOURAGE_UPGRADABLE_NOPS CLEANSTACK MINIMALIF NULLFAIL CHECKLOCKTIMEVERIFY "
               "CHECKSEQUENCEVERIFY WITNESS DISCOURAGE_UPGRADABLE_WITNESS_PROGRAM "
               "WITNESS_PUBKEYTYPE CONST_SCRIPTCODE TAPROOT DISCOURAGE_UPGRADABLE_PUBKEYTYPE "
               "DISCOURAGE_OP_SUCCESS DISCOURAGE_UPGRADABLE_TAPROOT_VERSION SIMPLICITY")
FLAG_MAP = {name: int(F[name]) for name in _FLAG_NAMES}  # transaction_tests' mapFlagNames
_ALL32 = 0xFFFF_FFFF


def parse_flags(text: str) -> int:
    if not text or text == "NONE":
        return 0
    flags = 0
    for word in text.split(","):
        flags |= FLAG_MAP[word]
    return flags


def error_code(name: str) -> ScriptErrorCode | None:
    """script_tests.cpp's error names: ours, except NULLFAIL (SIG_NULLFAIL); OK is None."""
    if name == "OK":
        return None
    return ScriptErrorCode["SIG_NULLFAIL" if name == "NULLFAIL" else name]


# --- Bitcoin transactions (Elements mode off) ----------------------------------------------------

@dataclass(frozen=True)
class BtcIn:
    prevout_hash: bytes
    prevout_index: int
    script_sig: bytes = b""
    sequence: int = 0xFFFF_FFFF
    script_witness: tuple[bytes, ...] = ()


@dataclass(frozen=True)
class BtcOut:
    value: int
    script_pubkey: bytes = b""


@dataclass(frozen=True)
class BtcTx:
    version: int
    inputs: tuple[BtcIn, ...]
    outputs: tuple[BtcOut, ...]
    locktime: int = 0
    raw_base: bytes = field(default=b"", compare=False)

    @property
    def txid(self) -> bytes:
        return hashlib.sha256(hashlib.sha256(self.serialize_base()).digest()).digest()

    def serialize_base(self) -> bytes:
        out = bytearray(self.version.to_bytes(4, "little"))
        out += compact_size(len(self.inputs))
        for txin in self.inputs:
            out += txin.prevout_hash + txin.prevout_index.to_bytes(4, "little")
            out += compact_size(len(txin.script_sig)) + txin.script_sig
            out += txin.sequence.to_bytes(4, "little")
        out += compact_size(len(self.outputs))
        for o in self.outputs:
            out += o.value.to_bytes(8, "little", signed=True)
            out += compact_size(len(o.script_pubkey)) + o.script_pubkey
        return bytes(out + self.locktime.to_bytes(4, "little"))


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError("truncated transaction")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def int(self, n: int, signed: bool = False) -> int:
        return int.from_bytes(self.take(n), "little", signed=signed)

    def compact(self) -> int:
        first = self.int(1)
        return first if first < 0xFD else self.int({0xFD: 2, 0xFE: 4, 0xFF: 8}[first])

    def var(self) -> bytes:
        return self.take(self.compact())


def parse_bitcoin_tx(raw: bytes) -> BtcTx:
    """Bitcoin's UnserializeTransaction with witnesses (the segwit marker and flag)."""
    r = _Reader(raw)
    version = r.int(4)  # a uint32, as in Elements' CTransaction

    def inputs() -> list[list[Any]]:
        return [[r.take(32), r.int(4), r.var(), r.int(4)] for _ in range(r.compact())]

    def outputs() -> list[BtcOut]:
        return [BtcOut(r.int(8, signed=True), r.var()) for _ in range(r.compact())]

    vin, flags = inputs(), 0
    if not vin:
        flags = r.int(1)
        if flags:
            vin = inputs()
            vout = outputs()
        else:
            vout = []
    else:
        vout = outputs()
    witnesses: list[tuple[bytes, ...]] = [() for _ in vin]
    if flags & 1:
        flags ^= 1
        witnesses = [tuple(r.var() for _ in range(r.compact())) for _ in vin]
        if not any(witnesses):
            raise ValueError("superfluous witness record")
    locktime = r.int(4)
    if flags:
        raise ValueError("unknown transaction optional data")
    ins = tuple(BtcIn(h, n, s, q, w) for (h, n, s, q), w in zip(vin, witnesses, strict=True))
    return BtcTx(version, ins, tuple(vout), locktime)


MAX_MONEY = 21_000_000 * 100_000_000


def check_transaction(tx: BtcTx) -> bool:
    """Elements' CheckTransaction with Elements mode off (``consensus/tx_check.cpp``)."""
    if not tx.inputs or not tx.outputs:
        return False
    if len(tx.serialize_base()) * 4 > 4_000_000:
        return False
    total = 0
    for o in tx.outputs:
        if o.value < 0 or o.value > MAX_MONEY:
            return False
        total += o.value
        if total > MAX_MONEY:
            return False
    outpoints = [(t.prevout_hash, t.prevout_index) for t in tx.inputs]
    if len(set(outpoints)) != len(outpoints):
        return False
    null = (bytes(32), 0xFFFF_FFFF)
    if len(tx.inputs) == 1 and outpoints[0] == null:
        return 2 <= len(tx.inputs[0].script_sig) <= 100
    return null not in outpoints


# --- script_tests.json --------------------------------------------------------------------------

def _verify(tx: BtcTx, index: int, spk: bytes, amount: int, flags: int
            ) -> ScriptErrorCode | None:
    txin = tx.inputs[index]
    checker = BitcoinSignatureChecker(tx, index, amount, flags)
    try:
        verify_script(txin.script_sig, spk, txin.script_witness, flags, checker)
    except ScriptError as err:
        return err.code
    return None


def _valid_combination(flags: int) -> bool:
    if flags & F.CLEANSTACK and ~flags & (F.P2SH | F.WITNESS):
        return False
    return not (flags & F.WITNESS and not flags & F.P2SH)


def run_script_test(entry: list[Any], rng: random.Random) -> str | None:
    """DoTest for one entry: None when Elements' verdict, error and flag monotonicity hold,
    else what differs."""
    witness: tuple[bytes, ...] = ()
    amount, pos = 0, 0
    if isinstance(entry[0], list):
        witness = tuple(bytes.fromhex(item) for item in entry[0][:-1])
        amount = round(entry[0][-1] * 100_000_000)
        pos = 1
    script_sig, spk = parse_script(entry[pos]), parse_script(entry[pos + 1])
    flags, expected = parse_flags(entry[pos + 2]), error_code(entry[pos + 3])
    if flags & F.CLEANSTACK:
        flags |= F.P2SH | F.WITNESS
    credit = BtcTx(1, (BtcIn(bytes(32), 0xFFFF_FFFF, b"\x00\x00"),), (BtcOut(amount, spk),))
    spend = BtcTx(1, (BtcIn(credit.txid, 0, script_sig, 0xFFFF_FFFF, witness),),
                  (BtcOut(amount),))
    got = _verify(spend, 0, spk, amount, flags)
    if got != expected:
        return f"{got and got.name} where {expected and expected.name} expected"
    for _ in range(16):
        extra = rng.getrandbits(16)
        combined = flags & ~extra if expected is None else flags | extra
        if not _valid_combination(combined):
            continue
        if (_verify(spend, 0, spk, amount, combined) is None) != (expected is None):
            return f"verdict changes with flags {combined:#x}"
    return None


def _script_entries() -> list[list[Any]]:
    return [e for e in _vectors("script_tests.json") if len(e) > 1]


def test_every_script_tests_entry_gives_elements_verdict_and_error() -> None:
    rng = random.Random(20)
    entries = _script_entries()
    failures = [(i, entry, why) for i, entry in enumerate(entries)
                if (why := run_script_test(entry, rng)) is not None]
    assert len(entries) >= _minimum(1200, 150, "script_tests.json")
    assert not failures, (f"{len(entries) - len(failures)}/{len(entries)} pass; failing:\n"
                          + "\n".join(f"{i}: {e} -> {w}" for i, e, w in failures[:40]))


# --- tx_valid.json / tx_invalid.json ----------------------------------------------------------

Outpoint = tuple[bytes, int]


def _prevouts(entry: list[Any]) -> tuple[dict[Outpoint, bytes], dict[Outpoint, int]]:
    scripts: dict[Outpoint, bytes] = {}
    amounts: dict[Outpoint, int] = {}
    for item in entry[0]:
        key = (bytes.fromhex(item[0])[::-1], item[1] & 0xFFFF_FFFF)
        scripts[key] = parse_script(item[2])
        if len(item) >= 4:
            amounts[key] = item[3]
    return scripts, amounts


def check_tx_scripts(tx: BtcTx, scripts: dict[tuple[bytes, int], bytes],
                     amounts: dict[tuple[bytes, int], int], flags: int) -> bool:
    """CheckTxScripts: every input verifies (stopping at the first failure)."""
    flags &= ~int(F.NO_SIGHASH_BYTE)
    for i, txin in enumerate(tx.inputs):
        key = (txin.prevout_hash, txin.prevout_index)
        if _verify(tx, i, scripts[key], amounts.get(key, 0), flags) is not None:
            return False
    return True


def trim_flags(flags: int) -> int:
    if not flags & F.P2SH:
        flags &= ~int(F.WITNESS)
    if not flags & F.WITNESS:
        flags &= ~int(F.CLEANSTACK)
    return flags


def fill_flags(flags: int) -> int:
    if flags & F.CLEANSTACK:
        flags |= int(F.WITNESS)
    if flags & F.WITNESS:
        flags |= int(F.P2SH)
    return flags


def exclude_individual_flags(flags: int) -> set[int]:
    out = set()
    for flag in FLAG_MAP.values():
        trimmed = trim_flags(flags & ~flag)
        if trimmed != flags:
            out.add(trimmed)
    return out


def _tx_entries(name: str) -> list[list[Any]]:
    return [e for e in _vectors(name) if isinstance(e[0], list)]


def run_tx_valid(entry: list[Any], rng: random.Random) -> str | None:
    scripts, amounts = _prevouts(entry)
    tx = parse_bitcoin_tx(bytes.fromhex(entry[1]))
    if not check_transaction(tx):
        return "CheckTransaction refuses it"
    excluded = parse_flags(entry[2])
    if (~excluded & _ALL32) != fill_flags(~excluded & _ALL32):
        return "bad test flags"
    if not check_tx_scripts(tx, scripts, amounts, ~excluded & _ALL32):
        return "fails"
    for name, flag in FLAG_MAP.items():
        if not check_tx_scripts(tx, scripts, amounts, trim_flags(~(excluded | flag) & _ALL32)):
            return f"fails with {name} unset"
        random_flags = trim_flags(~(excluded | rng.getrandbits(len(FLAG_MAP))) & _ALL32)
        if not check_tx_scripts(tx, scripts, amounts, random_flags):
            return f"fails with random flags {random_flags:#x}"
    for fewer in exclude_individual_flags(excluded):
        if check_tx_scripts(tx, scripts, amounts, ~fewer & _ALL32):
            return f"too many flags unset: passes with {~fewer & _ALL32:#x}"
    return None


def run_tx_invalid(entry: list[Any], rng: random.Random) -> str | None:
    scripts, amounts = _prevouts(entry)
    tx = parse_bitcoin_tx(bytes.fromhex(entry[1]))
    if not check_transaction(tx):
        return None if entry[2] == "BADTX" else "CheckTransaction refuses it"
    included = parse_flags(entry[2])
    if included != fill_flags(included):
        return "bad test flags"
    if check_tx_scripts(tx, scripts, amounts, included):
        return "passes"
    for name, flag in FLAG_MAP.items():
        if check_tx_scripts(tx, scripts, amounts, fill_flags(included | flag)):
            return f"passes with {name} set"
        random_flags = fill_flags(included | rng.getrandbits(len(FLAG_MAP)))
        if check_tx_scripts(tx, scripts, amounts, random_flags):
            return f"passes with random flags {random_flags:#x}"
    for fewer in exclude_individual_flags(included):
        if not check_tx_scripts(tx, scripts, amounts, fewer):
            return f"too many flags set: fails with {fewer:#x}"
    return None


@pytest.mark.parametrize(("name", "run"), [("tx_valid.json", run_tx_valid),
                                           ("tx_invalid.json", run_tx_invalid)])
def test_every_tx_vector_gives_elements_verdict(name: str, run: Any) -> None:
    rng = random.Random(20)
    entries = _tx_entries(name)
    failures = [(entry, why) for entry in entries if (why := run(entry, rng)) is not None]
    assert len(entries) >= _minimum(90, 20, name)
    assert not failures, (f"{len(entries) - len(failures)}/{len(entries)} pass; failing:\n"
                          + "\n".join(f"{e[1][:60]}… {e[2]} -> {w}" for e, w in failures[:30]))


# --- the harness itself --------------------------------------------------------------------------

def test_parse_script_follows_core_read() -> None:
    assert parse_script("0 -1 1 16 17 -2") == b"\x00\x4f\x51\x60\x01\x11\x01\x82"
    assert parse_script("0x4c 0x01 0x07 'ab' DUP OP_HASH160") == b"\x4c\x01\x07\x02ab\x76\xa9"
    assert "NOP2" not in _OPCODES  # GetOpName calls 0xb1 CHECKLOCKTIMEVERIFY
    assert parse_script("CHECKLOCKTIMEVERIFY OP_CHECKSEQUENCEVERIFY") == b"\xb1\xb2"


def test_fixture_subsets_are_entries_of_the_shared_files() -> None:
    """The fallback copies in tests/fixtures are entries of Elements' files, unmodified."""
    for name in ("script_tests.json", "tx_valid.json", "tx_invalid.json"):
        shared = shared_if_present("elements-vectors", "script", name)
        if shared is None:
            pytest.skip("../shared is absent: nothing to compare the fixtures with")
        entries = {repr(e) for e in load_json(shared)}
        subset = load_json(FIXTURES / "elements-script" / name)
        assert subset and all(repr(e) in entries for e in subset)


def test_bitcoin_parser_reads_a_segwit_transaction() -> None:
    tx = BtcTx(2, (BtcIn(b"\x11" * 32, 1, b"", 5, (b"\x01", b"")),), (BtcOut(7, b"\x51"),), 9)
    witness = compact_size(2) + b"\x01\x01\x00"
    base = tx.serialize_base()
    raw = base[:4] + b"\x00\x01" + base[4:-4] + witness + base[-4:]
    assert parse_bitcoin_tx(raw) == tx


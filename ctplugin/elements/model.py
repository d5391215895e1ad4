"""Immutable model of Elements transactions and blocks, with exact serialization and hashes.

The classes are frozen, slotted dataclasses.  Parsing (``parse_transaction`` / ``parse_block``)
is done by the native walker in ``_speedups.c``, which fills these very classes directly; building
a value by hand goes through the normal constructor, whose ``__post_init__`` enforces the same
invariants the walker guarantees, so every value can be serialized.

Encodings (docs/elements-format.md §1.1), chosen so a validator never needs wrapper objects:

* asset: 32 bytes = explicit asset id (internal byte order, serialized with prefix 0x01),
  33 bytes = generator commitment including its 0x0a/0x0b prefix;
* value: ``int`` = explicit amount (0 .. 2**64-1, serialized 8 bytes big-endian after 0x01),
  33 bytes = Pedersen commitment including its 0x08/0x09 prefix; ``None`` = null (issuances only);
* nonce: ``b""`` = null, else 33 bytes including the 0x01/0x02/0x03 prefix.

Hashes are 32-byte strings in internal byte order; the ``*_hex`` forms are the reversed display
strings elementsd prints.  Hashes of parsed objects are computed on first use and cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from ctplugin import hashes
from ctplugin.elements.consensus import WITNESS_SCALE_FACTOR
from ctplugin.errors import EncodingError, ParseError
from ctplugin.serialize import compact_size
from ctplugin.serialize import var_bytes as _var

try:
    from ctplugin.elements import _speedups
except ImportError as exc:  # pragma: no cover - the package is unusable without its walker
    raise ImportError(
        "ctplugin.elements needs its native walker; build it with "
        "`make native` (an editable reinstall: pip install -e .)"
    ) from exc

OUTPOINT_ISSUANCE_FLAG = 0x8000_0000
OUTPOINT_PEGIN_FLAG = 0x4000_0000
OUTPOINT_INDEX_MASK = 0x3FFF_FFFF
NULL_INDEX = 0xFFFF_FFFF
DYNAFED_VERSION_BIT = 0x8000_0000
MAX_EXPLICIT_VALUE = (1 << 64) - 1

_ZERO32 = bytes(32)


# ------------------------------------------------------------------------------------------------
# Serialization primitives
# ------------------------------------------------------------------------------------------------


def _stack(items: tuple[bytes, ...]) -> bytes:
    return compact_size(len(items)) + b"".join(compact_size(len(i)) + i for i in items)


def serialize_conf_value(value: int | bytes | None) -> bytes:
    if value is None:
        return b"\x00"
    if isinstance(value, int):
        if not 0 <= value <= MAX_EXPLICIT_VALUE:
            raise EncodingError("explicit value outside [0, 2^64)", reason="value-range")
        return b"\x01" + value.to_bytes(8, "big")
    return value


def serialize_conf_asset(asset: bytes) -> bytes:
    return b"\x01" + asset if len(asset) == 32 else asset


def serialize_conf_nonce(nonce: bytes) -> bytes:
    return nonce or b"\x00"


# ------------------------------------------------------------------------------------------------
# Invariant checks for hand-built values (the walker guarantees them for parsed ones)
# ------------------------------------------------------------------------------------------------


def _check_bytes(name: str, value: Any, lengths: tuple[int, ...] | None = None) -> None:
    if not isinstance(value, bytes):
        raise EncodingError(f"{name} must be bytes, got {type(value).__name__}", reason="type")
    if lengths is not None and len(value) not in lengths:
        raise EncodingError(f"{name} must be {' or '.join(map(str, lengths))} bytes",
                            reason="length")


def _check_uint(name: str, value: Any, maximum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= maximum:
        raise EncodingError(f"{name} must be an integer in [0, {maximum}]", reason="value-range")


def _check_stack(name: str, value: Any) -> None:
    if not isinstance(value, tuple) or not all(isinstance(i, bytes) for i in value):
        raise EncodingError(f"{name} must be a tuple of bytes", reason="type")


def _check_value(name: str, value: Any, allow_null: bool) -> None:
    if value is None:
        if not allow_null:
            raise EncodingError(f"{name} may not be null", reason="structure")
    elif isinstance(value, int) and not isinstance(value, bool):
        _check_uint(name, value, MAX_EXPLICIT_VALUE)
    elif isinstance(value, bytes):
        if len(value) != 33 or value[0] not in (8, 9):
            raise EncodingError(f"{name} commitment must be 33 bytes with prefix 08/09",
                                reason="prefix")
    else:
        raise EncodingError(f"{name} must be an int amount or a 33-byte commitment", reason="type")


def _coerce_tuple(obj: Any, name: str) -> None:
    value = getattr(obj, name)
    if isinstance(value, list):
        object.__setattr__(obj, name, tuple(value))


# ------------------------------------------------------------------------------------------------
# Transactions
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AssetIssuance:
    """Issuance record of an input (docs/elements-format.md §1.1 AssetIssuance).

    ``asset_blinding_nonce`` all-zero means a new issuance (``asset_entropy`` is then the contract
    hash); otherwise a reissuance (``asset_entropy`` is the original entropy).
    """

    asset_blinding_nonce: bytes
    asset_entropy: bytes
    amount: int | bytes | None = None
    inflation_keys: int | bytes | None = None

    def __post_init__(self) -> None:
        _check_bytes("asset_blinding_nonce", self.asset_blinding_nonce, (32,))
        _check_bytes("asset_entropy", self.asset_entropy, (32,))
        _check_value("issuance amount", self.amount, allow_null=True)
        _check_value("inflation keys", self.inflation_keys, allow_null=True)
        if self.amount is None and self.inflation_keys is None:
            raise EncodingError("an issuance needs an amount or inflation keys (else it is null)",
                                reason="structure")

    @property
    def is_reissuance(self) -> bool:
        return self.asset_blinding_nonce != _ZERO32

    @property
    def amount_is_blinded(self) -> bool:
        return isinstance(self.amount, bytes)

    @property
    def inflation_keys_are_blinded(self) -> bool:
        return isinstance(self.inflation_keys, bytes)

    def serialize(self) -> bytes:
        return (self.asset_blinding_nonce + self.asset_entropy
                + serialize_conf_value(self.amount) + serialize_conf_value(self.inflation_keys))


@dataclass(frozen=True, slots=True)
class TxIn:
    """An input with its witness (issuance proofs, script witness, peg-in witness).

    ``prevout_index`` is the real output index (flags stripped), or 0xffffffff for a null
    (coinbase) prevout, whose index carries no flags.
    """

    prevout_hash: bytes
    prevout_index: int
    script_sig: bytes = b""
    sequence: int = 0xFFFF_FFFF
    is_pegin: bool = False
    issuance: AssetIssuance | None = None
    issuance_amount_rangeproof: bytes = b""
    inflation_keys_rangeproof: bytes = b""
    script_witness: tuple[bytes, ...] = ()
    pegin_witness: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        _coerce_tuple(self, "script_witness")
        _coerce_tuple(self, "pegin_witness")
        _check_bytes("prevout_hash", self.prevout_hash, (32,))
        _check_uint("prevout_index", self.prevout_index, NULL_INDEX)
        _check_bytes("script_sig", self.script_sig)
        _check_uint("sequence", self.sequence, 0xFFFF_FFFF)
        if not isinstance(self.is_pegin, bool):
            raise EncodingError("is_pegin must be a bool", reason="type")
        if self.issuance is not None and not isinstance(self.issuance, AssetIssuance):
            raise EncodingError("issuance must be an AssetIssuance or None", reason="type")
        if self.prevout_index == NULL_INDEX:
            if self.issuance is not None or self.is_pegin:
                raise EncodingError("a null prevout index cannot carry issuance or peg-in flags",
                                    reason="structure")
        elif self.prevout_index > OUTPOINT_INDEX_MASK:
            raise EncodingError("prevout_index above 2**30-1 collides with the flag bits",
                                reason="value-range")
        elif (self.prevout_index == OUTPOINT_INDEX_MASK and self.issuance is not None
              and self.is_pegin):
            # index | both flags == 0xffffffff, which readers take for the null prevout
            raise EncodingError("index 2**30-1 with issuance and peg-in flags is unencodable",
                                reason="structure")
        _check_bytes("issuance_amount_rangeproof", self.issuance_amount_rangeproof)
        _check_bytes("inflation_keys_rangeproof", self.inflation_keys_rangeproof)
        _check_stack("script_witness", self.script_witness)
        _check_stack("pegin_witness", self.pegin_witness)

    @property
    def prevout(self) -> tuple[bytes, int]:
        """(prevout_hash, prevout_index): the outpoint this input spends."""
        return self.prevout_hash, self.prevout_index

    @property
    def is_null_prevout(self) -> bool:
        """COutPoint::IsNull: zero hash and index 0xffffffff (the coinbase input)."""
        return self.prevout_index == NULL_INDEX and self.prevout_hash == _ZERO32

    @property
    def prevout_txid_hex(self) -> str:
        return self.prevout_hash[::-1].hex()

    @property
    def has_witness(self) -> bool:
        return bool(self.issuance_amount_rangeproof or self.inflation_keys_rangeproof
                    or self.script_witness or self.pegin_witness)

    def serialized_prevout(self) -> bytes:
        """The 36-byte COutPoint (hash || real index LE), as hashed for issuance entropy."""
        return self.prevout_hash + self.prevout_index.to_bytes(4, "little")

    def serialize(self) -> bytes:
        n = self.prevout_index
        if n != NULL_INDEX:
            n |= (OUTPOINT_ISSUANCE_FLAG if self.issuance is not None else 0) | (
                OUTPOINT_PEGIN_FLAG if self.is_pegin else 0)
        out = (self.prevout_hash + n.to_bytes(4, "little") + _var(self.script_sig)
               + self.sequence.to_bytes(4, "little"))
        if self.issuance is not None and self.prevout_index != NULL_INDEX:
            out += self.issuance.serialize()
        return out

    def serialize_witness(self) -> bytes:
        return (_var(self.issuance_amount_rangeproof) + _var(self.inflation_keys_rangeproof)
                + _stack(self.script_witness) + _stack(self.pegin_witness))


@dataclass(frozen=True, slots=True)
class TxOut:
    """An output with its witness (surjection proof, range proof).

    ``asset``: 32-byte explicit id or 33-byte generator commitment; ``value``: int or 33-byte
    Pedersen commitment; ``nonce``: b"" (null) or 33 bytes.
    """

    asset: bytes
    value: int | bytes
    nonce: bytes = b""
    script_pubkey: bytes = b""
    surjection_proof: bytes = b""
    range_proof: bytes = b""

    def __post_init__(self) -> None:
        _check_bytes("asset", self.asset, (32, 33))
        if len(self.asset) == 33 and self.asset[0] not in (0x0A, 0x0B):
            raise EncodingError("asset commitment must have prefix 0a/0b", reason="prefix")
        _check_value("value", self.value, allow_null=False)
        _check_bytes("nonce", self.nonce, (0, 33))
        if self.nonce and self.nonce[0] not in (1, 2, 3):
            raise EncodingError("nonce must have prefix 01/02/03", reason="prefix")
        _check_bytes("script_pubkey", self.script_pubkey)
        _check_bytes("surjection_proof", self.surjection_proof)
        _check_bytes("range_proof", self.range_proof)

    @property
    def asset_is_explicit(self) -> bool:
        return len(self.asset) == 32

    @property
    def value_is_explicit(self) -> bool:
        return isinstance(self.value, int)

    @property
    def is_fee(self) -> bool:
        """CTxOut::IsFee: explicit asset, explicit value, empty scriptPubKey."""
        return len(self.asset) == 32 and isinstance(self.value, int) and not self.script_pubkey

    @property
    def has_witness(self) -> bool:
        return bool(self.surjection_proof or self.range_proof)

    @staticmethod
    def parse(data: bytes | bytearray | memoryview) -> TxOut:
        """Parse one output from its non-witness serialization (``serialize()``), e.g. a stored
        UTXO; the proofs of the result are empty."""
        return _speedups.parse_txout(data)

    def serialize(self) -> bytes:
        return (serialize_conf_asset(self.asset) + serialize_conf_value(self.value)
                + serialize_conf_nonce(self.nonce) + _var(self.script_pubkey))

    def serialize_witness(self) -> bytes:
        return _var(self.surjection_proof) + _var(self.range_proof)


@dataclass(frozen=True, slots=True)
class Transaction:
    """An Elements transaction (docs/elements-format.md §1.1).  Build one with
    ``Transaction(version=2, inputs=[...], outputs=[...], locktime=0)``."""

    version: int
    inputs: tuple[TxIn, ...]
    outputs: tuple[TxOut, ...]
    locktime: int = 0
    # Cached consensus bytes and hashes (filled by the walker or on first use).
    _raw: bytes | None = field(default=None, init=False, repr=False, compare=False)
    _locktime_end: int = field(default=0, init=False, repr=False, compare=False)
    _txid: bytes | None = field(default=None, init=False, repr=False, compare=False)
    _wtxid: bytes | None = field(default=None, init=False, repr=False, compare=False)
    _withash: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _coerce_tuple(self, "inputs")
        _coerce_tuple(self, "outputs")
        if not isinstance(self.version, int) or not -(1 << 31) <= self.version < (1 << 31):
            raise EncodingError("version must be a signed 32-bit integer", reason="value-range")
        if not all(isinstance(i, TxIn) for i in self.inputs):
            raise EncodingError("inputs must be TxIn values", reason="type")
        if not all(isinstance(o, TxOut) for o in self.outputs):
            raise EncodingError("outputs must be TxOut values", reason="type")
        _check_uint("locktime", self.locktime, 0xFFFF_FFFF)

    # -- construction -----------------------------------------------------------------------

    @staticmethod
    def parse(data: bytes | bytearray | memoryview) -> Transaction:
        """Parse exactly one transaction (trailing bytes are an error)."""
        return _speedups.parse_transaction(data)

    @staticmethod
    def from_hex(text: str) -> Transaction:
        try:
            data = bytes.fromhex(text)
        except ValueError as exc:
            raise ParseError(0, f"invalid hex: {exc}") from None
        return _speedups.parse_transaction(data)

    # -- serialization ------------------------------------------------------------------------

    @property
    def has_witness(self) -> bool:
        return any(i.has_witness for i in self.inputs) or any(o.has_witness for o in self.outputs)

    def serialize(self) -> bytes:
        """Consensus serialization with witness (the bytes a node relays)."""
        if self._raw is None:
            witness = self.has_witness
            flag = b"\x01" if witness else b"\x00"
            body = (self.version.to_bytes(4, "little", signed=True) + flag
                    + compact_size(len(self.inputs)) + b"".join(i.serialize() for i in self.inputs)
                    + compact_size(len(self.outputs))
                    + b"".join(o.serialize() for o in self.outputs)
                    + self.locktime.to_bytes(4, "little"))
            end = len(body)
            if witness:
                body += b"".join(i.serialize_witness() for i in self.inputs)
                body += b"".join(o.serialize_witness() for o in self.outputs)
            object.__setattr__(self, "_locktime_end", end)
            object.__setattr__(self, "_raw", body)
        return self._raw  # type: ignore[return-value]

    def serialize_without_witness(self) -> bytes:
        """The txid preimage: flag byte forced to 0, no witness section."""
        raw = self.serialize()
        return raw[:4] + b"\x00" + raw[5:self._locktime_end]

    def hex(self) -> str:
        return self.serialize().hex()

    # -- sizes ----------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self.serialize())

    @property
    def base_size(self) -> int:
        self.serialize()
        return self._locktime_end

    @property
    def weight(self) -> int:
        """base size * (WITNESS_SCALE_FACTOR - 1) + total size (GetTransactionWeight)."""
        return self.base_size * (WITNESS_SCALE_FACTOR - 1) + self.size

    @property
    def vsize(self) -> int:
        return (self.weight + WITNESS_SCALE_FACTOR - 1) // WITNESS_SCALE_FACTOR

    @property
    def discount_weight(self) -> int:
        """Elements' discounted-CT weight (ELIP-200, GetDiscountTransactionWeight): the weight
        minus, per output, its witness beyond the 2 bytes of empty proofs, 24 * 4 for a value
        commitment (33 vs 9 bytes) and 32 * 4 for a nonce commitment (33 vs 1 byte)."""
        weight = self.weight
        witness = self.has_witness
        for out in self.outputs:
            if witness:
                weight -= len(_var(out.surjection_proof)) + len(_var(out.range_proof)) - 2
            if isinstance(out.value, bytes):
                weight -= (33 - 9) * WITNESS_SCALE_FACTOR
            if out.nonce and out.nonce[0] in (2, 3):
                weight -= 32 * WITNESS_SCALE_FACTOR
        return weight

    @property
    def discount_vsize(self) -> int:
        return (self.discount_weight + WITNESS_SCALE_FACTOR - 1) // WITNESS_SCALE_FACTOR

    # -- hashes ---------------------------------------------------------------------------------

    @property
    def txid(self) -> bytes:
        """sha256d of the no-witness serialization (flag byte kept, as 0)."""
        if self._txid is None:
            raw = self.serialize()
            object.__setattr__(self, "_txid", _speedups.txid(raw, self._locktime_end))
        return self._txid  # type: ignore[return-value]

    @property
    def wtxid(self) -> bytes:
        """sha256d of the full serialization; equals txid when there is no witness."""
        if self._wtxid is None:
            raw = self.serialize()
            wtxid = _speedups.sha256d(raw) if raw[4] & 1 else self.txid
            object.__setattr__(self, "_wtxid", wtxid)
        return self._wtxid  # type: ignore[return-value]

    @property
    def withash(self) -> bytes:
        """Elements GetWitnessOnlyHash: fast Merkle root over the witness data only (§1.2)."""
        if self._withash is None:
            object.__setattr__(self, "_withash", _speedups.withash(self.serialize()))
        return self._withash  # type: ignore[return-value]

    def sighash_streams(self, taproot: bool = True) -> tuple[bytes | None, ...]:
        """The transaction-level hash streams of Elements' signature digests, from one walk of
        the serialization (docs/sighash.md §1.1, §2.2): (sha_prevouts, sha_sequences,
        sha_issuances, sha_outputs, sha_outpoint_flags, sha_issuance_rangeproofs,
        sha_output_witnesses). ``taproot=False``: the last three (taproot's own) are None and
        no witness byte is hashed, for segwit v0 digests. ``ctplugin.script.sighash`` reads
        them; its ``reference_streams`` is their field-by-field definition."""
        return _speedups.sighash_streams(self.serialize(), taproot)

    @property
    def txid_hex(self) -> str:
        return self.txid[::-1].hex()

    @property
    def wtxid_hex(self) -> str:
        return self.wtxid[::-1].hex()

    @property
    def withash_hex(self) -> str:
        return self.withash[::-1].hex()

    # -- accessors ------------------------------------------------------------------------------

    @property
    def is_coinbase(self) -> bool:
        """CTransaction::IsCoinBase: one input with a null prevout."""
        return len(self.inputs) == 1 and self.inputs[0].is_null_prevout

    @property
    def fee_outputs(self) -> tuple[TxOut, ...]:
        return tuple(o for o in self.outputs if o.is_fee)

    def fees(self) -> dict[bytes, int]:
        """Sum of fee outputs per explicit asset id (the RPC ``fee`` map)."""
        fees: dict[bytes, int] = {}
        for o in self.outputs:
            if o.is_fee:
                fees[o.asset] = fees.get(o.asset, 0) + o.value  # type: ignore[operator]
        return fees


def parse_transaction(data: bytes | bytearray | memoryview) -> Transaction:
    """Parse exactly one Elements transaction; ``ParseError(offset, reason)`` on bad input."""
    return _speedups.parse_transaction(data)


# ------------------------------------------------------------------------------------------------
# Blocks
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DynafedParamEntry:
    """One dynamic-federation parameter entry (docs/elements-format.md §1.4).

    ``type`` 0 = null, 1 = pruned (signblockscript, witness limit, elided_root),
    2 = full (signblockscript, witness limit, fedpeg program, fedpegscript, extension space).
    Fields a type does not serialize are empty.
    """

    type: int = 0
    signblockscript: bytes = b""
    signblock_witness_limit: int = 0
    elided_root: bytes = b""
    fedpeg_program: bytes = b""
    fedpegscript: bytes = b""
    extension_space: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        _coerce_tuple(self, "extension_space")
        if self.type not in (0, 1, 2):
            raise EncodingError("dynafed entry type must be 0, 1 or 2", reason="structure")
        _check_bytes("signblockscript", self.signblockscript)
        _check_uint("signblock_witness_limit", self.signblock_witness_limit, 0xFFFF_FFFF)
        _check_bytes("elided_root", self.elided_root, (32,) if self.type == 1 else (0,))
        _check_bytes("fedpeg_program", self.fedpeg_program)
        _check_bytes("fedpegscript", self.fedpegscript)
        _check_stack("extension_space", self.extension_space)
        if self.type != 2 and (self.fedpeg_program or self.fedpegscript or self.extension_space):
            raise EncodingError("only full (type 2) entries carry fedpeg data", reason="structure")
        if self.type == 0 and (self.signblockscript or self.signblock_witness_limit):
            raise EncodingError("a null entry carries no data", reason="structure")

    @property
    def is_null(self) -> bool:
        return self.type == 0

    def serialize(self) -> bytes:
        out = bytes((self.type,))
        if self.type:
            out += _var(self.signblockscript) + self.signblock_witness_limit.to_bytes(4, "little")
        if self.type == 1:
            out += self.elided_root
        elif self.type == 2:
            out += (_var(self.fedpeg_program) + _var(self.fedpegscript)
                    + _stack(self.extension_space))
        return out

    def extra_root(self) -> bytes:
        """FMR(H(fedpeg_program), H(fedpegscript), H(extension_space)) for a full entry, the
        stored ``elided_root`` for a pruned one, zeros for null; H = sha256d of the
        serialization (docs/elements-format.md §1.4)."""
        if self.type == 0:
            return _ZERO32
        if self.type == 1:
            return self.elided_root
        return hashes.fast_merkle_root([
            hashes.sha256d(_var(self.fedpeg_program)), hashes.sha256d(_var(self.fedpegscript)),
            hashes.sha256d(_stack(self.extension_space))])

    def root(self) -> bytes:
        """Entry root (getblockheader ``root``): FMR(compact_root, extra_root) with
        compact_root = FMR(H(signblockscript), H(signblock_witness_limit)); zeros for null."""
        if self.type == 0:
            return _ZERO32
        limit = self.signblock_witness_limit.to_bytes(4, "little")
        compact = hashes.sha256_midstate(hashes.sha256d(_var(self.signblockscript))
                                         + hashes.sha256d(limit))
        return hashes.sha256_midstate(compact + self.extra_root())

    def to_pruned(self) -> DynafedParamEntry:
        """The pruned (type 1) form of a full entry, as later headers carry it."""
        if self.type != 2:
            return self
        return DynafedParamEntry(type=1, signblockscript=self.signblockscript,
                                 signblock_witness_limit=self.signblock_witness_limit,
                                 elided_root=self.extra_root())


@dataclass(frozen=True, slots=True)
class DynafedParams:
    current: DynafedParamEntry
    proposed: DynafedParamEntry

    def serialize(self) -> bytes:
        return self.current.serialize() + self.proposed.serialize()

    def root(self) -> bytes:
        """DynaFedParams::CalculateRoot: FMR(current.root(), proposed.root())."""
        return hashes.sha256_midstate(self.current.root() + self.proposed.root())


@dataclass(frozen=True, slots=True)
class BlockHeader:
    """Liquid-style signed block header with height (docs/elements-format.md §1.4).

    Legacy headers carry ``challenge`` / ``solution``; dynamic-federation headers carry
    ``dynafed_params`` and ``signblock_witness`` (and have ``challenge is None``).  ``version`` is
    the in-memory version (the dynafed bit 31 masked off).
    """

    version: int
    prev_hash: bytes
    merkle_root: bytes
    time: int
    height: int
    challenge: bytes | None = None
    solution: bytes | None = None
    dynafed_params: DynafedParams | None = None
    signblock_witness: tuple[bytes, ...] = ()
    _raw: bytes | None = field(default=None, init=False, repr=False, compare=False)
    _hash_end: int = field(default=0, init=False, repr=False, compare=False)
    _hash: bytes | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _coerce_tuple(self, "signblock_witness")
        _check_uint("version", self.version, 0x7FFF_FFFF)
        _check_bytes("prev_hash", self.prev_hash, (32,))
        _check_bytes("merkle_root", self.merkle_root, (32,))
        _check_uint("time", self.time, 0xFFFF_FFFF)
        _check_uint("height", self.height, 0xFFFF_FFFF)
        if self.dynafed_params is None:
            _check_bytes("challenge", self.challenge)
            _check_bytes("solution", self.solution)
            if self.signblock_witness:
                raise EncodingError("legacy headers have no signblock witness", reason="structure")
        else:
            if not isinstance(self.dynafed_params, DynafedParams):
                raise EncodingError("dynafed_params must be DynafedParams", reason="type")
            if self.challenge is not None or self.solution is not None:
                raise EncodingError("dynafed headers have no challenge/solution",
                                    reason="structure")
            if self.dynafed_params.current.is_null and self.dynafed_params.proposed.is_null:
                raise EncodingError("dynafed headers need non-null parameters (Elements "
                                    "serializes null ones as a legacy header)", reason="structure")
            _check_stack("signblock_witness", self.signblock_witness)

    @property
    def is_dynafed(self) -> bool:
        return self.dynafed_params is not None

    def serialize(self) -> bytes:
        """Full header serialization (with solution or signblock witness)."""
        if self._raw is None:
            version = self.version | (DYNAFED_VERSION_BIT if self.is_dynafed else 0)
            out = (version.to_bytes(4, "little") + self.prev_hash + self.merkle_root
                   + self.time.to_bytes(4, "little") + self.height.to_bytes(4, "little"))
            if self.dynafed_params is not None:
                out += self.dynafed_params.serialize()
                end = len(out)
                out += _stack(self.signblock_witness)
            else:
                out += _var(self.challenge)  # type: ignore[arg-type]
                end = len(out)
                out += _var(self.solution)  # type: ignore[arg-type]
            object.__setattr__(self, "_hash_end", end)
            object.__setattr__(self, "_raw", out)
        return self._raw  # type: ignore[return-value]

    def serialize_for_hash(self) -> bytes:
        """Header bytes the block hash covers: no solution / no signblock witness."""
        return self.serialize()[: self._hash_end]

    @property
    def hash(self) -> bytes:
        if self._hash is None:
            object.__setattr__(self, "_hash", _speedups.sha256d(self.serialize_for_hash()))
        return self._hash  # type: ignore[return-value]

    @property
    def hash_hex(self) -> str:
        return self.hash[::-1].hex()

    @staticmethod
    def parse(data: bytes | bytearray | memoryview) -> BlockHeader:
        return _speedups.parse_block_header(data)


_locktime_end_of = attrgetter("_locktime_end")
_txid_of = attrgetter("txid")


@dataclass(frozen=True, slots=True)
class Block:
    header: BlockHeader
    transactions: tuple[Transaction, ...]

    def __post_init__(self) -> None:
        _coerce_tuple(self, "transactions")
        if not isinstance(self.header, BlockHeader):
            raise EncodingError("header must be a BlockHeader", reason="type")
        if not all(isinstance(t, Transaction) for t in self.transactions):
            raise EncodingError("transactions must be Transaction values", reason="type")

    @staticmethod
    def parse(data: bytes | bytearray | memoryview) -> Block:
        return _speedups.parse_block(data)

    def serialize(self) -> bytes:
        # One join over the transactions' kept serializations: a 1000-transaction block is
        # ~2 MB, and concatenating the header onto a joined body copies it twice (1.3 ms
        # against 0.2 ms, generatetoaddress's block file record)
        txs = self.transactions
        return b"".join([self.header.serialize(), compact_size(len(txs)),
                         *map(Transaction.serialize, txs)])

    @property
    def hash(self) -> bytes:
        return self.header.hash

    @property
    def size(self) -> int:
        txs = self.transactions
        return (len(self.header.serialize()) + len(compact_size(len(txs)))
                + sum(map(len, map(Transaction.serialize, txs))))

    @property
    def weight(self) -> int:
        """GetBlockWeight: stripped size * (WITNESS_SCALE_FACTOR - 1) + total size, the stripped
        form leaving out transaction witnesses and the dynafed signblock witness (Elements does
        not serialize it for hashes or weight); a legacy header's solution stays in both."""
        header = self.header
        raw_header = header.serialize()
        header_stripped = header._hash_end if header.is_dynafed else len(raw_header)
        txs = self.transactions
        count = len(compact_size(len(txs)))
        # one pass over the transactions' kept serializations (the parser keeps them; nothing
        # is joined): serialize() also sets each one's no-witness end
        size = len(raw_header) + count + sum(map(len, map(Transaction.serialize, txs)))
        stripped = header_stripped + count + sum(map(_locktime_end_of, txs))
        return stripped * (WITNESS_SCALE_FACTOR - 1) + size

    @property
    def hash_hex(self) -> str:
        return self.header.hash_hex

    def txids(self) -> list[bytes]:
        """Every transaction's txid, in block order; those not known yet are hashed in one
        native call (``_speedups.fill_txids``) rather than one property call each."""
        txs = self.transactions
        _speedups.fill_txids(txs)
        return list(map(_txid_of, txs))

    def compute_merkle_root(self) -> tuple[bytes, bool]:
        """Bitcoin Merkle root over the txids, and whether the tree is "mutated"
        (duplicate siblings, CVE-2012-2459)."""
        return _speedups.merkle_root(b"".join(self.txids()))

    def merkle_root_matches(self) -> bool:
        root, _ = self.compute_merkle_root()
        return root == self.header.merkle_root

    def witness_root(self, withashes: Sequence[bytes] | None = None) -> bytes:
        """Elements witness root: fast Merkle root over every transaction's withash, the
        coinbase included (docs/elements-format.md §1.2). ``withashes``: those withashes, in block
        order, when the caller already has them (of byte-identical transactions)."""
        if withashes is None:
            withashes = [t.withash for t in self.transactions]
        elif len(withashes) != len(self.transactions):
            raise EncodingError("one withash per transaction", reason="structure")
        return hashes.fast_merkle_root(withashes)

    def witness_commitment_index(self) -> int | None:
        """Index of the coinbase output holding the witness commitment (the last output whose
        script starts OP_RETURN 0x24 aa21a9ed and is at least 38 bytes), or None."""
        if not self.transactions:
            return None
        found = None
        for i, out in enumerate(self.transactions[0].outputs):
            spk = out.script_pubkey
            if len(spk) >= 38 and spk[:6] == b"\x6a\x24\xaa\x21\xa9\xed":
                found = i
        return found

    def expected_witness_commitment(self, withashes: Sequence[bytes] | None = None
                                    ) -> bytes | None:
        """sha256d(witness_root || reserved value), the reserved value being the coinbase
        input's single 32-byte script-witness item; None if the coinbase lacks it.
        ``withashes``: as for ``witness_root``."""
        if not self.transactions or not self.transactions[0].inputs:
            return None
        stack = self.transactions[0].inputs[0].script_witness
        if len(stack) != 1 or len(stack[0]) != 32:
            return None
        return hashes.sha256d(self.witness_root(withashes) + stack[0])

    def check_witness_commitment(self, withashes: Sequence[bytes] | None = None) -> bool:
        """True when the coinbase commits to this block's witness data. ``withashes``: as for
        ``witness_root``."""
        index = self.witness_commitment_index()
        expected = self.expected_witness_commitment(withashes)
        if index is None or expected is None:
            return False
        return self.transactions[0].outputs[index].script_pubkey[6:38] == expected


def parse_block(data: bytes | bytearray | memoryview) -> Block:
    """Parse exactly one Elements block (signed-block header with height)."""
    return _speedups.parse_block(data)


def parse_block_header(data: bytes | bytearray | memoryview) -> BlockHeader:
    """Parse exactly one Elements block header (with its solution / signblock witness)."""
    return _speedups.parse_block_header(data)


def spent_streams(spent: Sequence[Any]) -> tuple[bytes, bytes] | None:
    """Taproot's (sha_spent_asset_amounts, sha_spent_scripts) over the outputs an input list
    spends (anything with ``asset``, ``value`` and ``script_pubkey``), in one native pass; None
    when a field is of a type or range only ``serialize_conf_value`` handles (the caller's
    field-by-field path then raises its typed error)."""
    return _speedups.spent_streams(spent)


_speedups.register_types({
    "Transaction": Transaction, "TxIn": TxIn, "AssetIssuance": AssetIssuance, "TxOut": TxOut,
    "BlockHeader": BlockHeader, "DynafedParams": DynafedParams,
    "DynafedParamEntry": DynafedParamEntry, "Block": Block,
})

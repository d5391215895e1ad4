"""Signature hashes: Elements' segwit v0 (BIP143 variant), taproot (BIP341/342 variant) and
legacy digests, and the Bitcoin-mode legacy and BIP143 digests Elements computes when its
Elements mode is off (its unit-test vectors).

Field lists: ``docs/sighash.md`` §1 (v0), §2 (taproot), §1.4 (legacy), from Elements'
``SignatureHash`` / ``SignatureHashSchnorr`` (``src/script/interpreter.cpp``). The Elements digests
read one ``PrecomputedTransaction``: the per-transaction hash streams (Elements'
``PrecomputedTransactionData``), computed once on first use and shared by every input — v0 uses
SHA256 of the single-SHA256 streams over prevouts, sequences, issuances and outputs; taproot uses
the same single hashes plus its own (outpoint flags, spent assets and amounts, spent scripts,
issuance range proofs, output witnesses). Taproot digests also share, per hash type, the SHA-256
state after everything that does not depend on the input, so one input costs a state copy and a few
dozen bytes.

Conventions:

- A hash type is the full signature byte: base type ``hash_type & 0x1f`` (v0/legacy) or
  ``& 3`` (taproot), ANYONECANPAY ``0x80``, RANGEPROOF ``0x40`` (v0/legacy, only when the
  ``rangeproof`` argument — the SIGHASH_RANGEPROOF script flag — is true).
- Amounts are the spent output's confidential value as stored: an int (explicit, serialized
  ``0x01`` ‖ 8 bytes big-endian) or the 33-byte commitment.
- Outpoints are serialized with the real (masked) index; the issuance/peg-in flags are not
  part of them (taproot commits to them separately, in the outpoint flags).
- Digests are 32 bytes in raw byte order (as signed and as the vectors give them).

Bitcoin mode (``bitcoin_legacy_sighash``, ``bitcoin_segwit_v0_sighash``): the same
``SignatureHash`` with ``g_con_elementsmode`` false — outputs serialize as Bitcoin's (8-byte
little-endian value, script), there is no hashIssuance and the amount is 8 bytes little-endian,
so the digests are exactly Bitcoin's legacy SignatureHash and BIP143. They read a
``BitcoinTransaction`` (any object with Bitcoin's fields; the library has no Bitcoin parser).

Errors: ``taproot_sighash`` raises ``ScriptError(SCHNORR_SIG_HASHTYPE)`` for a hash type
taproot does not define or SIGHASH_SINGLE without a matching output (Elements'
``SignatureHashSchnorr`` returning false), and ``ScriptError(UNKNOWN_ERROR)`` if spent outputs
are missing; an input index out of range is an ``EncodingError``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

from ctplugin.elements.model import (
    AssetIssuance,
    Transaction,
    TxOut,
    serialize_conf_asset,
    serialize_conf_value,
    spent_streams,
)
from ctplugin.errors import EncodingError
from ctplugin.hashes import tagged_hasher
from ctplugin.script.errors import ScriptError, ScriptErrorCode
from ctplugin.serialize import compact_size
from ctplugin.serialize import var_bytes as _var

SIGHASH_DEFAULT = 0x00
SIGHASH_ALL = 0x01
SIGHASH_NONE = 0x02
SIGHASH_SINGLE = 0x03
SIGHASH_RANGEPROOF = 0x40
SIGHASH_ANYONECANPAY = 0x80

TAPROOT_HASH_TYPES = frozenset((0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83))
"""The hash types a taproot signature may use (no RANGEPROOF: taproot commits to the output
witnesses anyway)."""

TAG_TAPSIGHASH = "TapSighash/elements"

_ZERO32 = bytes(32)
_NULL_ISSUANCE = b"\x00"
_EMPTY_TXOUT = b"\x00\x00\x00\x00"  # CTxOut(): null asset, null value, null nonce, empty script


def _sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def _sha256d(data: bytes) -> bytes:
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


def _issuance_bytes(issuance: AssetIssuance | None) -> bytes:
    return _NULL_ISSUANCE if issuance is None else issuance.serialize()


def _outpoint(tx: Transaction, index: int) -> bytes:
    txin = tx.inputs[index]
    return txin.prevout_hash + txin.prevout_index.to_bytes(4, "little")


def _outpoint_flag(tx: Transaction, index: int) -> int:
    txin = tx.inputs[index]
    return (0x80 if txin.issuance is not None else 0) | (0x40 if txin.is_pegin else 0)


def output_bytes(out: TxOut) -> bytes:
    """An output in CTxOut form (asset, value, nonce, script with its length)."""
    return out.serialize()


def _rangeproof_pair(out: TxOut) -> bytes:
    """v0/legacy SIGHASH_RANGEPROOF order: range proof, then surjection proof."""
    return _var(out.range_proof) + _var(out.surjection_proof)


def _output_witness(out: TxOut) -> bytes:
    """CTxOutWitness serialization (taproot): surjection proof, then range proof."""
    return _var(out.surjection_proof) + _var(out.range_proof)


def _issuance_proofs(tx: Transaction, index: int) -> bytes:
    txin = tx.inputs[index]
    return _var(txin.issuance_amount_rangeproof) + _var(txin.inflation_keys_rangeproof)


def spent_asset_amount(out: SpentOutput) -> bytes:
    """What taproot commits to of a spent output besides its script: asset then value."""
    return serialize_conf_asset(out.asset) + serialize_conf_value(out.value)


class SpentOutput(Protocol):
    """What the digests read of a spent output (a ``TxOut`` or the chainstate's record)."""

    @property
    def asset(self) -> bytes: ...

    @property
    def value(self) -> int | bytes: ...

    @property
    def script_pubkey(self) -> bytes: ...


def reference_streams(tx: Transaction) -> tuple[bytes, ...]:
    """The transaction-level streams of ``PrecomputedTransaction`` in the order
    ``Transaction.sighash_streams`` returns them, computed field by field from the model: the
    specification the native walk is cross-tested against (tests/unit/test_script_sighash.py).
    (sha_prevouts, sha_sequences, sha_issuances, sha_outputs, sha_outpoint_flags,
    sha_issuance_rangeproofs, sha_output_witnesses)."""
    inputs, outputs = tx.inputs, tx.outputs
    return (
        _sha256(b"".join(t.prevout_hash + t.prevout_index.to_bytes(4, "little")
                         for t in inputs)),
        _sha256(b"".join(t.sequence.to_bytes(4, "little") for t in inputs)),
        _sha256(b"".join(_issuance_bytes(t.issuance) for t in inputs)),
        _sha256(b"".join(output_bytes(o) for o in outputs)),
        _sha256(bytes(_outpoint_flag(tx, i) for i in range(len(inputs)))),
        _sha256(b"".join(_issuance_proofs(tx, i) for i in range(len(inputs)))),
        _sha256(b"".join(_output_witness(o) for o in outputs)),
    )


def reference_spent_streams(spent: Sequence[SpentOutput]) -> tuple[bytes, bytes]:
    """(sha_spent_asset_amounts, sha_spent_scripts) field by field: the specification of
    ``model.spent_streams``, and its fallback for a field only Python serializes (it
    raises the typed error of a value out of range)."""
    return (_sha256(b"".join(spent_asset_amount(o) for o in spent)),
            _sha256(b"".join(_var(o.script_pubkey) for o in spent)))


class PrecomputedTransaction:
    """The hash streams of one transaction, computed on first use and shared by all its inputs.

    ``spent`` (one output per input, in input order) and ``genesis_hash`` (internal byte order)
    are needed for taproot digests only. The transaction must not change after construction
    (witnesses included: taproot digests commit to output witnesses and issuance proofs).

    The transaction-level streams come from one native walk of its serialization
    (``Transaction.sighash_streams``: contiguous spans such as the outputs and the output
    witnesses are hashed in place); ``reference_streams`` is their definition.
    """

    __slots__ = ("_rangeproofs_v0", "_spent_streams", "_streams", "_tap_prefix", "_v0",
                 "genesis_hash", "spent", "tx")

    def __init__(self, tx: Transaction, spent: Sequence[SpentOutput] | None = None,
                 genesis_hash: bytes | None = None) -> None:
        if spent is not None and len(spent) != len(tx.inputs):
            raise EncodingError("one spent output per input is needed", reason="count-mismatch")
        if genesis_hash is not None and len(genesis_hash) != 32:
            raise EncodingError("the genesis hash is 32 bytes", reason="length")
        self.tx = tx
        self.spent: tuple[SpentOutput, ...] | None = (
            tuple(spent) if spent is not None else None)
        self.genesis_hash = genesis_hash
        self._streams: tuple[bytes | None, ...] | None = None
        self._spent_streams: tuple[bytes, bytes] | None = None
        self._v0: tuple[bytes, bytes, bytes, bytes] | None = None
        self._rangeproofs_v0: bytes | None = None
        self._tap_prefix: dict[int, hashlib._Hash] = {}

    def _stream(self, i: int) -> bytes:
        """Stream ``i`` of ``Transaction.sighash_streams``: the v0 ones (0..3) without hashing
        the witnesses, until a taproot one (4..6) is asked for."""
        streams = self._streams
        if streams is None or streams[i] is None:
            streams = self._streams = self.tx.sighash_streams(taproot=i >= 4)
        stream = streams[i]
        assert stream is not None
        return stream

    # --- single-SHA256 streams shared by v0 and taproot -----------------------------------

    @property
    def sha_prevouts(self) -> bytes:
        return self._stream(0)

    @property
    def sha_sequences(self) -> bytes:
        return self._stream(1)

    @property
    def sha_issuances(self) -> bytes:
        return self._stream(2)

    @property
    def sha_outputs(self) -> bytes:
        return self._stream(3)

    # --- segwit v0 -------------------------------------------------------------------------

    def _v0_hashes(self) -> tuple[bytes, bytes, bytes, bytes]:
        """(hashPrevouts, hashSequence, hashIssuance, hashOutputs): SHA256 of the streams."""
        if self._v0 is None:
            self._v0 = (_sha256(self.sha_prevouts), _sha256(self.sha_sequences),
                        _sha256(self.sha_issuances), _sha256(self.sha_outputs))
        return self._v0

    @property
    def hash_rangeproofs(self) -> bytes:
        """v0's hashRangeproofs: sha256d over every output's range proof then surjection proof
        (only SIGHASH_RANGEPROOF signatures read it: not among the native streams)."""
        if self._rangeproofs_v0 is None:
            self._rangeproofs_v0 = _sha256d(b"".join(
                _rangeproof_pair(o) for o in self.tx.outputs))
        return self._rangeproofs_v0

    # --- taproot ---------------------------------------------------------------------------

    def _spent(self) -> tuple[SpentOutput, ...]:
        if self.spent is None:
            raise ScriptError(ScriptErrorCode.UNKNOWN_ERROR, "taproot digest without spent outputs")
        return self.spent

    def _spent_stream(self, i: int) -> bytes:
        streams = self._spent_streams
        if streams is None:
            spent = self._spent()
            streams = spent_streams(spent) or reference_spent_streams(spent)
            self._spent_streams = streams
        return streams[i]

    @property
    def sha_outpoint_flags(self) -> bytes:
        return self._stream(4)

    @property
    def sha_spent_asset_amounts(self) -> bytes:
        return self._spent_stream(0)

    @property
    def sha_spent_scripts(self) -> bytes:
        return self._spent_stream(1)

    @property
    def sha_issuance_rangeproofs(self) -> bytes:
        return self._stream(5)

    @property
    def sha_output_witnesses(self) -> bytes:
        return self._stream(6)

    def _taproot_prefix(self, hash_type: int) -> hashlib._Hash:
        """SHA-256 state after the tag prefix, genesis ×2, hash type, version, locktime and the
        transaction-level hashes this hash type commits to (shared by every input)."""
        state = self._tap_prefix.get(hash_type)
        if state is None:
            genesis = self.genesis_hash
            if genesis is None:
                raise ScriptError(ScriptErrorCode.UNKNOWN_ERROR,
                                  "taproot digest without the genesis hash")
            tx = self.tx
            parts = [genesis, genesis, bytes((hash_type,)),
                     (tx.version & 0xFFFF_FFFF).to_bytes(4, "little"),
                     tx.locktime.to_bytes(4, "little")]
            if not hash_type & SIGHASH_ANYONECANPAY:
                parts += [self.sha_outpoint_flags, self.sha_prevouts, self.sha_spent_asset_amounts,
                          self.sha_spent_scripts, self.sha_sequences, self.sha_issuances,
                          self.sha_issuance_rangeproofs]
            if hash_type & 3 in (SIGHASH_DEFAULT, SIGHASH_ALL):
                parts += [self.sha_outputs, self.sha_output_witnesses]
            state = tagged_hasher(TAG_TAPSIGHASH)
            state.update(b"".join(parts))
            self._tap_prefix[hash_type] = state
        return state


def _check_index(tx: Transaction, index: int) -> None:
    if not 0 <= index < len(tx.inputs):
        raise EncodingError(f"input index {index} out of range", reason="index-range")


def segwit_v0_sighash(pre: PrecomputedTransaction, index: int, script_code: bytes,
                      amount: int | bytes, hash_type: int, rangeproof: bool = False) -> bytes:
    """Elements' segwit v0 digest of input ``index`` (docs/sighash.md §1.1): sha256d of version,
    hashPrevouts, hashSequence, hashIssuance, this outpoint, scriptCode, the spent amount as
    stored, nSequence, this input's issuance (if any), hashOutputs, hashRangeproofs (only with
    ``rangeproof`` and the 0x40 bit), locktime and the 4-byte hash type.
    ``hash_type`` is any 32-bit value (consensus takes the signature's last byte)."""
    tx = pre.tx
    _check_index(tx, index)
    base = hash_type & 0x1F
    acp = bool(hash_type & SIGHASH_ANYONECANPAY)
    with_rangeproofs = rangeproof and bool(hash_type & SIGHASH_RANGEPROOF)
    prevouts = sequences = issuances = outputs = rangeproofs = _ZERO32
    if not acp:
        prevouts, sequences, issuances, _ = pre._v0_hashes()
        if base in (SIGHASH_SINGLE, SIGHASH_NONE):
            sequences = _ZERO32
    if base not in (SIGHASH_SINGLE, SIGHASH_NONE):
        outputs = pre._v0_hashes()[3]
        if with_rangeproofs:
            rangeproofs = pre.hash_rangeproofs
    elif base == SIGHASH_SINGLE and index < len(tx.outputs):
        out = tx.outputs[index]
        outputs = _sha256d(output_bytes(out))
        if with_rangeproofs:
            rangeproofs = _sha256d(_rangeproof_pair(out))
    txin = tx.inputs[index]
    parts = [(tx.version & 0xFFFF_FFFF).to_bytes(4, "little"), prevouts, sequences, issuances,
             _outpoint(tx, index), _var(script_code), serialize_conf_value(amount),
             txin.sequence.to_bytes(4, "little")]
    if txin.issuance is not None:
        parts.append(txin.issuance.serialize())
    parts.append(outputs)
    if with_rangeproofs:
        parts.append(rangeproofs)
    parts += [tx.locktime.to_bytes(4, "little"), (hash_type & 0xFFFF_FFFF).to_bytes(4, "little")]
    return _sha256d(b"".join(parts))


def taproot_sighash(pre: PrecomputedTransaction, index: int, hash_type: int, *,
                    annex: bytes | None = None, leaf_hash: bytes | None = None,
                    codesep_pos: int = 0xFFFF_FFFF) -> bytes:
    """Elements' taproot digest of input ``index`` (docs/sighash.md §2.2):
    TaggedHash("TapSighash/elements", genesis ‖ genesis ‖ hash_type ‖ …).

    ``annex`` (with its 0x50 prefix) if the witness carries one; ``leaf_hash`` for a tapscript
    (script path) signature, with ``codesep_pos`` the opcode position of the last executed
    OP_CODESEPARATOR (0xffffffff if none); key path when ``leaf_hash`` is None."""
    tx = pre.tx
    _check_index(tx, index)
    if hash_type not in TAPROOT_HASH_TYPES:
        raise ScriptError(ScriptErrorCode.SCHNORR_SIG_HASHTYPE)
    output_type = hash_type & 3
    if output_type == SIGHASH_SINGLE and index >= len(tx.outputs):
        raise ScriptError(ScriptErrorCode.SCHNORR_SIG_HASHTYPE, "SIGHASH_SINGLE without output")
    state = pre._taproot_prefix(hash_type).copy()
    spend_type = (2 if leaf_hash is not None else 0) | (1 if annex is not None else 0)
    parts = [bytes((spend_type,))]
    if hash_type & SIGHASH_ANYONECANPAY:
        txin = tx.inputs[index]
        spent = pre._spent()[index]
        parts += [bytes((_outpoint_flag(tx, index),)), _outpoint(tx, index),
                  spent_asset_amount(spent), _var(spent.script_pubkey),
                  txin.sequence.to_bytes(4, "little")]
        if txin.issuance is None:
            parts.append(_NULL_ISSUANCE)
        else:
            parts += [txin.issuance.serialize(), _sha256(_issuance_proofs(tx, index))]
    else:
        parts.append(index.to_bytes(4, "little"))
    if annex is not None:
        parts.append(_sha256(_var(annex)))
    if output_type == SIGHASH_SINGLE:
        out = tx.outputs[index]
        parts += [_sha256(output_bytes(out)), _sha256(_output_witness(out))]
    if leaf_hash is not None:
        parts += [leaf_hash, b"\x00", codesep_pos.to_bytes(4, "little")]
    state.update(b"".join(parts))
    return state.digest()


def legacy_sighash(tx: Transaction, index: int, script_code: bytes, hash_type: int,
                   rangeproof: bool = False) -> bytes:
    """Elements' legacy (pre-segwit) digest (docs/sighash.md §1.4): Bitcoin's algorithm over the
    Elements serialization — inputs with masked outpoints and their issuance, outputs in
    Elements form (a blanked output under SINGLE is the empty CTxOut), each output followed by
    its range and surjection proofs under SIGHASH_RANGEPROOF; OP_CODESEPARATORs are removed
    from the scriptCode. SINGLE without a matching output gives the digest 1 (Bitcoin's bug).
    No FindAndDelete: the caller passes the scriptCode it wants signed."""
    _check_index(tx, index)
    base = hash_type & 0x1F
    acp = bool(hash_type & SIGHASH_ANYONECANPAY)
    single, none = base == SIGHASH_SINGLE, base == SIGHASH_NONE
    with_rangeproofs = rangeproof and bool(hash_type & SIGHASH_RANGEPROOF)
    if single and index >= len(tx.outputs):
        return (1).to_bytes(32, "little")
    parts = [(tx.version & 0xFFFF_FFFF).to_bytes(4, "little")]
    chosen = [index] if acp else range(len(tx.inputs))
    parts.append(compact_size(len(chosen)))
    code = _var(_without_codeseparators(script_code))
    for n in chosen:
        txin = tx.inputs[n]
        parts.append(_outpoint(tx, n))
        parts.append(code if n == index else b"\x00")
        if n != index and (single or none):
            parts.append(b"\x00\x00\x00\x00")
        else:
            parts.append(txin.sequence.to_bytes(4, "little"))
        if txin.issuance is not None:
            parts.append(txin.issuance.serialize())
    n_outputs = 0 if none else (index + 1 if single else len(tx.outputs))
    parts.append(compact_size(n_outputs))
    for j in range(n_outputs):
        if single and j != index:
            parts.append(_EMPTY_TXOUT)
            continue
        out = tx.outputs[j]
        parts.append(output_bytes(out))
        if with_rangeproofs:
            parts.append(_rangeproof_pair(out))
    parts += [tx.locktime.to_bytes(4, "little"), (hash_type & 0xFFFF_FFFF).to_bytes(4, "little")]
    return _sha256d(b"".join(parts))


# --- Bitcoin mode (Elements' SignatureHash with Elements mode off) ----------------------------

class BitcoinTxIn(Protocol):
    @property
    def prevout_hash(self) -> bytes: ...

    @property
    def prevout_index(self) -> int: ...

    @property
    def sequence(self) -> int: ...


class BitcoinTxOut(Protocol):
    @property
    def value(self) -> int: ...

    @property
    def script_pubkey(self) -> bytes: ...


class BitcoinTransaction(Protocol):
    """What the Bitcoin-mode digests read of a transaction."""

    @property
    def version(self) -> int: ...

    @property
    def locktime(self) -> int: ...

    @property
    def inputs(self) -> Sequence[BitcoinTxIn]: ...

    @property
    def outputs(self) -> Sequence[BitcoinTxOut]: ...


_NULL_BITCOIN_TXOUT = b"\xff" * 8 + b"\x00"  # CTxOut(): value -1, empty script
_EMPTY_PROOFS = b"\x00\x00"  # an empty range proof and surjection proof (Bitcoin mode has none)


def _bitcoin_output(out: BitcoinTxOut) -> bytes:
    return out.value.to_bytes(8, "little", signed=True) + _var(out.script_pubkey)


def _bitcoin_outpoint(txin: BitcoinTxIn) -> bytes:
    return txin.prevout_hash + txin.prevout_index.to_bytes(4, "little")


def bitcoin_legacy_sighash(tx: BitcoinTransaction, index: int, script_code: bytes,
                           hash_type: int, rangeproof: bool = False) -> bytes:
    """Bitcoin's legacy SignatureHash (Elements mode off): the transaction copy with this
    input's scriptCode (OP_CODESEPARATORs removed), the others blanked, outputs per the hash
    type; SINGLE without a matching output gives the digest 1. ``rangeproof`` (the
    SIGHASH_RANGEPROOF script flag) with the 0x40 bit: each output serialized is followed by
    its (here always empty) range and surjection proofs, as Elements' serializer does."""
    if not 0 <= index < len(tx.inputs):
        raise EncodingError(f"input index {index} out of range", reason="index-range")
    base = hash_type & 0x1F
    acp = bool(hash_type & SIGHASH_ANYONECANPAY)
    single, none = base == SIGHASH_SINGLE, base == SIGHASH_NONE
    if single and index >= len(tx.outputs):
        return (1).to_bytes(32, "little")
    parts = [(tx.version & 0xFFFF_FFFF).to_bytes(4, "little")]
    chosen = [index] if acp else range(len(tx.inputs))
    parts.append(compact_size(len(chosen)))
    code = _var(_without_codeseparators(script_code))
    for n in chosen:
        txin = tx.inputs[n]
        parts.append(_bitcoin_outpoint(txin))
        parts.append(code if n == index else b"\x00")
        if n != index and (single or none):
            parts.append(b"\x00\x00\x00\x00")
        else:
            parts.append(txin.sequence.to_bytes(4, "little"))
    n_outputs = 0 if none else (index + 1 if single else len(tx.outputs))
    parts.append(compact_size(n_outputs))
    proofs = _EMPTY_PROOFS if rangeproof and hash_type & SIGHASH_RANGEPROOF else b""
    for j in range(n_outputs):
        parts.append(_NULL_BITCOIN_TXOUT if single and j != index
                     else _bitcoin_output(tx.outputs[j]) + proofs)
    parts += [tx.locktime.to_bytes(4, "little"), (hash_type & 0xFFFF_FFFF).to_bytes(4, "little")]
    return _sha256d(b"".join(parts))


def bitcoin_segwit_v0_sighash(tx: BitcoinTransaction, index: int, script_code: bytes,
                              amount: int, hash_type: int, rangeproof: bool = False) -> bytes:
    """BIP143 (Elements' v0 SignatureHash with Elements mode off: no hashIssuance, the
    amount as 8 bytes little-endian); ``rangeproof`` with the 0x40 bit appends Elements'
    hashRangeproofs after hashOutputs (over empty proofs here)."""
    if not 0 <= index < len(tx.inputs):
        raise EncodingError(f"input index {index} out of range", reason="index-range")
    base = hash_type & 0x1F
    acp = bool(hash_type & SIGHASH_ANYONECANPAY)
    with_rangeproofs = rangeproof and bool(hash_type & SIGHASH_RANGEPROOF)
    prevouts = sequences = outputs = rangeproofs = _ZERO32
    if not acp:
        prevouts = _sha256d(b"".join(_bitcoin_outpoint(t) for t in tx.inputs))
        if base not in (SIGHASH_SINGLE, SIGHASH_NONE):
            sequences = _sha256d(b"".join(t.sequence.to_bytes(4, "little") for t in tx.inputs))
    if base not in (SIGHASH_SINGLE, SIGHASH_NONE):
        outputs = _sha256d(b"".join(_bitcoin_output(o) for o in tx.outputs))
        rangeproofs = _sha256d(_EMPTY_PROOFS * len(tx.outputs))
    elif base == SIGHASH_SINGLE and index < len(tx.outputs):
        outputs = _sha256d(_bitcoin_output(tx.outputs[index]))
        rangeproofs = _sha256d(_EMPTY_PROOFS)
    txin = tx.inputs[index]
    return _sha256d(b"".join((
        (tx.version & 0xFFFF_FFFF).to_bytes(4, "little"), prevouts, sequences,
        _bitcoin_outpoint(txin), _var(script_code), amount.to_bytes(8, "little", signed=True),
        txin.sequence.to_bytes(4, "little"), outputs, rangeproofs if with_rangeproofs else b"",
        tx.locktime.to_bytes(4, "little"), (hash_type & 0xFFFF_FFFF).to_bytes(4, "little"))))


def _without_codeseparators(script: bytes) -> bytes:
    """The script with every OP_CODESEPARATOR opcode removed (pushes kept intact; a truncated
    push at the end is kept as is, as Elements' GetOp loop stops there)."""
    if b"\xab" not in script:
        return script
    out = bytearray()
    i, n = 0, len(script)
    while i < n:
        op = script[i]
        start = i
        i += 1
        if op <= 0x4E:
            if op < 0x4C:
                size = op
            else:
                width = {0x4C: 1, 0x4D: 2, 0x4E: 4}[op]
                if n - i < width:
                    out += script[start:]
                    break
                size = int.from_bytes(script[i:i + width], "little")
                i += width
            if n - i < size:
                out += script[start:]
                break
            i += size
        elif op == 0xAB:
            continue
        out += script[start:i]
    return bytes(out)

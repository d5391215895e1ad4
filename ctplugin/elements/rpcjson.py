"""elementsd-style ``decoderawtransaction`` JSON (docs/elements-format.md §3, TxToUniv).

Amounts are ``Amount`` values (a ``decimal.Decimal`` with 8 places that prints in fixed point:
elementsd's ValueFromAmount) and ``dumps`` prints them as plain JSON numbers (``0.00010000``)
through simplejson's Decimal support, as the node does.  Omitted on purpose: address and
``desc`` of scriptPubKeys (they need network parameters and descriptor inference), also for the
``pegout_*`` fields (which sit inside the scriptPubKey object, as Elements prints them).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import simplejson

from ctplugin.elements import _speedups
from ctplugin.elements.chainparams import ELEMENTS_RANGE_PROOFS, RangeProofKind, range_proof_kind
from ctplugin.elements.consensus import COIN
from ctplugin.elements.issuance import input_issuance_ids
from ctplugin.elements.model import Transaction, TxIn, TxOut
from ctplugin.elements.script import OP_RETURN, script_ops, script_to_asm, script_type


class Amount(Decimal):
    """A Decimal that prints in fixed point (``0.00000001``, never ``1E-8``), in ``str`` and
    therefore in JSON: simplejson writes Decimals with ``str``."""

    __slots__ = ()

    def __str__(self) -> str:
        return format(self, "f")

    def __repr__(self) -> str:
        return f"Amount('{self}')"


def value_from_amount(amount: int) -> Amount:
    """ValueFromAmount: signed 64-bit satoshis as a decimal with 8 places."""
    if amount >= 1 << 63:  # CAmount is int64_t; explicit values are read as uint64
        amount -= 1 << 64
    sign = "-" if amount < 0 else ""
    quotient, remainder = divmod(abs(amount), COIN)
    return Amount(f"{sign}{quotient}.{remainder:08d}")


def _pubkey_fully_valid(data: bytes) -> bool:
    """CPubKey::IsFullyValid for a nonce: a valid compressed secp256k1 point."""
    if len(data) != 33 or data[0] not in (2, 3):
        return False
    try:
        import coincurve

        coincurve.PublicKey(data)
    except ValueError:
        return False
    return True


def _issuance_json(txin: TxIn) -> dict[str, Any]:
    issuance = txin.issuance
    assert issuance is not None
    ids = input_issuance_ids(txin)
    assert ids is not None
    out: dict[str, Any] = {"assetBlindingNonce": issuance.asset_blinding_nonce[::-1].hex()}
    if issuance.is_reissuance:
        out["assetEntropy"] = issuance.asset_entropy[::-1].hex()
        out["isreissuance"] = True
    else:
        out["assetEntropy"] = ids.entropy[::-1].hex()
        out["isreissuance"] = False
        out["token"] = ids.token[::-1].hex()
    out["asset"] = ids.asset[::-1].hex()
    if isinstance(issuance.amount, int):
        out["assetamount"] = value_from_amount(issuance.amount)
    elif isinstance(issuance.amount, bytes):
        out["assetamountcommitment"] = issuance.amount.hex()
    if isinstance(issuance.inflation_keys, int):
        out["tokenamount"] = value_from_amount(issuance.inflation_keys)
    elif isinstance(issuance.inflation_keys, bytes):
        out["tokenamountcommitment"] = issuance.inflation_keys.hex()
    return out


def _vin_json(tx: Transaction, txin: TxIn) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if tx.is_coinbase:
        entry["coinbase"] = txin.script_sig.hex()
    else:
        entry["txid"] = txin.prevout_txid_hex
        entry["vout"] = txin.prevout_index
        entry["scriptSig"] = {"asm": script_to_asm(txin.script_sig, True),
                              "hex": txin.script_sig.hex()}
        entry["is_pegin"] = txin.is_pegin
    if txin.script_witness:
        entry["txinwitness"] = [item.hex() for item in txin.script_witness]
    if txin.pegin_witness:
        entry["pegin_witness"] = [item.hex() for item in txin.pegin_witness]
    entry["sequence"] = txin.sequence
    if txin.issuance is not None:
        entry["issuance"] = _issuance_json(txin)
    return entry


def _vout_json(n: int, out: TxOut, range_proofs: frozenset[RangeProofKind]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if isinstance(out.value, int):
        entry["value"] = value_from_amount(out.value)
    else:
        borromean = bool(out.range_proof) and range_proof_kind(
            out.range_proof, range_proofs) == RangeProofKind.BORROMEAN
        info = _speedups.rangeproof_info(out.range_proof) if borromean else None
        if info is not None:
            exponent, mantissa, min_value, max_value = info
            if exponent == -1:
                entry["value"] = value_from_amount(min_value)
            else:
                entry["value-minimum"] = value_from_amount(min_value)
                entry["value-maximum"] = value_from_amount(max_value)
            entry["ct-exponent"] = exponent
            entry["ct-bits"] = mantissa
        if out.surjection_proof:
            entry["surjectionproof"] = out.surjection_proof.hex()
        entry["valuecommitment"] = out.value.hex()
    if out.asset_is_explicit:
        entry["asset"] = out.asset[::-1].hex()
    else:
        entry["assetcommitment"] = out.asset.hex()
    entry["commitmentnonce"] = out.nonce.hex()
    entry["commitmentnonce_fully_valid"] = _pubkey_fully_valid(out.nonce)
    entry["n"] = n
    entry["scriptPubKey"] = _script_pubkey_json(out.script_pubkey)
    return entry


def _script_pubkey_json(script: bytes) -> dict[str, str]:
    """ScriptToUniv without address and descriptor: for a peg-out script the parent chain's
    genesis hash and the parent-chain scriptPubKey follow inside the same object, prefixed
    ``pegout_`` (Elements' ``core_write.cpp``)."""
    out = {"asm": script_to_asm(script), "hex": script.hex(), "type": script_type(script)}
    pegout = pegout_script(script)
    if pegout is not None:
        genesis_hash, target = pegout
        out["pegout_chain"] = genesis_hash[::-1].hex()
        out.update({f"pegout_{key}": value for key, value in
                    {"asm": script_to_asm(target), "hex": target.hex(),
                     "type": script_type(target)}.items()})
    return out


def pegout_script(script: bytes) -> tuple[bytes, bytes] | None:
    """CScript::IsPegoutScript: OP_RETURN, a 32-byte push (parent genesis hash), a non-empty
    push (the parent-chain scriptPubKey); more data (PAK proof) may follow.  Returns
    (genesis hash, scriptPubKey) or None."""
    ops = script_ops(script)
    if ops is None or len(ops) < 3 or ops[0] != (OP_RETURN, None):
        return None
    (_, genesis), (_, target) = ops[1], ops[2]
    if genesis is None or len(genesis) != 32 or not target:
        return None
    return genesis, target


def decode_transaction(tx: Transaction,
                       range_proofs: frozenset[RangeProofKind] = ELEMENTS_RANGE_PROOFS, *,
                       discount_ct: bool = True) -> dict[str, Any]:
    """The ``decoderawtransaction`` object for ``tx``.

    ``range_proofs``: the range-proof kinds of the chain the transaction belongs to
    (``ChainParams.range_proofs``). A blinded output's ``value-minimum``/``value-maximum``/
    ``ct-exponent``/``ct-bits`` come from a Borromean proof's header, as elementsd prints them
    (elementsd reads every proof that way: the default); a Bulletproof has no such header, so
    those fields are absent for it (reading its bytes as a header would print an arbitrary
    range, or even an explicit ``value``).

    ``discount_ct``: print ``discountvsize`` / ``discountweight`` (Elements does on chains that
    accept discounted CT fees)."""
    out: dict[str, Any] = {
        "txid": tx.txid_hex,
        "hash": tx.wtxid_hex,
        "wtxid": tx.wtxid_hex,
        "withash": tx.withash_hex,
        "version": tx.version & 0xFFFF_FFFF,
        "size": tx.size,
        "vsize": tx.vsize,
        "weight": tx.weight,
        "discountvsize": tx.discount_vsize,
        "discountweight": tx.discount_weight,
        "locktime": tx.locktime,
        "vin": [_vin_json(tx, txin) for txin in tx.inputs],
        "vout": [_vout_json(n, out, range_proofs) for n, out in enumerate(tx.outputs)],
        "fee": {asset[::-1].hex(): value_from_amount(total) for asset, total in tx.fees().items()},
    }
    if not discount_ct:
        del out["discountvsize"], out["discountweight"]
    return out


def dumps(obj: Any, indent: int | None = 2) -> str:
    """JSON text with Decimal amounts printed as exact numbers (e.g. ``0.00010000``)."""
    return simplejson.dumps(obj, indent=indent, use_decimal=True)

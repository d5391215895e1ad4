"""Conversions to and from other Elements libraries (test/interop helpers).

The consensus bytes are the interchange format, so conversions are exact by construction and
checked byte-for-byte in tests/unit/test_elements_interop.py. The libraries are imported lazily:
they are test dependencies, not runtime ones.
"""

from __future__ import annotations

from typing import Any

from ctplugin.elements.model import (
    Transaction,
    parse_transaction,
    serialize_conf_asset,
    serialize_conf_value,
)

_WALLY_FLAGS = 0x1 | 0x2  # WALLY_TX_FLAG_USE_WITNESS | WALLY_TX_FLAG_USE_ELEMENTS


def _elementstx_class() -> Any:
    import elementstx  # noqa: F401  (registers the 'elements' chain parameters)
    from bitcointx import select_chain_params

    select_chain_params("elements")
    from elementstx.core import CElementsTransaction

    return CElementsTransaction


def to_elementstx(tx: Transaction) -> Any:
    """The same transaction as python-elementstx's ``CElementsTransaction``."""
    return _elementstx_class().deserialize(tx.serialize())


def from_elementstx(etx: Any) -> Transaction:
    """A python-elementstx ``CElementsTransaction`` (or mutable variant) as our model."""
    return parse_transaction(etx.serialize())


def to_wally(tx: Transaction) -> Any:
    """The same transaction as a wallycore ``wally_tx`` (freed by its capsule; never tx_free)."""
    import wallycore

    return wallycore.tx_from_bytes(tx.serialize(), _WALLY_FLAGS)


def from_wally(wally_tx: Any) -> Transaction:
    import wallycore

    return parse_transaction(bytes(wallycore.tx_to_bytes(wally_tx, _WALLY_FLAGS)))


def _nonzero(data: bytes) -> bytes:
    """wally returns zero-filled fixed-size buffers for absent fields; map them to b""."""
    return data if any(data) else b""


def wally_fields(wally_tx: Any) -> tuple[Any, ...]:
    """Every field wallycore exposes for a transaction, normalized: wally returns zero-filled
    fixed-size buffers for absent fields, so all-zero byte strings are mapped to b"" here and in
    ``model_fields``."""
    import wallycore as w

    def get(fn: Any, *args: Any) -> bytes:
        try:
            return _nonzero(bytes(fn(*args)))
        except ValueError:
            return b""

    inputs = []
    for i in range(w.tx_get_num_inputs(wally_tx)):
        stack = tuple(get(w.tx_get_input_witness, wally_tx, i, j)
                      for j in range(w.tx_get_input_witness_num_items(wally_tx, i)))
        inputs.append((
            get(w.tx_get_input_txhash, wally_tx, i), w.tx_get_input_index(wally_tx, i),
            get(w.tx_get_input_script, wally_tx, i), w.tx_get_input_sequence(wally_tx, i),
            get(w.tx_get_input_blinding_nonce, wally_tx, i),
            get(w.tx_get_input_entropy, wally_tx, i),
            get(w.tx_get_input_issuance_amount, wally_tx, i),
            get(w.tx_get_input_inflation_keys, wally_tx, i),
            get(w.tx_get_input_issuance_amount_rangeproof, wally_tx, i),
            get(w.tx_get_input_inflation_keys_rangeproof, wally_tx, i), stack))
    outputs = []
    for i in range(w.tx_get_num_outputs(wally_tx)):
        outputs.append((
            get(w.tx_get_output_asset, wally_tx, i), get(w.tx_get_output_value, wally_tx, i),
            get(w.tx_get_output_nonce, wally_tx, i), get(w.tx_get_output_script, wally_tx, i),
            get(w.tx_get_output_surjectionproof, wally_tx, i),
            get(w.tx_get_output_rangeproof, wally_tx, i)))
    return _normalized((w.tx_get_version(wally_tx), w.tx_get_locktime(wally_tx), inputs, outputs))


def model_fields(tx: Transaction) -> tuple[Any, ...]:
    """The fields ``wally_fields`` reads, from our model, in wally's encoding."""
    inputs = []
    for i in tx.inputs:
        iss = i.issuance
        amount = serialize_conf_value(iss.amount) if iss and iss.amount is not None else b""
        keys = (serialize_conf_value(iss.inflation_keys)
                if iss and iss.inflation_keys is not None else b"")
        inputs.append((
            _nonzero(i.prevout_hash), i.prevout_index, i.script_sig, i.sequence,
            _nonzero(iss.asset_blinding_nonce) if iss else b"",
            _nonzero(iss.asset_entropy) if iss else b"", _nonzero(amount), _nonzero(keys),
            i.issuance_amount_rangeproof, i.inflation_keys_rangeproof,
            tuple(_nonzero(x) for x in i.script_witness)))
    outputs = [(_nonzero(serialize_conf_asset(o.asset)), _nonzero(serialize_conf_value(o.value)),
                _nonzero(o.nonce), o.script_pubkey, o.surjection_proof, o.range_proof)
               for o in tx.outputs]
    return _normalized((tx.version & 0xFFFF_FFFF, tx.locktime, inputs, outputs))


def _normalized(value: Any) -> Any:
    """Apply _nonzero to every byte string (wally cannot tell all-zero from absent)."""
    if isinstance(value, bytes):
        return _nonzero(value)
    if isinstance(value, tuple | list):
        return type(value)(_normalized(v) for v in value)
    return value

"""Conversions to and from other Elements libraries (test/interop helpers).

The consensus bytes are the interchange format, so conversions are exact by construction and
checked byte-for-byte in tests/test_elements_interop.py.  The libraries are imported lazily:
they are test dependencies, not runtime ones.
"""

from __future__ import annotations

from typing import Any

from ctplugin.elements.model import Transaction, parse_transaction

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

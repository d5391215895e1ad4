"""The block's fee totals per asset (``validator.block``, stage 3: Elements' ConnectBlock
``bad-txns-accumulated-fee-outofrange``): each total within MAX_MONEY, the transaction that
takes one above it named by its position in the block."""

from __future__ import annotations

import pytest

from ctplugin.elements.consensus import MAX_MONEY
from ctplugin.errors import ValidationError
from validator import reasons
from validator.block import _fee_totals

A, B = b"\x01" * 32, b"\x02" * 32


def test_totals_per_asset() -> None:
    assert _fee_totals([{A: 5}, {A: 7, B: 1}, {}, {B: 2}]) == {A: 12, B: 3}
    assert _fee_totals([]) == {}


def test_total_at_max_money_is_accepted() -> None:
    assert _fee_totals([{A: MAX_MONEY - 1}, {A: 1}]) == {A: MAX_MONEY}


def test_first_transaction_above_max_money_is_named() -> None:
    fees = [{B: MAX_MONEY}, {A: MAX_MONEY - 10}, {A: 10}, {A: 1}, {A: MAX_MONEY}]
    with pytest.raises(ValidationError) as err:
        _fee_totals(fees)
    assert err.value.reason == reasons.BAD_TXNS_ACCUMULATED_FEE_OUTOFRANGE
    assert err.value.tx_index == 4  # the fourth non-coinbase transaction: position 4


def test_other_asset_overflow_is_named() -> None:
    with pytest.raises(ValidationError) as err:
        _fee_totals([{A: 1, B: MAX_MONEY}, {A: 1}, {B: 1}])
    assert err.value.tx_index == 3

"""The node wallet's DLC records (``regtest.wallet.dlc_store``): the state, role and closing-type
enums keep the strings older records and RPC clients know, and a record is decoded into them or
refused with a typed error."""

from __future__ import annotations

import json

import pytest

import rpc.methods  # noqa: F401  (registers the calls whose descriptions are checked)
from ctplugin.dlc.errors import DlcError
from regtest.wallet.dlc import DlcRole
from regtest.wallet.dlc_store import (
    PENDING,
    PREFIX,
    PROTOCOL_STATES,
    RECORD_VERSION,
    ClosingType,
    DlcRecord,
    DlcState,
)
from rpc.registry import REGISTRY


def test_the_enums_keep_the_stored_and_printed_strings() -> None:
    # Records written before the enums and RPC clients parse these exact strings.
    assert [s.value for s in DlcState] == [
        "offered", "accepted", "signed", "funding-broadcast", "closing-broadcast", "cancelled",
        "funded", "closing", "closed", "refunded", "funding-conflicted"]
    assert [r.value for r in DlcRole] == ["offer", "accept"]
    assert [c.value for c in ClosingType] == ["cet", "refund"]
    assert json.dumps([DlcState.FUNDING_BROADCAST, DlcRole.OFFER]) == \
        '["funding-broadcast", "offer"]'
    assert PENDING < PROTOCOL_STATES


def test_listdlcs_documents_every_state() -> None:
    method = REGISTRY.get("listdlcs")
    assert method is not None
    description = method.description
    for state in DlcState:
        assert state.value in description, state


def _record(**changes: object) -> bytes:
    record: dict[str, object] = {"v": RECORD_VERSION, "role": "offer", "state": "offered",
                                 "created": 0, "secrets": {"fundingKey": 0, "coins": []}}
    record.update(changes)
    return json.dumps(record).encode()


@pytest.mark.parametrize(("changes", "why"), [
    ({"state": "funded"}, "stores the state funded"),  # a chain position, read from the ledger
    ({"state": "settled"}, "corrupt DLC record"),
    ({"role": "oracle"}, "corrupt DLC record"),
    ({"v": RECORD_VERSION + 1}, "record version"),
])
def test_a_record_with_an_unknown_state_or_role_is_a_typed_error(
        changes: dict[str, object], why: str) -> None:
    with pytest.raises(DlcError) as refused:
        DlcRecord.decode(PREFIX + bytes(32), _record(**changes))
    assert refused.value.reason == "bad-record"
    assert why in str(refused.value)

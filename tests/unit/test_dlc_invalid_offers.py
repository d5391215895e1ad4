"""Invalid contracts are rejected with clear, typed errors (rust-dlc's invalid-offer inputs)."""

from __future__ import annotations

import contextlib
import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctplugin.dlc import messages
from ctplugin.dlc.contract import Contract, validate_offer
from ctplugin.dlc.errors import DlcError
from ctplugin.errors import CtpluginError
from tests.conftest import FIXTURES, load_json

# rust-dlc dlc-manager/test_inputs: file -> the reason we must give.
INVALID = {
    "offer_numerical_bad_first_payout.json": "payout-not-covering",
    "offer_numerical_bad_last_payout.json": "payout-not-covering",
    "offer_numerical_collateral_less_than_payout.json": "payout-above-collateral",
    "offer_numerical_empty_rounding_interval.json": "bad-rounding",
    "offer_numerical_invalid_rounding_interval.json": "bad-rounding",
    "offer_numerical_non_continuous.json": "payout-not-continuous",
    "offer_enum_collateral_not_equal_payout.json": "payout-sum-mismatch",
    "offer_enum_missing_payout.json": "enum-outcomes-mismatch",
    "offer_enum_oracle_with_diff_payout.json": "enum-outcomes-mismatch",
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_rust_dlc_invalid_offers_are_rejected(name: str) -> None:
    offer = messages.parse_offered_contract(load_json(FIXTURES / f"dlc_rust_{name}"))
    # Several of these inputs carry announcements edited after signing (so their signatures no
    # longer verify); check the contract-level reason with signature checks off, then that the
    # full validation rejects them too.
    with pytest.raises(DlcError) as info:
        validate_offer(offer, check_announcements=False)
    assert info.value.reason == INVALID[name], str(info.value)
    with pytest.raises(DlcError):
        validate_offer(offer)


def test_rust_dlc_valid_offer_passes() -> None:
    offer = messages.parse_offer(load_json(FIXTURES / "dlc_rust_offer_contract.json"))
    items = validate_offer(offer)
    assert items and all(item.entries for item in items)


def _base_offer() -> dict:
    return load_json(FIXTURES / "dlc_three_of_three_oracle_numerical_test.json")["offer_message"]


def _descriptor(offer: dict) -> dict:
    info = offer["message"]["contractInfo"]["singleContractInfo"]["contractInfo"]
    return info


@pytest.mark.parametrize("mutate, reason", [
    (lambda o: o["message"].__setitem__("protocolVersion", 2), "bad-version"),
    (lambda o: o["message"].__setitem__("refundLocktime", 1), "bad-locktime"),
    (lambda o: o["message"].__setitem__("offerCollateral", 10**9), "bad-collateral"),
    (lambda o: _descriptor(o)["oracleInfo"]["multi"]["oracleAnnouncements"][2].__setitem__(
        "announcementSignature", "00" * 64), "bad-announcement"),
    (lambda o: _descriptor(o)["oracleInfo"]["multi"].__setitem__("threshold", 4),
     "bad-threshold"),
    (lambda o: _descriptor(o)["oracleInfo"]["multi"].__setitem__("threshold", 0),
     "bad-threshold"),
    (lambda o: _descriptor(o)["oracleInfo"]["multi"]["oracleAnnouncements"][0]["oracleEvent"][
        "oracleNonces"].pop(), "bad-announcement"),
    (lambda o: _descriptor(o)["oracleInfo"]["multi"]["oracleAnnouncements"][1][
        "oraclePublicKey"].__class__, None),
    (lambda o: _descriptor(o)["oracleInfo"]["multi"].__setitem__(
        "oracleParams", {"maxErrorExp": 2, "minFailExp": 3, "maximizeCoverage": False}),
     "bad-oracle-params"),
    (lambda o: _descriptor(o)["contractDescriptor"]["numericOutcomeContractDescriptor"][
        "payoutFunction"]["lastEndpoint"].__setitem__("eventOutcome", 2000),
     "payout-not-covering"),
    (lambda o: _descriptor(o)["contractDescriptor"]["numericOutcomeContractDescriptor"][
        "payoutFunction"]["payoutFunctionPieces"][0]["payoutCurvePiece"][
        "polynomialPayoutCurvePiece"]["payoutPoints"][0].__setitem__("eventOutcome", 0),
     "bad-payout-curve"),
])
def test_mutated_offers_are_rejected(mutate, reason: str | None) -> None:
    offer = copy.deepcopy(_base_offer())
    mutate(offer)
    if reason is None:
        validate_offer(messages.parse_offer(offer))  # control: an untouched offer is fine
        return
    with pytest.raises(DlcError) as info:
        validate_offer(messages.parse_offer(offer))
    assert info.value.reason == reason, str(info.value)


@pytest.mark.parametrize("field, value", [
    ("chainHash", "zz"), ("fundingPubkey", "02"), ("payoutSerialId", -1),
    ("payoutSerialId", 1 << 64), ("feeRatePerVb", "2"), ("contractInfo", []),
    ("fundingInputs", {}), ("cetLocktime", True),
])
def test_malformed_messages_are_typed_errors(field: str, value: object) -> None:
    offer = copy.deepcopy(_base_offer())
    offer["message"][field] = value
    with pytest.raises(DlcError) as info:
        messages.parse_offer(offer)
    assert info.value.reason == "bad-message"


def test_garbage_json_shapes() -> None:
    for junk in (None, 3, "x", [], {"message": []}, json.loads('{"message": {}}')):
        with pytest.raises(DlcError):
            messages.parse_offer(junk)
    with pytest.raises(DlcError):
        messages.parse_accept({"message": {"temporaryContractId": "00" * 32}})


def _leaves(obj: object, path: tuple = ()) -> list[tuple]:
    if isinstance(obj, dict):
        return [leaf for k, v in obj.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(obj, list):
        return [leaf for i, v in enumerate(obj) for leaf in _leaves(v, (*path, i))] or [path]
    return [path]


_BASE_LEAVES = _leaves(load_json(FIXTURES / "dlc_three_of_three_oracle_numerical_test.json")[
    "offer_message"]["message"])

junk = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                 st.floats(allow_nan=True), st.text(max_size=8),
                 st.sampled_from(["00" * 32, "02" + "11" * 32, "ff" * 33, "zz"]),
                 st.lists(st.integers(0, 3), max_size=3), st.just({}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_BASE_LEAVES), junk), min_size=1, max_size=3))
def test_fuzzed_offers_fail_only_with_typed_errors(mutations) -> None:
    offer = copy.deepcopy(_base_offer())
    for path, value in mutations:
        node = offer["message"]
        for key in path[:-1]:
            node = node[key]
        if path:
            node[path[-1]] = value
    with contextlib.suppress(CtpluginError):
        validate_offer(messages.parse_offer(offer))


_ACCEPT = load_json(FIXTURES / "dlc_three_of_three_oracle_numerical_test.json")["accept_message"]
_ACCEPT_LEAVES = [p for p in _leaves(_ACCEPT["message"]) if "cetAdaptorSignatures" not in p]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(_ACCEPT_LEAVES), junk), min_size=1, max_size=2),
       st.integers(0, 13), st.integers(0, 161), st.integers(1, 255))
def test_fuzzed_accepts_fail_only_with_typed_errors(mutations, sig_index, byte, flip) -> None:
    """Hostile accept messages (fields and adaptor-signature bytes) never crash the offerer."""
    accept = copy.deepcopy(_ACCEPT)
    for path, value in mutations:
        node = accept["message"]
        for key in path[:-1]:
            node = node[key]
        if path:
            node[path[-1]] = value
    sigs = accept["message"]["cetAdaptorSignatures"]["ecdsaAdaptorSignatures"]
    raw = bytearray.fromhex(sigs[sig_index]["signature"])
    raw[byte] ^= flip
    sigs[sig_index]["signature"] = raw.hex()
    offer = messages.parse_offer(_base_offer())
    with contextlib.suppress(CtpluginError):
        parsed = messages.parse_accept(accept)
        contract = Contract.build(offer, parsed)
        verdict = contract.verify_adaptor_signatures(parsed.funding_pubkey,
                                                     parsed.cet_adaptor_signatures, offerer=False)
        assert not all(verdict)  # a flipped byte must never verify

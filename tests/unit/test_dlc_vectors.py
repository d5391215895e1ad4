"""dlcspecs vectors: every offer/accept/sign set rebuilt from its offer, plus the small vectors.

For each ``test_vectors`` set we rebuild the funding transaction, CETs, refund, prefixes and adaptor
points from the offer and the accepter's parameters, then check: the contract id (so the funding
txid and output index) equals the sign message's; both refund signatures verify over our refund
transaction; every adaptor signature of the accept and sign messages verifies, in order, over our
CETs and points; the offerer's funding witnesses pass script verification on our funding tx.
"""

from __future__ import annotations

import hashlib
import unicodedata

import pytest

from ctplugin.dlc import messages, wire
from ctplugin.dlc.contract import Contract
from ctplugin.dlc.oracle import outcome_message
from ctplugin.dlc.transactions import FundingInput, PartyParams, closing_sighash, contract_id
from tests.conftest import FIXTURES, load_json, shared_file, shared_path

VECTOR_DIR = shared_file("dlc-vectors", "dlcspecs", "test_vectors")
SETS = sorted(p.name for p in VECTOR_DIR.glob("*.json")) if VECTOR_DIR.exists() else []
FIXTURE_SETS = sorted(p.name for p in FIXTURES.glob("dlc_*_test.json")
                      if "oracle" in p.name or "enum" in p.name)


def _check_set(data: dict) -> Contract:
    offer = messages.parse_offer(data["offer_message"])
    accept = messages.parse_accept(data["accept_message"])
    sign = messages.parse_sign(data["sign_message"])
    contract = Contract.build(offer, accept)
    assert contract.contract_id() == sign.contract_id
    assert contract.verify_refund_signature(accept.funding_pubkey, accept.refund_signature)
    assert contract.verify_refund_signature(offer.funding_pubkey, sign.refund_signature)
    assert len(accept.cet_adaptor_signatures) == len(contract.entries)
    assert all(contract.verify_adaptor_signatures(accept.funding_pubkey,
                                                  accept.cet_adaptor_signatures, offerer=False))
    assert all(contract.verify_adaptor_signatures(offer.funding_pubkey,
                                                  sign.cet_adaptor_signatures, offerer=True))
    contract.verify_funding_witnesses(contract.offer_params, sign.funding_witnesses)
    # Our direct BIP143 CET digests equal python-bitcointx's over the built transactions.
    dlc = contract.transactions
    for cet, digest in zip(contract.cets, contract.sighashes, strict=True):
        assert closing_sighash(cet, dlc.funding_script, dlc.fund_output_value) == digest
    # Signatures are bound to their position: swapping two breaks both.
    if len(accept.cet_adaptor_signatures) > 1:
        swapped = list(accept.cet_adaptor_signatures)
        swapped[0], swapped[1] = swapped[1], swapped[0]
        verdict = contract.verify_adaptor_signatures(accept.funding_pubkey, swapped,
                                                     offerer=False)
        assert verdict[:2] == [False, False] and all(verdict[2:])
    return contract


@pytest.mark.parametrize("name", SETS)
def test_rebuild_dlcspecs_set(name: str) -> None:
    _check_set(load_json(shared_path("dlc-vectors", "dlcspecs", "test_vectors", name)))


@pytest.mark.parametrize("name", FIXTURE_SETS)
def test_rebuild_fixture_set(name: str) -> None:
    _check_set(load_json(FIXTURES / name))


def test_three_of_three_shape() -> None:
    contract = _check_set(load_json(FIXTURES / "dlc_three_of_three_oracle_numerical_test.json"))
    # payout (0,0)-(3,1e8)-(5,2e8)-(1023,2e8): outcomes 0..4 vary, 5..1023 is one CET.
    assert [e.paths[0][1] for e in contract.entries][5:] == [
        (0, 0, 0, 0, 0, 0, 0, 1, 0, 1), (0, 0, 0, 0, 0, 0, 0, 1, 1), (0, 0, 0, 0, 0, 0, 1),
        (0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 1), (0, 0, 0, 1), (0, 0, 1), (0, 1), (1,)]
    assert len(contract.cets) == 6


def test_contract_id_vectors() -> None:
    for vector in load_json(FIXTURES / "dlc_contract_id_test.json"):
        assert contract_id(bytes.fromhex(vector["fundTxId"]), vector["fundOutputIndex"],
                           bytes.fromhex(vector["temporaryContractId"])).hex() == vector[
            "contractId"]


def test_hash_vectors_nfc() -> None:
    for vector in load_json(FIXTURES / "dlc_hash_test.json"):
        for variant in vector["Variants"]:
            assert unicodedata.normalize("NFC", variant).encode().hex() == vector["Expected"]
            assert outcome_message(variant).hex() == vector["SHA256"]
            assert hashlib.sha256(bytes.fromhex(vector["Expected"])).hexdigest() == vector[
                "SHA256"]


def _party(inputs: list[dict], payout_len: int, change_len: int) -> PartyParams:
    funding = tuple(FundingInput(n, b"", 0, 0xFFFFFFFF, i["maxWitnessLen"],
                                 bytes(i["redeemScriptLen"])) for n, i in enumerate(inputs))
    return PartyParams(bytes(33), bytes(change_len), 0, bytes(payout_len), 0, funding, 0)


def _check_fees(vectors: list[dict]) -> None:
    for vector in vectors:
        inputs = vector["inputs"]
        offer = _party(inputs["offerInputs"], inputs["offerPayoutSPKLen"],
                       inputs["offerChangeSPKLen"])
        accept = _party(inputs["acceptInputs"], inputs["acceptPayoutSPKLen"],
                        inputs["acceptChangeSPKLen"])
        rate = inputs["feeRate"]
        assert offer.fees(rate) == (vector["offerFundingFee"], vector["offerClosingFee"])
        assert accept.fees(rate) == (vector["acceptFundingFee"], vector["acceptClosingFee"])


def test_fee_vectors_subset() -> None:
    _check_fees(load_json(FIXTURES / "dlc_fee_test_subset.json"))


def test_fee_vectors_all() -> None:
    vectors = load_json(shared_path("dlc-vectors", "dlcspecs", "dlc_fee_test.json"))
    assert len(vectors) > 400
    _check_fees(vectors)


@pytest.mark.parametrize("name", SETS)
def test_wire_serialization_matches_rust_dlc(name: str) -> None:
    data = load_json(shared_path("dlc-vectors", "dlcspecs", "test_vectors", name))
    offer = messages.parse_offer(data["offer_message"])
    accept = messages.parse_accept(data["accept_message"])
    sign = messages.parse_sign(data["sign_message"])
    assert wire.serialize_offer(offer).hex() == data["offer_message"]["serialized"]
    assert wire.serialize_accept(accept).hex() == data["accept_message"]["serialized"]
    assert wire.serialize_sign(sign).hex() == data["sign_message"]["serialized"]


def _legacy_to_current(obj: object) -> object:
    """The dlcspecs vectors' older rust-dlc JSON in today's form ("localPayout" became
    "offerPayout"; accept_dlc lost "negotiationFields")."""
    if isinstance(obj, dict):
        return {("offerPayout" if k == "localPayout" else k): _legacy_to_current(v)
                for k, v in obj.items() if k != "negotiationFields"}
    if isinstance(obj, list):
        return [_legacy_to_current(v) for v in obj]
    return obj


def _round_trip(data: dict) -> None:
    for key, parse, write in (("offer_message", messages.parse_offer, messages.offer_json),
                              ("accept_message", messages.parse_accept, messages.accept_json),
                              ("sign_message", messages.parse_sign, messages.sign_json)):
        source = data[key]["message"]
        assert write(parse(source)) == _legacy_to_current(source), key  # type: ignore[operator]


@pytest.mark.parametrize("name", SETS)
def test_json_writers_round_trip_dlcspecs_set(name: str) -> None:
    _round_trip(load_json(shared_path("dlc-vectors", "dlcspecs", "test_vectors", name)))


@pytest.mark.parametrize("name", FIXTURE_SETS)
def test_json_writers_round_trip_fixture_set(name: str) -> None:
    _round_trip(load_json(FIXTURES / name))


@pytest.mark.parametrize("name, kind", [("offer_msg", "offer"), ("offer_msg_disjoint", "offer"),
                                        ("accept_msg", "accept"), ("sign_msg", "sign")])
def test_json_writers_match_rust_dlc_exactly(name: str, kind: str) -> None:
    """rust-dlc's own message test inputs come back byte for byte (as parsed JSON)."""
    source = load_json(shared_path("dlc-vectors", "rust-dlc", "dlc-messages", f"{name}.json"))
    parse = getattr(messages, f"parse_{kind}")
    write = getattr(messages, f"{kind}_json")
    assert write(parse(source)) == source


@pytest.mark.parametrize("name", ["dlc_rust_offer_msg.json", "dlc_rust_offer_msg_disjoint.json"])
def test_json_writers_match_rust_dlc_fixtures(name: str) -> None:
    source = load_json(FIXTURES / name)
    assert messages.offer_json(messages.parse_offer(source)) == source

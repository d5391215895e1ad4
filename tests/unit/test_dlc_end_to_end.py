"""End to end: two parties, three oracles, a numeric contract, attestation, closing, recovery."""

from __future__ import annotations

import pytest

from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc import transactions as txs
from ctplugin.dlc.builder import Wallet, attach_witnesses, numeric_offer
from ctplugin.dlc.contract import Contract
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.multi_oracle import DifferenceParams
from ctplugin.dlc.oracle import DigitDecompositionEvent, Oracle
from ctplugin.dlc.payout import (
    PayoutFunction,
    PayoutPoint,
    PolynomialPiece,
    RoundingInterval,
    RoundingIntervals,
)
from ctplugin.hashes import sha256
from ctplugin.secp256k1 import ct

NB_DIGITS = 10
TOTAL = 200_000_000


def _setup(threshold: int, params: DifferenceParams | None):
    oracles = [Oracle(sha256(f"oracle-{i}".encode())) for i in range(3)]
    event = DigitDecompositionEvent(2, False, "usd/btc", 0, NB_DIGITS)
    announcements = [o.announce("btcusd", event) for o in oracles]
    # Offerer's payout: 0 up to 200, linear to the full collateral at 800, then flat.
    function = PayoutFunction((
        PolynomialPiece((PayoutPoint(0, 0), PayoutPoint(200, 0))),
        PolynomialPiece((PayoutPoint(200, 0), PayoutPoint(800, TOTAL))),
        PolynomialPiece((PayoutPoint(800, TOTAL), PayoutPoint(1023, TOTAL)))))
    rounding = RoundingIntervals((RoundingInterval(0, 1_000_000),))
    alice = Wallet(sha256(b"alice-fund"), sha256(b"alice-coin"), 150_000_000, 1)
    bob = Wallet(sha256(b"bob-fund"), sha256(b"bob-coin"), 150_000_000, 2)
    offer = numeric_offer(alice, announcements, threshold, function, rounding,
                          total_collateral=TOTAL, offer_collateral=TOTAL // 2,
                          num_digits=NB_DIGITS, params=params)
    return oracles, announcements, alice, bob, offer


@pytest.mark.parametrize("threshold, params", [
    (3, None), (2, None), (2, DifferenceParams(4, 2, True))], ids=["3of3", "2of3", "2of3-diff"])
def test_offer_accept_sign_attest_close(threshold: int, params: DifferenceParams | None) -> None:
    oracles, announcements, alice, bob, offer = _setup(threshold, params)
    # Bob accepts: builds the contract from the offer, adaptor-signs every CET and the refund.
    bob_params = bob.params(TOTAL // 2)
    bob_view = Contract.build(offer, bob_params)
    bob_sigs = bob_view.sign_adaptor_signatures(bob.funding_secret, offerer=False)
    bob_refund = bob_view.sign_refund(bob.funding_secret)
    # Alice rebuilds the same contract, checks Bob's signatures and signs her own.
    alice_view = Contract.build(offer, bob_params)
    assert alice_view.points == bob_view.points and alice_view.sighashes == bob_view.sighashes
    assert all(alice_view.verify_adaptor_signatures(bob.funding_pubkey, bob_sigs,
                                                    offerer=False))
    assert alice_view.verify_refund_signature(bob.funding_pubkey, bob_refund)
    alice_sigs = alice_view.sign_adaptor_signatures(alice.funding_secret, offerer=True)
    assert all(bob_view.verify_adaptor_signatures(alice.funding_pubkey, alice_sigs,
                                                  offerer=True))
    # Both fund: the funding transaction with both witnesses passes script verification.
    fund = alice_view.transactions.fund
    signed_fund = attach_witnesses(
        fund, [alice.funding_input(), bob.funding_input()],
        alice.sign_funding(fund) + bob.sign_funding(fund))
    for n, funding_input in enumerate((alice.funding_input(), bob.funding_input())):
        _, amount, spk = funding_input.prevout()
        index = next(i for i, v in enumerate(signed_fund.vin)
                     if v.prevout.hash == funding_input.prevout()[0])
        txs.verify_input(signed_fund, index, spk, amount)
        assert n in (0, 1)
    # The oracles attest 613 (the second oracle slightly differently with bounded difference).
    values = [613, 613 if params is None else 611, 613]
    attestations = {i: o.attest(a, v) for i, (o, a, v) in enumerate(zip(oracles, announcements,
                                                                            values))}
    for i, attestation in attestations.items():
        assert attestation.verify(announcements[i].event.nonces)
    present = dict(list(attestations.items())[:threshold])
    index = alice_view.find_adaptor_index(present)
    entry = alice_view.entries[index]
    cet_payout = alice_view.items[0].payouts[entry.cet_index]
    expected = round((613 - 200) / 600 * TOTAL / 1_000_000) * 1_000_000
    assert cet_payout[0] == expected
    # Alice decrypts Bob's adaptor signature, co-signs, and the CET verifies.
    cet = alice_view.execute(index, present, bob_sigs[index], alice.funding_secret,
                             bob.funding_pubkey)
    assert cet.GetTxid() == alice_view.cets[entry.cet_index].GetTxid()
    assert sum(o.nValue for o in cet.vout) == TOTAL
    # Bob sees the CET and recovers the oracles' secret from his own decrypted signature.
    stack = list(cet.wit.vtxinwit[0].scriptWitness.stack)
    keys = sorted([alice.funding_pubkey, bob.funding_pubkey])
    bob_der = stack[1 + keys.index(bob.funding_pubkey)][:-1]
    secret = ea.recover(alice_view.points[index], bob_sigs[index], ea.der_decode(bob_der))
    assert ct.base_mul(secret) == alice_view.points[index]
    expected_secret = sum(present[i].secret(len(prefix)) for i, prefix in entry.paths)
    assert secret == expected_secret % ea.N


def test_wrong_attestation_cannot_close() -> None:
    oracles, announcements, alice, bob, offer = _setup(3, None)
    bob_params = bob.params(TOTAL // 2)
    contract = Contract.build(offer, bob_params)
    sigs = contract.sign_adaptor_signatures(bob.funding_secret, offerer=False)
    attestations = {i: o.attest(a, 300) for i, (o, a) in enumerate(zip(oracles, announcements))}
    index = contract.find_adaptor_index(attestations)
    wrong = {i: o.attest(a, 900) for i, (o, a) in enumerate(zip(oracles, announcements))}
    with pytest.raises(DlcError):
        contract.execute(index, wrong, sigs[index], alice.funding_secret, bob.funding_pubkey)
    disagreeing = dict(attestations)
    disagreeing[2] = wrong[2]
    with pytest.raises(DlcError):
        contract.find_adaptor_index(disagreeing)


def test_spec_tagged_hash_option_end_to_end() -> None:
    from ctplugin.dlc.oracle import MessageHash

    oracles = [Oracle(sha256(f"tagged-{i}".encode()), MessageHash.TAGGED) for i in range(2)]
    event = DigitDecompositionEvent(2, False, "usd/btc", 0, NB_DIGITS)
    announcements = [o.announce("btcusd", event) for o in oracles]
    function = PayoutFunction((PolynomialPiece((PayoutPoint(0, 0), PayoutPoint(1023, TOTAL))),))
    rounding = RoundingIntervals((RoundingInterval(0, 10_000_000),))
    alice = Wallet(sha256(b"alice-fund"), sha256(b"alice-coin"), 150_000_000, 1)
    bob = Wallet(sha256(b"bob-fund"), sha256(b"bob-coin"), 150_000_000, 2)
    offer = numeric_offer(alice, announcements, 2, function, rounding, total_collateral=TOTAL,
                          offer_collateral=TOTAL // 2, num_digits=NB_DIGITS)
    with pytest.raises(DlcError):  # rust-dlc's untagged convention rejects these announcements
        Contract.build(offer, bob.params(TOTAL // 2))
    contract = Contract.build(offer, bob.params(TOTAL // 2), scheme=MessageHash.TAGGED)
    sigs = contract.sign_adaptor_signatures(bob.funding_secret, offerer=False)
    attestations = {i: o.attest(a, 700) for i, (o, a) in enumerate(zip(oracles, announcements))}
    index = contract.find_adaptor_index(attestations)
    cet = contract.execute(index, attestations, sigs[index], alice.funding_secret,
                           bob.funding_pubkey)
    assert sum(o.nValue for o in cet.vout) == TOTAL


def test_message_flow_through_the_wire() -> None:
    """accept_offer → sign_accepted → check_signed, messages serialized like rust-dlc's."""
    from ctplugin.dlc import wire
    from ctplugin.dlc.contract import accept_offer, check_signed, sign_accepted

    _oracles, _announcements, alice, bob, offer = _setup(2, None)
    assert wire.serialize_offer(offer)[:2] == bytes.fromhex("a71a")
    bob_contract, accept = accept_offer(offer, bob.params(TOTAL // 2), bob.funding_secret)
    assert wire.serialize_accept(accept)[:2] == bytes.fromhex("a71c")
    alice_contract, sign = sign_accepted(offer, accept, alice.funding_secret, alice.sign_funding)
    assert wire.serialize_sign(sign)[:2] == bytes.fromhex("a71e")
    check_signed(bob_contract, sign)
    # Tampering is caught, each with its own reason.
    bad_sigs = list(accept.cet_adaptor_signatures)
    bad_sigs[3] = bad_sigs[4]
    import dataclasses

    with pytest.raises(DlcError, match="adaptor signature 3"):
        sign_accepted(offer, dataclasses.replace(accept, cet_adaptor_signatures=tuple(bad_sigs)),
                      alice.funding_secret, alice.sign_funding)
    with pytest.raises(DlcError, match="refund"):
        sign_accepted(offer, dataclasses.replace(accept, refund_signature=sign.refund_signature),
                      alice.funding_secret, alice.sign_funding)
    with pytest.raises(DlcError, match="contract id"):
        check_signed(bob_contract, dataclasses.replace(sign, contract_id=bytes(32)))
    with pytest.raises(DlcError):
        check_signed(bob_contract, dataclasses.replace(sign, funding_witnesses=((b"", b""),)))
    assert alice_contract.points == bob_contract.points

"""DLCs on our chain, in process: two wallets fund a 2-of-3 numeric contract, the validator
accepts the funding transaction and the CET the attestations unlock, the payouts follow the curve;
the refund path after the locktime; and the validator's verdicts on the closing transactions a
cheater could try (a wrong adaptor decryption, another outcome's CET, an early refund)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc import elements_tx as etx
from ctplugin.dlc import messages
from ctplugin.dlc.elements_contract import ElementsContract
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import (
    AcceptDlc,
    ContractInfo,
    ContractInfoItem,
    NumericDescriptor,
    OfferDlc,
    OracleSet,
    SignDlc,
)
from ctplugin.dlc.oracle import DigitDecompositionEvent, Oracle, OracleAnnouncement
from ctplugin.dlc.payout import (
    PayoutFunction,
    PayoutPoint,
    PolynomialPiece,
    RoundingInterval,
    RoundingIntervals,
)
from ctplugin.elements import Transaction
from ctplugin.errors import ValidationError
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from regtest.builder import ChainBuilder, make_block
from regtest.params import CTREGTEST, POLICY_ASSET, REGTEST_SEED, select_chain
from regtest.wallet import Payment, Wallet
from regtest.wallet.dlc import DlcParty, PartySecrets
from validator import Node

NB_DIGITS = 10
TOTAL = 200_000_000
EVAL_FALSE = ("mandatory-script-verify-flag-failed (Script evaluated without error but finished "
              "with a false/empty top stack element)")


def payout_curve() -> PayoutFunction:
    """The offerer's payout: 0 up to 200, linear to the whole collateral at 800, then flat."""
    return PayoutFunction((
        PolynomialPiece((PayoutPoint(0, 0), PayoutPoint(200, 0))),
        PolynomialPiece((PayoutPoint(200, 0), PayoutPoint(800, TOTAL))),
        PolynomialPiece((PayoutPoint(800, TOTAL), PayoutPoint(1023, TOTAL)))))


def offer_payout_at(outcome: int) -> int:
    """The curve at ``outcome``, rounded to the contract's modulus of 1,000,000."""
    raw = 0 if outcome <= 200 else TOTAL if outcome >= 800 else (outcome - 200) * TOTAL / 600
    return int((raw + 500_000) // 1_000_000 * 1_000_000)


@dataclass
class Chain:
    """A chain the validator follows, mined from wallet transactions."""

    builder: ChainBuilder
    node: Node
    txs: dict[bytes, Transaction] = field(default_factory=dict)

    def add(self, tx: Transaction) -> None:
        self.node.accept_transaction(tx.serialize())
        self.txs[tx.txid] = tx
        self.builder.add(tx)

    def mine(self) -> None:
        block = self.builder.mine()
        self.node.submit_block(block.serialize()).connected()
        for tx in block.transactions:
            self.txs[tx.txid] = tx

    @property
    def height(self) -> int:
        return self.builder.tip.header.height

    def rejected(self, tx: Transaction) -> ValidationError:
        """The validator's verdict on a block holding ``tx`` on the tip (it must refuse it)."""
        tip = self.builder.tip
        block = make_block(tip.hash, tip.header.height + 1, tip.header.time + 60, [tx],
                           self.builder.miner_script)
        result = self.node.submit_block(block.serialize())
        assert result.status == "invalid" and result.error is not None
        assert self.node.tip.hash == tip.hash
        return result.error


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chain]:
    alice, bob = Wallet(REGTEST_SEED), Wallet(b"bob's dlc wallet")
    builder = ChainBuilder([alice, bob], miner_script=b"\x51")
    path: Path = tmp_path_factory.mktemp("dlc-chain")
    with Node.open(path, select_chain(CTREGTEST)) as node:
        state = Chain(builder, node)
        for tx in builder.genesis.transactions:
            state.txs[tx.txid] = tx
        for _ in range(2):
            state.add(alice.build_transaction([Payment(400_000_000, bob.new_address())],
                                              fee=1000, height=state.height + 1))
        state.mine()
        yield state


@pytest.fixture(scope="module")
def oracles() -> tuple[list[Oracle], list[OracleAnnouncement]]:
    oracles = [Oracle.from_seed(f"oracle {i}".encode()) for i in range(3)]
    event = DigitDecompositionEvent(2, False, "usd/btc", 0, NB_DIGITS)
    return oracles, [o.announce("btcusd", event, 1_700_000_000) for o in oracles]


def contract_info(announcements: list[OracleAnnouncement], threshold: int = 2) -> ContractInfo:
    rounding = RoundingIntervals((RoundingInterval(0, 1_000_000),))
    item = ContractInfoItem(NumericDescriptor(NB_DIGITS, payout_curve(), rounding),
                            OracleSet(threshold, tuple(announcements), None))
    return ContractInfo(TOTAL, (item,), False)


@dataclass
class Setup:
    alice: DlcParty
    bob: DlcParty
    offer: OfferDlc
    accept: AcceptDlc
    sign: SignDlc
    alice_view: ElementsContract
    bob_view: ElementsContract
    alice_secrets: PartySecrets
    bob_secrets: PartySecrets
    funding: Transaction


def run_setup(chain: Chain, announcements: list[OracleAnnouncement], *, confidential: bool,
              refund_in: int = 20, fee_rate: int = 1) -> Setup:
    alice, bob = (DlcParty(w, chain.txs.get) for w in chain.builder.wallets)
    height = chain.height + 1
    offer, alice_secrets = alice.offer(contract_info(announcements), TOTAL // 2,
                                       fee_rate=fee_rate, cet_locktime=height,
                                       refund_locktime=height + refund_in, height=height,
                                       confidential_funding=confidential)
    bob_view, accept, bob_secrets = bob.accept(offer, height=height)
    alice_view, sign, _ = alice.sign(offer, accept, alice_secrets)
    funding = bob.finalize(bob_view, sign, bob_secrets)
    return Setup(alice, bob, offer, accept, sign, alice_view, bob_view, alice_secrets,
                 bob_secrets, funding)


@pytest.fixture(scope="module")
def funded(chain: Chain, oracles: tuple[list[Oracle], list[OracleAnnouncement]]) -> Setup:
    """A confidential-funding contract whose funding transaction confirmed."""
    setup = run_setup(chain, oracles[1], confidential=True)
    chain.add(setup.funding)
    chain.mine()
    return setup


def _unblinded_payouts(tx: Transaction, wallets: list[Wallet]) -> list[int]:
    amounts = []
    for wallet in wallets:
        total = 0
        for out in tx.outputs:
            opened = wallet.unblind(out)
            if opened is not None:
                assert opened[0] == POLICY_ASSET
                total += opened[1]
        amounts.append(total)
    return amounts


def test_both_parties_derive_the_same_contract(funded: Setup) -> None:
    a, b = funded.alice_view, funded.bob_view
    assert a.sighashes == b.sighashes and a.points == b.points
    assert a.funding.txid == b.funding.txid == funded.funding.txid
    assert a.contract_id() == b.contract_id() == funded.sign.contract_id
    assert a.refund_sighash == b.refund_sighash
    # Funding is P2WSH 2-of-2 of the two funding keys, with a confidential value.
    out = funded.funding.outputs[a.funding.index]
    assert out.script_pubkey == etx.p2wsh(etx.funding_script(funded.offer.funding_pubkey,
                                                              funded.accept.funding_pubkey))
    assert isinstance(out.value, bytes) and len(out.asset) == 33 and out.range_proof


def test_fees_pay_at_least_the_fee_rate(chain: Chain, funded: Setup,
                                        oracles: tuple[list[Oracle], list[OracleAnnouncement]]
                                        ) -> None:
    """Each party's share (weights of Elements' serialization) covers the real transactions:
    the funding and every closing transaction pay ≥ the fee rate, and not much more."""
    fee = sum(o.value for o in funded.funding.outputs if o.is_fee)
    assert fee >= funded.funding.vsize
    assert fee <= funded.funding.vsize * 1.15  # surjection proofs are counted at their largest
    attestations = {i: oracles[0][i].attest(oracles[1][i], 500) for i in (0, 1)}
    cet = funded.bob.execute(funded.bob_view, funded.bob_secrets,
                             funded.sign.cet_adaptor_signatures, attestations)
    cet_fee = sum(o.value for o in cet.outputs if o.is_fee)
    assert cet.vsize <= cet_fee <= cet.vsize * 1.05


def test_contract_executes_on_chain_and_pays_the_curve(
        chain: Chain, funded: Setup,
        oracles: tuple[list[Oracle], list[OracleAnnouncement]]) -> None:
    wallets = chain.builder.wallets
    before = [w.balance(POLICY_ASSET) for w in wallets]
    # Oracles 0 and 2 attest 613 (the threshold is 2 of 3).
    attestations = {i: oracles[0][i].attest(oracles[1][i], 613) for i in (0, 2)}
    cet = funded.alice.execute(funded.alice_view, funded.alice_secrets,
                               funded.accept.cet_adaptor_signatures, attestations)
    chain.add(cet)
    chain.mine()
    expected = offer_payout_at(613)
    assert _unblinded_payouts(cet, wallets) == [expected, TOTAL - expected]
    after = [w.balance(POLICY_ASSET) for w in wallets]
    assert [a - b for a, b in zip(after, before)] == [expected, TOTAL - expected]
    # The payouts are confidential outputs with proofs; the fee output is explicit.
    assert all(isinstance(o.value, bytes) and o.range_proof and o.surjection_proof
               for o in cet.outputs if not o.is_fee)
    assert chain.node.tip is not None and chain.node.tip.height == chain.height


def test_explicit_funding_and_the_refund_path(
        chain: Chain, oracles: tuple[list[Oracle], list[OracleAnnouncement]]) -> None:
    setup = run_setup(chain, oracles[1], confidential=False, refund_in=3)
    assert isinstance(setup.funding.outputs[setup.bob_view.funding.index].value, int)
    chain.add(setup.funding)
    chain.mine()
    refund = setup.bob.refund(setup.bob_view, setup.bob_secrets, setup.sign.refund_signature)
    # Before its locktime the refund is refused, in the mempool and in a block.
    with pytest.raises(ValidationError) as early:
        chain.node.accept_transaction(refund.serialize())
    assert early.value.reason == "non-final"
    assert chain.rejected(refund).reason == "bad-txns-nonfinal"
    while chain.height + 1 <= refund.locktime:
        chain.mine()
    before = [w.balance(POLICY_ASSET) for w in chain.builder.wallets]
    chain.add(refund)
    chain.mine()
    after = [w.balance(POLICY_ASSET) for w in chain.builder.wallets]
    assert [a - b for a, b in zip(after, before)] == [TOTAL // 2, TOTAL // 2]


def test_validator_rejects_cheating_closing_transactions(
        chain: Chain, oracles: tuple[list[Oracle], list[OracleAnnouncement]]) -> None:
    setup = run_setup(chain, oracles[1], confidential=True)
    chain.add(setup.funding)
    chain.mine()
    view, bob = setup.bob_view, setup.bob
    attestations = {i: oracles[0][i].attest(oracles[1][i], 377) for i in (1, 2)}
    index = view.find_adaptor_index(attestations)
    y = view.decryption_key(index, attestations)
    blinding = bob._contract_blinding(view)
    key = bob.funding_key(setup.bob_secrets)

    def closing(cet: int, theirs: bytes) -> Transaction:
        mine = ct.ecdsa_sign(key.secret, view.sighashes[cet])
        witness = etx.multisig_witness(view.funding.script,
                                       {key.pubkey: mine, setup.offer.funding_pubkey: theirs})
        return etx.with_witness(blinding.prove(view.closings[cet], view.payouts[cet]), 0,
                                witness)

    sigs = setup.sign.cet_adaptor_signatures
    cet = view.entries[index].cet_index
    wrong_key = closing(cet, ea.der_encode(ea.decrypt(ea.AdaptorSignature.from_bytes(
        sigs[index]), (y + 1) % N)))
    other = next(n for n, e in enumerate(view.entries)
                 if e.cet_index != cet and {o for o, _ in e.paths} == {1, 2})
    other_outcome = closing(view.entries[other].cet_index, ea.der_encode(ea.decrypt(
        ea.AdaptorSignature.from_bytes(sigs[other]), y)))
    for bad in (wrong_key, other_outcome):
        with pytest.raises(ValidationError) as mempool:
            chain.node.accept_transaction(bad.serialize())
        assert (mempool.value.reason, mempool.value.input_index) == (EVAL_FALSE, 0)
        in_block = chain.rejected(bad)
        assert (in_block.reason, in_block.tx_index, in_block.input_index) == (EVAL_FALSE, 1, 0)
    # The honest CET goes through (and the library refuses to build the cheating ones).
    with pytest.raises(DlcError, match="bad-attestation"):
        view.execute(other, attestations, sigs[other], key.secret.to_bytes(32, "big"),
                     setup.offer.funding_pubkey, blinding.prove)
    honest = bob.execute(view, setup.bob_secrets, sigs, attestations)
    chain.add(honest)
    chain.mine()


def test_messages_round_trip_through_rust_dlc_json(funded: Setup) -> None:
    for message, parse, write in ((funded.offer, messages.parse_offer, messages.offer_json),
                                  (funded.accept, messages.parse_accept, messages.accept_json),
                                  (funded.sign, messages.parse_sign, messages.sign_json)):
        text = json.dumps(write(message))  # type: ignore[operator]
        assert parse(json.loads(text)) == message  # type: ignore[operator]


def test_the_offer_is_checked_before_accepting(chain: Chain, funded: Setup) -> None:
    bob = funded.bob
    with pytest.raises(DlcError, match="wrong-chain"):
        bob.accept(OfferDlc(**{**_fields(funded.offer), "chain_hash": bytes(32)}),
                   height=chain.height + 1)
    assert funded.offer.elements is not None
    tampered = OfferDlc(**{**_fields(funded.offer), "offer_collateral": TOTAL // 2 + 1000})
    with pytest.raises(DlcError, match="bad-change-output"):
        bob.accept(tampered, height=chain.height + 1)


def _fields(obj: object) -> dict[str, object]:
    return {name: getattr(obj, name) for name in obj.__dataclass_fields__}  # type: ignore[attr-defined]

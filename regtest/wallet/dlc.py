"""A wallet's side of a DLC on our chain: offer, accept, sign, finalize the funding, execute on
attestation, refund (the Elements counterpart of rust-dlc's party, over ``ctplugin.dlc``).

The messages are rust-dlc's offer_dlc / accept_dlc / sign_dlc with their ``elements`` part
(``ctplugin.dlc.messages.ElementsOffer`` ...); the transactions are ``ctplugin.dlc.elements_tx``'s;
the blinding of the closing transactions and of the funding output is ``dlc_blinding``'s.

Flow (as rust-dlc: the accepter broadcasts the funding transaction):

1. ``offer`` (offerer): picks coins for its collateral and fees, a fresh funding key, payout and
   change addresses of the wallet, a blinding seed and serial ids; blinds its change so that it
   balances its own inputs (``ContractBlinding.side_offset``) with a Bulletproof.
2. ``accept`` (accepter): checks the offer (chain, asset, the offerer's change balances its
   inputs and its range proof), picks its coins, blinds its change (range and surjection proofs),
   builds the contract, adaptor-signs every CET and signs the refund.
3. ``sign`` (offerer): checks the accept (adaptor and refund signatures, the accepter's change),
   adds its change's surjection proof and, for a confidential funding output, the funding
   output's proofs, signs its funding inputs, adaptor-signs every CET and signs the refund.
4. ``finalize`` (accepter): checks the sign message (contract id, signatures, proofs, the
   offerer's funding witnesses), signs its own inputs: the funding transaction to broadcast.
5. ``execute`` (either party): with the oracles' attestations, the winning CET found, the
   counterparty's adaptor signature decrypted, co-signed and proven (``ContractBlinding.prove``).
   ``refund``: the refund transaction, valid from its locktime.

``PartySecrets`` is what a party must keep between steps (the node persists it with the
messages): its role, funding key index and reserved coins. Everything else is re-derived from
the messages and the wallet's seed. Bad input from the counterparty is a ``DlcError``.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from ctplugin import surjection
from ctplugin.bulletproofs import verify_output
from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc import elements_tx as etx
from ctplugin.dlc.contract import validate_terms
from ctplugin.dlc.elements_contract import ElementsContract, accept_party, offer_party
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import (
    AcceptDlc,
    ContractInfo,
    ElementsAccept,
    ElementsOffer,
    ElementsSign,
    OfferDlc,
    SignDlc,
)
from ctplugin.dlc.oracle import MessageHash, OracleAttestation
from ctplugin.dlc.transactions import FundingInput
from ctplugin.elements import Transaction, TxOut
from ctplugin.elements.chainparams import RangeProofKind
from ctplugin.errors import CtpluginError
from ctplugin.pedersen import Generator, commit, generator_generate, generator_generate_blinded
from ctplugin.secp256k1.params import N
from ctplugin.serialize import compact_size, var_bytes
from regtest.wallet.address import ConfidentialAddress
from regtest.wallet.blinding import (
    asset_blinding_factor,
    blinding_total,
    ephemeral_pubkey,
    rewind_nonce,
)
from regtest.wallet.dlc_blinding import ContractBlinding, PayoutKey, side_offset
from regtest.wallet.keys import P2WPKH, KeyPair
from regtest.wallet.signing import sign_transaction, witness_template
from regtest.wallet.wallet import OwnedCoin, Wallet

Outpoint = tuple[bytes, int]
TransactionLookup = Callable[[bytes], Transaction | None]
"""The wallet's transaction by txid (funding inputs carry their whole previous transaction)."""

class DlcRole(enum.StrEnum):
    """A party's side of a contract; the values are the stored records' and ``listdlcs``'
    ``role`` strings."""

    OFFER = "offer"
    ACCEPT = "accept"


@dataclass(frozen=True)
class PartySecrets:
    """What a party keeps between the steps of a contract (module docstring)."""

    role: DlcRole
    funding_key_index: int
    coins: tuple[Outpoint, ...]


P = ParamSpec("P")
R = TypeVar("R")


def _dlc_errors(method: Callable[P, R]) -> Callable[P, R]:
    """A step's failures are ``DlcError``s: any other typed error of the layers below (a
    malformed field reaching a parser, a proof that cannot be made) is reported as one."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except DlcError:
            raise
        except CtpluginError as exc:
            raise DlcError(getattr(exc, "reason", None) or "invalid", str(exc)) from None

    return wrapper


def _serial(wallet: Wallet) -> int:
    return int.from_bytes(wallet._random()[:8], "big")


def _witness_len(script_pubkey: bytes) -> int:
    stack = witness_template(script_pubkey)
    return len(compact_size(len(stack))) + sum(len(var_bytes(item)) for item in stack)


def _generator(out: TxOut) -> Generator:
    try:
        return Generator.parse(out.asset) if len(out.asset) == 33 else generator_generate(
            out.asset)
    except CtpluginError as exc:
        raise DlcError("bad-funding-input", f"asset: {exc}") from None


class DlcParty:
    """One wallet's DLC operations (module docstring). ``transactions`` finds the wallet's
    transactions by txid; ``reserved`` are coins promised to other contracts (left alone)."""

    def __init__(self, wallet: Wallet, transactions: TransactionLookup, *,
                 scheme: MessageHash = MessageHash.UNTAGGED) -> None:
        self.wallet = wallet
        self.transactions = transactions
        self.scheme = scheme

    # --- keys and coins --------------------------------------------------------------------

    def funding_key(self, secrets: PartySecrets) -> KeyPair:
        return self.wallet.keys.key(secrets.funding_key_index, P2WPKH)

    def _new_funding_key(self) -> KeyPair:
        address = self.wallet.new_address(P2WPKH)
        pair = self.wallet.keys.owner_of(address.script_pubkey)
        assert pair is not None  # the wallet's own new address
        return pair

    def _select(self, collateral: int, fee_rate: int, confidential: bool, payout_spk: bytes,
                change_spk: bytes, height: int, reserved: set[Outpoint]
                ) -> tuple[list[OwnedCoin], int]:
        """Coins covering the collateral, this party's fees and a change of at least the dust
        limit; returns them and the change."""
        chosen: list[OwnedCoin] = []
        for coin in self.wallet.spendable(self.wallet.policy_asset, height):
            if (coin.txid, coin.index) in reserved:
                continue
            chosen.append(coin)
            fund_fee, closing_fee = etx.party_fees(
                [_witness_len(c.out.script_pubkey) for c in chosen], len(change_spk),
                len(payout_spk), fee_rate, confidential)
            change = sum(c.value for c in chosen) - collateral - fund_fee - closing_fee
            if change >= etx.DUST_LIMIT:
                return chosen, change
        raise DlcError("insufficient-funds",
                       f"the wallet cannot cover a collateral of {collateral} and its fees")

    def _funding_inputs(self, coins: Sequence[OwnedCoin]) -> tuple[FundingInput, ...]:
        inputs = []
        for coin in coins:
            prev = self.transactions(coin.txid)
            if prev is None:
                raise DlcError("unknown-transaction",
                               f"the wallet lacks transaction {coin.txid[::-1].hex()}")
            inputs.append(FundingInput(_serial(self.wallet), prev.serialize(), coin.index,
                                       0xFFFF_FFFF, _witness_len(coin.out.script_pubkey), b""))
        return tuple(inputs)

    def _change(self, coins: Sequence[OwnedCoin], value: int, offset: int,
                address: ConfidentialAddress) -> TxOut:
        """A blinded change output to ``address`` balancing ``coins`` minus ``offset`` (the
        wallet's convention: ephemeral key, rewind nonce, abf from the nonce; a range proof)."""
        wallet = self.wallet
        e = wallet._random_scalar()
        nonce = rewind_nonce(e, address.blinding_pubkey)
        abf = asset_blinding_factor(nonce)
        k_in = blinding_total((c.value, c.abf, c.vbf) for c in coins)
        vbf = (k_in - offset - value * abf) % N
        if vbf == 0:
            raise DlcError("bad-blinding", "zero change value blind")
        asset = wallet.policy_asset
        abf_bytes = abf.to_bytes(32, "big")
        generator = generator_generate_blinded(asset, abf_bytes)
        commitment = commit(value, vbf, generator)
        proof = wallet._output_proof(value, vbf, asset, abf_bytes, generator, nonce,
                                     address.script_pubkey, commitment)
        return TxOut(asset=generator.serialize(), value=commitment.serialize(),
                     nonce=ephemeral_pubkey(e), script_pubkey=address.script_pubkey,
                     range_proof=proof)

    def blinding(self, offer: OfferDlc, accept_payout: PayoutKey) -> ContractBlinding:
        ext = _ext(offer)
        return ContractBlinding(self.wallet, ext.blinding_seed, ext.asset,
                                PayoutKey(offer.payout_spk, ext.payout_blinding_pubkey),
                                accept_payout, ext.confidential_funding)

    # --- 1. offer ----------------------------------------------------------------------------

    @_dlc_errors
    def offer(self, contract_info: ContractInfo, offer_collateral: int, *, fee_rate: int,
              cet_locktime: int, refund_locktime: int, height: int,
              confidential_funding: bool = True,
              reserved: Collection[Outpoint] = ()) -> tuple[OfferDlc, PartySecrets]:
        wallet = self.wallet
        if not 0 < offer_collateral <= contract_info.total_collateral:
            raise DlcError("bad-collateral", "the offer collateral must be in (0, total]")
        validate_terms(contract_info, offer_collateral, cet_locktime=cet_locktime,
                       refund_locktime=refund_locktime, fee_rate=fee_rate, scheme=self.scheme)
        key = self._new_funding_key()
        payout = wallet.new_address()
        change_address = wallet.new_address()
        seed = wallet._random()
        coins, change_value = self._select(offer_collateral, fee_rate, confidential_funding,
                                           payout.script_pubkey, change_address.script_pubkey,
                                           height, set(reserved))
        change = self._change(coins, change_value,
                              side_offset(seed, confidential_funding, offerer=True),
                              change_address)
        ext = ElementsOffer(wallet.policy_asset, confidential_funding, seed,
                            payout.blinding_pubkey, change.asset, _commitment(change),
                            change.nonce, change.range_proof)
        offer = OfferDlc(1, 0, wallet.genesis_hash, wallet._random(), contract_info,
                         key.pubkey, payout.script_pubkey, _serial(wallet), offer_collateral,
                         self._funding_inputs(coins), change.script_pubkey, _serial(wallet),
                         _serial(wallet), fee_rate, cet_locktime, refund_locktime, ext)
        return offer, PartySecrets(DlcRole.OFFER, _index(key),
                                   tuple((c.txid, c.index) for c in coins))

    # --- 2. accept ---------------------------------------------------------------------------

    def _check_offer(self, offer: OfferDlc) -> ElementsOffer:
        ext = _ext(offer)
        if offer.chain_hash != self.wallet.genesis_hash:
            raise DlcError("wrong-chain", "the offer is for another chain")
        if ext.asset != self.wallet.policy_asset:
            raise DlcError("unsupported-asset", "collateral must be the chain's policy asset")
        return ext

    def _verify_range_proof(self, out: TxOut, who: str) -> None:
        if self.wallet.range_proofs != RangeProofKind.BULLETPROOF:
            return  # the node's validation checks other proof kinds at broadcast
        try:
            ok = verify_output(out.range_proof, _commitment(out), out.asset, out.script_pubkey)
        except CtpluginError:
            ok = False
        if not ok:
            raise DlcError("bad-change-output", f"the {who}'s change range proof is invalid")

    @_dlc_errors
    def accept(self, offer: OfferDlc, *, height: int, reserved: Collection[Outpoint] = ()
               ) -> tuple[ElementsContract, AcceptDlc, PartySecrets]:
        wallet = self.wallet
        ext = self._check_offer(offer)
        offerer = offer_party(offer)
        self._verify_range_proof(offerer.change, "offerer")
        collateral = offer.contract_info.total_collateral - offer.offer_collateral
        key = self._new_funding_key()
        payout = wallet.new_address()
        change_address = wallet.new_address()
        blinding = self.blinding(offer, PayoutKey(payout.script_pubkey, payout.blinding_pubkey))
        coins, change_value = self._select(collateral, offer.fee_rate_per_vb,
                                           ext.confidential_funding, payout.script_pubkey,
                                           change_address.script_pubkey, height, set(reserved))
        change = self._change(coins, change_value, blinding.side_offset(False), change_address)
        inputs = self._funding_inputs(coins)
        payout_serial, change_serial = _serial(wallet), _serial(wallet)

        def message(signatures: tuple[bytes, ...], refund: bytes, surj: bytes) -> AcceptDlc:
            return AcceptDlc(offer.temporary_contract_id, collateral, key.pubkey,
                             payout.script_pubkey, payout_serial, inputs, change.script_pubkey,
                             change_serial, signatures, refund,
                             ElementsAccept(payout.blinding_pubkey, change.asset,
                                            _commitment(change), change.nonce,
                                            change.range_proof, surj))

        # The surjection proof needs the funding transaction's input order; it is witness data,
        # so the contract (txids, sighashes) is the same with or without it.
        contract = ElementsContract.build(offer, accept_party(message((), b"", b"")), blinding,
                                          scheme=self.scheme)
        contract.check_side(True, blinding.side_offset(True))
        surj = self._change_surjection(contract, change, coins)
        secret = key.secret.to_bytes(32, "big")
        sigs = contract.sign_adaptor_signatures(secret, offerer=False)
        accept = message(tuple(s.to_bytes() for s in sigs), contract.sign_refund(secret), surj)
        contract.accept_party = accept_party(accept)
        return contract, accept, PartySecrets(DlcRole.ACCEPT, _index(key),
                                              tuple((c.txid, c.index) for c in coins))

    def _surjection_inputs(self, contract: ElementsContract, coins: Sequence[OwnedCoin]
                           ) -> list[tuple[bytes, int, Generator]]:
        """The funding transaction's inputs as surjection targets: (asset, abf, generator) of
        ours, (b"", 0, generator) of the counterparty's (never the proof's real input)."""
        mine = {(c.txid, c.index): c for c in coins}
        targets = []
        for txin, spent in zip(contract.funding.tx.inputs, contract.spent_outputs()):
            coin = mine.get((txin.prevout_hash, txin.prevout_index))
            if coin is not None:
                targets.append((coin.asset, coin.abf, coin.generator))
            else:
                targets.append((b"", 0, _generator(spent)))
        return targets

    def _change_surjection(self, contract: ElementsContract, change: TxOut,
                           coins: Sequence[OwnedCoin]) -> bytes:
        targets = self._surjection_inputs(contract, coins)
        opened = self.wallet.unblind(change)
        if opened is None:
            raise DlcError("bad-blinding", "cannot open our own change output")
        asset, _, abf, _ = opened
        return self.wallet._surjection(
            [a or bytes(32) for a, _, _ in targets], [b.to_bytes(32, "big") for _, b, _ in targets],
            [g for _, _, g in targets], asset, abf.to_bytes(32, "big"),
            Generator.parse(change.asset))

    def _verify_surjection(self, contract: ElementsContract, out: TxOut, what: str) -> None:
        gens = [_generator(s) for s in contract.spent_outputs()]
        try:
            ok = surjection.verify_bytes(out.surjection_proof, gens, Generator.parse(out.asset))
        except CtpluginError:
            ok = False
        if not ok:
            raise DlcError("bad-surjection-proof", f"{what}'s surjection proof is invalid")

    # --- 3. sign -----------------------------------------------------------------------------

    def _coins(self, secrets: PartySecrets) -> list[OwnedCoin]:
        coins = []
        for outpoint in secrets.coins:
            coin = self.wallet.coins.get(outpoint)
            if coin is None:
                raise DlcError("coin-spent", "a funding coin of this contract is gone")
            coins.append(coin)
        return coins

    @_dlc_errors
    def sign(self, offer: OfferDlc, accept: AcceptDlc, secrets: PartySecrets
             ) -> tuple[ElementsContract, SignDlc, Transaction]:
        """The offerer's sign_dlc, and the funding transaction with its inputs signed."""
        if accept.temporary_contract_id != offer.temporary_contract_id:
            raise DlcError("bad-accept", "temporary contract id differs from the offer's")
        ext = self._check_offer(offer)
        accepter = accept_party(accept)
        blinding = self.blinding(offer, PayoutKey(accepter.payout_spk,
                                                  accepter.payout_blinding_pubkey))
        contract = ElementsContract.build(offer, accepter, blinding, scheme=self.scheme)
        contract.check_signatures(accept.funding_pubkey, accept.cet_adaptor_signatures,
                                  accept.refund_signature, offerer=False)
        contract.check_side(False, blinding.side_offset(False))
        self._verify_range_proof(accepter.change, "accepter")
        self._verify_surjection(contract, accepter.change, "the accepter's change")
        coins = self._coins(secrets)
        own_change = contract.offer_party.change
        change_surj = self._change_surjection(contract, own_change, coins)
        outputs = {_output_index(contract, own_change): _proven(own_change, change_surj)}
        funding_out = contract.funding.output
        if ext.confidential_funding:
            funding_out = blinding.funding_output_proofs(
                funding_out, contract.funding.value, self._surjection_inputs(contract, coins))
        outputs[contract.funding.index] = funding_out
        tx = contract.funding_with({}, outputs)
        signed = self._sign_inputs(contract, tx, coins)
        witnesses = tuple(signed.inputs[contract.input_index(i)].script_witness
                          for i in contract.offer_party.inputs)
        secret = self.funding_key(secrets).secret.to_bytes(32, "big")
        sigs = contract.sign_adaptor_signatures(secret, offerer=True)
        sign = SignDlc(contract.contract_id(), tuple(s.to_bytes() for s in sigs),
                       contract.sign_refund(secret), witnesses,
                       ElementsSign(change_surj, funding_out.range_proof,
                                    funding_out.surjection_proof))
        return contract, sign, signed

    def _sign_inputs(self, contract: ElementsContract, tx: Transaction,
                     coins: Sequence[OwnedCoin]) -> Transaction:
        mine = {(c.txid, c.index) for c in coins}
        only = [n for n, txin in enumerate(tx.inputs)
                if (txin.prevout_hash, txin.prevout_index) in mine]
        try:
            return sign_transaction(tx, contract.spent_outputs(), self.wallet.keys,
                                    self.wallet.genesis_hash, self.wallet._random, only=only)
        except CtpluginError as exc:
            raise DlcError("signing-failed", str(exc)) from None

    # --- 4. finalize -------------------------------------------------------------------------

    @_dlc_errors
    def finalize(self, contract: ElementsContract, sign: SignDlc,
                 secrets: PartySecrets) -> Transaction:
        """The accepter's last step: check the sign_dlc, sign its inputs; the complete funding
        transaction to broadcast."""
        if sign.contract_id != contract.contract_id():
            raise DlcError("bad-sign", "contract id differs (another funding transaction?)")
        ext = sign.elements
        if ext is None:
            raise DlcError("not-elements", "the sign message has no Elements part")
        contract.check_signatures(contract.offer.funding_pubkey, sign.cet_adaptor_signatures,
                                  sign.refund_signature, offerer=True)
        offer_change = _proven(contract.offer_party.change, ext.change_surjection_proof)
        self._verify_surjection(contract, offer_change, "the offerer's change")
        own_change = contract.accept_party.change
        outputs = {_output_index(contract, contract.offer_party.change): offer_change,
                   _output_index(contract, own_change): own_change}
        funding_out = contract.funding.output
        if contract.offer.elements is not None and contract.offer.elements.confidential_funding:
            funding_out = TxOut(asset=funding_out.asset, value=funding_out.value,
                                nonce=funding_out.nonce, script_pubkey=funding_out.script_pubkey,
                                surjection_proof=ext.funding_surjection_proof,
                                range_proof=ext.funding_range_proof)
            self._verify_surjection(contract, funding_out, "the funding output")
            self._verify_range_proof(funding_out, "funding output")
        outputs[contract.funding.index] = funding_out
        tx = contract.funding_with({}, outputs)
        contract.verify_funding_witnesses(contract.offer_party, sign.funding_witnesses, tx)
        for funding_input, witness in zip(contract.offer_party.inputs, sign.funding_witnesses):
            tx = etx.with_witness(tx, contract.input_index(funding_input), witness)
        return self._sign_inputs(contract, tx, self._coins(secrets))

    # --- 5. closing ----------------------------------------------------------------------------

    @_dlc_errors
    def execute(self, contract: ElementsContract, secrets: PartySecrets,
                counterparty_signatures: Sequence[bytes],
                attestations: dict[int, OracleAttestation]) -> Transaction:
        """The CET the attestations unlock, complete (``counterparty_signatures``: the other
        party's adaptor signatures, from the accept or sign message)."""
        offerer = secrets.role is DlcRole.OFFER
        index = contract.find_adaptor_index(attestations)
        if len(counterparty_signatures) != len(contract.entries):
            raise DlcError("bad-signature-count", "one adaptor signature per entry expected")
        theirs = (contract.accept_party if offerer else contract.offer_party).fund_pubkey
        blinding = self._contract_blinding(contract)
        secret = self.funding_key(secrets).secret.to_bytes(32, "big")
        return contract.execute(index, attestations,
                                ea.AdaptorSignature.from_bytes(counterparty_signatures[index]),
                                secret, theirs, blinding.prove)

    @_dlc_errors
    def refund(self, contract: ElementsContract, secrets: PartySecrets,
               counterparty_refund_signature: bytes) -> Transaction:
        offerer = secrets.role is DlcRole.OFFER
        theirs = (contract.accept_party if offerer else contract.offer_party).fund_pubkey
        secret = self.funding_key(secrets).secret.to_bytes(32, "big")
        return contract.refund_transaction(secret, theirs, counterparty_refund_signature,
                                           self._contract_blinding(contract).prove)

    def _contract_blinding(self, contract: ElementsContract) -> ContractBlinding:
        accepter = contract.accept_party
        return self.blinding(contract.offer, PayoutKey(accepter.payout_spk,
                                                       accepter.payout_blinding_pubkey))

    @_dlc_errors
    def contract(self, offer: OfferDlc, accept: AcceptDlc) -> ElementsContract:
        """Rebuild a contract from its messages (after a restart)."""
        accepter = accept_party(accept)
        return ElementsContract.build(
            offer, accepter, self.blinding(offer, PayoutKey(accepter.payout_spk,
                                                            accepter.payout_blinding_pubkey)),
            scheme=self.scheme)


def _commitment(out: TxOut) -> bytes:
    if not isinstance(out.value, bytes):
        raise DlcError("bad-change-output", "a change output must be blinded")
    return out.value


def _ext(offer: OfferDlc) -> ElementsOffer:
    if offer.elements is None:
        raise DlcError("not-elements", "the offer has no Elements part (a Bitcoin contract)")
    return offer.elements


def _proven(out: TxOut, surjection_proof: bytes) -> TxOut:
    return TxOut(asset=out.asset, value=out.value, nonce=out.nonce,
                 script_pubkey=out.script_pubkey, surjection_proof=surjection_proof,
                 range_proof=out.range_proof)


def _output_index(contract: ElementsContract, out: TxOut) -> int:
    serialized = out.serialize()
    for n, candidate in enumerate(contract.funding.tx.outputs):
        if candidate.serialize() == serialized:
            return n
    raise DlcError("bad-change-output", "change output missing from the funding transaction")


def _index(pair: KeyPair) -> int:
    """A funding key's position in the key chain (funding keys are derived, never imported)."""
    assert pair.index is not None
    return pair.index

"""The DLC flow: offer → accept → sign, and execution once the oracles attest.

``ContractTerms.build(offer)`` is what any chain's contract starts from (the CET set, the adaptor
entries and points); ``AdaptorSigned`` adds the adaptor signatures over a contract's sighashes and
the outcome look-up, shared by the Bitcoin ``Contract`` below and ``elements_contract``.

``Contract.build(offer, accept_params)`` derives everything both parties must agree on from the
offer and the accepter's parameters: the CET set of every contract-info item, the funding, CET and
refund transactions, the sighash of every CET, and the adaptor point of every adaptor signature
in rust-dlc's order (item by item; within an item CET by CET, prefix by prefix, oracle combination
by combination; ``multi_oracle``). Then:

- ``sign_adaptor_signatures(secret)``: the accept_dlc / sign_dlc adaptor signatures;
- ``verify_adaptor_signatures(pubkey, sigs)``: the counterparty's, all at once (batch);
- ``execute(...)``: with the oracles' attestations, find the CET and its adaptor signature,
  decrypt it with the summed oracle secrets, add our own signature and return the signed CET,
  which passes python-bitcointx script verification.

The message flow: ``accept_offer`` (accepter: contract + accept_dlc), ``sign_accepted``
(offerer: checks the accept, returns contract + sign_dlc), ``check_signed`` (accepter: checks the
sign_dlc). Every check raises ``DlcError`` naming what failed.

rust-dlc conventions kept for interoperability: the untagged digit message SHA256(digit) (the
``MessageHash`` option switches to the spec's tagged hash); CETs of the first contract-info item
use cet_locktime, CETs of further (disjoint) items locktime 0 on the same input; the bounded-
difference algorithm always maximizes coverage (rust-dlc ignores the offer's flag); for disjoint
contracts the offerer's adaptor signatures of later items sign the CET at the item-local index of
the whole CET list (``Contract.message_hashes``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import coincurve

from ctplugin.dlc import adaptor_points as ap
from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc import transactions as txs
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import (
    AcceptDlc,
    ContractInfo,
    ContractInfoItem,
    EnumDescriptor,
    NumericDescriptor,
    OfferDlc,
    SignDlc,
)
from ctplugin.dlc.multi_oracle import (
    AdaptorEntry,
    DifferenceParams,
    numeric_entries,
    oracle_combinations,
)
from ctplugin.dlc.oracle import (
    DigitDecompositionEvent,
    EnumEvent,
    MessageHash,
    OracleAttestation,
    OracleInfo,
    outcome_message,
)
from ctplugin.dlc.payout import RangePayout, enum_payouts, validate_numeric
from ctplugin.dlc.trie import ItemShape, OutcomeIndex
from ctplugin.errors import CtpluginError, EncodingError
from ctplugin.secp256k1 import Point, ct, msm_var
from ctplugin.secp256k1.params import N

MAX_ADAPTOR_SIGNATURES = 1 << 20


@dataclass
class PreparedItem:
    """One contract-info item: its CETs' payouts and its adaptor entries (item-local CETs)."""

    item: ContractInfoItem
    oracle_infos: list[OracleInfo]
    payouts: list[tuple[int, int]]
    entries: list[AdaptorEntry]
    ranges: list[RangePayout] = field(default_factory=list)
    enum_outcomes: list[str] = field(default_factory=list)
    digit_points: ap.DigitPoints | None = None

    def shape(self) -> ItemShape:
        """What the outcome look-up needs of this item."""
        return ItemShape(len(self.oracle_infos), self.item.oracles.threshold,
                         tuple(self.enum_outcomes), len(self.entries), len(self.payouts))


def _oracle_infos(item: ContractInfoItem) -> list[OracleInfo]:
    announcements = item.oracles.announcements
    if not announcements:
        raise DlcError("no-oracle", "the contract has no oracle announcement")
    if not 1 <= item.oracles.threshold <= len(announcements):
        raise DlcError("bad-threshold",
                       f"threshold {item.oracles.threshold} with {len(announcements)} oracles")
    return [OracleInfo.from_announcement(a) for a in announcements]


def prepare_item(item: ContractInfoItem, total_collateral: int,
                 scheme: MessageHash = MessageHash.UNTAGGED) -> PreparedItem:
    """Validate one descriptor against its oracles and list its CETs and adaptor entries."""
    infos = _oracle_infos(item)
    oracles = item.oracles
    descriptors = [a.event.descriptor for a in oracles.announcements]
    n, t = len(infos), oracles.threshold
    if isinstance(item.descriptor, EnumDescriptor):
        if not all(isinstance(d, EnumEvent) for d in descriptors):
            raise DlcError("descriptor-mismatch", "an enum contract needs enum events")
        if oracles.params is not None:
            raise DlcError("bad-oracle-params", "difference parameters need a numeric contract")
        first = descriptors[0]
        assert isinstance(first, EnumEvent)
        if any(sorted(d.outcomes) != sorted(first.outcomes) for d in descriptors
               if isinstance(d, EnumEvent)):
            raise DlcError("enum-outcomes-mismatch", "oracles announce different outcomes")
        rows = enum_payouts(item.descriptor.payouts, first.outcomes, total_collateral,
                            item.descriptor.accept_payouts)
        combos = oracle_combinations(n, t)
        entries = [AdaptorEntry(cet, tuple((i, (0,)) for i in combo))
                   for cet in range(len(rows)) for combo in combos]
        return PreparedItem(item, infos, [(o, a) for _, o, a in rows], entries,
                            enum_outcomes=[o for o, _, _ in rows])
    descriptor: NumericDescriptor = item.descriptor
    digit_events = [d for d in descriptors if isinstance(d, DigitDecompositionEvent)]
    if len(digit_events) != len(descriptors):
        raise DlcError("descriptor-mismatch", "a numeric contract needs digit decomposition events")
    base = digit_events[0].base
    if any(d.base != base for d in digit_events):
        raise DlcError("descriptor-mismatch", "oracles use different bases")
    if any(d.is_signed for d in digit_events):
        raise DlcError("unsupported", "signed digit events are not supported for contracts")
    nb_digits = digit_events[0].nb_digits
    if any(d.nb_digits != nb_digits for d in digit_events):
        raise DlcError("unsupported", "oracles with different numbers of digits")
    if descriptor.num_digits != nb_digits:
        raise DlcError("descriptor-mismatch",
                       f"contract has {descriptor.num_digits} digits, the events {nb_digits}")
    ranges = validate_numeric(descriptor.payout_function, descriptor.rounding, base, nb_digits,
                              total_collateral)
    params = oracles.params
    if params is not None:
        # rust-dlc builds its bounded-difference trie with maximize_coverage = true whatever the
        # offer says; keep its behaviour so the adaptor signatures line up.
        params = DifferenceParams(params.max_error_exp, params.min_support_exp, True)
    entries = list(numeric_entries(ranges, base, nb_digits, n, t, params))
    if len(entries) > MAX_ADAPTOR_SIGNATURES:
        raise DlcError("too-many-signatures", f"{len(entries)} adaptor signatures")
    return PreparedItem(item, infos, [(r.offer, r.accept) for r in ranges], entries,
                        ranges=ranges, digit_points=ap.DigitPoints(infos, base, scheme))


def validate_offer(offer: OfferDlc, scheme: MessageHash = MessageHash.UNTAGGED, *,
                   check_announcements: bool = True) -> list[PreparedItem]:
    """Everything checkable from the offer alone; the prepared items (CET sets, entries).

    ``check_announcements`` verifies each oracle announcement's signature over its event
    (rust-dlc's ``OracleAnnouncement::validate``); turn it off only for test data whose events
    were edited after signing."""
    if offer.protocol_version != 1:
        raise DlcError("bad-version", f"protocol version {offer.protocol_version}")
    return validate_terms(offer.contract_info, offer.offer_collateral,
                          cet_locktime=offer.cet_locktime, refund_locktime=offer.refund_locktime,
                          fee_rate=offer.fee_rate_per_vb, scheme=scheme,
                          check_announcements=check_announcements)


def validate_terms(info: ContractInfo, offer_collateral: int, *, cet_locktime: int,
                   refund_locktime: int, fee_rate: int,
                   scheme: MessageHash = MessageHash.UNTAGGED,
                   check_announcements: bool = True) -> list[PreparedItem]:
    """The terms of an offer (``validate_offer``), checkable before it is made: an offerer
    checks them before it selects coins for them."""
    total = info.total_collateral
    if offer_collateral > total:
        raise DlcError("bad-collateral", "offer collateral exceeds the total collateral")
    if not 0 <= cet_locktime < refund_locktime < 1 << 32:
        raise DlcError("bad-locktime", "need 0 <= cet_locktime < refund_locktime < 2^32")
    if (cet_locktime < 500_000_000) != (refund_locktime < 500_000_000):
        raise DlcError("bad-locktime", "both locktimes must be heights or both timestamps")
    if not 0 <= fee_rate <= txs.MAX_FEE_RATE:
        raise DlcError("bad-fee-rate", f"fee rate {fee_rate} sat/vB")
    for item in info.items if check_announcements else ():
        for number, announcement in enumerate(item.oracles.announcements):
            if not announcement.verify(scheme):
                raise DlcError("bad-announcement",
                               f"oracle announcement {number} has an invalid signature")
    return [prepare_item(item, total, scheme) for item in info.items]


def _enum_points(prepared: PreparedItem, scheme: MessageHash) -> list[Point]:
    points = []
    for entry in prepared.entries:
        msg = outcome_message(prepared.enum_outcomes[entry.cet_index], scheme)
        scalars, bases = [], []
        for i, _ in entry.paths:
            info = prepared.oracle_infos[i]
            scalars += [1, info.challenge(0, msg)]
            bases += [info.nonce_points[0], info.key_point]
        points.append(msm_var(scalars, bases))
    return points


@dataclass
class ContractTerms:
    """What both parties derive from the offer alone, whatever the chain: every item's CETs
    (payouts and nLockTime), every adaptor signature's entry (CET, oracle prefixes) and its
    adaptor point, in message order (module docstring)."""

    items: list[PreparedItem]
    cet_terms: list[tuple[int, int, int]]
    """Per CET: (offer payout, accept payout, nLockTime)."""
    entries: list[AdaptorEntry]
    """Every adaptor signature's (global CET index, oracle prefixes), in message order."""
    points: list[Point]
    local_cet_indices: list[int]
    """Each adaptor signature's CET index within its own contract-info item."""

    @classmethod
    def build(cls, offer: OfferDlc, *, scheme: MessageHash = MessageHash.UNTAGGED,
              strategy: ap.Strategy = "memo") -> ContractTerms:
        items = validate_offer(offer, scheme)
        # First item's CETs use cet_locktime; later (disjoint) items' CETs locktime 0, on the
        # same input (rust-dlc).
        terms = [(o, a, offer.cet_locktime) for o, a in items[0].payouts]
        entries: list[AdaptorEntry] = []
        points: list[Point] = []
        offset = 0
        local: list[int] = []
        for number, prepared in enumerate(items):
            if number > 0:
                terms += [(o, a, 0) for o, a in prepared.payouts]
            entries += [AdaptorEntry(e.cet_index + offset, e.paths) for e in prepared.entries]
            local += [e.cet_index for e in prepared.entries]
            if prepared.digit_points is not None:
                points += ap.compute(prepared.digit_points,
                                     [e.paths for e in prepared.entries], strategy)
            else:
                points += _enum_points(prepared, scheme)
            offset += len(prepared.payouts)
        return cls(items, terms, entries, points, local)


class AdaptorSigned:
    """Adaptor signatures over a contract's CET sighashes, and the outcome look-up: what the
    Bitcoin ``Contract`` and the Elements ``ElementsContract`` share (each provides the
    attributes annotated here)."""

    items: list[PreparedItem]
    entries: list[AdaptorEntry]
    points: list[Point]
    local_cet_indices: list[int]
    sighashes: list[bytes]
    """Per CET, the digest both parties' signatures sign."""
    refund_sighash: bytes

    @functools.cached_property
    def index(self) -> OutcomeIndex:
        """Outcome look-up (built on first use: only execution needs it)."""
        return OutcomeIndex([item.shape() for item in self.items], self.entries)

    def message_hashes(self, offerer: bool) -> list[bytes]:
        """The sighash each adaptor signature signs, in message order.

        The accepter signs every CET of every item. rust-dlc's offerer, for items after the first
        (disjoint contracts), signs the CET at the item-local index of the *whole* CET list, i.e.
        a CET of the first item (``verify_accepted_and_sign_contract_internal`` passes all CETs
        with item-local indices). Its counterparties verify the same way, so signatures by the
        offer key follow that rule to interoperate; for single contracts both rules agree.
        """
        if offerer:
            return [self.sighashes[i] for i in self.local_cet_indices]
        return [self.sighashes[e.cet_index] for e in self.entries]

    def sign_adaptor_signatures(self, funding_secret: bytes, *, offerer: bool,
                                deterministic: bool = False) -> list[ea.AdaptorSignature]:
        return ea.encrypt_many(funding_secret, list(zip(self.points, self.message_hashes(offerer))),
                               deterministic=deterministic)

    def verify_adaptor_signatures(self, funding_pubkey: bytes,
                                  signatures: Sequence[bytes | ea.AdaptorSignature], *,
                                  offerer: bool) -> list[bool]:
        """Verify the counterparty's adaptor signatures (``offerer``: made by the offerer)."""
        if len(signatures) != len(self.entries):
            raise DlcError("bad-signature-count",
                           f"{len(signatures)} adaptor signatures for {len(self.entries)} points")
        raw = [s for s in signatures if isinstance(s, bytes)]
        try:
            parsed_raw = iter(ea.parse_many(raw)) if raw else iter(())
        except CtpluginError as exc:
            raise DlcError("bad-adaptor-signature", str(exc)) from None
        parsed = [s if isinstance(s, ea.AdaptorSignature) else next(parsed_raw)
                  for s in signatures]
        try:
            pubkey = Point.from_bytes(funding_pubkey)
        except EncodingError as exc:
            raise DlcError("bad-key", f"funding pubkey: {exc}") from None
        return ea.verify_many(pubkey, list(zip(parsed, self.message_hashes(offerer),
                                               self.points)))

    def sign_refund(self, funding_secret: bytes) -> bytes:
        return ct.ecdsa_sign(funding_secret, self.refund_sighash)

    def verify_refund_signature(self, funding_pubkey: bytes, der: bytes) -> bool:
        try:
            return coincurve.PublicKey(funding_pubkey).verify(der, self.refund_sighash,
                                                              hasher=None)
        except (ValueError, TypeError):
            return False

    def check_signatures(self, funding_pubkey: bytes, adaptor_signatures: Sequence[bytes],
                         refund_signature: bytes, *, offerer: bool) -> None:
        """The counterparty's adaptor signatures (every one, in message order) and refund
        signature verify; ``offerer``: they are the offerer's."""
        who = "offerer" if offerer else "accepter"
        require_all_valid(self.verify_adaptor_signatures(funding_pubkey, adaptor_signatures,
                                                         offerer=offerer), who)
        if not self.verify_refund_signature(funding_pubkey, refund_signature):
            raise DlcError("bad-refund-signature", f"the {who}'s refund signature does not verify")

    def find_adaptor_index(self, attestations: dict[int, OracleAttestation],
                           item_number: int = 0) -> int:
        """Index of the adaptor signature that the attested outcomes unlock."""
        found = self.index.look_up(item_number, attestations)
        if found is None:
            raise DlcError("no-matching-cet", "the attestations match no CET of the contract")
        return found

    def decryption_key(self, adaptor_index: int,
                       attestations: dict[int, OracleAttestation]) -> int:
        """Σ of the attested s values the adaptor signature's prefixes use (checked against its
        adaptor point)."""
        if not 0 <= adaptor_index < len(self.entries):
            raise DlcError("bad-adaptor-index", f"no adaptor signature {adaptor_index}")
        y = 0
        for oracle, prefix in self.entries[adaptor_index].paths:
            attestation = attestations.get(oracle)
            if attestation is None:
                raise DlcError("missing-attestation", f"oracle {oracle} has not attested")
            y += attestation.secret(len(prefix))
        y %= N
        if y == 0 or ct.base_mul(y) != self.points[adaptor_index]:
            raise DlcError("bad-attestation", "attested secrets do not open the adaptor point")
        return y


@dataclass
class Contract(AdaptorSigned):
    offer: OfferDlc
    offer_params: txs.PartyParams
    accept_params: txs.PartyParams
    items: list[PreparedItem]
    transactions: txs.DlcTransactions
    cet_terms: list[tuple[int, int, int]]
    """Per CET: (offer payout, accept payout, nLockTime)."""
    sighashes: list[bytes]
    entries: list[AdaptorEntry]
    """Every adaptor signature's (global CET index, oracle prefixes), in message order."""
    points: list[Point]
    local_cet_indices: list[int]
    """Each adaptor signature's CET index within its own contract-info item."""

    @classmethod
    def build(cls, offer: OfferDlc, accept: AcceptDlc | txs.PartyParams, *,
              scheme: MessageHash = MessageHash.UNTAGGED,
              strategy: ap.Strategy = "memo") -> Contract:
        terms = ContractTerms.build(offer, scheme=scheme, strategy=strategy)
        total = offer.contract_info.total_collateral
        offer_params = txs.PartyParams(offer.funding_pubkey, offer.change_spk,
                                       offer.change_serial_id, offer.payout_spk,
                                       offer.payout_serial_id, offer.funding_inputs,
                                       offer.offer_collateral)
        accept_params = accept if isinstance(accept, txs.PartyParams) else txs.PartyParams(
            accept.funding_pubkey, accept.change_spk, accept.change_serial_id, accept.payout_spk,
            accept.payout_serial_id, accept.funding_inputs, accept.accept_collateral)
        if offer_params.collateral + accept_params.collateral != total:
            raise DlcError("bad-collateral", "offer + accept collateral != total collateral")
        dlc = txs.create_transactions(
            offer_params, accept_params, terms.items[0].payouts, fee_rate=offer.fee_rate_per_vb,
            cet_locktime=offer.cet_locktime, refund_locktime=offer.refund_locktime,
            fund_output_serial_id=offer.fund_output_serial_id)
        hasher = txs.CetSighasher(dlc, offer_params, accept_params)
        sighashes = [hasher.sighash(*term) for term in terms.cet_terms]
        return cls(offer, offer_params, accept_params, terms.items, dlc, terms.cet_terms,
                   sighashes, terms.entries, terms.points, terms.local_cet_indices)

    def cet(self, index: int) -> txs.CMutableTransaction:
        """CET ``index`` as a python-bitcointx transaction (built on demand)."""
        offer_payout, accept_payout, lock_time = self.cet_terms[index]
        dlc = self.transactions
        return txs.create_cet((dlc.fund.GetTxid(), dlc.fund_output_index), self.offer_params,
                              self.accept_params, offer_payout, accept_payout, lock_time,
                              dlc.cet_sequence)

    @property
    def cets(self) -> list[txs.CMutableTransaction]:
        return [self.cet(i) for i in range(len(self.cet_terms))]

    # --- refund and funding --------------------------------------------------------------------

    @property
    def refund_sighash(self) -> bytes:  # type: ignore[override]
        dlc = self.transactions
        return txs.closing_sighash(dlc.refund, dlc.funding_script, dlc.fund_output_value)

    def contract_id(self) -> bytes:
        dlc = self.transactions
        return txs.contract_id(dlc.fund_txid, dlc.fund_output_index,
                               self.offer.temporary_contract_id)

    def verify_funding_witnesses(self, party: txs.PartyParams,
                                 witnesses: Sequence[Sequence[bytes]]) -> None:
        """Check ``party``'s funding witnesses (one per input, in the party's input order)."""
        if len(witnesses) != len(party.inputs):
            raise DlcError("bad-funding-signatures", "one witness per funding input expected")
        fund = self.transactions.fund
        for funding_input, witness in zip(party.inputs, witnesses):
            txid, amount, spk = funding_input.prevout()
            index = next((n for n, vin in enumerate(fund.vin)
                          if vin.prevout.hash == txid and vin.prevout.n
                          == funding_input.prev_tx_vout), None)
            if index is None:
                raise DlcError("bad-funding-signatures", "input missing from the funding tx")
            txs.verify_input(fund, index, spk, amount, witness)

    # --- execution -----------------------------------------------------------------------------

    def execute(self, adaptor_index: int, attestations: dict[int, OracleAttestation],
                counterparty_signature: ea.AdaptorSignature, own_secret: bytes,
                counterparty_pubkey: bytes, *, item_number: int = 0
                ) -> txs.CMutableTransaction:
        """Decrypt the counterparty's adaptor signature, co-sign, return the verified CET."""
        entry = self.entries[adaptor_index]
        y = self.decryption_key(adaptor_index, attestations)
        theirs = ea.der_encode(ea.decrypt(counterparty_signature, y))
        cet = self.cet(entry.cet_index)
        sighash = self.sighashes[entry.cet_index]
        mine = coincurve.PrivateKey(own_secret).sign(sighash, hasher=None)
        own_pubkey = coincurve.PrivateKey(own_secret).public_key.format()
        dlc = self.transactions
        txs.set_multisig_witness(cet, dlc.funding_script,
                                 {own_pubkey: mine, counterparty_pubkey: theirs})
        txs.verify_input(cet, 0, bytes(txs.p2wsh(dlc.funding_script)), dlc.fund_output_value)
        return cet


# --- message flow ------------------------------------------------------------------------------

def accept_offer(offer: OfferDlc, params: txs.PartyParams, funding_secret: bytes, *,
                 scheme: MessageHash = MessageHash.UNTAGGED,
                 strategy: ap.Strategy = "memo") -> tuple[Contract, AcceptDlc]:
    """The accepter's side: validate the offer, build the contract, adaptor-sign every CET and
    sign the refund. ``params.fund_pubkey`` must be ``funding_secret``'s key."""
    if coincurve.PrivateKey(funding_secret).public_key.format() != params.fund_pubkey:
        raise DlcError("bad-key", "the funding secret does not match the funding pubkey")
    contract = Contract.build(offer, params, scheme=scheme, strategy=strategy)
    sigs = contract.sign_adaptor_signatures(funding_secret, offerer=False)
    accept = AcceptDlc(offer.temporary_contract_id, params.collateral, params.fund_pubkey,
                       params.payout_spk, params.payout_serial_id, params.inputs,
                       params.change_spk, params.change_serial_id,
                       tuple(s.to_bytes() for s in sigs), contract.sign_refund(funding_secret))
    return contract, accept


def require_all_valid(verdicts: list[bool], what: str) -> None:
    """``DlcError(bad-adaptor-signature)`` naming the first signature that does not verify."""
    if not all(verdicts):
        raise DlcError("bad-adaptor-signature",
                       f"{what} adaptor signature {verdicts.index(False)} does not verify")


def sign_accepted(offer: OfferDlc, accept: AcceptDlc, funding_secret: bytes,
                  funding_signer: Callable[[txs.CMutableTransaction], Sequence[Sequence[bytes]]],
                  *,
                  scheme: MessageHash = MessageHash.UNTAGGED,
                  strategy: ap.Strategy = "memo") -> tuple[Contract, SignDlc]:
    """The offerer's side: check the accept_dlc (every adaptor signature, the refund signature)
    and answer with sign_dlc (own adaptor signatures, refund signature, and the witnesses
    ``funding_signer`` (the offerer's wallet) returns for its inputs of the funding tx)."""
    if accept.temporary_contract_id != offer.temporary_contract_id:
        raise DlcError("bad-accept", "temporary contract id differs from the offer's")
    contract = Contract.build(offer, accept, scheme=scheme, strategy=strategy)
    contract.check_signatures(accept.funding_pubkey, accept.cet_adaptor_signatures,
                              accept.refund_signature, offerer=False)
    funding_witnesses = funding_signer(contract.transactions.fund)
    contract.verify_funding_witnesses(contract.offer_params, funding_witnesses)
    sigs = contract.sign_adaptor_signatures(funding_secret, offerer=True)
    sign = SignDlc(contract.contract_id(), tuple(s.to_bytes() for s in sigs),
                   contract.sign_refund(funding_secret),
                   tuple(tuple(w) for w in funding_witnesses))
    return contract, sign


def check_signed(contract: Contract, sign: SignDlc) -> None:
    """The accepter's last step: the sign_dlc matches the contract (id, adaptor signatures,
    refund signature, the offerer's funding witnesses)."""
    if sign.contract_id != contract.contract_id():
        raise DlcError("bad-sign", "contract id differs (another funding transaction?)")
    contract.check_signatures(contract.offer.funding_pubkey, sign.cet_adaptor_signatures,
                              sign.refund_signature, offerer=True)
    contract.verify_funding_witnesses(contract.offer_params, sign.funding_witnesses)

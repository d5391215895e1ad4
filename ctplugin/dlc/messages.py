"""offer_dlc / accept_dlc / sign_dlc in rust-dlc's JSON form (the dlcspecs ``test_vectors``).

Field names and nesting follow rust-dlc's serde output (camelCase; single / disjoint contract
info; enumerated / numeric descriptors; single / multi oracle info). Parsing checks every type and
raises ``DlcError("bad-message", ...)`` naming the field, so hostile JSON never crashes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.multi_oracle import DifferenceParams
from ctplugin.dlc.oracle import (
    DigitDecompositionEvent,
    EnumEvent,
    OracleAnnouncement,
    OracleAttestation,
    OracleEvent,
)
from ctplugin.dlc.payout import (
    HyperbolaPiece,
    PayoutFunction,
    PayoutPiece,
    PayoutPoint,
    PolynomialPiece,
    RoundingInterval,
    RoundingIntervals,
)
from ctplugin.dlc.transactions import FundingInput

U64 = (1 << 64) - 1
MAX_LIST = 1 << 20


def _field(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise DlcError("bad-message", f"{where}: missing {key!r}")
    value = obj[key]
    if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
        raise DlcError("bad-message", f"{where}.{key}: expected {kind}")
    return value


def _uint(obj: Any, key: str, where: str, bits: int = 64) -> int:
    value = _field(obj, key, int, where)
    if not 0 <= value < 1 << bits:
        raise DlcError("bad-message", f"{where}.{key}: {value} out of range")
    return value


def _hex(obj: Any, key: str, where: str, size: int | None = None) -> bytes:
    text = _field(obj, key, str, where)
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise DlcError("bad-message", f"{where}.{key}: not hex") from None
    if size is not None and len(raw) != size:
        raise DlcError("bad-message", f"{where}.{key}: expected {size} bytes")
    return raw


def _list(obj: Any, key: str, where: str) -> list[Any]:
    value = _field(obj, key, list, where)
    if len(value) > MAX_LIST:
        raise DlcError("bad-message", f"{where}.{key}: too many elements")
    return value


def _one_of(obj: Any, where: str, options: tuple[str, ...]) -> tuple[str, Any]:
    if not isinstance(obj, dict):
        raise DlcError("bad-message", f"{where}: expected an object")
    present = [k for k in options if k in obj]
    if len(present) != 1:
        raise DlcError("bad-message", f"{where}: expected exactly one of {options}")
    return present[0], obj[present[0]]


# --- oracle messages -----------------------------------------------------------------------

def parse_announcement(obj: Any, where: str = "announcement") -> OracleAnnouncement:
    event = _field(obj, "oracleEvent", dict, where)
    ew = f"{where}.oracleEvent"
    nonces = tuple(_hex({"n": n}, "n", f"{ew}.oracleNonces", 32)
                   for n in _list(event, "oracleNonces", ew))
    kind, desc = _one_of(_field(event, "eventDescriptor", dict, ew), f"{ew}.eventDescriptor",
                         ("enumEvent", "digitDecompositionEvent"))
    dw = f"{ew}.eventDescriptor.{kind}"
    descriptor: EnumEvent | DigitDecompositionEvent
    if kind == "enumEvent":
        outcomes = _list(desc, "outcomes", dw)
        if not all(isinstance(o, str) for o in outcomes):
            raise DlcError("bad-message", f"{dw}.outcomes: strings expected")
        descriptor = EnumEvent(tuple(outcomes))
        if len(set(outcomes)) != len(outcomes):
            raise DlcError("bad-announcement", f"{dw}.outcomes: duplicate outcome")
        if len(nonces) != 1:
            raise DlcError("bad-announcement", "enum events have exactly one nonce")
    else:
        precision = _field(desc, "precision", int, dw)
        if not -(1 << 31) <= precision < 1 << 31:  # serialized as a signed 32-bit integer
            raise DlcError("bad-message", f"{dw}.precision: {precision} out of range")
        descriptor = DigitDecompositionEvent(
            _uint(desc, "base", dw, 16), bool(_field(desc, "isSigned", bool, dw)),
            _field(desc, "unit", str, dw), precision, _uint(desc, "nbDigits", dw, 16))
        if descriptor.base < 2:
            raise DlcError("bad-announcement", "digit events need base >= 2")
        if descriptor.nb_nonces != len(nonces):
            raise DlcError("bad-announcement", "number of nonces does not match the digits")
    return OracleAnnouncement(
        _hex(obj, "announcementSignature", where, 64), _hex(obj, "oraclePublicKey", where, 32),
        OracleEvent(nonces, _uint(event, "eventMaturityEpoch", ew, 32), descriptor,
                    _field(event, "eventId", str, ew)))


# --- contract info -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class EnumDescriptor:
    payouts: tuple[tuple[str, int], ...]
    """(outcome, offer payout) in CET order."""
    accept_payouts: tuple[int, ...] | None = None
    """The accepter's payouts when the source states them (rust-dlc's internal form)."""


@dataclass(frozen=True, slots=True)
class NumericDescriptor:
    num_digits: int
    payout_function: PayoutFunction
    rounding: RoundingIntervals


@dataclass(frozen=True, slots=True)
class OracleSet:
    threshold: int
    announcements: tuple[OracleAnnouncement, ...]
    params: DifferenceParams | None

    @property
    def multi(self) -> bool:
        """rust-dlc's ``multi`` oracle info; ``single`` is one announcement, threshold 1 and no
        difference parameters (the wire form makes the same choice)."""
        return not (self.threshold == 1 and len(self.announcements) == 1 and self.params is None)


@dataclass(frozen=True, slots=True)
class ContractInfoItem:
    descriptor: EnumDescriptor | NumericDescriptor
    oracles: OracleSet


@dataclass(frozen=True, slots=True)
class ContractInfo:
    total_collateral: int
    items: tuple[ContractInfoItem, ...]
    disjoint: bool


def _payout_point(obj: Any, where: str) -> PayoutPoint:
    return PayoutPoint(_uint(obj, "eventOutcome", where), _uint(obj, "outcomePayout", where),
                       _uint(obj, "extraPrecision", where, 16))


def _float(obj: Any, key: str, where: str) -> float:
    return float(_field(obj, key, (int, float), where))


def parse_payout_function(obj: Any, where: str) -> PayoutFunction:
    pieces_json = _list(obj, "payoutFunctionPieces", where)
    if not pieces_json:
        raise DlcError("bad-payout-curve", f"{where}: no pieces")
    ends = [_payout_point(_field(p, "endPoint", dict, f"{where}.piece"), f"{where}.endPoint")
            for p in pieces_json]
    ends.append(_payout_point(_field(obj, "lastEndpoint", dict, where), f"{where}.lastEndpoint"))
    pieces: list[PayoutPiece] = []
    for index, piece in enumerate(pieces_json):
        pw = f"{where}.payoutFunctionPieces[{index}]"
        kind, curve = _one_of(_field(piece, "payoutCurvePiece", dict, pw), pw,
                              ("polynomialPayoutCurvePiece", "hyperbolaPayoutCurvePiece"))
        if kind == "polynomialPayoutCurvePiece":
            interior = [_payout_point(p, pw) for p in _list(curve, "payoutPoints", pw)]
            pieces.append(PolynomialPiece((ends[index], *interior, ends[index + 1])))
        else:
            pieces.append(HyperbolaPiece(
                ends[index], ends[index + 1], bool(_field(curve, "usePositivePiece", bool, pw)),
                _float(curve, "translateOutcome", pw), _float(curve, "translatePayout", pw),
                _float(curve, "a", pw), _float(curve, "b", pw), _float(curve, "c", pw),
                _float(curve, "d", pw)))
    return PayoutFunction(tuple(pieces))


def parse_rounding(obj: Any, where: str) -> RoundingIntervals:
    return RoundingIntervals(tuple(
        RoundingInterval(_uint(i, "beginInterval", where), _uint(i, "roundingMod", where))
        for i in _list(obj, "intervals", where)))


def parse_contract_descriptor(obj: Any, where: str = "contractDescriptor"
                              ) -> EnumDescriptor | NumericDescriptor:
    """rust-dlc's contract descriptor: ``{"enumeratedContractDescriptor": ...}`` or
    ``{"numericOutcomeContractDescriptor": ...}``."""
    kind, desc = _one_of(obj, f"{where}.descriptor",
                         ("enumeratedContractDescriptor", "numericOutcomeContractDescriptor"))
    dw = f"{where}.{kind}"
    descriptor: EnumDescriptor | NumericDescriptor
    if kind == "enumeratedContractDescriptor":
        # "offerPayout" in rust-dlc today, "localPayout" in the dlcspecs vectors (older)
        descriptor = EnumDescriptor(tuple(
            (_field(p, "outcome", str, dw),
             _uint(p, "offerPayout" if isinstance(p, dict) and "offerPayout" in p
                   else "localPayout", dw))
            for p in _list(desc, "payouts", dw)))
    else:
        descriptor = NumericDescriptor(
            _uint(desc, "numDigits", dw, 16),
            parse_payout_function(_field(desc, "payoutFunction", dict, dw), f"{dw}.payout"),
            parse_rounding(_field(desc, "roundingIntervals", dict, dw), f"{dw}.rounding"))
    return descriptor


def _parse_item(obj: Any, where: str) -> ContractInfoItem:
    descriptor = parse_contract_descriptor(_field(obj, "contractDescriptor", dict, where), where)
    okind, oinfo = _one_of(_field(obj, "oracleInfo", dict, where), f"{where}.oracleInfo",
                           ("single", "multi"))
    ow = f"{where}.oracleInfo.{okind}"
    if okind == "single":
        oracles = OracleSet(1, (parse_announcement(_field(oinfo, "oracleAnnouncement", dict, ow),
                                                   ow),), None)
    else:
        announcements = tuple(parse_announcement(a, f"{ow}.oracleAnnouncements")
                              for a in _list(oinfo, "oracleAnnouncements", ow))
        params_json = oinfo.get("oracleParams")
        params = None
        if params_json is not None:
            pw = f"{ow}.oracleParams"
            params = DifferenceParams(_uint(params_json, "maxErrorExp", pw, 16),
                                      _uint(params_json, "minFailExp", pw, 16),
                                      bool(_field(params_json, "maximizeCoverage", bool, pw)))
        oracles = OracleSet(_uint(oinfo, "threshold", ow, 16), announcements, params)
    return ContractInfoItem(descriptor, oracles)


def parse_contract_info(obj: Any, where: str = "contractInfo") -> ContractInfo:
    kind, info = _one_of(obj, where, ("singleContractInfo", "disjointContractInfo"))
    total = _uint(info, "totalCollateral", f"{where}.{kind}")
    if kind == "singleContractInfo":
        items: tuple[ContractInfoItem, ...] = (
            _parse_item(_field(info, "contractInfo", dict, where), f"{where}.contractInfo"),)
    else:
        items = tuple(_parse_item(i, f"{where}.contractInfos")
                      for i in _list(info, "contractInfos", where))
        if not items:
            raise DlcError("bad-message", "disjoint contract info without contracts")
    return ContractInfo(total, items, kind == "disjointContractInfo")


# --- offer / accept / sign -----------------------------------------------------------------

def _funding_inputs(obj: Any, where: str) -> tuple[FundingInput, ...]:
    out = []
    for i in _list(obj, "fundingInputs", where):
        iw = f"{where}.fundingInputs"
        out.append(FundingInput(
            _uint(i, "inputSerialId", iw), _hex(i, "prevTx", iw), _uint(i, "prevTxVout", iw, 32),
            _uint(i, "sequence", iw, 32), _uint(i, "maxWitnessLen", iw, 16),
            _hex(i, "redeemScript", iw)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class OfferDlc:
    protocol_version: int
    contract_flags: int
    chain_hash: bytes
    temporary_contract_id: bytes
    contract_info: ContractInfo
    funding_pubkey: bytes
    payout_spk: bytes
    payout_serial_id: int
    offer_collateral: int
    funding_inputs: tuple[FundingInput, ...]
    change_spk: bytes
    change_serial_id: int
    fund_output_serial_id: int
    fee_rate_per_vb: int
    cet_locktime: int
    refund_locktime: int
    elements: ElementsOffer | None = None
    """Our chain's additions (``ElementsOffer``); None for a Bitcoin contract."""


@dataclass(frozen=True, slots=True)
class AcceptDlc:
    temporary_contract_id: bytes
    accept_collateral: int
    funding_pubkey: bytes
    payout_spk: bytes
    payout_serial_id: int
    funding_inputs: tuple[FundingInput, ...]
    change_spk: bytes
    change_serial_id: int
    cet_adaptor_signatures: tuple[bytes, ...]
    refund_signature: bytes
    elements: ElementsAccept | None = None


@dataclass(frozen=True, slots=True)
class SignDlc:
    contract_id: bytes
    cet_adaptor_signatures: tuple[bytes, ...]
    refund_signature: bytes
    funding_witnesses: tuple[tuple[bytes, ...], ...]
    elements: ElementsSign | None = None



# --- our chain's additions (the ``elements`` object of each message) -------------------------

@dataclass(frozen=True, slots=True)
class ElementsOffer:
    """What an offer for our (Elements) chain adds to rust-dlc's offer_dlc.

    ``fundingInputs[].prevTx`` then holds Elements transactions and ``chainHash`` our genesis.
    ``change_*`` are the offerer's blinded change output as the funding transaction will hold
    it (its script is ``changeSpk``) with its Bulletproof; ``blinding_seed`` is the secret the
    closing transactions' and the funding output's blinding derive from
    (``regtest.wallet.dlc``): like the rest of the offer (its funding inputs), it is for the
    accepter only.
    """

    asset: bytes
    """Collateral asset id (internal byte order; JSON in display order, as elementsd)."""
    confidential_funding: bool
    blinding_seed: bytes
    payout_blinding_pubkey: bytes
    change_asset: bytes
    change_value: bytes
    change_nonce: bytes
    change_range_proof: bytes


@dataclass(frozen=True, slots=True)
class ElementsAccept:
    """What an accept for our chain adds: the accepter's payout blinding key and its blinded
    change output with both proofs (every funding input is known once the offer is)."""

    payout_blinding_pubkey: bytes
    change_asset: bytes
    change_value: bytes
    change_nonce: bytes
    change_range_proof: bytes
    change_surjection_proof: bytes


@dataclass(frozen=True, slots=True)
class ElementsSign:
    """What a sign for our chain adds: the offerer's change surjection proof and, for a
    confidential funding output, its range and surjection proofs (empty otherwise)."""

    change_surjection_proof: bytes
    funding_range_proof: bytes = b""
    funding_surjection_proof: bytes = b""


def _pubkey(obj: Any, key: str, where: str) -> bytes:
    raw = _hex(obj, key, where, 33)
    if raw[0] not in (2, 3):
        raise DlcError("bad-message", f"{where}.{key}: not a compressed public key")
    return raw


def _blob(obj: Any, key: str, where: str, limit: int = 1 << 16) -> bytes:
    raw = _hex(obj, key, where)
    if len(raw) > limit:
        raise DlcError("bad-message", f"{where}.{key}: more than {limit} bytes")
    return raw


def _elements(obj: Any, where: str) -> dict[str, Any] | None:
    ext = obj.get("elements") if isinstance(obj, dict) else None
    if ext is None:
        return None
    if not isinstance(ext, dict):
        raise DlcError("bad-message", f"{where}.elements: expected an object")
    return ext


def _parse_change(ext: dict[str, Any], where: str) -> tuple[dict[str, Any], bytes, bytes,
                                                                bytes, bytes]:
    """The blinded change output's fields: (object, asset and value commitments, nonce,
    range proof)."""
    change = _field(ext, "change", dict, where)
    w = f"{where}.change"
    return (change, _hex(change, "assetCommitment", w, 33), _hex(change, "valueCommitment", w, 33),
            _pubkey(change, "nonce", w), _blob(change, "rangeProof", w))


def _parse_elements_offer(obj: Any) -> ElementsOffer | None:
    w = "offer.elements"
    ext = _elements(obj, "offer")
    if ext is None:
        return None
    _, asset, value, nonce, range_proof = _parse_change(ext, w)
    return ElementsOffer(
        _hex(ext, "asset", w, 32)[::-1], bool(_field(ext, "confidentialFunding", bool, w)),
        _hex(ext, "blindingSeed", w, 32), _pubkey(ext, "payoutBlindingPubkey", w), asset, value,
        nonce, range_proof)


def _parse_elements_accept(obj: Any) -> ElementsAccept | None:
    w = "accept.elements"
    ext = _elements(obj, "accept")
    if ext is None:
        return None
    change, asset, value, nonce, range_proof = _parse_change(ext, w)
    return ElementsAccept(_pubkey(ext, "payoutBlindingPubkey", w), asset, value, nonce,
                          range_proof, _blob(change, "surjectionProof", f"{w}.change"))


def _parse_elements_sign(obj: Any) -> ElementsSign | None:
    w = "sign.elements"
    ext = _elements(obj, "sign")
    if ext is None:
        return None
    return ElementsSign(_blob(ext, "changeSurjectionProof", w),
                        _blob(ext, "fundingRangeProof", w), _blob(ext, "fundingSurjectionProof", w))


def _change_json(ext: ElementsOffer | ElementsAccept) -> dict[str, Any]:
    change = {"assetCommitment": ext.change_asset.hex(),
              "valueCommitment": ext.change_value.hex(), "nonce": ext.change_nonce.hex(),
              "rangeProof": ext.change_range_proof.hex()}
    if isinstance(ext, ElementsAccept):
        change["surjectionProof"] = ext.change_surjection_proof.hex()
    return change


def _elements_offer_json(ext: ElementsOffer) -> dict[str, Any]:
    return {"asset": ext.asset[::-1].hex(), "confidentialFunding": ext.confidential_funding,
            "blindingSeed": ext.blinding_seed.hex(),
            "payoutBlindingPubkey": ext.payout_blinding_pubkey.hex(), "change": _change_json(ext)}


def _elements_accept_json(ext: ElementsAccept) -> dict[str, Any]:
    return {"payoutBlindingPubkey": ext.payout_blinding_pubkey.hex(),
            "change": _change_json(ext)}


def _elements_sign_json(ext: ElementsSign) -> dict[str, Any]:
    return {"changeSurjectionProof": ext.change_surjection_proof.hex(),
            "fundingRangeProof": ext.funding_range_proof.hex(),
            "fundingSurjectionProof": ext.funding_surjection_proof.hex()}


def _adaptor_sigs(obj: Any, where: str) -> tuple[bytes, ...]:
    sigs = _field(obj, "cetAdaptorSignatures", dict, where)
    return tuple(_hex(s, "signature", f"{where}.cetAdaptorSignatures", 162)
                 for s in _list(sigs, "ecdsaAdaptorSignatures", where))


def _message(obj: Any) -> Any:
    """Accept both ``{"message": {...}, "serialized": ...}`` and the bare message."""
    return obj["message"] if isinstance(obj, dict) and "message" in obj else obj


def parse_offer(obj: Any) -> OfferDlc:
    m, w = _message(obj), "offer"
    return OfferDlc(
        _uint(m, "protocolVersion", w, 32), _uint(m, "contractFlags", w, 8),
        _hex(m, "chainHash", w, 32), _hex(m, "temporaryContractId", w, 32),
        parse_contract_info(_field(m, "contractInfo", dict, w)), _hex(m, "fundingPubkey", w, 33),
        _hex(m, "payoutSpk", w), _uint(m, "payoutSerialId", w), _uint(m, "offerCollateral", w),
        _funding_inputs(m, w), _hex(m, "changeSpk", w), _uint(m, "changeSerialId", w),
        _uint(m, "fundOutputSerialId", w), _uint(m, "feeRatePerVb", w),
        _uint(m, "cetLocktime", w, 32), _uint(m, "refundLocktime", w, 32),
        _parse_elements_offer(m))


def _check_version(m: Any, where: str) -> None:
    """An accept or sign message's ``protocolVersion`` (not kept: the offer's governs) must
    still be a uint32 when present."""
    if isinstance(m, dict) and "protocolVersion" in m:
        _uint(m, "protocolVersion", where, 32)


def parse_accept(obj: Any) -> AcceptDlc:
    m, w = _message(obj), "accept"
    _check_version(m, w)
    return AcceptDlc(
        _hex(m, "temporaryContractId", w, 32), _uint(m, "acceptCollateral", w),
        _hex(m, "fundingPubkey", w, 33), _hex(m, "payoutSpk", w), _uint(m, "payoutSerialId", w),
        _funding_inputs(m, w), _hex(m, "changeSpk", w), _uint(m, "changeSerialId", w),
        _adaptor_sigs(m, w), _hex(m, "refundSignature", w), _parse_elements_accept(m))


def parse_sign(obj: Any) -> SignDlc:
    m, w = _message(obj), "sign"
    _check_version(m, w)
    witnesses = []
    for entry in _list(_field(m, "fundingSignatures", dict, w), "fundingSignatures", w):
        witnesses.append(tuple(_hex(e, "witness", f"{w}.witnessElements")
                               for e in _list(entry, "witnessElements", w)))
    return SignDlc(_hex(m, "contractId", w, 32), _adaptor_sigs(m, w),
                   _hex(m, "refundSignature", w), tuple(witnesses), _parse_elements_sign(m))


# --- rust-dlc's internal OfferedContract JSON (dlc-manager test_inputs) ----------------------

def _internal_piece(obj: Any, where: str) -> PayoutPiece:
    kind, piece = _one_of(obj, where, ("polynomialPayoutCurvePiece",
                                       "hyperbolaPayoutCurvePiece"))
    if kind == "polynomialPayoutCurvePiece":
        return PolynomialPiece(tuple(_payout_point(p, where)
                                     for p in _list(piece, "payoutPoints", where)))
    return HyperbolaPiece(
        _payout_point(_field(piece, "leftEndPoint", dict, where), where),
        _payout_point(_field(piece, "rightEndPoint", dict, where), where),
        bool(_field(piece, "usePositivePiece", bool, where)),
        _float(piece, "translateOutcome", where), _float(piece, "translatePayout", where),
        _float(piece, "a", where), _float(piece, "b", where), _float(piece, "c", where),
        _float(piece, "d", where))


def _internal_item(obj: Any, where: str) -> ContractInfoItem:
    kind, desc = _one_of(_field(obj, "contractDescriptor", dict, where), where,
                         ("enum", "numerical"))
    announcements = tuple(parse_announcement(a, f"{where}.oracleAnnouncements")
                          for a in _list(obj, "oracleAnnouncements", where))
    threshold = _uint(obj, "threshold", where, 16)
    descriptor: EnumDescriptor | NumericDescriptor
    params = None
    if kind == "enum":
        rows = _list(desc, "outcomePayouts", where)
        payouts = [_field(r, "payout", dict, where) for r in rows]
        descriptor = EnumDescriptor(
            tuple((_field(r, "outcome", str, where), _uint(p, "offer", where))
                  for r, p in zip(rows, payouts)),
            tuple(_uint(p, "accept", where) for p in payouts))
    else:
        function = PayoutFunction(tuple(
            _internal_piece(p, f"{where}.payoutFunction")
            for p in _list(_field(desc, "payoutFunction", dict, where), "payoutFunctionPieces",
                           where)))
        rounding = parse_rounding(_field(desc, "roundingIntervals", dict, where), where)
        infos = _field(desc, "oracleNumericInfos", dict, where)
        digits = _list(infos, "nbDigits", where)
        if not digits or not all(isinstance(d, int) and 0 < d < 1 << 16 for d in digits):
            raise DlcError("bad-message", f"{where}.oracleNumericInfos.nbDigits")
        diff = desc.get("differenceParams")
        if diff is not None:
            params = DifferenceParams(_uint(diff, "maxErrorExp", where, 16),
                                      _uint(diff, "minSupportExp", where, 16),
                                      bool(_field(diff, "maximizeCoverage", bool, where)))
        descriptor = NumericDescriptor(min(digits), function, rounding)
    return ContractInfoItem(descriptor, OracleSet(threshold, announcements, params))


def parse_offered_contract(obj: Any) -> OfferDlc:
    """rust-dlc's serialized ``OfferedContract`` (dlc-manager ``test_inputs``) as an offer."""
    w = "offeredContract"
    items = tuple(_internal_item(i, f"{w}.contractInfo") for i in _list(obj, "contractInfo", w))
    if not items:
        raise DlcError("bad-message", "no contract info")
    total = _uint(obj, "totalCollateral", w)
    params = _field(obj, "offerParams", dict, w)
    pw = f"{w}.offerParams"
    raw_id = _list(obj, "id", w)
    if len(raw_id) != 32 or not all(isinstance(b, int) and 0 <= b < 256 for b in raw_id):
        raise DlcError("bad-message", f"{w}.id: 32 bytes expected")
    return OfferDlc(
        1, 0, bytes(32), bytes(raw_id), ContractInfo(total, items, len(items) > 1),
        _hex(params, "fundPubkey", pw, 33), _hex(params, "payoutScriptPubkey", pw),
        _uint(params, "payoutSerialId", pw), _uint(params, "collateral", pw),
        _funding_inputs(obj, w), _hex(params, "changeScriptPubkey", pw),
        _uint(params, "changeSerialId", pw), _uint(obj, "fundOutputSerialId", w),
        _uint(obj, "feeRatePerVb", w), _uint(obj, "cetLocktime", w, 32),
        _uint(obj, "refundLocktime", w, 32))


# --- writing rust-dlc JSON (the inverse of the parsers above) -------------------------------
# rust-dlc's current form (fe0e0764): enum payouts as "offerPayout", no "negotiationFields" in
# accept_dlc. The dlcspecs vectors are older ("localPayout", "negotiationFields": null); both
# parse.

def _point_json(point: PayoutPoint) -> dict[str, Any]:
    return {"eventOutcome": point.event_outcome, "outcomePayout": point.outcome_payout,
            "extraPrecision": point.extra_precision}


def payout_function_json(function: PayoutFunction) -> dict[str, Any]:
    pieces = []
    for piece in function.pieces:
        if isinstance(piece, PolynomialPiece):
            curve: dict[str, Any] = {"polynomialPayoutCurvePiece": {
                "payoutPoints": [_point_json(p) for p in piece.points[1:-1]]}}
        else:
            curve = {"hyperbolaPayoutCurvePiece": {
                "usePositivePiece": piece.use_positive_piece,
                "translateOutcome": piece.translate_outcome,
                "translatePayout": piece.translate_payout, "a": piece.a, "b": piece.b,
                "c": piece.c, "d": piece.d}}
        pieces.append({"endPoint": _point_json(piece.first), "payoutCurvePiece": curve})
    return {"payoutFunctionPieces": pieces,
            "lastEndpoint": _point_json(function.pieces[-1].last)}


def rounding_json(rounding: RoundingIntervals) -> dict[str, Any]:
    return {"intervals": [{"beginInterval": i.begin_interval, "roundingMod": i.rounding_mod}
                          for i in rounding.intervals]}


def announcement_json(announcement: OracleAnnouncement) -> dict[str, Any]:
    event = announcement.event
    descriptor = event.descriptor
    if isinstance(descriptor, EnumEvent):
        desc: dict[str, Any] = {"enumEvent": {"outcomes": list(descriptor.outcomes)}}
    else:
        desc = {"digitDecompositionEvent": {
            "base": descriptor.base, "isSigned": descriptor.is_signed, "unit": descriptor.unit,
            "precision": descriptor.precision, "nbDigits": descriptor.nb_digits}}
    return {"announcementSignature": announcement.signature.hex(),
            "oraclePublicKey": announcement.public_key.hex(),
            "oracleEvent": {"oracleNonces": [n.hex() for n in event.nonces],
                            "eventMaturityEpoch": event.maturity_epoch, "eventDescriptor": desc,
                            "eventId": event.event_id}}


def attestation_json(attestation: OracleAttestation) -> dict[str, Any]:
    return {"eventId": attestation.event_id,
            "oraclePublicKey": attestation.public_key.hex(),
            "signatures": [s.hex() for s in attestation.signatures],
            "outcomes": list(attestation.outcomes)}


def parse_attestation(obj: Any, where: str = "attestation") -> OracleAttestation:
    """rust-dlc's OracleAttestation JSON (``eventId`` may be absent: older rust-dlc)."""
    signatures = tuple(_hex({"s": s}, "s", f"{where}.signatures", 64)
                       for s in _list(obj, "signatures", where))
    outcomes = _list(obj, "outcomes", where)
    if not all(isinstance(o, str) for o in outcomes):
        raise DlcError("bad-message", f"{where}.outcomes: strings expected")
    event_id = obj.get("eventId", "")
    if not isinstance(event_id, str):
        raise DlcError("bad-message", f"{where}.eventId: expected a string")
    if len(signatures) != len(outcomes) or not signatures:
        raise DlcError("bad-attestation", "one signature per outcome string expected")
    return OracleAttestation(event_id, _hex(obj, "oraclePublicKey", where, 32), signatures,
                             tuple(outcomes))


def _item_json(item: ContractInfoItem) -> dict[str, Any]:
    descriptor = item.descriptor
    if isinstance(descriptor, EnumDescriptor):
        desc: dict[str, Any] = {"enumeratedContractDescriptor": {"payouts": [
            {"outcome": o, "offerPayout": p} for o, p in descriptor.payouts]}}
    else:
        desc = {"numericOutcomeContractDescriptor": {
            "numDigits": descriptor.num_digits,
            "payoutFunction": payout_function_json(descriptor.payout_function),
            "roundingIntervals": rounding_json(descriptor.rounding)}}
    oracles = item.oracles
    if oracles.multi:
        params = oracles.params
        info: dict[str, Any] = {"multi": {
            "threshold": oracles.threshold,
            "oracleAnnouncements": [announcement_json(a) for a in oracles.announcements],
            "oracleParams": None if params is None else {
                "maxErrorExp": params.max_error_exp, "minFailExp": params.min_support_exp,
                "maximizeCoverage": params.maximize_coverage}}}
    else:
        info = {"single": {"oracleAnnouncement": announcement_json(oracles.announcements[0])}}
    return {"contractDescriptor": desc, "oracleInfo": info}


def contract_info_json(info: ContractInfo) -> dict[str, Any]:
    if info.disjoint:
        return {"disjointContractInfo": {"totalCollateral": info.total_collateral,
                                         "contractInfos": [_item_json(i) for i in info.items]}}
    return {"singleContractInfo": {"totalCollateral": info.total_collateral,
                                   "contractInfo": _item_json(info.items[0])}}


def _funding_inputs_json(inputs: tuple[FundingInput, ...]) -> list[dict[str, Any]]:
    return [{"inputSerialId": i.input_serial_id, "prevTx": i.prev_tx.hex(),
             "prevTxVout": i.prev_tx_vout, "sequence": i.sequence,
             "maxWitnessLen": i.max_witness_len, "redeemScript": i.redeem_script.hex()}
            for i in inputs]


def _adaptor_sigs_json(sigs: tuple[bytes, ...]) -> dict[str, Any]:
    return {"ecdsaAdaptorSignatures": [{"signature": s.hex()} for s in sigs]}


def offer_json(offer: OfferDlc) -> dict[str, Any]:
    """The offer_dlc in rust-dlc's JSON form (plus ``elements`` for our chain)."""
    out: dict[str, Any] = {
        "protocolVersion": offer.protocol_version, "contractFlags": offer.contract_flags,
        "chainHash": offer.chain_hash.hex(),
        "temporaryContractId": offer.temporary_contract_id.hex(),
        "contractInfo": contract_info_json(offer.contract_info),
        "fundingPubkey": offer.funding_pubkey.hex(), "payoutSpk": offer.payout_spk.hex(),
        "payoutSerialId": offer.payout_serial_id, "offerCollateral": offer.offer_collateral,
        "fundingInputs": _funding_inputs_json(offer.funding_inputs),
        "changeSpk": offer.change_spk.hex(), "changeSerialId": offer.change_serial_id,
        "fundOutputSerialId": offer.fund_output_serial_id, "feeRatePerVb": offer.fee_rate_per_vb,
        "cetLocktime": offer.cet_locktime, "refundLocktime": offer.refund_locktime}
    if offer.elements is not None:
        out["elements"] = _elements_offer_json(offer.elements)
    return out


def accept_json(accept: AcceptDlc, protocol_version: int = 1) -> dict[str, Any]:
    out: dict[str, Any] = {
        "protocolVersion": protocol_version,
        "temporaryContractId": accept.temporary_contract_id.hex(),
        "acceptCollateral": accept.accept_collateral, "fundingPubkey": accept.funding_pubkey.hex(),
        "payoutSpk": accept.payout_spk.hex(), "payoutSerialId": accept.payout_serial_id,
        "fundingInputs": _funding_inputs_json(accept.funding_inputs),
        "changeSpk": accept.change_spk.hex(), "changeSerialId": accept.change_serial_id,
        "cetAdaptorSignatures": _adaptor_sigs_json(accept.cet_adaptor_signatures),
        "refundSignature": accept.refund_signature.hex()}
    if accept.elements is not None:
        out["elements"] = _elements_accept_json(accept.elements)
    return out


def sign_json(sign: SignDlc, protocol_version: int = 1) -> dict[str, Any]:
    out: dict[str, Any] = {
        "protocolVersion": protocol_version, "contractId": sign.contract_id.hex(),
        "cetAdaptorSignatures": _adaptor_sigs_json(sign.cet_adaptor_signatures),
        "refundSignature": sign.refund_signature.hex(),
        "fundingSignatures": {"fundingSignatures": [
            {"witnessElements": [{"witness": w.hex()} for w in witness]}
            for witness in sign.funding_witnesses]}}
    if sign.elements is not None:
        out["elements"] = _elements_sign_json(sign.elements)
    return out

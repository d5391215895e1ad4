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


def _parse_item(obj: Any, where: str) -> ContractInfoItem:
    kind, desc = _one_of(_field(obj, "contractDescriptor", dict, where), f"{where}.descriptor",
                         ("enumeratedContractDescriptor", "numericOutcomeContractDescriptor"))
    dw = f"{where}.{kind}"
    descriptor: EnumDescriptor | NumericDescriptor
    if kind == "enumeratedContractDescriptor":
        descriptor = EnumDescriptor(tuple(
            (_field(p, "outcome", str, dw), _uint(p, "localPayout", dw))
            for p in _list(desc, "payouts", dw)))
    else:
        descriptor = NumericDescriptor(
            _uint(desc, "numDigits", dw, 16),
            parse_payout_function(_field(desc, "payoutFunction", dict, dw), f"{dw}.payout"),
            parse_rounding(_field(desc, "roundingIntervals", dict, dw), f"{dw}.rounding"))
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


@dataclass(frozen=True, slots=True)
class SignDlc:
    contract_id: bytes
    cet_adaptor_signatures: tuple[bytes, ...]
    refund_signature: bytes
    funding_witnesses: tuple[tuple[bytes, ...], ...]


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
        _uint(m, "cetLocktime", w, 32), _uint(m, "refundLocktime", w, 32))


def parse_accept(obj: Any) -> AcceptDlc:
    m, w = _message(obj), "accept"
    return AcceptDlc(
        _hex(m, "temporaryContractId", w, 32), _uint(m, "acceptCollateral", w),
        _hex(m, "fundingPubkey", w, 33), _hex(m, "payoutSpk", w), _uint(m, "payoutSerialId", w),
        _funding_inputs(m, w), _hex(m, "changeSpk", w), _uint(m, "changeSerialId", w),
        _adaptor_sigs(m, w), _hex(m, "refundSignature", w))


def parse_sign(obj: Any) -> SignDlc:
    m, w = _message(obj), "sign"
    witnesses = []
    for entry in _list(_field(m, "fundingSignatures", dict, w), "fundingSignatures", w):
        witnesses.append(tuple(_hex(e, "witness", f"{w}.witnessElements")
                               for e in _list(entry, "witnessElements", w)))
    return SignDlc(_hex(m, "contractId", w, 32), _adaptor_sigs(m, w),
                   _hex(m, "refundSignature", w), tuple(witnesses))


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

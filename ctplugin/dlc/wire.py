"""Wire serialization of offer_dlc / accept_dlc / sign_dlc, byte-compatible with rust-dlc.

Layout (dlcspecs Messaging.md as rust-dlc writes it; integers big-endian):

- a message starts with its u16 type (offer 42778, accept 42780, sign 42782);
- lists of sub-objects and byte strings: BigSize count, then the items; scripts: u16 length;
  strings: BigSize length + UTF-8; x-only keys 32 bytes, compressed keys 33, ECDSA signatures
  64 bytes compact (r ‖ s), adaptor signatures 162 bytes; hyperbola parameters as (bool
  positive, u64 integer part, u16 sixty-five-thousand-five-hundred-thirty-sixths);
- enums (contract info single/disjoint, descriptor enumerated/numeric, curve piece polynomial /
  hyperbola, oracle info single/multi): a u8 variant id, then the variant;
- options: u8 0 (none) or 1 then the value;
- oracle announcements and events are TLVs (BigSize type, BigSize length, value):
  announcement 55332, event 55330, enum descriptor 55302, digit decomposition descriptor 55306.

Only serialization is provided: the JSON forms are parsed by ``messages``, and tests check that
serializing them reproduces the ``serialized`` hex of every dlcspecs ``test_vectors`` message.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ctplugin.dlc.ecdsa_adaptor import der_decode
from ctplugin.dlc.errors import DlcError
from ctplugin.dlc.messages import (
    AcceptDlc,
    ContractInfo,
    ContractInfoItem,
    EnumDescriptor,
    OfferDlc,
    SignDlc,
)
from ctplugin.dlc.oracle import OracleAnnouncement, serialize_event
from ctplugin.dlc.payout import HyperbolaPiece, PayoutPoint, RoundingIntervals
from ctplugin.dlc.transactions import FundingInput
from ctplugin.serialize import bigsize

OFFER_TYPE = 42778
ACCEPT_TYPE = 42780
SIGN_TYPE = 42782
ORACLE_ANNOUNCEMENT_TYPE = 55332
ORACLE_EVENT_TYPE = 55330


def _u8(v: int) -> bytes:
    return v.to_bytes(1, "big")


def _u16(v: int) -> bytes:
    return v.to_bytes(2, "big")


def _u32(v: int) -> bytes:
    return v.to_bytes(4, "big")


def _u64(v: int) -> bytes:
    return v.to_bytes(8, "big")


def _bytes_vec(data: bytes) -> bytes:
    return bigsize(len(data)) + data


def _script(data: bytes) -> bytes:
    return _u16(len(data)) + data


def _string(text: str) -> bytes:
    return _bytes_vec(text.encode())


def _vec(items: Sequence[bytes]) -> bytes:
    return bigsize(len(items)) + b"".join(items)


def _tlv(kind: int, value: bytes) -> bytes:
    return bigsize(kind) + bigsize(len(value)) + value


def _compact(der: bytes) -> bytes:
    r, s = der_decode(der)
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def announcement_tlv(announcement: OracleAnnouncement) -> bytes:
    body = (announcement.signature + announcement.public_key
            + _tlv(ORACLE_EVENT_TYPE, serialize_event(announcement.event)))
    return _tlv(ORACLE_ANNOUNCEMENT_TYPE, body)


def _signed_precise(value: float) -> bytes:
    """The hyperbola parameters' wire form: bool positive, u64 integer part, u16 fraction
    (in 1/2^16), as in dlcspecs PayoutCurve.md (rust-dlc keeps them as f64 in memory and JSON)."""
    if not math.isfinite(value):
        raise DlcError("bad-payout-curve", "hyperbola parameter is not finite")
    magnitude = abs(value)
    whole = math.floor(magnitude)
    fraction = round((magnitude - whole) * 65536)
    if fraction == 65536:
        whole, fraction = whole + 1, 0
    if whole >= 1 << 64:
        raise DlcError("bad-payout-curve", "hyperbola parameter too large")
    return _u8(0 if value < 0 else 1) + _u64(whole) + _u16(fraction)


def _point(p: PayoutPoint) -> bytes:
    return _u64(p.event_outcome) + _u64(p.outcome_payout) + _u16(p.extra_precision)


def _rounding(rounding: RoundingIntervals) -> bytes:
    return _vec([_u64(i.begin_interval) + _u64(i.rounding_mod) for i in rounding.intervals])


def _item(item: ContractInfoItem) -> bytes:
    descriptor = item.descriptor
    if isinstance(descriptor, EnumDescriptor):
        out = _u8(0) + _vec([_string(o) + _u64(p) for o, p in descriptor.payouts])
    else:
        pieces = []
        for piece in descriptor.payout_function.pieces:
            if isinstance(piece, HyperbolaPiece):
                curve = _u8(1) + _u8(int(piece.use_positive_piece)) + b"".join(
                    _signed_precise(v) for v in (piece.translate_outcome, piece.translate_payout,
                                                 piece.a, piece.b, piece.c, piece.d))
            else:
                curve = _u8(0) + _vec([_point(p) for p in piece.points[1:-1]])
            pieces.append(_point(piece.first) + curve)
        out = (_u8(1) + _u16(descriptor.num_digits) + _vec(pieces)
               + _point(descriptor.payout_function.pieces[-1].last)
               + _rounding(descriptor.rounding))
    oracles = item.oracles
    if not oracles.multi:
        out += _u8(0) + announcement_tlv(oracles.announcements[0])
    else:
        params = oracles.params
        out += (_u8(1) + _u16(oracles.threshold)
                + _vec([announcement_tlv(a) for a in oracles.announcements])
                + (_u8(0) if params is None else _u8(1) + _u16(params.max_error_exp)
                   + _u16(params.min_support_exp) + _u8(int(params.maximize_coverage))))
    return out


def contract_info(info: ContractInfo) -> bytes:
    if not info.disjoint:
        return _u8(0) + _u64(info.total_collateral) + _item(info.items[0])
    return _u8(1) + _u64(info.total_collateral) + _vec([_item(i) for i in info.items])


def _funding_input(i: FundingInput) -> bytes:
    return (_u64(i.input_serial_id) + _bytes_vec(i.prev_tx) + _u32(i.prev_tx_vout)
            + _u32(i.sequence) + _u16(i.max_witness_len) + _script(i.redeem_script))


def serialize_offer(offer: OfferDlc) -> bytes:
    return (_u16(OFFER_TYPE) + _u32(offer.protocol_version) + _u8(offer.contract_flags)
            + offer.chain_hash + offer.temporary_contract_id + contract_info(offer.contract_info)
            + offer.funding_pubkey + _script(offer.payout_spk) + _u64(offer.payout_serial_id)
            + _u64(offer.offer_collateral)
            + _vec([_funding_input(i) for i in offer.funding_inputs])
            + _script(offer.change_spk) + _u64(offer.change_serial_id)
            + _u64(offer.fund_output_serial_id) + _u64(offer.fee_rate_per_vb)
            + _u32(offer.cet_locktime) + _u32(offer.refund_locktime))


def serialize_accept(accept: AcceptDlc, protocol_version: int = 1) -> bytes:
    """accept_dlc without negotiation fields (the rust-dlc vectors carry none)."""
    return (_u16(ACCEPT_TYPE) + _u32(protocol_version) + accept.temporary_contract_id
            + _u64(accept.accept_collateral) + accept.funding_pubkey + _script(accept.payout_spk)
            + _u64(accept.payout_serial_id)
            + _vec([_funding_input(i) for i in accept.funding_inputs])
            + _script(accept.change_spk) + _u64(accept.change_serial_id)
            + _vec(list(accept.cet_adaptor_signatures)) + _compact(accept.refund_signature)
            + _u8(0))


def serialize_sign(sign: SignDlc, protocol_version: int = 1) -> bytes:
    return (_u16(SIGN_TYPE) + _u32(protocol_version) + sign.contract_id
            + _vec(list(sign.cet_adaptor_signatures)) + _compact(sign.refund_signature)
            + _vec([_vec([_bytes_vec(w) for w in witness])
                    for witness in sign.funding_witnesses]))

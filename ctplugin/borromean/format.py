"""The secp256k1-zkp ``rangeproof`` wire format: header, layout, size formulas.

Layout (``docs/borromean.md`` §1.2; all integers big-endian)::

    flags        1 byte   bit 7 must be 0; 0x40 "has a range" (a mantissa byte follows);
                          0x20 "min_value present"; bits 0-4 = exp (with 0x40 only, <= 18)
    mantissa-1   1 byte   only with 0x40: m = byte + 1 in 1..64
    min_value    8 bytes  only with 0x20
    sign bits    ceil((r-1)/8) bytes, bit i (LSB first in byte i >> 3) = digit i's y is NOT a
                          quadratic residue; unused high bits must be 0
    digits       32·(r-1) x coordinates of the digit commitments C_0 … C_{r-2}
    e0           32 bytes the shared Borromean challenge
    s            32·npub  one scalar per ring member, ring by ring, each in [1, n)

with r = ceil(m/2) rings of 4 members (base-4 digits; the last ring has 2 when m is odd), so
npub = 2m. An "exact value" proof (0x40 clear, m = 0) has one ring of one member: no sign bits,
no digits. The proof ends exactly after the last s.

``info`` reads the header only (``secp256k1_rangeproof_info``); ``parse`` checks the whole
layout. Either raises ``ProofError`` with a stable ``reason`` (``REASONS``) on malformed bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ctplugin.errors import ProofError
from ctplugin.secp256k1.params import N

U64_MAX = 2**64 - 1
MIN_PROOF_LEN = 65
MAX_EXP = 18
MAX_MANTISSA = 64
MAX_RINGS = 32
MAX_MEMBERS = 128
MAX_MESSAGE_LEN = 3968
"""SECP256K1_RANGEPROOF_MAX_MESSAGE_LEN: 128 bytes per ring except the last, 31 rings."""
MAX_PROOF_LEN = 5134
"""The largest well-formed proof: m = 64 with a min_value (wally's ASSET_RANGEPROOF_MAX_LEN)."""
EXACT_PROOF_LEN = 73
"""An exact-value proof with a min_value (wally's ASSET_EXPLICIT_RANGEPROOF_MAX_LEN)."""

FLAG_RESERVED = 0x80
FLAG_RANGE = 0x40
FLAG_MIN = 0x20
EXP_MASK = 0x1F

_N_BYTES = N.to_bytes(32, "big")
_ZERO32 = bytes(32)

REASONS = {
    "proof-too-short": "fewer than 65 bytes",
    "reserved-flag": "flag bit 7 (0x80) is set",
    "exponent-too-large": "exp above 18",
    "mantissa-too-large": "mantissa above 64",
    "range-overflow": "min_value + (2^m - 1)·10^exp does not fit in 64 bits",
    "proof-truncated": "fewer bytes than the header implies",
    "trailing-bytes": "more bytes than the header implies",
    "sign-padding": "an unused sign bit is set",
    "digit-x-range": "a digit commitment's x is not below the field size",
    "digit-off-curve": "a digit commitment's x is not on the curve",
    "scalar-range": "an s value is not below the group order",
    "scalar-zero": "an s value is zero",
    "sign-parameters": "signing inputs out of range (value, min_value, exp, min_bits, blind)",
    "sign-message-too-long": "the message does not fit in the proof (128 bytes per ring but one)",
    "sign-retry": "a derived nonce or challenge was zero or overflowed; use another nonce",
}
"""Every ``ProofError.reason`` this module raises, with its meaning."""


def proof_error(reason: str, detail: str = "") -> ProofError:
    """A ``ProofError`` carrying one of ``REASONS`` as its machine-readable ``reason``."""
    assert reason in REASONS, reason
    text = f"rangeproof: {REASONS[reason]}" + (f" ({detail})" if detail else "")
    return ProofError(text, reason=reason)


@cache
def ring_sizes(mantissa: int) -> tuple[int, ...]:
    """Members per ring: ceil(m/2) rings of 4, the last one of 2 when m is odd; (1,) for m = 0."""
    if mantissa == 0:
        return (1,)
    return (4,) * (mantissa >> 1) + ((2,) if mantissa & 1 else ())


def proof_len(mantissa: int, has_min: bool) -> int:
    """Serialized size for a mantissa (0 = exact proof), with or without the min_value field."""
    rings = len(ring_sizes(mantissa))
    header = (2 if mantissa else 1) + (8 if has_min else 0)
    return header + (rings + 6) // 8 + 32 * (rings - 1) + 32 + 32 * sum(ring_sizes(mantissa))


@dataclass(frozen=True, slots=True)
class RangeProofInfo:
    """What the header says (``secp256k1_rangeproof_info``).

    ``exp`` is −1 and ``mantissa`` 0 for an exact-value proof (then min = max). The proven range
    is [min_value, max_value] with max = min + (2^m − 1)·10^exp.
    """

    exp: int
    mantissa: int
    min_value: int
    max_value: int
    has_min: bool
    header_len: int

    @property
    def is_exact(self) -> bool:
        return self.mantissa == 0

    @property
    def scale(self) -> int:
        """10^exp (1 for exact proofs)."""
        return 10 ** max(self.exp, 0)

    @property
    def ring_sizes(self) -> tuple[int, ...]:
        return ring_sizes(self.mantissa)

    @property
    def rings(self) -> int:
        return len(self.ring_sizes)

    @property
    def members(self) -> int:
        return sum(self.ring_sizes)

    @property
    def sign_len(self) -> int:
        return (self.rings + 6) // 8

    @property
    def proof_len(self) -> int:
        return proof_len(self.mantissa, self.has_min)


def info(proof: bytes) -> RangeProofInfo:
    """Parse the header: exp, mantissa, min, max (the checks of ``rangeproof_getheader_impl``)."""
    if len(proof) < MIN_PROOF_LEN:
        raise proof_error("proof-too-short", f"{len(proof)} bytes")
    flags = proof[0]
    if flags & FLAG_RESERVED:
        raise proof_error("reserved-flag")
    offset = 1
    exp, mantissa, span = -1, 0, 0
    if flags & FLAG_RANGE:
        exp = flags & EXP_MASK
        if exp > MAX_EXP:
            raise proof_error("exponent-too-large", f"exp {exp}")
        mantissa = proof[1] + 1
        if mantissa > MAX_MANTISSA:
            raise proof_error("mantissa-too-large", f"mantissa {mantissa}")
        offset = 2
        span = (1 << mantissa) - 1
    span *= 10 ** max(exp, 0)
    if span > U64_MAX:
        raise proof_error("range-overflow")
    has_min = bool(flags & FLAG_MIN)
    min_value = int.from_bytes(proof[offset: offset + 8], "big") if has_min else 0
    offset += 8 if has_min else 0
    if min_value + span > U64_MAX:
        raise proof_error("range-overflow")
    return RangeProofInfo(exp, mantissa, min_value, min_value + span, has_min, offset)


@dataclass(frozen=True, slots=True)
class ParsedRangeProof:
    """A rangeproof whose layout passed every structural check (not yet verified).

    ``header`` is the raw header bytes (flags through min_value), hashed into the proof's
    message and seeding the nonce DRBG; ``digit_xs`` the r − 1 stored x coordinates (32 bytes
    each) and ``signs`` the raw sign-bit field; ``s`` the npub scalars as 32-byte strings.
    """

    info: RangeProofInfo
    header: bytes
    signs: bytes
    digit_xs: bytes
    e0: bytes
    s: bytes

    def scalar(self, index: int) -> int:
        return int.from_bytes(self.s[32 * index: 32 * index + 32], "big")


def parse(proof: bytes) -> ParsedRangeProof:
    """Split a proof into its fields, checking length, padding bits and s ranges.

    Digit x coordinates are checked when they are decoded (``verify``); here only the layout.
    """
    proof = bytes(proof)
    head = info(proof)
    want = head.proof_len
    if len(proof) < want:
        raise proof_error("proof-truncated", f"{len(proof)} bytes, header implies {want}")
    if len(proof) > want:
        raise proof_error("trailing-bytes", f"{len(proof)} bytes, header implies {want}")
    offset = head.header_len
    signs = proof[offset: offset + head.sign_len]
    offset += head.sign_len
    used_bits = head.rings - 1
    if signs and signs[-1] >> (used_bits & 7 or 8):
        raise proof_error("sign-padding")
    digits_end = offset + 32 * used_bits
    digit_xs = proof[offset: digits_end]
    e0 = proof[digits_end: digits_end + 32]
    s = proof[digits_end + 32:]
    for i in range(0, len(s), 32):
        chunk = s[i: i + 32]
        if chunk >= _N_BYTES:
            raise proof_error("scalar-range", f"s {i // 32}")
        if chunk == _ZERO32:
            raise proof_error("scalar-zero", f"s {i // 32}")
    return ParsedRangeProof(head, proof[: head.header_len], signs, digit_xs, e0, s)

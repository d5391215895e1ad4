"""Confidential addresses: blech32 (Elements' bech32 variant for blinded segwit addresses).

A confidential segwit address is ``blech32(hrp, [witness version] ‖ to5bit(blinding pubkey ‖
witness program))``. Blech32 is bech32 with a 60-bit checksum (12 characters) over the generator
polynomial below; the constant XORed into the checksum is 1 for witness version 0 (blech32) and
0x455972a3350f7a1 for later versions (blech32m, as BIP350 does for bech32m).

HRPs: ``el`` (confidential) / ``ert`` (unconfidential) on Elements regtest, which our regtest
chain reuses.
"""

from __future__ import annotations

from dataclasses import dataclass

import coincurve
from bitcointx import segwit_addr

from ctplugin.elements.script import witness_program
from ctplugin.errors import EncodingError

CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GEN = (0x7D52FBA40BD886, 0x5E8DBF1A03950C, 0x1C3A3C74072A18, 0x385D72FA0E5139, 0x7093E5A608865B)
_BLECH32_CONST = 1
_BLECH32M_CONST = 0x455972A3350F7A1
CONFIDENTIAL_HRP = "el"
UNCONFIDENTIAL_HRP = "ert"


def _gen_table() -> tuple[int, ...]:
    """XOR of the generators selected by each 5-bit value (one lookup per character)."""
    table = []
    for top in range(32):
        mix = 0
        for i in range(5):
            if (top >> i) & 1:
                mix ^= _GEN[i]
        table.append(mix)
    return tuple(table)


_GEN_TABLE = _gen_table()


def _polymod(values: list[int]) -> int:
    chk = 1
    for value in values:
        chk = (((chk & 0x7FFFFFFFFFFFFF) << 5) ^ value) ^ _GEN_TABLE[chk >> 55]
    return chk


def _hrp_expand(hrp: str) -> list[int]:
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def _convert_bits(data: bytes | list[int], frm: int, to: int, pad: bool) -> list[int]:
    acc = bits = 0
    out = []
    maxv = (1 << to) - 1
    for value in data:
        if value >> frm:
            raise EncodingError("invalid data for bit conversion", reason="padding")
        acc = (acc << frm) | value
        bits += frm
        while bits >= to:
            bits -= to
            out.append((acc >> bits) & maxv)
    if pad:
        if bits:
            out.append((acc << (to - bits)) & maxv)
    elif bits >= frm or (acc << (to - bits)) & maxv:
        raise EncodingError("invalid padding in address data", reason="padding")
    return out


def blech32_encode(hrp: str, witness_version: int, payload: bytes) -> str:
    data = [witness_version, *_convert_bits(payload, 8, 5, True)]
    const = _BLECH32_CONST if witness_version == 0 else _BLECH32M_CONST
    mod = _polymod([*_hrp_expand(hrp), *data, *[0] * 12]) ^ const
    checksum = [(mod >> 5 * (11 - i)) & 31 for i in range(12)]
    return hrp + "1" + "".join(CHARSET[d] for d in data + checksum)


def blech32_decode(hrp: str, address: str) -> tuple[int, bytes]:
    """(witness version, payload) of a blech32/blech32m string with this HRP."""
    if address.lower() != address and address.upper() != address:
        raise EncodingError("mixed-case address", reason="mixed-case")
    address = address.lower()
    pos = address.rfind("1")
    if address[:pos] != hrp or pos + 13 > len(address) or len(address) > 1000:
        raise EncodingError("wrong address prefix or length", reason="prefix")
    try:
        data = [CHARSET.index(c) for c in address[pos + 1:]]
    except ValueError:
        raise EncodingError("invalid character in address", reason="character") from None
    version = data[0]
    const = _BLECH32_CONST if version == 0 else _BLECH32M_CONST
    if _polymod([*_hrp_expand(hrp), *data]) != const:
        raise EncodingError("bad address checksum", reason="checksum")
    return version, bytes(_convert_bits(data[1:-12], 5, 8, False))


@dataclass(frozen=True, slots=True)
class ConfidentialAddress:
    """A receiving address: the scriptPubKey to pay and the blinding public key to blind to."""

    script_pubkey: bytes
    blinding_pubkey: bytes

    def __post_init__(self) -> None:
        if len(self.blinding_pubkey) != 33 or self.blinding_pubkey[0] not in (2, 3):
            raise EncodingError("blinding public key must be 33 bytes compressed", reason="length")

    def encode(self, hrp: str = CONFIDENTIAL_HRP) -> str:
        spk = self.script_pubkey
        if not (4 <= len(spk) <= 42 and spk[1] == len(spk) - 2
                and (spk[0] == 0 or 0x51 <= spk[0] <= 0x60)):
            raise EncodingError("only segwit scripts have blech32 confidential addresses",
                                reason="structure")
        version = 0 if spk[0] == 0 else spk[0] - 0x50
        return blech32_encode(hrp, version, self.blinding_pubkey + spk[2:])

    @classmethod
    def decode(cls, address: str, hrp: str = CONFIDENTIAL_HRP) -> ConfidentialAddress:
        version, payload = blech32_decode(hrp, address)
        if not 0 <= version <= 16 or not 33 + 2 <= len(payload) <= 33 + 40:
            raise EncodingError("bad confidential segwit address payload", reason="structure")
        program = payload[33:]
        op = 0 if version == 0 else 0x50 + version
        return cls(bytes((op, len(program))) + program, payload[:33])


# ------------------------------------------------------------------------------------------------
# Addresses of any segwit script: confidential (blech32, HRP ``el``) or not (bech32, HRP ``ert``)
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Destination:
    """What an address stands for: a scriptPubKey and, for a confidential address, the
    blinding public key outputs to it are blinded to."""

    script_pubkey: bytes
    blinding_pubkey: bytes | None = None

    def encode(self) -> str:
        return encode_address(self.script_pubkey, self.blinding_pubkey)

    def unconfidential(self) -> Destination:
        return Destination(self.script_pubkey)


def segwit_program(script_pubkey: bytes) -> tuple[int, bytes] | None:
    """(version, program) of a scriptPubKey that has an address (BIP141/173: version 0 programs
    are 20 or 32 bytes)."""
    program = witness_program(script_pubkey)
    if program is None or (program[0] == 0 and len(program[1]) not in (20, 32)):
        return None
    return program


def encode_address(script_pubkey: bytes, blinding_pubkey: bytes | None = None) -> str:
    """The address of a segwit script; blech32 when a blinding key is given."""
    program = segwit_program(script_pubkey)
    if program is None:
        raise EncodingError("only segwit scripts have addresses on this chain",
                            reason="structure")
    if blinding_pubkey is not None:
        return ConfidentialAddress(script_pubkey, blinding_pubkey).encode()
    text = segwit_addr.encode(UNCONFIDENTIAL_HRP, *program)
    if text is None:
        raise EncodingError("cannot encode this witness program", reason="structure")
    return text


def decode_address(text: str) -> Destination:
    """Destination of a blech32 (confidential) or bech32 (unconfidential) address on our chain;
    ``EncodingError`` for anything else."""
    if not isinstance(text, str) or not text or len(text) > 1000:
        raise EncodingError("invalid address", reason="length")
    lowered = text.lower()
    if lowered.startswith(CONFIDENTIAL_HRP + "1"):
        address = ConfidentialAddress.decode(text)
        if segwit_program(address.script_pubkey) is None:
            raise EncodingError("invalid witness program in confidential address",
                                reason="structure")
        try:
            coincurve.PublicKey(address.blinding_pubkey)
        except ValueError:
            raise EncodingError("confidential address has an invalid blinding key",
                                reason="off-curve") from None
        return Destination(address.script_pubkey, address.blinding_pubkey)
    if lowered.startswith(UNCONFIDENTIAL_HRP + "1"):
        version, program = segwit_addr.decode(UNCONFIDENTIAL_HRP, text)
        if version is None or program is None:
            raise EncodingError("invalid bech32 address (checksum, padding or length)",
                                reason="checksum")
        op = 0 if version == 0 else 0x50 + version
        script = bytes((op, len(program))) + bytes(program)
        if segwit_program(script) is None:
            raise EncodingError("invalid witness program", reason="structure")
        return Destination(script)
    raise EncodingError("not an address of this chain (want el1... or ert1...)",
                        reason="prefix")

"""Addresses and keys of a chain, as Elements' ``src/key_io.cpp`` writes and reads them.

Pure functions over bytes and an ``AddressParams`` value (``ctplugin.elements.chainparams``):
the chain's base58 version bytes, blinded prefix and HRPs (docs/elements-regtest.md §6).

- base58check (P2PKH, P2SH, WIF): python-bitcointx's base58 alphabet coder plus the 4-byte
  double-SHA256 checksum, with Core's size bounds (``DecodeBase58Check(str, data, 55)``);
- blinded base58: ``blinded_prefix ‖ version ‖ 33-byte blinding pubkey ‖ hash160``;
- segwit (BIP173 bech32 for version 0, BIP350 bech32m for 1..16): python-bitcointx's
  reference coder (``bitcointx.segwit_addr``);
- confidential segwit (blech32 / blech32m, Elements ``src/blech32.cpp``): bech32 with a 60-bit
  checksum of 12 characters; the data are the witness version, then the 8→5-bit regrouping of
  blinding pubkey ‖ witness program.

``decode_destination`` follows ``DecodeDestination``'s order of trials (a string that starts
with one of the chain's HRPs, or decodes as bech32 / blech32 under any HRP, is never tried as
base58), so a verdict is Elements' for every string; every refusal is an ``AddressError`` whose
message is Elements' ``error_str`` where it has one. One deliberate difference: Elements decodes
a blinded address whose blinding pubkey is not a curve point (and then cannot blind to it);
here that address is refused (``reason="off-curve"``).

Elements' own chains are in ``regtest.params`` / ``regtest.elements``; Bitcoin's four, which
Elements' ``key_io`` vectors use (``src/test/key_io_tests.cpp``), are the constants below.
"""

from __future__ import annotations

from typing import NamedTuple

from bitcointx import base58, segwit_addr

from ctplugin.elements.chainparams import AddressParams
from ctplugin.errors import EncodingError
from ctplugin.hashes import sha256d
from ctplugin.secp256k1 import kernel
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.point import Point


class AddressError(EncodingError):
    """A string that is not an address (or key) of the chain; ``reason`` is one of
    ``ENCODING_REASONS``, the message Elements' ``DecodeDestination`` error where it has one."""


_BITCOIN_XPUB = bytes.fromhex("0488b21e")
_BITCOIN_XPRV = bytes.fromhex("0488ade4")
_TEST_XPUB = bytes.fromhex("043587cf")
_TEST_XPRV = bytes.fromhex("04358394")

# Elements kernel/chainparams.cpp: Bitcoin's chains set blech32_hrp = bech32_hrp and no blinded
# prefix (an empty one).
BITCOIN_MAIN = AddressParams(pubkey_prefix=0, script_prefix=5, secret_prefix=128,
                             blinded_prefix=None, bech32_hrp="bc", blech32_hrp="bc",
                             extpubkey_prefix=_BITCOIN_XPUB, extprvkey_prefix=_BITCOIN_XPRV)
"""Bitcoin mainnet (Elements ``CMainParams``)."""
BITCOIN_TEST = AddressParams(pubkey_prefix=111, script_prefix=196, secret_prefix=239,
                             blinded_prefix=None, bech32_hrp="tb", blech32_hrp="tb",
                             extpubkey_prefix=_TEST_XPUB, extprvkey_prefix=_TEST_XPRV)
"""Bitcoin testnet3 (``CTestNetParams``)."""
BITCOIN_SIGNET = BITCOIN_TEST
"""Bitcoin signet (``SigNetParams``): testnet's encodings."""
BITCOIN_REGTEST = AddressParams(pubkey_prefix=111, script_prefix=196, secret_prefix=239,
                                blinded_prefix=None, bech32_hrp="bcrt", blech32_hrp="bcrt",
                                extpubkey_prefix=_TEST_XPUB, extprvkey_prefix=_TEST_XPRV)
"""Bitcoin regtest (``CRegTestParams``)."""

MAX_DESTINATION_PAYLOAD = 55
"""Bytes a base58 address may decode to (``DecodeBase58Check(str, data, 55)``): a blinded one."""
MAX_SECRET_PAYLOAD = 34
"""Bytes a WIF key may decode to: version, 32-byte key, compression flag."""
_BECH32_MAX_PROGRAM = 40  # BIP141 (and Elements' BLECH32_WITNESS_PROG_MAX_LEN, blinding key aside)
_BLECH32_MAX_LENGTH = 1000  # Elements blech32.cpp: Bitcoin's 90 raised for the 33-byte key
_BLECH32_CHECKSUM = 12
_BLINDING_KEY_SIZE = 33
_SPACES = " \t\n\v\f\r"  # Core's IsSpace: DecodeBase58 skips them at both ends


# --- base58check ---------------------------------------------------------------------------------


def base58check_encode(payload: bytes) -> str:
    """``EncodeBase58Check``: base58 of payload ‖ first 4 bytes of SHA256d(payload)."""
    return base58.encode(payload + sha256d(payload)[:4])


def base58check_decode(text: str, max_payload: int) -> bytes:
    """``DecodeBase58Check``: the payload of a base58check string of at most ``max_payload``
    bytes (leading and trailing whitespace skipped, as Core does)."""
    digits = text.strip(_SPACES)
    # Every base58 digit but a leading '1' adds at least log(58)/log(256) > 0.73 bytes: a longer
    # string cannot fit, and refusing it first bounds the big-integer work.
    if "\0" in text or len(digits) > 2 * (max_payload + 4) + 2:
        raise AddressError("Invalid checksum or length of Base58 address (P2PKH or P2SH)",
                           reason="too-large")
    try:
        data = base58.decode(digits)
    except base58.Base58Error:
        raise AddressError("Invalid or unsupported Segwit (Bech32) or Base58 encoding.",
                           reason="character") from None
    if len(data) > max_payload + 4:
        raise AddressError("Invalid checksum or length of Base58 address (P2PKH or P2SH)",
                           reason="too-large")
    if len(data) < 4 or sha256d(data[:-4])[:4] != data[-4:]:
        raise AddressError("Invalid checksum or length of Base58 address (P2PKH or P2SH)",
                           reason="checksum")
    return data[:-4]


# --- blech32 (Elements src/blech32.cpp) ----------------------------------------------------------

_BLECH32_GENERATORS = (0x7D52FBA40BD886, 0x5E8DBF1A03950C, 0x1C3A3C74072A18, 0x385D72FA0E5139,
                       0x7093E5A608865B)
BLECH32_CONST = 1
BLECH32M_CONST = 0x455972A3350F7A1


def _xor_of_generators(top: int) -> int:
    out = 0
    for i, generator in enumerate(_BLECH32_GENERATORS):
        if (top >> i) & 1:
            out ^= generator
    return out


_BLECH32_TABLE = tuple(_xor_of_generators(top) for top in range(32))
"""The generators XORed together for each value of the five bits shifted out: one lookup
per character instead of five tests (the polynomial is linear over GF(2))."""


def _blech32_polymod(values: list[int]) -> int:
    chk = 1
    table = _BLECH32_TABLE
    for value in values:
        chk = ((chk & 0x7FFFFFFFFFFFFF) << 5) ^ value ^ table[chk >> 55]
    return chk


def _blech32_checksum(hrp: str, data: list[int], const: int) -> list[int]:
    values = [*segwit_addr.bech32_hrp_expand(hrp), *data, *[0] * _BLECH32_CHECKSUM]
    mod = _blech32_polymod(values) ^ const
    return [(mod >> 5 * (_BLECH32_CHECKSUM - 1 - i)) & 31 for i in range(_BLECH32_CHECKSUM)]


def blech32_split(text: str) -> tuple[int, str, list[int]] | None:
    """``blech32::Decode``: (checksum constant ``BLECH32_CONST`` / ``BLECH32M_CONST``,
    lower-case HRP, 5-bit data without the checksum) of a blech32 / blech32m string under any
    HRP; None if it is not one (characters, case, length, checksum)."""
    if any(not 33 <= ord(c) <= 126 for c in text) or (text != text.lower()
                                                       and text != text.upper()):
        return None
    text = text.lower()
    pos = text.rfind("1")
    if len(text) > _BLECH32_MAX_LENGTH or pos < 1 or pos + 1 + _BLECH32_CHECKSUM > len(text):
        return None
    if any(c not in segwit_addr.CHARSET for c in text[pos + 1:]):
        return None
    hrp = text[:pos]
    data = [segwit_addr.CHARSET.index(c) for c in text[pos + 1:]]
    check = _blech32_polymod([*segwit_addr.bech32_hrp_expand(hrp), *data])
    if check not in (BLECH32_CONST, BLECH32M_CONST):
        return None
    return check, hrp, data[:-_BLECH32_CHECKSUM]


def blech32_join(hrp: str, data: list[int], const: int) -> str:
    """``blech32::Encode``: HRP, separator, 5-bit data and the 12-character checksum with
    ``const`` (``BLECH32_CONST`` or ``BLECH32M_CONST``), lower case."""
    checksum = _blech32_checksum(hrp, data, const)
    return hrp + "1" + "".join(segwit_addr.CHARSET[d] for d in data + checksum)


def blech32_encode(hrp: str, witness_version: int, payload: bytes) -> str:
    """blech32 (version 0) or blech32m (1..16) of a witness version and payload (blinding
    pubkey ‖ program), lower case."""
    if not 0 <= witness_version <= 16 or not hrp or hrp != hrp.lower():
        raise AddressError("a witness version is 0..16 and an HRP lower case",
                           reason="value-range")
    const = BLECH32_CONST if witness_version == 0 else BLECH32M_CONST
    return blech32_join(hrp, [witness_version, *_to_5bit(payload)], const)


def blech32_decode(hrp: str, text: str) -> tuple[int, bytes]:
    """(witness version, payload) of a blech32 / blech32m string with this HRP, the checksum
    constant matching the version (Elements' rule)."""
    split = blech32_split(text)
    if split is None or not split[2]:
        raise AddressError("not a blech32 string (characters, case, length or checksum)",
                           reason="checksum")
    const, got, data = split
    if got != hrp:
        raise AddressError("Invalid prefix for Blech32 address", reason="prefix")
    version = data[0]
    if (version == 0) != (const == BLECH32_CONST):
        raise AddressError(f"Version {'0' if version == 0 else '1+'} witness address must use "
                           f"Blech32{'' if version == 0 else 'm'} checksum", reason="checksum")
    return version, _to_bytes(data[1:])


def _to_5bit(data: bytes) -> list[int]:
    converted = segwit_addr.convertbits(data, 8, 5, True)
    assert converted is not None  # bytes always regroup with padding
    return converted


def _to_bytes(data: list[int]) -> bytes:
    """Core's ``ConvertBits<5, 8, false>``: at most 4 zero padding bits."""
    converted = segwit_addr.convertbits(data, 5, 8, False)
    if converted is None:
        raise AddressError("Invalid padding in Bech32 data section", reason="padding")
    return bytes(converted)


# --- destinations --------------------------------------------------------------------------------


class Destination(NamedTuple):
    """What an address stands for: the scriptPubKey to pay and, for a confidential (blinded)
    address, the blinding pubkey outputs to it are blinded to."""

    script_pubkey: bytes
    blinding_pubkey: bytes | None = None

    def unconfidential(self) -> Destination:
        return Destination(self.script_pubkey)


def p2pkh_script(key_hash: bytes) -> bytes:
    return b"\x76\xa9\x14" + key_hash + b"\x88\xac"


def p2sh_script(script_hash: bytes) -> bytes:
    return b"\xa9\x14" + script_hash + b"\x87"


def _witness_script(version: int, program: bytes) -> bytes:
    return bytes((0 if version == 0 else 0x50 + version, len(program))) + program


def _witness_program(script: bytes) -> tuple[int, bytes] | None:
    """(version, program) of a scriptPubKey that has a segwit address (Solver: version 0 takes
    20 or 32 bytes, 1..16 take 2..40)."""
    if not 4 <= len(script) <= 42 or script[1] != len(script) - 2:
        return None
    if script[0] == 0:
        version = 0
    elif 0x51 <= script[0] <= 0x60:
        version = script[0] - 0x50
    else:
        return None
    program = script[2:]
    if version == 0 and len(program) not in (20, 32):
        return None
    return version, program


def has_address(script_pubkey: bytes) -> bool:
    """``ExtractDestination``: the script is P2PKH, P2SH or a segwit output with an address."""
    return _address_kind(script_pubkey) is not None


def _address_kind(script: bytes) -> str | None:
    if len(script) == 25 and script[:3] == b"\x76\xa9\x14" and script[23:] == b"\x88\xac":
        return "pkh"
    if len(script) == 23 and script[:2] == b"\xa9\x14" and script[22] == 0x87:
        return "sh"
    if _witness_program(script) is not None:
        return "witness"
    return None


def _check_blinding_pubkey(pubkey: bytes) -> None:
    try:
        Point.decode(pubkey, kernel.KIND_COMPRESSED)
    except EncodingError:
        raise AddressError("the blinding pubkey is not a compressed secp256k1 point",
                           reason="off-curve") from None


def encode_destination(script_pubkey: bytes, params: AddressParams,
                       blinding_pubkey: bytes | None = None) -> str:
    """``EncodeDestination``: the address of a scriptPubKey on a chain, confidential (blinded
    base58 or blech32) when a blinding pubkey is given. ``AddressError`` for a script without
    an address (P2PK, bare multisig, OP_RETURN, non-standard)."""
    kind = _address_kind(script_pubkey)
    if kind is None:
        raise AddressError("this scriptPubKey has no address", reason="structure")
    if blinding_pubkey is not None:
        _check_blinding_pubkey(blinding_pubkey)
    witness = _witness_program(script_pubkey)
    if witness is not None:
        version, program = witness
        if blinding_pubkey is not None:
            return blech32_encode(params.blech32_hrp, version, blinding_pubkey + program)
        text = segwit_addr.encode(params.bech32_hrp, version, program)
        if text is None:
            raise AddressError("this witness program has no address", reason="structure")
        return text
    version_byte = params.pubkey_prefix if kind == "pkh" else params.script_prefix
    digest = script_pubkey[3:23] if kind == "pkh" else script_pubkey[2:22]
    if blinding_pubkey is None:
        return base58check_encode(bytes((version_byte,)) + digest)
    blinded = b"" if params.blinded_prefix is None else bytes((params.blinded_prefix,))
    return base58check_encode(blinded + bytes((version_byte,)) + blinding_pubkey + digest)


def decode_destination(text: str, params: AddressParams) -> Destination:
    """``DecodeDestination``: the scriptPubKey (and blinding pubkey, for a confidential
    address) an address stands for on the chain; ``AddressError`` for anything else."""
    if not isinstance(text, str):
        raise AddressError("an address is a string", reason="type")
    is_bech32 = segwit_addr.bech32_decode(text)[0] is not None
    blech = blech32_split(text)
    if not (is_bech32 or blech is not None or _starts_with_hrp(text, params.bech32_hrp)
            or _starts_with_hrp(text, params.blech32_hrp)):
        return _decode_base58_destination(text, params)
    if is_bech32:
        return _decode_bech32_destination(text, params)
    if blech is not None and blech[2]:
        return _decode_blech32_destination(text, params)
    raise AddressError("Invalid Bech32 or Blech32 address (characters, case, length or "
                       "checksum)", reason="checksum")


def _starts_with_hrp(text: str, hrp: str) -> bool:
    """Elements' ``ToLower(str.substr(0, hrp.size())) == hrp``: ASCII case only, no separator
    (so on elementsregtest any string starting "el" or "ert" is not tried as base58)."""
    head = text[:len(hrp)]
    return head.translate(_ASCII_LOWER) == hrp


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _decode_base58_destination(text: str, params: AddressParams) -> Destination:
    data = base58check_decode(text, MAX_DESTINATION_PAYLOAD)
    blinded = b"" if params.blinded_prefix is None else bytes((params.blinded_prefix,))
    for version_byte, script in ((params.pubkey_prefix, p2pkh_script),
                                 (params.script_prefix, p2sh_script)):
        if len(data) == 21 and data[0] == version_byte:
            return Destination(script(data[1:]))
        head = blinded + bytes((version_byte,))
        if len(data) == len(head) + _BLINDING_KEY_SIZE + 20 and data.startswith(head):
            pubkey = data[len(head):len(head) + _BLINDING_KEY_SIZE]
            _check_blinding_pubkey(pubkey)
            return Destination(script(data[len(head) + _BLINDING_KEY_SIZE:]), pubkey)
    if data[:1] in (bytes((params.pubkey_prefix,)), bytes((params.script_prefix,))):
        raise AddressError("Invalid length for Base58 address (P2PKH or P2SH)", reason="length")
    raise AddressError("Invalid or unsupported Base58-encoded address.", reason="prefix")


def _witness_destination(version: int, program: bytes, blinding_pubkey: bytes | None,
                         name: str) -> Destination:
    if version == 0 and len(program) not in (20, 32):
        raise AddressError(f"Invalid {name} v0 address program size ({len(program)} bytes), "
                           "per BIP141", reason="length")
    if version > 16:
        raise AddressError(f"Invalid {name} address witness version", reason="value-range")
    if not 2 <= len(program) <= _BECH32_MAX_PROGRAM:
        raise AddressError(f"Invalid {name} address program size ({len(program)} bytes)",
                           reason="length")
    return Destination(_witness_script(version, program), blinding_pubkey)


def _decode_bech32_destination(text: str, params: AddressParams) -> Destination:
    encoding, hrp, data = segwit_addr.bech32_decode(text)
    assert data is not None  # bech32_decode succeeded
    if not data:
        raise AddressError("Empty Bech32 data section", reason="length")
    if hrp != params.bech32_hrp:
        raise AddressError("Invalid or unsupported prefix for Segwit (Bech32) address "
                           f"(expected {params.bech32_hrp}, got {hrp}).", reason="prefix")
    version = data[0]
    if version == 0 and encoding != segwit_addr.Encoding.BECH32:
        raise AddressError("Version 0 witness address must use Bech32 checksum",
                           reason="checksum")
    if version != 0 and encoding != segwit_addr.Encoding.BECH32M:
        raise AddressError("Version 1+ witness address must use Bech32m checksum",
                           reason="checksum")
    program = _to_bytes(data[1:])
    return _witness_destination(version, program, None, "Bech32")


def _decode_blech32_destination(text: str, params: AddressParams) -> Destination:
    version, payload = blech32_decode(params.blech32_hrp, text)
    if len(payload) < _BLINDING_KEY_SIZE + 1:
        raise AddressError("Invalid Blech32 address data size", reason="length")
    pubkey, program = payload[:_BLINDING_KEY_SIZE], payload[_BLINDING_KEY_SIZE:]
    destination = _witness_destination(version, program, pubkey, "Blech32")
    _check_blinding_pubkey(pubkey)
    return destination


# --- WIF secret keys -----------------------------------------------------------------------------


def encode_secret(secret: bytes, params: AddressParams, *, compressed: bool = True) -> str:
    """``EncodeSecret``: WIF of a 32-byte secret key (flag byte 01 for a compressed pubkey)."""
    _check_secret(secret)
    return base58check_encode(bytes((params.secret_prefix,)) + secret
                              + (b"\x01" if compressed else b""))


def decode_secret(text: str, params: AddressParams) -> tuple[bytes, bool]:
    """``DecodeSecret``: (32-byte secret key, compressed) of a WIF string of the chain."""
    if not isinstance(text, str):
        raise AddressError("a key is a string", reason="type")
    data = base58check_decode(text, MAX_SECRET_PAYLOAD)
    if data[:1] != bytes((params.secret_prefix,)):
        raise AddressError("not a private key of this chain (version byte)", reason="prefix")
    if len(data) == 34 and data[33] == 1:
        compressed = True
    elif len(data) == 33:
        compressed = False
    else:
        raise AddressError("a WIF key is 32 bytes with an optional 01 flag", reason="length")
    secret = data[1:33]
    _check_secret(secret)
    return secret, compressed


def _check_secret(secret: bytes) -> None:
    if len(secret) != 32:
        raise AddressError("a secret key takes 32 bytes", reason="length")
    if not 0 < int.from_bytes(secret, "big") < N:
        raise AddressError("a secret key is in [1, n-1]", reason="scalar-range")

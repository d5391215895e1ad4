"""The node's JSON of scripts and transactions: ``ctplugin.elements.rpcjson`` plus what needs the
chain's parameters — the ``address`` of a scriptPubKey in the chain's encodings (unconfidential:
the blinding key is not in the script; ``ctplugin.elements.address``) and its inferred ``desc``
(``addr(...)``, ``rawtr(...)`` or ``raw(...)`` with the BIP380 checksum), in bitcoind's key order
``asm, desc, hex, address, type``."""

from __future__ import annotations

from typing import Any

from ctplugin.elements import Transaction
from ctplugin.elements.address import encode_destination, has_address
from ctplugin.elements.chainparams import AddressParams, ChainParams
from ctplugin.elements.rpcjson import decode_transaction
from ctplugin.elements.script import script_to_asm, script_type, witness_program
from ctplugin.errors import EncodingError

_INPUT_CHARSET = ("0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~"
                  "ijklmnopqrstuvwxyzABCDEFGH`#\"\\ ")
_CHECKSUM_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GENERATOR = (0xF5DEE51989, 0xA9FDCA3312, 0x1BAB10E32D, 0x3706B1677A, 0x644D626FFD)


def _generator_xor(top: int) -> int:
    mask = 0
    for i in range(5):
        if (top >> i) & 1:
            mask ^= _GENERATOR[i]
    return mask


_GENERATOR_TABLE = tuple(_generator_xor(top) for top in range(32))
"""The XOR of the generators each 5-bit top selects: one lookup per symbol instead of five
tests (a 1 MB raw() descriptor is two million symbols)."""
_CHAR_VALUES = {char: value for value, char in enumerate(_INPUT_CHARSET)}


def _polymod(symbols: list[int]) -> int:
    chk = 1
    table = _GENERATOR_TABLE
    for value in symbols:
        chk = ((chk & 0x7FFFFFFFF) << 5) ^ value ^ table[chk >> 35]
    return chk


def descriptor_checksum(descriptor: str) -> str:
    """BIP380's 8-character checksum of a descriptor string."""
    symbols: list[int] = []
    groups: list[int] = []
    for char in descriptor:
        value = _CHAR_VALUES.get(char, -1)
        if value < 0:
            raise EncodingError(f"invalid descriptor character {char!r}", reason="character")
        symbols.append(value & 31)
        groups.append(value >> 5)
        if len(groups) == 3:
            symbols.append(groups[0] * 9 + groups[1] * 3 + groups[2])
            groups = []
    if len(groups) == 1:
        symbols.append(groups[0])
    elif len(groups) == 2:
        symbols.append(groups[0] * 3 + groups[1])
    check = _polymod([*symbols, 0, 0, 0, 0, 0, 0, 0, 0]) ^ 1
    return "".join(_CHECKSUM_CHARSET[(check >> (5 * (7 - i))) & 31] for i in range(8))


def with_checksum(descriptor: str) -> str:
    return f"{descriptor}#{descriptor_checksum(descriptor)}"


def address_of(script: bytes, addresses: AddressParams) -> str | None:
    """The unconfidential address of a scriptPubKey on the chain, if it has one (P2PKH, P2SH,
    segwit: ``ExtractDestination``)."""
    if not has_address(script):
        return None
    try:
        return encode_destination(script, addresses)
    except EncodingError:
        return None


def inferred_descriptor(script: bytes, addresses: AddressParams,
                        address: str | None = None) -> str:
    """InferDescriptor with no key information, checksummed (``address``: the script's, when
    the caller has it already)."""
    program = witness_program(script)
    if program is not None and program[0] == 1 and len(program[1]) == 32:
        return with_checksum(f"rawtr({program[1].hex()})")
    if address is None:
        address = address_of(script, addresses)
    if address is not None:
        return with_checksum(f"addr({address})")
    return with_checksum(f"raw({script.hex()})")


def script_pubkey_json(script: bytes, addresses: AddressParams) -> dict[str, Any]:
    address = address_of(script, addresses)  # once: the descriptor names it too
    out: dict[str, Any] = {"asm": script_to_asm(script),
                           "desc": inferred_descriptor(script, addresses, address),
                           "hex": script.hex()}
    if address is not None:
        out["address"] = address
    out["type"] = script_type(script)
    return out


def transaction_json(tx: Transaction, params: ChainParams) -> dict[str, Any]:
    """decoderawtransaction's object with scriptPubKey addresses and descriptors on the node's
    chain (its range-proof kinds say how a blinded output's proof is read)."""
    decoded = decode_transaction(tx, params.range_proofs)
    for vout, out in zip(decoded["vout"], tx.outputs):
        vout["scriptPubKey"] = script_pubkey_json(out.script_pubkey, params.addresses)
    return decoded

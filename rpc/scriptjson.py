"""The node's JSON of scripts and transactions: ``ctplugin.elements.rpcjson`` plus what needs our
chain's parameters — the ``address`` of a scriptPubKey (unconfidential: the blinding key is not
in the script) and its inferred ``desc`` (``addr(...)``, ``rawtr(...)`` or ``raw(...)`` with the
BIP380 checksum), in bitcoind's key order ``asm, desc, hex, address, type``."""

from __future__ import annotations

from typing import Any

from ctplugin.elements import Transaction
from ctplugin.elements.chainparams import RangeProofKind
from ctplugin.elements.rpcjson import decode_transaction
from ctplugin.elements.script import script_to_asm, script_type
from ctplugin.errors import EncodingError
from regtest.wallet.address import encode_address, segwit_program

_INPUT_CHARSET = ("0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~"
                  "ijklmnopqrstuvwxyzABCDEFGH`#\"\\ ")
_CHECKSUM_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GENERATOR = (0xF5DEE51989, 0xA9FDCA3312, 0x1BAB10E32D, 0x3706B1677A, 0x644D626FFD)


def _polymod(symbols: list[int]) -> int:
    chk = 1
    for value in symbols:
        top = chk >> 35
        chk = (chk & 0x7FFFFFFFF) << 5 ^ value
        for i in range(5):
            if (top >> i) & 1:
                chk ^= _GENERATOR[i]
    return chk


def descriptor_checksum(descriptor: str) -> str:
    """BIP380's 8-character checksum of a descriptor string."""
    symbols: list[int] = []
    groups: list[int] = []
    for char in descriptor:
        value = _INPUT_CHARSET.find(char)
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


def address_of(script: bytes) -> str | None:
    """The unconfidential address of a scriptPubKey, if it has one on our chain."""
    if segwit_program(script) is None:
        return None
    try:
        return encode_address(script)
    except EncodingError:
        return None


def inferred_descriptor(script: bytes) -> str:
    """InferDescriptor with no key information, checksummed."""
    program = segwit_program(script)
    if program is not None and program[0] == 1 and len(program[1]) == 32:
        return with_checksum(f"rawtr({program[1].hex()})")
    address = address_of(script)
    if address is not None:
        return with_checksum(f"addr({address})")
    return with_checksum(f"raw({script.hex()})")


def script_pubkey_json(script: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {"asm": script_to_asm(script), "desc": inferred_descriptor(script),
                           "hex": script.hex()}
    address = address_of(script)
    if address is not None:
        out["address"] = address
    out["type"] = script_type(script)
    return out


def transaction_json(tx: Transaction, range_proofs: frozenset[RangeProofKind]) -> dict[str, Any]:
    """decoderawtransaction's object with scriptPubKey addresses and descriptors;
    ``range_proofs``: the node's chain's kinds (how a blinded output's proof is read)."""
    decoded = decode_transaction(tx, range_proofs)
    for vout, out in zip(decoded["vout"], tx.outputs):
        vout["scriptPubKey"] = script_pubkey_json(out.script_pubkey)
    return decoded

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
from ctplugin.script.descriptor import with_checksum


def address_of(script: bytes, addresses: AddressParams) -> str | None:
    """The unconfidential address of a scriptPubKey on the chain, if it has one (P2PKH, P2SH,
    segwit: ``ExtractDestination``)."""
    if not has_address(script):
        return None
    try:
        return encode_destination(script, addresses)
    except EncodingError:
        return None


def inferred_descriptor(script: bytes, addresses: AddressParams) -> str:
    """InferDescriptor with no key information, checksummed."""
    program = witness_program(script)
    if program is not None and program[0] == 1 and len(program[1]) == 32:
        return with_checksum(f"rawtr({program[1].hex()})")
    address = address_of(script, addresses)
    if address is not None:
        return with_checksum(f"addr({address})")
    return with_checksum(f"raw({script.hex()})")


def script_pubkey_json(script: bytes, addresses: AddressParams) -> dict[str, Any]:
    out: dict[str, Any] = {"asm": script_to_asm(script),
                           "desc": inferred_descriptor(script, addresses), "hex": script.hex()}
    address = address_of(script, addresses)
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

"""The node's JSON of scripts and transactions: ``ctplugin.elements.rpcjson`` plus what needs the
chain's parameters — the ``address`` of a scriptPubKey in the chain's encodings (unconfidential:
the blinding key is not in the script; ``ctplugin.elements.address``) and its inferred ``desc``
(``addr(...)``, ``rawtr(...)`` or ``raw(...)`` with the BIP380 checksum), in bitcoind's key order
``asm, desc, hex, address, type``."""

from __future__ import annotations

from typing import Any

from ctplugin.elements import Transaction
from ctplugin.elements.address import (
    decode_destination,
    encode_destination,
    has_address,
    p2pkh_script,
    p2sh_script,
)
from ctplugin.elements.chainparams import AddressParams, ChainParams
from ctplugin.elements.rpcjson import decode_transaction, pegout_script
from ctplugin.elements.script import (
    push_data,
    script_ops,
    script_to_asm,
    script_type,
    witness_program,
)
from ctplugin.errors import EncodingError
from ctplugin.hashes import hash160
from ctplugin.script.descriptor import descriptor_checksum, with_checksum
from rpc.errors import RpcCode, RpcError


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
    """InferDescriptor with no key information, checksummed: the keys a script itself
    carries (P2PK, bare multisig) are named, hashed ones are not (``addr()``; ``address``: the
    script's, when the caller has it already)."""
    program = witness_program(script)
    if program is not None and program[0] == 1 and len(program[1]) == 32:
        return with_checksum(f"rawtr({program[1].hex()})")
    kind = script_type(script)
    if kind in ("pubkey", "multisig"):
        ops = script_ops(script) or []
        if kind == "pubkey":
            return with_checksum(f"pk({(ops[0][1] or b'').hex()})")
        keys = ",".join((data or b"").hex() for _, data in ops[1:-2])
        return with_checksum(f"multi({ops[0][0] - 0x50},{keys})")
    if address is None:
        address = address_of(script, addresses)
    if address is not None:
        return with_checksum(f"addr({address})")
    return with_checksum(f"raw({script.hex()})")


PARENT_ADDRESSES = AddressParams(
    pubkey_prefix=111, script_prefix=196, secret_prefix=239, blinded_prefix=None,
    bech32_hrp="bcrt", blech32_hrp="bcrt",
    extpubkey_prefix=bytes.fromhex("043587cf"), extprvkey_prefix=bytes.fromhex("04358394"))
"""The parent chain's address encodings (Bitcoin regtest: Elements' ``-parentpubkeyprefix``,
``-parentscriptprefix``, ``-parent_bech32_hrp`` defaults, kernel/chainparams.cpp), for the
``pegout_address`` of a peg-out script."""


def script_pubkey_json(script: bytes, addresses: AddressParams) -> dict[str, Any]:
    """ScriptToUniv with addresses: asm, desc, hex, address (not for P2PK), type; a peg-out
    script adds ``pegout_chain`` and the parent-chain script's fields prefixed ``pegout_``,
    its address in the parent's encoding (its descriptor in ours, as Elements prints it)."""
    out = _script_fields(script, addresses, addresses)
    pegout = pegout_script(script)
    if pegout is not None:
        genesis_hash, target = pegout
        out["pegout_chain"] = genesis_hash[::-1].hex()
        out.update({f"pegout_{key}": value for key, value in
                    _script_fields(target, addresses, PARENT_ADDRESSES).items()})
    return out


def _script_fields(script: bytes, addresses: AddressParams,
                   address_encoding: AddressParams) -> dict[str, Any]:
    address = address_of(script, address_encoding)  # none for P2PK, as Elements prints it
    # computed once: the descriptor names the same address when both use our encoding
    known = address if address_encoding is addresses else None
    out: dict[str, Any] = {"asm": script_to_asm(script),
                           "desc": inferred_descriptor(script, addresses, known),
                           "hex": script.hex()}
    if address is not None:
        out["address"] = address
    out["type"] = script_type(script)
    return out


def transaction_json(tx: Transaction, params: ChainParams,
                     discount_ct: bool = False) -> dict[str, Any]:
    """decoderawtransaction's object with scriptPubKey addresses and descriptors on the node's
    chain (its range-proof kinds say how a blinded output's proof is read); the discounted
    sizes only when the chain accepts discounted CT fees (``-acceptdiscountct``, off by
    default on elementsregtest), as Elements' TxToUniv."""
    decoded = decode_transaction(tx, params.range_proofs, discount_ct=discount_ct)
    for vout, out in zip(decoded["vout"], tx.outputs):
        vout["scriptPubKey"] = script_pubkey_json(out.script_pubkey, params.addresses)
    return decoded


# --- scantxoutset's descriptors -----------------------------------------------------------------
# Only what scantxoutset needs of BIP380-386 (raw, addr, pk, pkh, wpkh, sh(wpkh), combo over
# hex public keys); the wallet's descriptor module is the full language.


def _descriptor_error(message: str) -> RpcError:
    return RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, message)


def _strip_checksum(text: str) -> str:
    """A descriptor without its ``#checksum``; -5 when the given checksum is wrong."""
    body, sep, given = text.partition("#")
    if not sep:
        return body
    try:
        computed = descriptor_checksum(body)
    except EncodingError:
        raise _descriptor_error("Invalid characters in payload") from None
    if len(given) != 8:
        raise _descriptor_error(f"Expected 8 character checksum, not {len(given)} characters")
    if given != computed:
        raise _descriptor_error(f"Provided checksum '{given}' does not match computed checksum "
                                f"'{computed}'")
    return body


def _pubkey(text: str) -> bytes:
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise _descriptor_error(f"key '{text}' is not valid") from None
    if len(key) not in (33, 65) or key[0] not in ((2, 3) if len(key) == 33 else (4,)):
        raise _descriptor_error(f"key '{text}' is not valid")
    return key


def _key_scripts(function: str, key: bytes) -> list[tuple[bytes, str]]:
    key_hash = hash160(key)
    pk = (push_data(key) + b"\xac", f"pk({key.hex()})")
    pkh = (p2pkh_script(key_hash), f"pkh({key.hex()})")
    wpkh = (b"\x00\x14" + key_hash, f"wpkh({key.hex()})")
    sh_wpkh = (p2sh_script(hash160(wpkh[0])), f"sh(wpkh({key.hex()}))")
    if function in ("wpkh", "sh(wpkh") and len(key) != 33:
        raise _descriptor_error("Uncompressed keys are not allowed")
    return {"pk": [pk], "pkh": [pkh], "wpkh": [wpkh], "sh(wpkh": [sh_wpkh],
            "combo": [pk, pkh] + ([wpkh, sh_wpkh] if len(key) == 33 else [])}[function]


def scan_scripts(item: Any, addresses: AddressParams) -> list[tuple[bytes, str]]:
    """The scriptPubKeys a scan object stands for, each with the descriptor scantxoutset
    reports for it (checksummed, as InferDescriptor with the key known prints it)."""
    if isinstance(item, dict):
        if "desc" not in item:
            raise RpcError(RpcCode.INVALID_PARAMETER, "Descriptor not found")
        item = item["desc"]
    if not isinstance(item, str):
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Scan object needs to be either a string or an object")
    body = _strip_checksum(item)
    if body.startswith("raw(") and body.endswith(")"):
        try:
            script = bytes.fromhex(body[4:-1])
        except ValueError:
            raise _descriptor_error("Raw script is not hex") from None
        return [(script, inferred_descriptor(script, addresses))]
    if body.startswith("addr(") and body.endswith(")"):
        try:
            script = decode_destination(body[5:-1], addresses).script_pubkey
        except EncodingError:
            raise _descriptor_error("Address is not valid") from None
        return [(script, inferred_descriptor(script, addresses))]
    for function in ("sh(wpkh", "combo", "wpkh", "pkh", "pk"):
        closing = "))" if function == "sh(wpkh" else ")"
        if body.startswith(function + "(") and body.endswith(closing):
            inner = body[len(function) + 1:-len(closing)]
            return [(script, with_checksum(desc))
                    for script, desc in _key_scripts(function, _pubkey(inner))]
    name = body.split("(", 1)[0]
    raise _descriptor_error(f"'{name}' is not a valid descriptor function")

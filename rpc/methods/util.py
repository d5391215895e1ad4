"""Utility calls that need no wallet (Elements ``src/rpc/output_script.cpp``, ``misc.cpp``,
``signmessage.cpp``, ``fees.cpp``): createmultisig, verifymessage, signmessagewithprivkey,
estimatesmartfee (docs/node-rpc.md §1.8).

- Messages are signed as Elements' ``common/signmessage.cpp`` signs them: the double SHA256 of
  the serialized strings "Bitcoin Signed Message:\\n" and the message (each with its CompactSize
  length), a 65-byte compact recoverable ECDSA signature (header ``27 + recid``, ``+ 4`` for a
  compressed key) in base64; only a P2PKH address can verify one.
- ``estimatesmartfee``: the node keeps no fee-estimation history, so every target answers as
  Core's estimator answers before it has seen a block confirm mempool transactions:
  ``errors`` ["Insufficient data or no feerate found"] and ``blocks`` 0 (Core's
  ``CBlockPolicyEstimator::estimateSmartFee`` with no data), after the same argument checks
  (conf_target 1..1008, the three modes).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import coincurve
from bitcointx.signmessage import BitcoinMessage

from ctplugin.elements.address import (
    AddressError,
    decode_destination,
    decode_secret,
    encode_destination,
    p2sh_script,
)
from ctplugin.elements.script import push_data, script_num
from ctplugin.hashes import hash160, sha256
from rpc.context import Call
from rpc.errors import RpcCode, RpcError
from rpc.registry import Kind, Locking, json_type, optional, required, rpc
from rpc.scriptjson import with_checksum

MESSAGE_MAGIC = b"Bitcoin Signed Message:\n"
MAX_PUBKEYS_PER_MULTISIG = 16
MAX_SCRIPT_ELEMENT_SIZE = 520
OP_CHECKMULTISIG = 0xAE
MULTISIG_TYPES = ("legacy", "p2sh-segwit", "bech32")


# --- multisig ---------------------------------------------------------------------------------


def hex_to_pubkey(text: Any) -> bytes:
    """Core's HexToPubKey (rpc/util.cpp): -5 with the key in the message."""
    if not isinstance(text, str):
        raise RpcError(RpcCode.TYPE_ERROR, f"JSON value of type {json_type(text).value} is not "
                                           "of expected type string")
    try:
        data = binascii.unhexlify(text)
    except (binascii.Error, ValueError):
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       f'Pubkey "{text}" must be a hex string') from None
    if len(data) not in (33, 65):
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       f'Pubkey "{text}" must have a length of either 33 or 65 bytes')
    if data[0] not in ((2, 3) if len(data) == 33 else (4,)):
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       f'Pubkey "{text}" must be cryptographically valid.')
    try:
        coincurve.PublicKey(data)
    except ValueError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       f'Pubkey "{text}" must be cryptographically valid.') from None
    return data


def multisig_script(required_sigs: int, pubkeys: list[bytes]) -> bytes:
    """``GetScriptForMultisig``: OP_m <key>... OP_n OP_CHECKMULTISIG."""
    return (script_num(required_sigs) + b"".join(push_data(k) for k in pubkeys)
            + script_num(len(pubkeys)) + bytes((OP_CHECKMULTISIG,)))


def p2wsh_script(witness_script: bytes) -> bytes:
    return b"\x00\x20" + sha256(witness_script)


def multisig_destination(required_sigs: int, pubkeys: list[bytes], output_type: str
                         ) -> tuple[bytes, bytes, str, str]:
    """Core's AddAndGetMultisigDestination: (scriptPubKey, redeem script, the output type
    actually made, descriptor body without checksum). An uncompressed key forces legacy."""
    if required_sigs < 1:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "a multisignature address must require at least one key to redeem")
    if len(pubkeys) < required_sigs:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"not enough keys supplied (got {len(pubkeys)} keys, but need at least "
                       f"{required_sigs} to redeem)")
    if len(pubkeys) > MAX_PUBKEYS_PER_MULTISIG:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       "Number of keys involved in the multisignature address creation > "
                       f"{MAX_PUBKEYS_PER_MULTISIG}\nReduce the number")
    if any(len(k) == 65 for k in pubkeys):
        output_type = "legacy"
    script = multisig_script(required_sigs, pubkeys)
    if output_type == "legacy" and len(script) > MAX_SCRIPT_ELEMENT_SIZE:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"redeemScript exceeds size limit: {len(script)} > "
                       f"{MAX_SCRIPT_ELEMENT_SIZE}")
    multi = f"multi({required_sigs},{','.join(k.hex() for k in pubkeys)})"
    if output_type == "legacy":
        return p2sh_script(hash160(script)), script, output_type, f"sh({multi})"
    witness = p2wsh_script(script)
    if output_type == "p2sh-segwit":
        return p2sh_script(hash160(witness)), script, output_type, f"sh(wsh({multi}))"
    return witness, script, output_type, f"wsh({multi})"


@rpc("util",
     args=[required("nrequired", Kind.INT, "The number of required signatures out of the n "
                                           "keys."),
           required("keys", Kind.ARR, "The hex-encoded public keys."),
           optional("address_type", Kind.STR, "legacy", 'The address type to use. Options are '
                    '"legacy", "p2sh-segwit", and "bech32".')],
     description="Creates a multi-signature address with n signature of m keys required.\n"
                 "It returns a json object with the address and redeemScript.",
     result='{\n'
            '  "address" : "str",         (string) The value of the new multisig address.\n'
            '  "redeemScript" : "hex",    (string) The string value of the hex-encoded '
            'redemption script.\n'
            '  "descriptor" : "str",      (string) The descriptor for this multisig\n'
            '  "warnings" : [ "str" ]     (json array, optional) Any warnings resulting from '
            'the creation of this multisig\n'
            '}',
     examples=('2 "[\\"03789ed0bb717d88f7d321a368d905e7430207ebbd82bd342cf11ae157a7ace5fd\\",'
               '\\"03dbc6764b8884a92e871274b87583e6d5c2a58819473e17e107ef3f6aa5a61626\\"]"',),
     locking=Locking.SELF)
def createmultisig(call: Call, nrequired: int, keys: list[Any],
                   address_type: str) -> dict[str, Any]:
    pubkeys = [hex_to_pubkey(k) for k in keys]
    if address_type == "bech32m":
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY,
                       "createmultisig cannot create bech32m multisig addresses")
    # Elements' ParseOutputType reads "blech32" as bech32 (the address is unconfidential)
    output_type = "bech32" if address_type == "blech32" else address_type
    if output_type not in MULTISIG_TYPES:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, f"Unknown address type '{address_type}'")
    script_pubkey, redeem, made, descriptor = multisig_destination(nrequired, pubkeys,
                                                                   output_type)
    out: dict[str, Any] = {
        "address": encode_destination(script_pubkey, call.node.params.addresses),
        "redeemScript": redeem.hex(),
        "descriptor": with_checksum(descriptor),
    }
    if made != output_type:
        out["warnings"] = ["Unable to make chosen address type, please ensure no uncompressed "
                           "public keys are present."]
    return out


# --- messages ---------------------------------------------------------------------------------


def message_hash(message: str) -> bytes:
    """``MessageHash``: SHA256d of the serialized magic and message (python-bitcointx's
    BitcoinMessage, whose magic is Core's and Elements')."""
    return BitcoinMessage(message, MESSAGE_MAGIC).GetHash()


def sign_message(secret: bytes, compressed: bool, message: str) -> str:
    """``MessageSign``: base64 of the 65-byte compact signature."""
    recoverable = coincurve.PrivateKey(secret).sign_recoverable(message_hash(message),
                                                                hasher=None)
    header = 27 + recoverable[64] + (4 if compressed else 0)
    return base64.b64encode(bytes((header,)) + recoverable[:64]).decode("ascii")


def _decode_base64(text: str) -> bytes | None:
    """Core's DecodeBase64: padding optional only as RFC 4648 allows; anything else None."""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def recover_pubkey(signature: bytes, message: str) -> bytes | None:
    """``CPubKey::RecoverCompact``: the signing key, serialized as the header says, or None."""
    if len(signature) != 65:
        return None
    header = signature[0]
    if not 27 <= header <= 34:
        return None
    recid = (header - 27) & 3
    compressed = header >= 31
    try:
        key = coincurve.PublicKey.from_signature_and_message(
            signature[1:] + bytes((recid,)), message_hash(message), hasher=None)
    except (ValueError, TypeError):
        return None
    return key.format(compressed=compressed)


@rpc("util",
     args=[required("address", Kind.STR, "The bitcoin address to use for the signature."),
           required("signature", Kind.STR, "The signature provided by the signer in base 64 "
                                           "encoding (see signmessage)."),
           required("message", Kind.STR, "The message that was signed.")],
     description="Verify a signed message.",
     result="true|false    (boolean) If the signature is verified or not.",
     examples=('"XpDcwMpTZMaTAfRXk4aKkDfWb4BRdkz6Jz" "signature" "my message"',),
     locking=Locking.SELF)
def verifymessage(call: Call, address: str, signature: str, message: str) -> bool:
    try:
        destination = decode_destination(address, call.node.params.addresses)
    except AddressError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid address") from None
    script = destination.script_pubkey
    if not (len(script) == 25 and script[:3] == b"\x76\xa9\x14"):
        raise RpcError(RpcCode.TYPE_ERROR, "Address does not refer to key")
    data = _decode_base64(signature)
    if data is None:
        raise RpcError(RpcCode.TYPE_ERROR, "Malformed base64 encoding")
    pubkey = recover_pubkey(data, message)
    return pubkey is not None and hash160(pubkey) == script[3:23]


@rpc("util",
     args=[required("privkey", Kind.STR, "The private key to sign the message with."),
           required("message", Kind.STR, "The message to create a signature of.")],
     description="Sign a message with the private key of an address",
     result='"signature"    (string) The signature of the message encoded in base 64',
     examples=('"privkey" "my message"',), locking=Locking.SELF)
def signmessagewithprivkey(call: Call, privkey: str, message: str) -> str:
    try:
        secret, compressed = decode_secret(privkey, call.node.params.addresses)
    except AddressError:
        raise RpcError(RpcCode.INVALID_ADDRESS_OR_KEY, "Invalid private key") from None
    return sign_message(secret, compressed, message)


# --- fees -------------------------------------------------------------------------------------

MAX_CONF_TARGET = 1008  # the long horizon's highest target (Core's policy/fees.h: 42 × 24)
FEE_MODES = ("unset", "economical", "conservative")


def parse_estimate_mode(mode: str) -> str:
    """FeeModeFromString (case-insensitive); -8 with Core's list otherwise."""
    lowered = mode.lower()
    if lowered not in FEE_MODES:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       'Invalid estimate_mode parameter, must be one of: "unset", '
                       '"economical", "conservative"')
    return lowered


def parse_conf_target(target: int, max_target: int = MAX_CONF_TARGET) -> int:
    """ParseConfirmTarget (rpc/util.cpp)."""
    if not 1 <= target <= max_target:
        raise RpcError(RpcCode.INVALID_PARAMETER,
                       f"Invalid conf_target, must be between 1 and {max_target}")
    return target


@rpc("util",
     args=[required("conf_target", Kind.INT, "Confirmation target in blocks (1 - 1008)"),
           optional("estimate_mode", Kind.STR, "economical", 'The fee estimate mode.\n'
                    'Whether to return a more conservative estimate which also satisfies\n'
                    'a longer history. A conservative estimate potentially returns a\n'
                    'higher feerate and is more likely to be sufficient for the desired\n'
                    'target, but is not as responsive to short term drops in the\n'
                    'prevailing fee market. Must be one of (case insensitive):\n'
                    '"unset"\n"economical"\n"conservative"')],
     description="Estimates the approximate fee per kilobyte needed for a transaction to begin\n"
                 "confirmation within conf_target blocks if possible and return the number of "
                 "blocks\nfor which the estimate is valid. Uses virtual transaction size as "
                 "defined\nin BIP 141 (witness data is discounted).",
     result='{\n'
            '  "feerate" : n,       (numeric, optional) estimate fee rate in BTC/kvB (only '
            'present if no errors were encountered)\n'
            '  "errors" : [ "str" ],  (json array, optional) Errors encountered during '
            'processing (if there are any)\n'
            '  "blocks" : n         (numeric) block number where estimate was found\n'
            '}',
     examples=("6",), locking=Locking.SELF)
def estimatesmartfee(call: Call, conf_target: int, estimate_mode: str) -> dict[str, Any]:
    parse_conf_target(conf_target)
    parse_estimate_mode(estimate_mode)
    return {"errors": ["Insufficient data or no feerate found"], "blocks": 0}

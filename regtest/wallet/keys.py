"""Wallet keys: spending keys, SLIP-77 blinding keys and P2WPKH scripts, all from one seed.

- Spending key i: ``k_i = int(tagged_hash("ctplugin/wallet/spend", seed ‖ be32(i))) mod n``
  (retried with the next counter in the negligible case k_i = 0). Deterministic, so a test chain
  built from a seed reproduces byte for byte.
- Blinding keys follow SLIP-0077 (the scheme Elements/Liquid wallets use): the master blinding key
  is bytes 32..64 of HMAC-SHA512(key = HMAC-SHA512("Symmetric key seed", seed)[0:32],
  msg = 0x00 ‖ "SLIP-0077"), and the blinding private key of a scriptPubKey is
  HMAC-SHA256(master blinding key, scriptPubKey).
- Scripts: every key has two receiving scripts, each with its own SLIP-77 blinding key:
  P2TR ``OP_1 <32-byte Q>`` (key path only, BIP86-style: Q = P + TaggedHash("TapTweak/elements",
  P)·G with P = x(k·G); the wallet's default) and P2WPKH ``OP_0 <20-byte HASH160(compressed
  pubkey)>`` (on request; the genesis coins pay key 0's P2WPKH script).

Secrets only meet constant-time code (coincurve); public keys become ``Point`` values.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import Literal

from ctplugin.errors import EncodingError
from ctplugin.hashes import hash160
from ctplugin.script.taproot import TaprootOutput
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.scalar import scalar_from_hash

AddressKind = Literal["p2tr", "p2wpkh"]
"""The script a receiving key pays to (``KeyChain.key``'s ``kind``)."""
P2TR: AddressKind = "p2tr"
P2WPKH: AddressKind = "p2wpkh"
ADDRESS_KINDS: tuple[AddressKind, ...] = (P2TR, P2WPKH)


def p2wpkh_script(pubkey: bytes) -> bytes:
    """OP_0 PUSH20 HASH160(pubkey)."""
    if len(pubkey) != 33:
        raise EncodingError("P2WPKH needs a 33-byte compressed public key", reason="length")
    return b"\x00\x14" + hash160(pubkey)


def p2tr_script(pubkey: bytes) -> bytes:
    """OP_1 PUSH32 Q: the key-path-only taproot output of a compressed public key's x."""
    if len(pubkey) != 33:
        raise EncodingError("P2TR needs a 33-byte compressed public key", reason="length")
    return TaprootOutput(pubkey[1:]).script_pubkey


def slip77_master_blinding_key(seed: bytes) -> bytes:
    """SLIP-0077 master blinding key (32 bytes) of a wallet seed."""
    root = hmac.digest(b"Symmetric key seed", seed, "sha512")
    derived = hmac.digest(root[:32], b"\x00SLIP-0077", "sha512")  # SLIP-21's node "SLIP-0077"
    return derived[32:]


def slip77_blinding_secret(master: bytes, script_pubkey: bytes) -> int:
    """SLIP-0077 blinding private key of a scriptPubKey."""
    value = int.from_bytes(hmac.digest(master, script_pubkey, "sha256"), "big")
    if not 0 < value < N:  # probability ~2^-128; SLIP-77 has no retry rule, so refuse
        raise EncodingError("SLIP-77 blinding key out of range for this script",
                            reason="scalar-range")
    return value


@dataclass(frozen=True, slots=True)
class KeyPair:
    """One receiving script: spending key, the script (``kind`` P2WPKH or P2TR), and the
    script's blinding key."""

    index: int
    secret: int
    pubkey: bytes
    script_pubkey: bytes
    blinding_secret: int
    blinding_pubkey: bytes
    kind: AddressKind = P2WPKH

    def __repr__(self) -> str:  # never print secrets
        return f"KeyPair(index={self.index}, script={self.script_pubkey.hex()})"


class KeyChain:
    """Deterministic keys of one wallet seed (see the module docstring)."""

    __slots__ = ("_by_script", "_keys", "_taproot", "master_blinding_key", "seed")

    def __init__(self, seed: bytes) -> None:
        if not seed:  # tests use short readable seeds; real wallets want >= 16 bytes of entropy
            raise EncodingError("wallet seed must not be empty", reason="length")
        self.seed = bytes(seed)
        self.master_blinding_key = slip77_master_blinding_key(self.seed)
        self._keys: list[KeyPair] = []
        self._taproot: list[KeyPair] = []
        self._by_script: dict[bytes, KeyPair] = {}

    def key(self, index: int, kind: AddressKind = P2WPKH) -> KeyPair:
        """Key ``index``'s receiving script of ``kind`` (both are derived together)."""
        if kind not in ADDRESS_KINDS:
            raise EncodingError(f"unknown address kind {kind!r}", reason="kind")
        while len(self._keys) <= index:
            i = len(self._keys)
            secret = scalar_from_hash("ctplugin/wallet/spend", self.seed + i.to_bytes(4, "big"))
            pubkey = ct.base_mul(secret).to_bytes()
            for script, kind_i, pairs in ((p2wpkh_script(pubkey), P2WPKH, self._keys),
                                          (p2tr_script(pubkey), P2TR, self._taproot)):
                blinding = slip77_blinding_secret(self.master_blinding_key, script)
                pair = KeyPair(i, secret, pubkey, script, blinding,
                               ct.base_mul(blinding).to_bytes(), kind_i)
                pairs.append(pair)
                self._by_script[script] = pair
        return (self._keys if kind == P2WPKH else self._taproot)[index]

    def __len__(self) -> int:
        return len(self._keys)

    def owner_of(self, script_pubkey: bytes) -> KeyPair | None:
        return self._by_script.get(script_pubkey)

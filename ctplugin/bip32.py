"""BIP32 extended keys through python-bitcointx (``CExtKey`` / ``CExtPubKey``), with our chains'
base58 version bytes (``AddressParams.extprvkey_prefix`` / ``extpubkey_prefix``: ``tprv`` /
``tpub`` on elementsregtest, docs/elements-regtest.md §6).

python-bitcointx encodes extended keys only under its own selected chain parameters, a
process-wide setting; so the 78-byte serialization (BIP32 "Serialization format": version,
depth, parent fingerprint, child number, chain code, key) is framed here with the chain's
version bytes and ``ctplugin.elements.address``'s base58check, and python-bitcointx derives.

python-bitcointx derives through a shared libsecp256k1 loaded on first use:
``ctplugin.secp256k1.libsecp.share_with_bitcointx`` points it at coincurve's, right before the
first derivation, never at import.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field

from bitcointx.core.key import CExtKey, CExtPubKey

from ctplugin.elements.address import base58check_decode, base58check_encode
from ctplugin.elements.chainparams import AddressParams
from ctplugin.errors import EncodingError
from ctplugin.secp256k1.libsecp import share_with_bitcointx
from ctplugin.secp256k1.params import N

HARDENED = 0x8000_0000
EXTKEY_SIZE = 74  # python-bitcointx's raw form: the serialization without its version bytes


def parse_path(text: str) -> tuple[int, ...]:
    """``m/84'/1h/0'/0/5`` (or without the leading ``m``) as child numbers (BIP32 notation,
    ``'`` or ``h`` for hardened)."""
    parts = text.split("/")
    if parts and parts[0] == "m":
        parts = parts[1:]
    path = []
    for part in parts:
        hardened = part.endswith(("'", "h"))
        digits = part[:-1] if hardened else part
        if not digits.isdigit() or int(digits) >= HARDENED:
            raise EncodingError(f"key path value {part!r} is not a valid uint32",
                                reason="path")
        path.append(int(digits) | (HARDENED if hardened else 0))
    return tuple(path)


@dataclass(frozen=True, slots=True)
class ExtPubKey:
    """A BIP32 extended public key (``raw``: python-bitcointx's 74 bytes; the library's object
    is built once, as building one hashes its key)."""

    raw: bytes
    _obj: list[CExtPubKey] = field(default_factory=list, compare=False, repr=False)

    @property
    def _key(self) -> CExtPubKey:
        if not self._obj:
            share_with_bitcointx()
            self._obj.append(CExtPubKey(self.raw))
        return self._obj[0]

    @property
    def pubkey(self) -> bytes:
        return bytes(self.raw[41:74])

    @property
    def fingerprint(self) -> bytes:
        return bytes(self._key.fingerprint)

    @property
    def depth(self) -> int:
        return self.raw[0]

    def derive(self, index: int) -> ExtPubKey:
        if index & HARDENED:
            raise EncodingError("a public key derives no hardened child", reason="path")
        child = self._key.derive(index)
        return ExtPubKey(bytes(child), [child])

    def derive_path(self, path: tuple[int, ...]) -> ExtPubKey:
        key = self
        for index in path:
            key = key.derive(index)
        return key

    def encode(self, params: AddressParams) -> str:
        return base58check_encode(params.extpubkey_prefix + self.raw)


@dataclass(frozen=True, slots=True)
class ExtKey:
    """A BIP32 extended private key (as ``ExtPubKey``)."""

    raw: bytes
    _obj: list[CExtKey] = field(default_factory=list, compare=False, repr=False)

    @property
    def _key(self) -> CExtKey:
        if not self._obj:
            share_with_bitcointx()
            self._obj.append(CExtKey(self.raw))
        return self._obj[0]

    @property
    def secret(self) -> int:
        return int.from_bytes(self.raw[42:74], "big")

    @property
    def pubkey(self) -> bytes:
        return bytes(self._key.pub)

    @property
    def fingerprint(self) -> bytes:
        return bytes(self._key.fingerprint)

    def neuter(self) -> ExtPubKey:
        public = self._key.neuter()
        return ExtPubKey(bytes(public), [public])

    def derive(self, index: int) -> ExtKey:
        child = self._key.derive(index)
        return ExtKey(bytes(child), [child])

    def child_secret(self, index: int) -> int:
        """The private key of child ``index`` alone: ``derive(index).secret`` without the
        child's extended key (whose public key and fingerprint python-bitcointx computes on
        every derivation; a keypool derives thousands of children of one parent).

        BIP32 CKDpriv: I = HMAC-SHA512(c_par, 0x00 ‖ ser256(k_par) ‖ ser32(i)) for a hardened
        i, HMAC-SHA512(c_par, serP(K_par) ‖ ser32(i)) otherwise; k_i = parse256(I_L) + k_par
        (mod n). The rare invalid child (I_L ≥ n or k_i = 0) is left to the library."""
        chain_code = self.raw[9:41]
        data = (self.raw[41:74] if index & HARDENED else self.pubkey) + index.to_bytes(4, "big")
        tweak = int.from_bytes(hmac.digest(chain_code, data, hashlib.sha512)[:32], "big")
        secret = (tweak + self.secret) % N
        if tweak >= N or secret == 0:
            return self.derive(index).secret
        return secret

    def derive_path(self, path: tuple[int, ...]) -> ExtKey:
        key = self
        for index in path:
            key = key.derive(index)
        return key

    def encode(self, params: AddressParams) -> str:
        return base58check_encode(params.extprvkey_prefix + self.raw)


def master_key(seed: bytes) -> ExtKey:
    """BIP32's master key of a seed (HMAC-SHA512 keyed "Bitcoin seed")."""
    if not 16 <= len(seed) <= 64:
        raise EncodingError("a BIP32 seed takes 16 to 64 bytes", reason="length")
    share_with_bitcointx()
    key = CExtKey.from_seed(seed)
    return ExtKey(bytes(key), [key])


def decode_extkey(text: str, params: AddressParams) -> ExtKey | ExtPubKey:
    """An extended key (``tprv…`` / ``tpub…`` on elementsregtest) of the chain."""
    data = base58check_decode(text, 78)
    if len(data) != 78:
        raise EncodingError("an extended key takes 78 bytes", reason="length")
    version, raw = data[:4], data[4:]
    try:
        share_with_bitcointx()
        if version == params.extprvkey_prefix:
            if raw[41] != 0:
                raise EncodingError("invalid extended private key", reason="structure")
            CExtKey(raw)  # checks the secret is in range
            return ExtKey(raw)
        if version == params.extpubkey_prefix:
            CExtPubKey(raw)
            return ExtPubKey(raw)
    except ValueError as exc:
        raise EncodingError(f"invalid extended key: {exc}", reason="structure") from None
    raise EncodingError("not an extended key of this chain (version bytes)", reason="prefix")

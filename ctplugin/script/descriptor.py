"""Output script descriptors (BIP380-386), the subset elementsd's wallets and RPCs use.

Grammar (Bitcoin Core's ``src/script/descriptor.cpp``, Elements' copy):

- scripts: ``combo(KEY)`` (P2PK, P2PKH, and for a compressed key P2WPKH and P2SH-P2WPKH),
  ``pk(KEY)``, ``pkh(KEY)``, ``wpkh(KEY)``, ``sh(wpkh(KEY))``, ``tr(KEY)`` (key path only),
  ``multi(k,KEY,…)`` / ``sortedmulti(k,KEY,…)`` at the top level, in ``sh()``, ``wsh()`` or
  ``sh(wsh())``, ``addr(ADDRESS)``, ``raw(HEX)``;
- KEY: an optional origin ``[fingerprint/path]``, then a hex public key (33 bytes; x-only 32
  inside ``tr``), a WIF private key, or an extended key (``tpub…`` / ``tprv…`` on
  elementsregtest) followed by ``/path`` and optionally ``/*`` or ``/*'`` (a ranged
  descriptor);
- a ``#checksum`` suffix: BIP380's 8 characters (``descriptor_checksum``).

``parse_descriptor(text, params)`` gives a ``Descriptor``: ``expand(i)`` its scripts at
position i (with the secret keys it holds), ``to_string(private)`` its normal form (what
getdescriptorinfo and listdescriptors print: public keys unless ``private``, ``h`` for
hardened steps, the checksum appended). Errors are ``DescriptorError`` with Core's wording
where the RPCs show it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctplugin.bip32 import HARDENED, ExtKey, ExtPubKey, decode_extkey, parse_path
from ctplugin.elements.address import (
    Destination,
    decode_destination,
    decode_secret,
    encode_secret,
    p2pkh_script,
    p2sh_script,
)
from ctplugin.elements.chainparams import AddressParams
from ctplugin.errors import EncodingError
from ctplugin.hashes import hash160, sha256
from ctplugin.script.taproot import TaprootOutput
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.point import Point

_INPUT_CHARSET = ("0123456789()[],'/*abcdefgh@:$%{}IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~"
                  "ijklmnopqrstuvwxyzABCDEFGH`#\"\\ ")
_CHECKSUM_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_GENERATOR = (0xF5DEE51989, 0xA9FDCA3312, 0x1BAB10E32D, 0x3706B1677A, 0x644D626FFD)
MAX_PUBKEYS_PER_MULTISIG = 20  # Core's script/script.h (sh() allows 15 by its size limit)


class DescriptorError(EncodingError):
    """A descriptor that does not parse or cannot be used as asked."""

    def __init__(self, message: str) -> None:
        super().__init__(message, reason="descriptor")


def _generator_xor(top: int) -> int:
    mask = 0
    for i in range(5):
        if (top >> i) & 1:
            mask ^= _GENERATOR[i]
    return mask


_GENERATOR_TABLE = tuple(_generator_xor(top) for top in range(32))
"""The XOR of the generators each 5-bit top selects: one lookup per symbol instead of five
tests (a 1 MB ``raw()`` descriptor is two million symbols)."""
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


def split_checksum(text: str, *, require: bool) -> tuple[str, str | None]:
    """(descriptor, checksum) of ``text``; Core's errors for a bad or (when ``require``) a
    missing checksum."""
    body, sep, checksum = text.partition("#")
    if not sep:
        if require:
            raise DescriptorError("Missing checksum")
        return text, None
    if len(checksum) != 8:
        raise DescriptorError(f"Expected 8 character checksum, not {len(checksum)} "
                              "characters")
    try:
        expected = descriptor_checksum(body)
    except EncodingError as exc:
        raise DescriptorError(str(exc)) from None
    if checksum != expected:
        raise DescriptorError(f"Provided checksum '{checksum}' does not match computed "
                              f"checksum '{expected}'")
    return body, checksum


# --- keys ---------------------------------------------------------------------------------------


def _format_path(path: tuple[int, ...]) -> str:
    return "".join(f"/{i & ~HARDENED}h" if i & HARDENED else f"/{i}" for i in path)


@dataclass(frozen=True, slots=True)
class KeyAt:
    """A key expression at one position: the public key (33 bytes), its secret if the
    descriptor holds it, and its origin (master fingerprint, full path) if known."""

    pubkey: bytes
    secret: int | None
    origin: tuple[bytes, tuple[int, ...]] | None


@dataclass(frozen=True, slots=True)
class KeyExpr:
    """One KEY of a descriptor (module docstring)."""

    origin: tuple[bytes, tuple[int, ...]] | None
    pubkey: bytes | None = None  # a plain public key
    secret: int | None = None  # a WIF key (its pubkey is ``pubkey``)
    extkey: ExtKey | ExtPubKey | None = None
    path: tuple[int, ...] = ()
    ranged: bool = False
    hardened_range: bool = False
    xonly: bool = False

    def at(self, position: int) -> KeyAt:
        if self.extkey is None:
            assert self.pubkey is not None
            return KeyAt(self.pubkey, self.secret, self.origin)
        path = self.path + ((position | (HARDENED if self.hardened_range else 0),)
                            if self.ranged else ())
        if isinstance(self.extkey, ExtKey):
            child = self.extkey.derive_path(path)
            pubkey, secret = child.pubkey, child.secret
        else:
            pubkey, secret = self.extkey.derive_path(path).pubkey, None
        origin: tuple[bytes, tuple[int, ...]] | None = None
        if self.origin is not None:
            origin = (self.origin[0], self.origin[1] + path)
        elif self.extkey.raw[0] == 0:  # the master itself (depth 0): it is its own origin
            origin = (self.extkey.fingerprint, path)
        return KeyAt(pubkey, secret, origin)

    def to_string(self, params: AddressParams, private: bool) -> str:
        text = ""
        if self.origin is not None:
            text = f"[{self.origin[0].hex()}{_format_path(self.origin[1])}]"
        if self.extkey is not None:
            key = self.extkey
            if isinstance(key, ExtKey) and not private:
                key = key.neuter()
            text += key.encode(params) + _format_path(self.path)
            if self.ranged:
                text += "/*h" if self.hardened_range else "/*"
            return text
        assert self.pubkey is not None
        if private and self.secret is not None:
            return text + encode_secret(self.secret.to_bytes(32, "big"), params)
        return text + (self.pubkey[1:] if self.xonly else self.pubkey).hex()

    @property
    def has_private(self) -> bool:
        return self.secret is not None or isinstance(self.extkey, ExtKey)


def _parse_key(text: str, params: AddressParams, *, xonly: bool = False) -> KeyExpr:
    origin = None
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise DescriptorError(f"key '{text}' is not valid")
        if "]" in text[close + 1:]:
            raise DescriptorError("Multiple ']' characters found for a single pubkey")
        inside = text[1:close].split("/", 1)
        if len(inside[0]) != 8:
            raise DescriptorError(f"Fingerprint is not 4 bytes ({len(inside[0])} characters "
                                  "instead of 8 characters)")
        try:
            fingerprint = bytes.fromhex(inside[0])
        except ValueError:
            raise DescriptorError(f"Fingerprint '{inside[0]}' is not hex") from None
        origin = (fingerprint, _path(inside[1]) if len(inside) > 1 else ())
        text = text[close + 1:]
    parts = text.split("/")
    head = parts[0]
    if len(parts) == 1:
        try:
            raw = bytes.fromhex(head)
        except ValueError:
            raw = b""
        if raw:
            if xonly and len(raw) == 32:
                raw = b"\x02" + raw
            if len(raw) != 33 or raw[0] not in (2, 3):
                if len(raw) == 65 and raw[0] == 4:
                    raise DescriptorError("Uncompressed keys are not supported here")
                raise DescriptorError(f"Pubkey '{head}' is invalid")
            try:
                Point.from_bytes(raw)
            except EncodingError:
                raise DescriptorError(f"Pubkey '{head}' is invalid") from None
            return KeyExpr(origin, pubkey=raw, xonly=xonly)
        try:
            secret, compressed = decode_secret(head, params)
        except EncodingError:
            secret = None
        if secret is not None:
            if not compressed:
                raise DescriptorError("Uncompressed keys are not supported here")
            value = int.from_bytes(secret, "big")
            return KeyExpr(origin, pubkey=ct.base_mul(value).to_bytes(), secret=value,
                           xonly=xonly)
    try:
        extkey = decode_extkey(head, params)
    except EncodingError:
        raise DescriptorError(f"key '{head}' is not valid") from None
    ranged = hardened = False
    steps = parts[1:]
    if steps and steps[-1] in ("*", "*'", "*h"):
        ranged, hardened = True, steps[-1] != "*"
        steps = steps[:-1]
    path = _path("/".join(steps)) if steps else ()
    if (hardened or any(i & HARDENED for i in path)) and isinstance(extkey, ExtPubKey):
        raise DescriptorError("Hardened derivation is not possible from a public key")
    return KeyExpr(origin, extkey=extkey, path=path, ranged=ranged, hardened_range=hardened,
                   xonly=xonly)


def _path(text: str) -> tuple[int, ...]:
    try:
        return parse_path(text)
    except EncodingError as exc:
        raise DescriptorError(str(exc)) from None


# --- descriptors --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Expanded:
    """One script a descriptor produces at a position, with what spends it: ``kind`` is the
    wallet's script type ("p2pk", "p2pkh", "p2wpkh", "p2sh-p2wpkh", "p2tr", "multi", "sh",
    "wsh", "raw", "addr"), ``keys`` the keys at that position, ``redeem_script`` /
    ``witness_script`` for P2SH / P2WSH."""

    script_pubkey: bytes
    kind: str
    keys: tuple[KeyAt, ...] = ()
    redeem_script: bytes | None = None
    witness_script: bytes | None = None
    blinding_pubkey: bytes | None = None


@dataclass(frozen=True, slots=True)
class Descriptor:
    """A parsed descriptor (module docstring). ``func`` is the outer function, ``inner`` the
    wrapped one of ``sh``/``wsh``, ``threshold`` a multisig's k."""

    func: str
    keys: tuple[KeyExpr, ...] = ()
    inner: Descriptor | None = None
    threshold: int = 0
    data: bytes = b""  # raw(): the script
    address: str = ""  # addr(): the address as given
    destination: Destination | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def is_range(self) -> bool:
        return any(k.ranged for k in self.all_keys())

    def all_keys(self) -> list[KeyExpr]:
        return [*self.keys, *(self.inner.all_keys() if self.inner is not None else [])]

    @property
    def has_private_keys(self) -> bool:
        keys = self.all_keys()
        return bool(keys) and all(k.has_private for k in keys)

    @property
    def is_solvable(self) -> bool:
        return self.func not in ("addr", "raw")

    def to_string(self, params: AddressParams, private: bool = False) -> str:
        """The normal form with its checksum (``private``: secrets as given)."""
        return with_checksum(self._body(params, private))

    def _body(self, params: AddressParams, private: bool) -> str:
        if self.func == "raw":
            return f"raw({self.data.hex()})"
        if self.func == "addr":
            return f"addr({self.address})"
        if self.func in ("multi", "sortedmulti"):
            keys = ",".join(k.to_string(params, private) for k in self.keys)
            return f"{self.func}({self.threshold},{keys})"
        if self.inner is not None:
            return f"{self.func}({self.inner._body(params, private)})"
        return f"{self.func}({self.keys[0].to_string(params, private)})"

    def expand(self, position: int = 0) -> list[Expanded]:
        """The scripts at ``position`` (0 for a descriptor without a range)."""
        if self.func == "raw":
            return [Expanded(self.data, "raw")]
        if self.func == "addr":
            assert self.destination is not None
            return [Expanded(self.destination.script_pubkey, "addr",
                             blinding_pubkey=self.destination.blinding_pubkey)]
        if self.func in ("multi", "sortedmulti"):
            script, keys = self._multisig(position)
            return [Expanded(script, "multi", keys)]
        if self.func in ("sh", "wsh"):
            assert self.inner is not None
            inner = self.inner.expand(position)[0]
            if self.func == "wsh":
                program = b"\x00\x20" + sha256(inner.script_pubkey)
                return [Expanded(program, "wsh", inner.keys, witness_script=inner.script_pubkey)]
            redeem = inner.script_pubkey
            return [Expanded(p2sh_script(hash160(redeem)), "sh" if inner.kind != "p2wpkh"
                             else "p2sh-p2wpkh", inner.keys, redeem_script=redeem,
                             witness_script=inner.witness_script)]
        key = self.keys[0].at(position)
        if self.func == "pk":
            return [Expanded(_push(key.pubkey) + b"\xac", "p2pk", (key,))]
        if self.func == "pkh":
            return [Expanded(p2pkh_script(hash160(key.pubkey)), "p2pkh", (key,))]
        if self.func == "wpkh":
            return [Expanded(b"\x00\x14" + hash160(key.pubkey), "p2wpkh", (key,))]
        if self.func == "tr":
            return [Expanded(TaprootOutput(key.pubkey[1:]).script_pubkey, "p2tr", (key,))]
        if self.func == "combo":
            wpkh = b"\x00\x14" + hash160(key.pubkey)
            return [Expanded(_push(key.pubkey) + b"\xac", "p2pk", (key,)),
                    Expanded(p2pkh_script(hash160(key.pubkey)), "p2pkh", (key,)),
                    Expanded(wpkh, "p2wpkh", (key,)),
                    Expanded(p2sh_script(hash160(wpkh)), "p2sh-p2wpkh", (key,),
                             redeem_script=wpkh)]
        raise DescriptorError(f"'{self.func}' is not a descriptor function here")

    def _multisig(self, position: int) -> tuple[bytes, tuple[KeyAt, ...]]:
        keys = [k.at(position) for k in self.keys]
        if self.func == "sortedmulti":
            keys.sort(key=lambda k: k.pubkey)
        script = bytes((0x50 + self.threshold,)) + b"".join(_push(k.pubkey) for k in keys)
        return script + bytes((0x50 + len(keys), 0xAE)), tuple(keys)


def _push(data: bytes) -> bytes:
    return bytes((len(data),)) + data


def _args(text: str) -> list[str]:
    """Top-level comma-separated arguments (brackets and parentheses nest)."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def parse_descriptor(text: str, params: AddressParams, *, require_checksum: bool = False
                     ) -> Descriptor:
    """A descriptor of the chain (``params``: its key and address encodings)."""
    body, _ = split_checksum(text, require=require_checksum)
    return _parse(body, params, "top")


def _parse(text: str, params: AddressParams, context: str) -> Descriptor:
    open_at = text.find("(")
    if open_at <= 0 or not text.endswith(")"):
        raise DescriptorError(f"'{text}' is not a valid descriptor function")
    func, inner = text[:open_at], text[open_at + 1:-1]
    if func in ("sh", "wsh"):
        if context == "wsh" or (func == "sh" and context != "top"):
            raise DescriptorError(f"Can only have {func}() at top level"
                                  + (" or inside sh()" if func == "wsh" else ""))
        sub = _parse(inner, params, func)
        if func == "wsh" and sub.func not in ("multi", "sortedmulti"):
            raise DescriptorError("wsh() supports multi() and sortedmulti() here")
        if func == "sh" and sub.func not in ("wpkh", "multi", "sortedmulti", "wsh"):
            raise DescriptorError("sh() supports wpkh(), multi(), sortedmulti() and wsh() here")
        return Descriptor(func, inner=sub)
    if func in ("multi", "sortedmulti"):
        args = _args(inner)
        if not args[0].isdigit():
            raise DescriptorError(f"Multi threshold '{args[0]}' is not valid")
        threshold = int(args[0])
        keys = tuple(_parse_key(a, params) for a in args[1:])
        if not keys or len(keys) > MAX_PUBKEYS_PER_MULTISIG:
            raise DescriptorError(f"Cannot have {len(keys)} keys in multisig; must have "
                                  f"between 1 and {MAX_PUBKEYS_PER_MULTISIG} keys, inclusive")
        if not 1 <= threshold <= len(keys):
            raise DescriptorError(f"Multisig threshold cannot be {threshold}, must be at "
                                  f"least 1 and at most {len(keys)}")
        if context == "sh" and len(keys) > 15:
            raise DescriptorError(f"P2SH script is too large, {len(keys)} keys")
        return Descriptor(func, keys=keys, threshold=threshold)
    if func == "raw":
        if context != "top":
            raise DescriptorError("Can only have raw() at top level")
        try:
            return Descriptor("raw", data=bytes.fromhex(inner))
        except ValueError:
            raise DescriptorError("Raw script is not hex") from None
    if func == "addr":
        if context != "top":
            raise DescriptorError("Can only have addr() at top level")
        try:
            dest = decode_destination(inner, params)
        except EncodingError:
            raise DescriptorError("Address is not valid") from None
        return Descriptor("addr", address=inner, destination=dest)
    if func in ("pk", "pkh", "wpkh", "combo", "tr"):
        if func == "combo" and context != "top":
            raise DescriptorError("Can only have combo() at top level")
        if func == "tr" and context != "top":
            raise DescriptorError("Can only have tr at top level")
        if "," in inner and func == "tr":
            raise DescriptorError("tr() with script paths is not supported here")
        return Descriptor(func, keys=(_parse_key(inner, params, xonly=func == "tr"),))
    raise DescriptorError(f"'{text}' is not a valid descriptor function")

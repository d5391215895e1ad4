"""Wallet keys: spending keys, blinding keys and the scripts they pay, all from one seed.

Spending keys come from one of three derivation schemes (``HDScheme``):

- ``TAGGED`` (our ctregtest chains, since they began): key i is
  ``k_i = int(tagged_hash("ctplugin/wallet/spend", seed ‖ be32(i))) mod n`` (retried with the
  next counter in the negligible case k_i = 0). Deterministic, so a test chain built from a seed
  reproduces byte for byte.
- ``LEGACY`` (elementsd's legacy wallets, ``descriptors=false``): Bitcoin Core's HD chain
  (``src/wallet/scriptpubkeyman.cpp`` DeriveNewChildKey): the seed is a secret key, the BIP32
  master comes from its 32 bytes, key i is ``m/0'/0'/i'`` (change: ``m/0'/1'/i'``) and serves
  every script type.
- ``DESCRIPTORS`` (elementsd's descriptor wallets, the default): one BIP32 account per script
  type on the test coin type 1 (``src/wallet/wallet.cpp`` SetupDescriptorScriptPubKeyMans):
  BIP44 ``m/44'/1'/0'/0/i`` for P2PKH, BIP49 ``m/49'/1'/0'/0/i`` for P2SH-P2WPKH, BIP84
  ``m/84'/1'/0'/0/i`` for P2WPKH, BIP86 ``m/86'/1'/0'/0/i`` for P2TR (change: ``…/1/i``).

HD key chains have two chains of keys, external (receiving) and internal (change, ``internal=``
arguments); a ``TAGGED`` chain has one, change keys among the others.

BIP32 is python-bitcointx's (``ctplugin.bip32``). Keys imported one by one (``import_secret``:
``importprivkey``, ``combo(WIF)`` descriptors) own the same script types without a path.

Blinding keys (docs/elements-regtest.md §5.6): the blinding private key of a scriptPubKey is
HMAC-SHA256(master blinding key, scriptPubKey), as Elements' ``CWallet::GetBlindingKey``. The
master blinding key of a ``TAGGED`` key chain is SLIP-0077's of the seed (bytes 32..64 of
HMAC-SHA512(HMAC-SHA512("Symmetric key seed", seed)[0:32], 0x00 ‖ "SLIP-0077"), reproducible
chains); elementsd draws a random one for a new wallet, which the caller passes in
(``master_blinding_key``), and ``importmasterblindingkey`` replaces it
(``set_master_blinding_key``).

Scripts per key: P2WPKH ``OP_0 <HASH160(pubkey)>``, P2TR ``OP_1 <Q>`` (key path only,
BIP86-style: Q = P + TaggedHash("TapTweak/elements", P)·G with P = x(k·G)), P2PKH and
P2SH-P2WPKH (the P2WPKH script as redeem script).

Multisig scripts (``add_multisig``: addmultisigaddress, ``multi()`` descriptors) whose every
key the chain holds are spendable too, as in a legacy Core wallet: P2WSH, P2SH-P2WSH and P2SH
m-of-n (``MultisigScript``).

Secrets only meet constant-time code (coincurve); public keys become bytes.
"""

from __future__ import annotations

import enum
import hmac
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from ctplugin.bip32 import ExtKey, master_key
from ctplugin.elements.address import p2pkh_script, p2sh_script
from ctplugin.elements.script import script_ops
from ctplugin.errors import EncodingError
from ctplugin.hashes import hash160
from ctplugin.script.taproot import TaprootOutput
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.scalar import scalar_from_hash

AddressKind = Literal["p2tr", "p2wpkh", "p2pkh", "p2sh-p2wpkh"]
"""The script a receiving key pays to (``KeyChain.key``'s ``kind``)."""
P2TR: AddressKind = "p2tr"
P2WPKH: AddressKind = "p2wpkh"
P2PKH: AddressKind = "p2pkh"
P2SH_P2WPKH: AddressKind = "p2sh-p2wpkh"
ADDRESS_KINDS: tuple[AddressKind, ...] = (P2TR, P2WPKH, P2PKH, P2SH_P2WPKH)
IMPORT_KINDS: tuple[AddressKind, ...] = (P2PKH, P2WPKH, P2SH_P2WPKH)
"""What elementsd's importprivkey and ``combo()`` own of a compressed key (no taproot)."""

BIP_PURPOSE: dict[AddressKind, int] = {P2PKH: 44, P2SH_P2WPKH: 49, P2WPKH: 84, P2TR: 86}
"""The BIP44/49/84/86 purpose of each script type's descriptor (``DESCRIPTORS`` scheme)."""
TEST_COIN_TYPE = 1  # SLIP-44's coin type of every test chain (Core's regtest and testnet)
HARDENED = 0x8000_0000


class HDScheme(enum.Enum):
    """How a key chain derives its spending keys (module docstring)."""

    TAGGED = "tagged"
    LEGACY = "legacy"
    DESCRIPTORS = "descriptors"


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


@lru_cache(maxsize=8192)
def _key_hash(pubkey: bytes) -> bytes:
    """HASH160 of a public key, remembered: a key's P2WPKH and P2PKH scripts both need it,
    and RIPEMD-160 is pure Python where OpenSSL lacks it (``ctplugin.hashes``)."""
    return hash160(pubkey)


def key_script(pubkey: bytes, kind: AddressKind) -> bytes:
    """The scriptPubKey of ``kind`` paying a compressed public key."""
    if kind == P2TR:
        return p2tr_script(pubkey)
    if len(pubkey) != 33:
        raise EncodingError("a key script needs a 33-byte compressed public key",
                            reason="length")
    if kind == P2WPKH:
        return b"\x00\x14" + _key_hash(pubkey)
    if kind == P2PKH:
        return p2pkh_script(_key_hash(pubkey))
    if kind == P2SH_P2WPKH:
        return p2sh_script(hash160(b"\x00\x14" + _key_hash(pubkey)))
    raise EncodingError(f"unknown address kind {kind!r}", reason="kind")


def slip77_master_blinding_key(seed: bytes) -> bytes:
    """SLIP-0077 master blinding key (32 bytes) of a wallet seed."""
    root = hmac.digest(b"Symmetric key seed", seed, "sha512")
    derived = hmac.digest(root[:32], b"\x00SLIP-0077", "sha512")  # SLIP-21's node "SLIP-0077"
    return derived[32:]


def slip77_blinding_secret(master: bytes, script_pubkey: bytes) -> int:
    """The blinding private key of a scriptPubKey: HMAC-SHA256(master, script) (SLIP-0077's
    per-script step, Elements' GetBlindingKey)."""
    value = int.from_bytes(hmac.digest(master, script_pubkey, "sha256"), "big")
    if not 0 < value < N:  # probability ~2^-128; SLIP-77 has no retry rule, so refuse
        raise EncodingError("blinding key out of range for this script", reason="scalar-range")
    return value


def issuance_blinding_script(prevout_hash: bytes, prevout_index: int) -> bytes:
    """The script whose blinding key blinds an issuance on the input spending this prevout:
    ``OP_RETURN <prevout hash> <prevout index>`` (Elements' spend.cpp and backup.cpp
    dumpissuanceblindingkey; the index pushed as a CScriptNum: OP_0, OP_1..OP_16, else
    minimal little-endian bytes)."""
    if len(prevout_hash) != 32:
        raise EncodingError("a prevout hash takes 32 bytes", reason="length")
    if prevout_index == 0:
        number = b"\x00"
    elif 1 <= prevout_index <= 16:
        number = bytes((0x50 + prevout_index,))
    else:
        data = prevout_index.to_bytes((prevout_index.bit_length() + 7) // 8, "little")
        if data[-1] & 0x80:  # keep it positive
            data += b"\x00"
        number = bytes((len(data),)) + data
    return b"\x6a\x20" + prevout_hash + number


def multisig_parts(script: bytes) -> tuple[int, list[bytes]] | None:
    """(m, keys) of a bare ``OP_m <key>… OP_n OP_CHECKMULTISIG`` script of compressed keys,
    else None."""
    ops = script_ops(script)
    if (ops is None or len(ops) < 4 or ops[-1][0] != 0xAE
            or not 0x51 <= ops[0][0] <= 0x60 or not 0x51 <= ops[-2][0] <= 0x60):
        return None
    m, n = ops[0][0] - 0x50, ops[-2][0] - 0x50
    keys = [data for _, data in ops[1:-2]]
    if len(keys) != n or m > n or any(k is None or len(k) != 33 for k in keys):
        return None
    return m, [k for k in keys if k is not None]


@dataclass(frozen=True, slots=True)
class MultisigScript:
    """An m-of-n output the key chain can spend alone: ``multisig`` is the m-of-n script,
    ``witness`` whether it is a witness script (P2WSH, or P2SH-P2WSH when ``redeem_script``
    is the P2WSH program), ``redeem_script`` what a P2SH scriptSig pushes last (None for
    bare P2WSH); ``secrets``: the keys' secrets in the script's order."""

    script_pubkey: bytes
    multisig: bytes
    witness: bool
    redeem_script: bytes | None
    required: int
    secrets: tuple[int, ...]

    def __repr__(self) -> str:  # never print secrets
        return f"MultisigScript(script={self.script_pubkey.hex()})"


def hd_path(kind: AddressKind, index: int, scheme: HDScheme,
            internal: bool = False) -> tuple[int, ...]:
    """The BIP32 path of key ``index`` of ``kind`` on the external or internal (change) chain
    (module docstring)."""
    if scheme is HDScheme.LEGACY:
        return (HARDENED, HARDENED | int(internal), HARDENED | index)
    if scheme is HDScheme.DESCRIPTORS:
        return (HARDENED | BIP_PURPOSE[kind], HARDENED | TEST_COIN_TYPE, HARDENED,
                int(internal), index)
    raise EncodingError(f"scheme {scheme.value} has no BIP32 paths", reason="scheme")


def format_path(path: tuple[int, ...], apostrophe: bool) -> str:
    """``m/84h/1h/0h/0/3`` (Core's WriteHDKeypath; legacy wallets write ``'``)."""
    mark = "'" if apostrophe else "h"
    return "m" + "".join(f"/{i & ~HARDENED}{mark}" if i & HARDENED else f"/{i}" for i in path)


@dataclass(frozen=True, slots=True)
class KeyPair:
    """One receiving script: spending key, the script (``kind``), and the script's blinding
    key. ``index``: the key's position in the chain, None for an imported key; ``path``: its
    BIP32 path from the master key (HD schemes only)."""

    index: int | None
    secret: int
    pubkey: bytes
    script_pubkey: bytes
    blinding_secret: int
    blinding_pubkey: bytes
    kind: AddressKind = P2WPKH
    path: tuple[int, ...] | None = None
    internal: bool = False  # an HD chain's change key

    def __repr__(self) -> str:  # never print secrets
        return f"KeyPair(index={self.index}, script={self.script_pubkey.hex()})"


class KeyChain:
    """Deterministic keys of one wallet seed, plus imported ones (module docstring)."""

    __slots__ = ("_accounts", "_by_script", "_derived", "_master", "_multisig", "_pairs",
                 "_pubkeys", "imported", "master_blinding_key", "scheme", "seed")

    def __init__(self, seed: bytes, *, scheme: HDScheme = HDScheme.TAGGED,
                 master_blinding_key: bytes | None = None) -> None:
        if not seed:  # tests use short readable seeds; real wallets want >= 16 bytes of entropy
            raise EncodingError("wallet seed must not be empty", reason="length")
        self.seed = bytes(seed)
        self.scheme = scheme
        self.master_blinding_key = (master_blinding_key if master_blinding_key is not None
                                    else slip77_master_blinding_key(self.seed))
        if len(self.master_blinding_key) != 32:
            raise EncodingError("master blinding key must be 32 bytes", reason="length")
        self._master: ExtKey | None = (master_key(self.seed) if scheme is not HDScheme.TAGGED
                                       else None)
        self._accounts: dict[tuple[AddressKind, bool], ExtKey] = {}
        self._derived = [0, 0]  # external, internal
        self._pairs: dict[tuple[AddressKind, bool], list[KeyPair]] = _empty_pairs()
        self._by_script: dict[bytes, KeyPair] = {}
        self.imported: dict[bytes, int] = {}
        """Imported keys: compressed public key -> secret (``importprivkey``)."""
        self._pubkeys: dict[bytes, int] = {}  # every key held: public key -> secret
        self._multisig: dict[bytes, MultisigScript] = {}

    # --- HD identity ----------------------------------------------------------------------------

    @property
    def master_fingerprint(self) -> bytes | None:
        """The BIP32 master key's fingerprint (HD schemes), Core's ``hdmasterfingerprint``."""
        return self._master.fingerprint if self._master is not None else None

    @property
    def seed_id(self) -> bytes | None:
        """Core's ``hdseedid`` of a legacy HD chain: HASH160 of the seed key's public key."""
        if self._master is None:
            return None
        return hash160(ct.base_mul(int.from_bytes(self.seed, "big")).to_bytes())

    @property
    def master(self) -> ExtKey | None:
        """The BIP32 master key (HD schemes), for listdescriptors / dumpwallet."""
        return self._master

    # --- derivation -----------------------------------------------------------------------------

    @property
    def has_internal_chain(self) -> bool:
        """HD key chains keep change keys on their own chain (module docstring)."""
        return self._master is not None

    def _secret(self, index: int, kind: AddressKind, internal: bool
                ) -> tuple[int, tuple[int, ...] | None]:
        if self._master is None:
            return scalar_from_hash("ctplugin/wallet/spend",
                                    self.seed + index.to_bytes(4, "big")), None
        path = hd_path(kind, index, self.scheme, internal)
        # the parent of the keys (an account's chain, or m/0'/0' and m/0'/1'), derived once
        parent_of = (kind if self.scheme is HDScheme.DESCRIPTORS else P2WPKH, internal)
        parent = self._accounts.get(parent_of)
        if parent is None:
            parent = self._master.derive_path(path[:-1])
            self._accounts[parent_of] = parent
        return parent.child_secret(path[-1]), path

    def _pair(self, index: int | None, secret: int, kind: AddressKind,
              path: tuple[int, ...] | None, internal: bool = False) -> KeyPair:
        pubkey = ct.base_mul(secret).to_bytes()
        self._pubkeys[pubkey] = secret
        script = key_script(pubkey, kind)
        blinding = slip77_blinding_secret(self.master_blinding_key, script)
        return KeyPair(index, secret, pubkey, script, blinding, ct.base_mul(blinding).to_bytes(),
                       kind, path, internal)

    def extend(self, count: int, *, internal: bool = False) -> None:
        """Derive the keys 0..count-1 of every script type on the external or internal chain
        (the keypool: scanning recognises payments to them). A ``TAGGED`` chain has no
        internal chain."""
        if internal and not self.has_internal_chain:
            return
        chain = int(internal)
        while self._derived[chain] < count:
            i = self._derived[chain]
            shared = (None if self.scheme is HDScheme.DESCRIPTORS
                      else self._secret(i, P2WPKH, internal))
            for kind in ADDRESS_KINDS:
                secret, path = shared if shared is not None else self._secret(i, kind, internal)
                pair = self._pair(i, secret, kind, path, internal)
                self._pairs[kind, internal].append(pair)
                self._by_script[pair.script_pubkey] = pair
            self._derived[chain] += 1

    def key(self, index: int, kind: AddressKind = P2WPKH, *, internal: bool = False) -> KeyPair:
        """Key ``index``'s script of ``kind`` on the external or (HD chains) internal chain
        (every type is derived together)."""
        if kind not in ADDRESS_KINDS:
            raise EncodingError(f"unknown address kind {kind!r}", reason="kind")
        if internal and not self.has_internal_chain:
            raise EncodingError("a TAGGED key chain has no internal chain", reason="scheme")
        self.extend(index + 1, internal=internal)
        return self._pairs[kind, internal][index]

    def derived(self, internal: bool = False) -> int:
        """Keys derived on the external or internal chain."""
        return self._derived[int(internal)]

    def __len__(self) -> int:
        return self._derived[0]

    def owner_of(self, script_pubkey: bytes) -> KeyPair | None:
        return self._by_script.get(script_pubkey)

    def secret_of(self, pubkey: bytes) -> int | None:
        """The secret of a public key the chain holds (derived or imported)."""
        return self._pubkeys.get(pubkey)

    def add_multisig(self, script_pubkey: bytes, multisig: bytes, *, witness: bool,
                     redeem_script: bytes | None) -> MultisigScript | None:
        """Own an m-of-n output when the chain holds every key of ``multisig`` (module
        docstring); None (not owned) otherwise."""
        parts = multisig_parts(multisig)
        if parts is None:
            return None
        required, pubkeys = parts
        found = [self._pubkeys.get(k) for k in pubkeys]
        if any(secret is None for secret in found):
            return None
        entry = MultisigScript(script_pubkey, multisig, witness, redeem_script, required,
                               tuple(s for s in found if s is not None))
        self._multisig[script_pubkey] = entry
        return entry

    def multisig_of(self, script_pubkey: bytes) -> MultisigScript | None:
        return self._multisig.get(script_pubkey)

    def pairs(self) -> list[KeyPair]:
        """Every script the chain owns (derived and imported)."""
        return list(self._by_script.values())

    # --- imports and blinding -------------------------------------------------------------------

    def import_secret(self, secret: int,
                      kinds: tuple[AddressKind, ...] = IMPORT_KINDS) -> list[KeyPair]:
        """Own the ``kinds`` scripts of one more key (default: what elementsd's importprivkey
        and ``combo()`` own). Returns the new pairs (none when already owned)."""
        if not 0 < secret < N:
            raise EncodingError("private key out of range", reason="scalar-range")
        pubkey = ct.base_mul(secret).to_bytes()
        self.imported[pubkey] = secret
        added = []
        for kind in kinds:
            script = key_script(pubkey, kind)
            if script not in self._by_script:
                pair = self._pair(None, secret, kind, None)
                self._by_script[script] = pair
                added.append(pair)
        return added

    def replace_seed(self, seed: bytes, used: int, used_internal: int = 0) -> None:
        """sethdseed: the keys handed out so far (``used`` receiving, ``used_internal``
        change) stay owned as imported keys, then derivation starts again from key 0 of the
        new seed."""
        if self._master is None:
            raise EncodingError("only an HD key chain takes a new seed", reason="scheme")
        old = [pair for pair in self._by_script.values() if pair.index is not None
               and pair.index < (used_internal if pair.internal else used)]
        self._by_script = {s: p for s, p in self._by_script.items() if p.index is None}
        self._pairs = _empty_pairs()
        self._accounts = {}
        self._derived = [0, 0]
        self.seed = bytes(seed)
        self._master = master_key(self.seed)
        for pair in old:
            self.import_secret(pair.secret, (pair.kind,))

    def issuance_blinding_secret(self, prevout_hash: bytes, prevout_index: int) -> int:
        """The master blinding key's key for an issuance on that prevout (Elements'
        GetBlindingKey of ``issuance_blinding_script``)."""
        return slip77_blinding_secret(self.master_blinding_key,
                                      issuance_blinding_script(prevout_hash, prevout_index))

    def set_master_blinding_key(self, key: bytes) -> None:
        """Replace the master blinding key: every script's blinding key follows from it
        (``importmasterblindingkey``)."""
        if len(key) != 32:
            raise EncodingError("master blinding key must be 32 bytes", reason="length")
        self.master_blinding_key = bytes(key)
        for script, pair in list(self._by_script.items()):
            blinding = slip77_blinding_secret(key, script)
            updated = replace(pair, blinding_secret=blinding,
                              blinding_pubkey=ct.base_mul(blinding).to_bytes())
            self._by_script[script] = updated
            if pair.index is not None:
                self._pairs[pair.kind, pair.internal][pair.index] = updated


def _empty_pairs() -> dict[tuple[AddressKind, bool], list[KeyPair]]:
    return {(kind, internal): [] for kind in ADDRESS_KINDS for internal in (False, True)}

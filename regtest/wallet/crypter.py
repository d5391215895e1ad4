"""Wallet encryption as Bitcoin Core's ``CCrypter`` / ``CMasterKey`` do it (src/wallet/crypter.cpp).

- A random 32-byte *master key* encrypts the wallet's secret (here: its seed, from which every
  spending key is derived), with AES-256-CBC.
- The passphrase encrypts the master key: key and IV are the first 48 bytes of SHA-512 applied
  ``iterations`` times to passphrase ‖ salt (Core's derivation method 0,
  ``BytesToKeySHA512AES``), then AES-256-CBC with PKCS#7 padding.

``walletpassphrase`` decrypts the master key (a wrong passphrase fails the padding or the
check), ``walletlock`` forgets it, ``walletpassphrasechange`` re-encrypts the same master key
under a new passphrase. Pure functions over bytes; the record layout is ``EncryptedSeed``.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ctplugin.errors import CtpluginError
from ctplugin.hashes import sha256d

DEFAULT_DERIVE_ITERATIONS = 25_000
"""Core's ``CMasterKey`` minimum round count (it calibrates upwards to ~0.1 s)."""
SALT_SIZE = 8
KEY_SIZE = 32


class CrypterError(CtpluginError):
    """A passphrase that does not open the wallet, or a damaged encryption record."""


def _bytes_to_key(passphrase: bytes, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
    """``BytesToKeySHA512AES``: (AES key, IV)."""
    digest = hashlib.sha512(passphrase + salt).digest()
    for _ in range(iterations - 1):
        digest = hashlib.sha512(digest).digest()
    return digest[:32], digest[32:48]


def _encrypt(key: bytes, iv: bytes, plaintext: bytes) -> bytes:
    padder = padding.PKCS7(128).padder()
    data = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def _decrypt(key: bytes, iv: bytes, ciphertext: bytes) -> bytes:
    if not ciphertext or len(ciphertext) % 16:
        raise CrypterError("ciphertext is not a whole number of AES blocks")
    decryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    data = decryptor.update(ciphertext) + decryptor.finalize()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        return unpadder.update(data) + unpadder.finalize()
    except ValueError:
        raise CrypterError("wrong key (bad padding)") from None


@dataclass(frozen=True, slots=True)
class EncryptedSeed:
    """The encrypted master key (``CMasterKey``) and the seed under it, with a check value so a
    wrong passphrase whose padding happens to fit is still refused."""

    salt: bytes
    iterations: int
    crypted_master_key: bytes
    crypted_seed: bytes
    check: bytes  # sha256d(seed)[:8]

    @classmethod
    def create(cls, seed: bytes, passphrase: str,
               iterations: int = DEFAULT_DERIVE_ITERATIONS) -> tuple[EncryptedSeed, bytes]:
        """A new encryption of ``seed``; returns it and the (unlocked) master key."""
        master = secrets.token_bytes(KEY_SIZE)
        salt = secrets.token_bytes(SALT_SIZE)
        key, iv = _bytes_to_key(passphrase.encode(), salt, iterations)
        record = cls(salt, iterations, _encrypt(key, iv, master),
                     _encrypt(master, _seed_iv(), seed), sha256d(seed)[:8])
        return record, master

    def master_key(self, passphrase: str) -> bytes:
        """The master key the passphrase opens (``CrypterError`` for a wrong one)."""
        key, iv = _bytes_to_key(passphrase.encode(), self.salt, self.iterations)
        master = _decrypt(key, iv, self.crypted_master_key)
        if len(master) != KEY_SIZE or self.seed(master) is None:
            raise CrypterError("the passphrase does not open this wallet")
        return master

    def seed(self, master: bytes) -> bytes | None:
        """The seed under ``master``, or None if it does not decrypt to the checked value."""
        try:
            seed = _decrypt(master, _seed_iv(), self.crypted_seed)
        except CrypterError:
            return None
        return seed if sha256d(seed)[:8] == self.check else None

    def with_passphrase(self, master: bytes, passphrase: str) -> EncryptedSeed:
        """The same master key under a new passphrase and a new salt."""
        salt = secrets.token_bytes(SALT_SIZE)
        key, iv = _bytes_to_key(passphrase.encode(), salt, self.iterations)
        return EncryptedSeed(salt, self.iterations, _encrypt(key, iv, master),
                             self.crypted_seed, self.check)

    def to_bytes(self) -> bytes:
        return json.dumps({"salt": self.salt.hex(), "iterations": self.iterations,
                           "master": self.crypted_master_key.hex(),
                           "seed": self.crypted_seed.hex(), "check": self.check.hex()},
                          separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, raw: bytes) -> EncryptedSeed:
        try:
            data = json.loads(raw)
            return cls(bytes.fromhex(data["salt"]), int(data["iterations"]),
                       bytes.fromhex(data["master"]), bytes.fromhex(data["seed"]),
                       bytes.fromhex(data["check"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise CrypterError(f"damaged wallet encryption record: {exc}") from None


def _seed_iv() -> bytes:
    """The seed's IV: fixed per record (Core derives a key's IV from its public key); the
    master key is random per encryption, so the (key, IV) pair never repeats."""
    return sha256d(b"ctplugin/wallet/seed")[:16]

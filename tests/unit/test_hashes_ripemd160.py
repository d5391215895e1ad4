"""RIPEMD-160 / HASH160 work on OpenSSL builds without the legacy provider (a bug once): there
``hashlib.new("ripemd160")`` raises ValueError; ``ctplugin.hashes`` then uses a portable
implementation, and the wallet's and the DLC builder's P2WPKH scripts still come out right."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import cast

import pytest
import wallycore as wally

from ctplugin import hashes
from ctplugin.dlc.builder import p2wpkh
from ctplugin.script.checker import SignatureChecker, SigVersion
from ctplugin.script.interpreter import eval_script
from regtest.wallet.keys import p2wpkh_script

# RIPEMD-160 test vectors (Bosselaers' page, the algorithm's authors)
VECTORS = [(b"", "9c1185a5c5e9fc54612808977ee8f548b2258d31"),
           (b"abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"),
           (b"message digest", "5d0689ef49d2fae572b881b123a85ffa21595f36"),
           (b"a" * 1_000_000, "52783243c1697bdbe16d37f97f68f08325dc1528")]
PUBKEY = bytes.fromhex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")


@pytest.fixture(params=["openssl", "no-legacy-provider"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "no-legacy-provider":
        real_new = hashlib.new

        def new(name: str, *args: object, **kwargs: object) -> object:
            if name.lower() == "ripemd160":
                raise ValueError(f"unsupported hash type {name}")
            return real_new(name, *args, **kwargs)

        monkeypatch.setattr(hashlib, "new", new)
    hashes._ripemd160_impl.cache_clear()
    try:
        yield request.param
    finally:
        hashes._ripemd160_impl.cache_clear()


def test_ripemd160_vectors(backend: str) -> None:
    for data, digest in VECTORS[:3] if backend != "openssl" else VECTORS:
        assert hashes.ripemd160(data).hex() == digest


def test_hash160_and_p2wpkh_scripts(backend: str) -> None:
    expected = wally.hash160(PUBKEY)
    assert hashes.hash160(PUBKEY) == expected
    assert p2wpkh_script(PUBKEY) == b"\x00\x14" + expected
    assert p2wpkh(PUBKEY) == b"\x00\x14" + expected


def test_script_ripemd160_and_hash160_opcodes(backend: str) -> None:
    """OP_RIPEMD160 and OP_HASH160 in a script use the same portable digest (the interpreter
    once called ``hashlib.new("ripemd160")`` itself and failed on such builds)."""
    for op, digest in ((0xA6, hashes.ripemd160(b"abc")), (0xA9, wally.hash160(b"abc"))):
        stack = [b"abc"]
        script = bytes((op, 0x14)) + digest + b"\x87"  # <op> <20 bytes> OP_EQUAL
        eval_script(stack, script, 0, cast(SignatureChecker, None), SigVersion.WITNESS_V0)
        assert stack == [b"\x01"]

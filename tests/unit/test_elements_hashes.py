"""The native SHA-256 (portable and SHA-NI paths) of both extensions that carry it --
ctplugin._hashes (midstate, fast Merkle root: the hashing layer) and ctplugin.elements._speedups
(sha256d, txid, withash, Bitcoin Merkle root: the parser) -- against independent Python
computations."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin import _hashes, hashes
from ctplugin.elements import _speedups, parse_transaction
from ctplugin.errors import EncodingError
from harness.elements_vectors import load_entries
from tests.conftest import FIXTURES

EXTENSIONS = (_hashes, _speedups)


def _backends(module: ModuleType) -> list[str]:
    original = module.sha_backend()
    names = ["portable"]
    try:
        module.set_sha_backend("shani")
        names.append("shani")
    except ValueError:
        pass
    module.set_sha_backend(original)
    return names


@pytest.fixture(params=_backends(_speedups))
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every SHA-256 implementation, selected in both extensions."""
    originals = [m.sha_backend() for m in EXTENSIONS]
    for m in EXTENSIONS:
        m.set_sha_backend(request.param)
    yield request.param
    for m, name in zip(EXTENSIONS, originals):
        m.set_sha_backend(name)


def _sha256d(data: bytes) -> bytes:
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


def test_backend_selection_is_lazy_and_checked() -> None:
    code = ("from ctplugin import _hashes; from ctplugin.elements import _speedups; "
            "print(_hashes.sha_backend(), _speedups.sha_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == out[1] and out[0] in ("portable", "shani")
    for m in EXTENSIONS:
        with pytest.raises(ValueError, match="unknown SHA-256 backend"):
            m.set_sha_backend("md5")


def test_sha256d_all_lengths(backend: str) -> None:
    data = bytes((i * 37 + 11) & 0xFF for i in range(700))
    for n in range(len(data)):
        assert _speedups.sha256d(data[:n]) == _sha256d(data[:n]), (backend, n)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=64, max_size=64))
def test_midstate_matches_reference(block: bytes) -> None:
    original = _hashes.sha_backend()
    try:
        for name in _backends(_hashes):
            _hashes.set_sha_backend(name)
            assert _hashes.sha256_midstate(block) == hashes._sha256_midstate_py(block)
    finally:
        _hashes.set_sha_backend(original)


def test_midstate_known_value() -> None:
    # compressing the padded one-block message "abc" gives SHA-256("abc") itself
    block = b"abc" + b"\x80" + bytes(52) + (24).to_bytes(8, "big")
    assert hashes.sha256_midstate(block) == hashlib.sha256(b"abc").digest()
    assert hashes.sha256_midstate is _hashes.sha256_midstate
    for midstate in (_hashes.sha256_midstate, hashes._sha256_midstate_py):
        for bad in (bytes(63), bytes(65), b""):
            with pytest.raises(EncodingError) as info:
                midstate(bad)
            assert info.value.reason == "length"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.integers(min_value=0, max_value=12))
def test_rfc6979_stream_matches_reference(seed: bytes, blocks: int) -> None:
    """The C generator (ctplugin/native/hmac_drbg.h) gives the pure-Python one's outputs on
    every SHA-256 backend, for every seed length (one, two, three HMAC blocks)."""
    want = hashes._rfc6979_hmac_sha256_py(seed, blocks)
    assert len(want) == 32 * blocks
    original = _hashes.sha_backend()
    try:
        for name in _backends(_hashes):
            _hashes.set_sha_backend(name)
            assert _hashes.rfc6979_hmac_sha256(seed, blocks) == want
    finally:
        _hashes.set_sha_backend(original)
    assert hashes.rfc6979_hmac_sha256(seed, blocks) == want


def test_rfc6979_stream_bad_sizes_are_typed() -> None:
    for stream in (_hashes.rfc6979_hmac_sha256, hashes._rfc6979_hmac_sha256_py):
        for blocks, reason in ((-1, "length"), (2**20 + 1, "too-large"), (2**62, "too-large")):
            with pytest.raises(EncodingError) as info:
                stream(b"seed", blocks)
            assert info.value.reason == reason
    with pytest.raises(TypeError):
        _hashes.rfc6979_hmac_sha256("not bytes", 1)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=100), st.lists(st.binary(max_size=150), max_size=6))
def test_length_prefixed_sha256_matches_reference(prefix: bytes, fields: list[bytes]) -> None:
    """The proof cache's key hash: the C one is the definition's, on every SHA-256 backend and
    for any bytes-like field; a field that is not bytes-like is a TypeError."""
    want = hashes._length_prefixed_sha256_py(prefix, fields)
    assert want == hashlib.sha256(prefix + b"".join(
        len(f).to_bytes(4, "big") + f for f in fields)).digest()
    original = _hashes.sha_backend()
    try:
        for name in _backends(_hashes):
            _hashes.set_sha_backend(name)
            assert _hashes.length_prefixed_sha256(prefix, fields) == want
            assert _hashes.length_prefixed_sha256(
                memoryview(prefix), [bytearray(f) for f in fields]) == want
    finally:
        _hashes.set_sha_backend(original)
    assert hashes.length_prefixed_sha256(prefix, tuple(fields)) == want
    with pytest.raises(TypeError):
        _hashes.length_prefixed_sha256(prefix, [*fields, "text"])


def test_fast_merkle_root_promotes_odd_nodes(backend: str) -> None:
    a, b, c = (bytes([i]) * 32 for i in (1, 2, 3))
    node = hashes.sha256_midstate
    assert hashes.fast_merkle_root([a, b, c]) == node(node(a + b) + c)
    assert hashes.fast_merkle_root([a]) == a
    assert hashes.fast_merkle_root([]) == bytes(32)
    for n in [*range(70), 129, 1000]:
        leaves = [hashlib.sha256(bytes([n & 255, i & 255, i >> 8])).digest() for i in range(n)]
        assert _hashes.fast_merkle_root(b"".join(leaves)) == hashes._fast_merkle_root_py(leaves)
    with pytest.raises(EncodingError) as info:
        _hashes.fast_merkle_root(bytes(33))
    assert info.value.reason == "length"


def _bitcoin_merkle(hashes_: list[bytes]) -> tuple[bytes, bool]:
    if not hashes_:
        return bytes(32), False
    level, mutated = list(hashes_), False
    while len(level) > 1:
        mutated |= any(level[i] == level[i + 1] for i in range(0, len(level) - 1, 2))
        if len(level) & 1:
            level.append(level[-1])
        level = [_sha256d(level[i] + level[i + 1]) for i in range(0, len(level), 2)]
    return level[0], mutated


def test_bitcoin_merkle_root() -> None:
    for n in range(40):
        leaves = [hashlib.sha256(bytes([n, i])).digest() for i in range(n)]
        assert _speedups.merkle_root(b"".join(leaves)) == _bitcoin_merkle(leaves)
    a, b, c = (bytes([i]) * 32 for i in (1, 2, 3))
    assert _speedups.merkle_root(a + b + c + c)[1] is True  # CVE-2012-2459 shape
    assert _speedups.merkle_root(a + b + c)[1] is False


def test_txid_and_wtxid_against_hashlib(backend: str) -> None:
    for entry in load_entries([FIXTURES / "elements_transactions.json"], "transactions"):
        tx = parse_transaction(bytes.fromhex(entry["hex"]))
        assert tx.txid == _sha256d(tx.serialize_without_witness())
        expected_wtxid = _sha256d(tx.serialize()) if tx.has_witness else tx.txid
        assert _speedups.sha256d(tx.serialize()) == _sha256d(tx.serialize())
        assert tx.wtxid == expected_wtxid

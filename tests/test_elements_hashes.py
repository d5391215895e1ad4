"""The native SHA-256 (portable and SHA-NI paths), midstate, fast Merkle root and Bitcoin Merkle
root of ctplugin.elements._speedups against independent Python computations."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin import hashes
from ctplugin.elements import _speedups, parse_transaction
from ctplugin.elements.vectors import load_entries
from tests.conftest import FIXTURES


def _backends() -> list[str]:
    original = _speedups.sha_backend()
    names = ["portable"]
    try:
        _speedups.set_sha_backend("shani")
        names.append("shani")
    except ValueError:
        pass
    _speedups.set_sha_backend(original)
    return names


@pytest.fixture(params=_backends())
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    original = _speedups.sha_backend()
    _speedups.set_sha_backend(request.param)
    yield request.param
    _speedups.set_sha_backend(original)


def _sha256d(data: bytes) -> bytes:
    return hashlib.sha256(hashlib.sha256(data).digest()).digest()


def test_sha256d_all_lengths(backend: str) -> None:
    data = bytes((i * 37 + 11) & 0xFF for i in range(700))
    for n in range(len(data)):
        assert _speedups.sha256d(data[:n]) == _sha256d(data[:n]), (backend, n)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=64, max_size=64))
def test_midstate_matches_reference(block: bytes) -> None:
    original = _speedups.sha_backend()
    try:
        for name in _backends():
            _speedups.set_sha_backend(name)
            assert _speedups.sha256_midstate(block) == hashes._sha256_midstate_py(block)
    finally:
        _speedups.set_sha_backend(original)


def test_midstate_known_value() -> None:
    # compressing the padded one-block message "abc" gives SHA-256("abc") itself
    block = b"abc" + b"\x80" + bytes(52) + (24).to_bytes(8, "big")
    assert hashes.sha256_midstate(block) == hashlib.sha256(b"abc").digest()
    with pytest.raises(ValueError):
        _speedups.sha256_midstate(bytes(63))


def test_fast_merkle_root_promotes_odd_nodes() -> None:
    a, b, c = (bytes([i]) * 32 for i in (1, 2, 3))
    node = hashes.sha256_midstate
    assert hashes.fast_merkle_root([a, b, c]) == node(node(a + b) + c)
    assert hashes.fast_merkle_root([a]) == a
    assert hashes.fast_merkle_root([]) == bytes(32)
    for n in range(70):
        leaves = [hashlib.sha256(bytes([n, i])).digest() for i in range(n)]
        assert _speedups.fast_merkle_root(b"".join(leaves)) == hashes._fast_merkle_root_py(leaves)
    with pytest.raises(ValueError):
        _speedups.fast_merkle_root(bytes(33))


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

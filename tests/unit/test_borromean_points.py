"""Verifying range proofs with their signer's ring points (``borromean_verify_points_var``,
``verify_many(..., ring_points=...)``): the points are the R the ring kernel recomputes; with
them every proof's check is one weighted multi-scalar multiplication, native against the
pure-Python reference (which checks member by member), and any wrong point, scalar or
challenge makes it say no; the weights are what stop two errors cancelling."""

from __future__ import annotations

import hashlib
import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin import borromean
from ctplugin.borromean.sign import SignedRangeProof, sign_with_ring_points
from ctplugin.errors import EncodingError
from ctplugin.pedersen import H_GENERATOR, commit
from ctplugin.secp256k1 import _reference
from ctplugin.secp256k1.params import N

verify_module = importlib.import_module("ctplugin.borromean.verify")
native = pytest.importorskip("ctplugin.secp256k1._native")
G = (_reference._GX, _reference._GY)


def _signed(value: int, bits: int, seed: int,
            extra: bytes = b"") -> tuple[SignedRangeProof, bytes]:
    blind = hashlib.sha256(b"blind" + bytes([seed])).digest()
    nonce = hashlib.sha256(b"nonce" + bytes([seed])).digest()
    signed = sign_with_ring_points(value, blind, nonce, H_GENERATOR, min_bits=bits,
                                   extra_commit=extra)
    return signed, commit(value, blind, H_GENERATOR).serialize()


def _claim(signed: SignedRangeProof, c: bytes, extra: bytes = b"") -> borromean.RangeProofClaim:
    return borromean.RangeProofClaim(signed.proof, c, H_GENERATOR.serialize(), extra)


def _args(claims: list[borromean.RangeProofClaim]) -> tuple[bytes, bytes, bytes, bytes]:
    prepared = [verify_module.prepare(c) for c in claims]
    assert all(p is not None for p in prepared)
    return (b"".join(p.sizes for p in prepared), b"".join(p.pubs for p in prepared),
            b"".join(p.parsed.s for p in prepared),
            b"".join(p.parsed.e0 + p.message for p in prepared))


def _weights(members: int, seed: int = 0) -> bytes:
    return b"".join(hashlib.sha256(bytes([seed]) + k.to_bytes(4, "big")).digest()[:16]
                    for k in range(members))


def both(*args: Any) -> tuple[Any, Any]:
    return native.borromean_verify_points_var(*args), _reference.borromean_verify_points_var(*args)


@pytest.fixture(scope="module")
def signed_pair() -> list[tuple[SignedRangeProof, bytes]]:
    return [_signed(5, 8, 1, b"script"), _signed(1000, 12, 2)]


def test_signing_keeps_the_bytes_and_one_point_per_member(
        signed_pair: list[tuple[SignedRangeProof, bytes]]) -> None:
    for (signed, _), (value, bits, seed, extra) in zip(signed_pair, [(5, 8, 1, b"script"),
                                                                     (1000, 12, 2, b"")]):
        blind = hashlib.sha256(b"blind" + bytes([seed])).digest()
        nonce = hashlib.sha256(b"nonce" + bytes([seed])).digest()
        assert signed.proof == borromean.sign(value, blind, nonce, H_GENERATOR, min_bits=bits,
                                              extra_commit=extra)
        assert len(signed.ring_points) == 64 * sum(borromean.info(signed.proof).ring_sizes)


def test_the_points_are_the_r_the_ring_kernel_recomputes(
        signed_pair: list[tuple[SignedRangeProof, bytes]]) -> None:
    """Each member's challenge (from the ring kernel) is the hash of the point before it."""
    signed, c = signed_pair[0]
    claim = _claim(signed, c, b"script")
    sizes, pubs, scalars, e0m = _args([claim])
    verdicts, challenges = native.borromean_verify_var(sizes, pubs, scalars, e0m, 1, True)
    assert verdicts == b"\x01"
    ring_sizes = borromean.info(signed.proof).ring_sizes
    member = 0
    for ring, size in enumerate(ring_sizes):
        for j in range(1, size):
            point = signed.ring_points[64 * (member + j - 1): 64 * (member + j)]
            ser = bytes((2 | (point[63] & 1),)) + point[:32]
            want = hashlib.sha256(ser + e0m[32:] + ring.to_bytes(4, "big")
                                  + j.to_bytes(4, "big")).digest()
            assert challenges[32 * (member + j): 32 * (member + j + 1)] == want
        member += size


@pytest.mark.parametrize("threads", [1, 2, 64])
def test_valid_points_show_valid_proofs(signed_pair: list[tuple[SignedRangeProof, bytes]],
                                        threads: int) -> None:
    claims = [_claim(signed_pair[0][0], signed_pair[0][1], b"script"),
              _claim(*signed_pair[1])]
    args = _args(claims)
    points = b"".join(s.ring_points for s, _ in signed_pair)
    members = len(points) // 64
    assert both(*args, points, _weights(members), threads) == (True, True)


def _corruptions(args: tuple[bytes, bytes, bytes, bytes],
                 points: bytes) -> list[tuple[str, tuple[bytes, ...]]]:
    sizes, pubs, scalars, e0m = args
    swapped = points[64:128] + points[:64] + points[128:]  # two members' R exchanged
    other = _reference._pack_point(_reference.mul(7, G))
    flip = bytearray(scalars)
    flip[31] ^= 1  # the first s
    zero_s = bytes(32) + scalars[32:]
    bad_e0 = bytes([e0m[0] ^ 1]) + e0m[1:]
    bad_m = e0m[:40] + bytes([e0m[40] ^ 1]) + e0m[41:]
    return [
        ("swapped points", (sizes, pubs, scalars, e0m, swapped)),
        ("an R replaced", (sizes, pubs, scalars, e0m, other + points[64:])),
        ("the last R replaced", (sizes, pubs, scalars, e0m, points[:-64] + other)),
        ("an R at infinity", (sizes, pubs, scalars, e0m, bytes(64) + points[64:])),
        ("a member at infinity", (sizes, bytes(64) + pubs[64:], scalars, e0m, points)),
        ("an s changed", (sizes, pubs, bytes(flip), e0m, points)),
        ("an s of zero", (sizes, pubs, zero_s, e0m, points)),
        ("e0 changed", (sizes, pubs, scalars, bad_e0, points)),
        ("m changed", (sizes, pubs, scalars, bad_m, points)),
    ]


def test_any_wrong_input_says_no(signed_pair: list[tuple[SignedRangeProof, bytes]]) -> None:
    signed, c = signed_pair[1]
    args = _args([_claim(signed, c)])
    members = len(signed.ring_points) // 64
    for what, corrupted in _corruptions(args, signed.ring_points):
        assert both(*corrupted, _weights(members)) == (False, False), what


def _fake_proof(offset: int, rings: tuple[tuple[int, ...], ...]) -> tuple[bytes, ...]:
    """Rings of members P_ij = k_ij·G with known discrete logs, signed by knowing them all: R_ij
    = r_ij·G, s_ij = r_ij − e_ij·k_ij; then the first member's R moved by +offset·G and the
    second's s by +offset, so their errors cancel in an unweighted sum."""
    m = bytes(32)
    rs = [[11 + 7 * i + j for j in range(len(ks))] for i, ks in enumerate(rings)]
    rs[0][0] += offset
    points = [[_reference.mul(r, G) for r in ring] for ring in rs]
    rs[0][0] -= offset
    sers = [[_reference._ser33(p) for p in ring] for ring in points]  # type: ignore[arg-type]
    e0 = hashlib.sha256(b"".join(ring[-1] for ring in sers) + m).digest()
    s_values = []
    for i, ks in enumerate(rings):
        data = e0
        for j, k in enumerate(ks):
            e = int.from_bytes(hashlib.sha256(data + m + i.to_bytes(4, "big")
                                              + j.to_bytes(4, "big")).digest(), "big")
            s_values.append((rs[i][j] - e * k + (offset if (i, j) == (0, 1) else 0)) % N)
            data = sers[i][j]
    sizes = b"".join(v.to_bytes(2, "little") for v in (len(rings), *map(len, rings)))
    pubs = b"".join(_reference._pack_point(_reference.mul(k, G)) for ks in rings for k in ks)
    return (sizes, pubs, b"".join(s.to_bytes(32, "big") for s in s_values), e0 + m,
            b"".join(_reference._pack_point(p) for ring in points for p in ring))


@pytest.mark.parametrize("rings", [
    ((3, 5, 7),),                        # evenly spaced: two MSM terms
    ((3, 5, 11),),                       # uneven: one term per member
    ((3, 5, 7, 9), (20, 28, 36), (1,)),  # steps 2, 4·2, one member: one term per ring + B
    ((3, 5, 7, 9), (20, 21, 22)),        # evenly spaced, steps not 4^i·B: two terms per ring
], ids=["spaced", "uneven", "range-proof-like", "other-steps"])
def test_the_weights_keep_errors_from_cancelling(rings: tuple[tuple[int, ...], ...]) -> None:
    """(Members as a range proof's fold into fewer MSM terms: every shape must give the same
    answers.)"""
    members = sum(map(len, rings))
    honest = _fake_proof(0, rings)
    assert both(*honest, _weights(members)) == (True, True)
    forged = _fake_proof(1, rings)
    ones = (bytes(15) + b"\x01") * members
    # with equal weights the two errors cancel: that is why the weights are random
    assert native.borromean_verify_points_var(*forged, ones) is True
    assert both(*forged, _weights(members)) == (False, False)
    assert native.borromean_verify_var(*forged[:4])[0] == b"\x00"  # the ring kernel agrees


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 2**20), st.integers(2, 16), st.integers(0, 255), st.data())
def test_random_proofs_and_corruptions_agree_with_the_reference(
        value: int, bits: int, seed: int, data: st.DataObject) -> None:
    signed, c = _signed(value, bits, seed)
    args = _args([_claim(signed, c)])
    weights = _weights(len(signed.ring_points) // 64, data.draw(st.integers(0, 255)))
    cases = [("valid", (*args, signed.ring_points)), *_corruptions(args, signed.ring_points)]
    what, case = data.draw(st.sampled_from(cases))
    assert both(*case, weights) == ((what == "valid"),) * 2, what


def _error(fn: Any, *args: Any) -> tuple[str, str]:
    with pytest.raises(EncodingError) as exc:
        fn(*args)
    return exc.value.reason, str(exc.value)


_G1 = _reference._pack_point(G)


@pytest.mark.parametrize("args", [
    (b"\x01\x00\x01\x00", _G1, bytes(32), bytes(63), _G1, bytes(16)),        # e0m length
    (b"\x01\x00", _G1, bytes(32), bytes(64), _G1, bytes(16)),                # layout short
    (b"\x01\x00\x02\x00", _G1, bytes(32), bytes(64), _G1, bytes(16)),        # members differ
    (b"\x01\x00\x01\x00", _G1, bytes(32), bytes(64), b"", bytes(16)),        # a point missing
    (b"\x01\x00\x01\x00", _G1, bytes(32), bytes(64), _G1 * 2, bytes(16)),    # a point extra
    (b"\x01\x00\x01\x00", _G1, bytes(32), bytes(64), _G1[:63], bytes(16)),   # point length
    (b"\x01\x00\x01\x00", _G1, bytes(32), bytes(64), (5).to_bytes(32, "big") * 2,
     bytes(16)),                                                             # off the curve
    (b"\x01\x00\x01\x00", _G1, bytes(32), bytes(64), _G1, bytes(15)),        # weights short
    (b"\x01\x00\x01\x00", _G1, N.to_bytes(32, "big"), bytes(64), _G1, bytes(16)),  # s >= n
])
def test_hostile_inputs_raise_the_same_errors(args: tuple[bytes, ...]) -> None:
    assert _error(native.borromean_verify_points_var, *args) == \
        _error(_reference.borromean_verify_points_var, *args)


def test_empty_batch() -> None:
    assert both(b"", b"", b"", b"", b"", b"") == (True, True)


def test_verify_many_takes_the_points_and_falls_back_without_them(
        signed_pair: list[tuple[SignedRangeProof, bytes]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Claims with good points skip the ring kernel; a wrong point sends its batch there (the
    verdicts are the kernel's); a claim without points goes there anyway."""
    claims = [_claim(signed_pair[0][0], signed_pair[0][1], b"script"),
              _claim(*signed_pair[1])]
    points = [s.ring_points for s, _ in signed_pair]
    want = borromean.verify_many(claims, threads=1)
    assert all(isinstance(v, tuple) for v in want)
    ringed: list[int] = []
    real = verify_module.run_rings

    def counted(prepared: Any, *args: Any, **kwargs: Any) -> Any:
        ringed.append(len(prepared))
        return real(prepared, *args, **kwargs)

    monkeypatch.setattr(verify_module, "run_rings", counted)
    assert borromean.verify_many(claims, threads=1, ring_points=points) == want
    assert ringed == [0]
    assert borromean.verify_many(claims, threads=1, ring_points=[points[0], None]) == want
    assert ringed[1:] == [1]
    wrong = points[1][64:128] + points[1][:64] + points[1][128:]
    assert borromean.verify_many(claims, threads=1, ring_points=[points[0], wrong]) == want
    assert ringed[2:] == [2]
    # a claim the points do not match (another extra commit: another m) is invalid, and says so
    other = [_claim(signed_pair[0][0], signed_pair[0][1], b"other"), claims[1]]
    assert borromean.verify_many(other, threads=1, ring_points=points) == [False, want[1]]
    # points of the wrong length, or off the curve, are no points at all
    assert borromean.verify_many(claims, threads=1, ring_points=[b"x", points[1][:-64]]) == want
    off_curve = (5).to_bytes(32, "big") * 2 + points[1][64:]
    assert borromean.verify_many(claims, threads=1, ring_points=[points[0], off_curve]) == want

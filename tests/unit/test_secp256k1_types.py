"""The Python face of the engine: Scalar and Point value types, encodings, ct ops, MSM wrappers."""

from __future__ import annotations

from typing import Any

import coincurve
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import (
    INFINITY,
    KIND_COMPRESSED,
    KIND_GENERATOR,
    KIND_PEDERSEN,
    KIND_XQR,
    FixedBase,
    G,
    N,
    P,
    Point,
    Scalar,
    ct,
    decode_points,
    encode_points,
    msm_var,
)

scalars = st.integers(min_value=1, max_value=N - 1)
any_ints = st.integers(min_value=-(2**300), max_value=2**300)


def coincurve_point(k: int) -> Point:
    return Point.from_bytes(coincurve.PublicKey.from_secret(k.to_bytes(32, "big")).format())


@settings(max_examples=50, deadline=None)
@given(a=scalars, b=scalars)
def test_scalar_field_laws(a: int, b: int) -> None:
    x, y = Scalar(a), Scalar(b)
    assert int(x + y) == (a + b) % N
    assert int(x * y) == a * b % N
    assert x * x.inverse() == 1
    assert -x + x == 0
    assert Scalar.from_bytes(x.to_bytes()) == x


def test_scalar_strict_and_reduced_decoding() -> None:
    with pytest.raises(EncodingError):
        Scalar.from_bytes(N.to_bytes(32, "big"))
    with pytest.raises(EncodingError):
        Scalar.from_bytes(b"\x01" * 31)
    assert Scalar.from_bytes_reduced(N.to_bytes(32, "big")) == 0
    with pytest.raises(EncodingError) as info:
        Scalar(0).inverse()
    assert info.value.reason == "zero"
    s = Scalar(5)
    with pytest.raises(AttributeError):
        s._v = 6  # type: ignore[misc]


@settings(max_examples=40, deadline=None)
@given(a=scalars, b=scalars)
def test_point_arithmetic_matches_coincurve(a: int, b: int) -> None:
    pa, pb = coincurve_point(a), coincurve_point(b)
    assert G.mul_var(a) == pa == ct.base_mul(a)
    assert pa + pb == coincurve_point((a + b) % N) if (a + b) % N else (pa + pb).is_infinity
    assert ct.mul(b, pa) == coincurve_point(a * b % N)
    assert pa - pa == INFINITY
    assert msm_var([a, b], [G, G]) == G.mul_var(a + b)


@settings(max_examples=30, deadline=None)
@given(k=scalars)
def test_every_encoding_round_trips(k: int) -> None:
    point = G.mul_var(k)
    for kind in (KIND_COMPRESSED, KIND_PEDERSEN, KIND_GENERATOR, KIND_XQR):
        assert decode_points(encode_points([point], kind), kind) == [point]
    assert Point.from_bytes(point.to_bytes()) == point
    assert Point.from_bytes(point.to_bytes(compressed=False)) == point
    lifted = Point.from_xonly(point.xonly())
    assert lifted in (point, -point) and lifted.has_even_y()
    assert Point.from_x_qr(point.x, not point.has_square_y()) == point


@settings(max_examples=30, deadline=None)
@given(ks=st.lists(any_ints, min_size=0, max_size=6), seeds=st.lists(scalars, min_size=6,
                                                                      max_size=6))
def test_msm_reduces_scalars_and_matches_loop(ks: list[int], seeds: list[int]) -> None:
    points = [G.mul_var(s) for s in seeds[: len(ks)]]
    expected = INFINITY
    for k, p in zip(ks, points):
        expected = expected + p.mul_var(k % N)
    assert msm_var(ks, points) == expected
    table = FixedBase(points)
    assert table.msm_var(ks) == expected
    assert table.msm_var([], ks, points) == expected


@pytest.mark.parametrize("data", [
    b"", b"\x02" + bytes(31), b"\x04" + bytes(64), b"\x05" + G.xonly(),
    b"\x02" + P.to_bytes(32, "big"), b"\x02" + bytes(32),
])
def test_malformed_public_keys(data: bytes) -> None:
    with pytest.raises(EncodingError):
        Point.from_bytes(data)


def test_infinity_cannot_be_encoded_and_off_curve_rejected() -> None:
    with pytest.raises(EncodingError):
        INFINITY.to_bytes()
    with pytest.raises(EncodingError):
        Point(1, 1)
    with pytest.raises(EncodingError):
        Point.from_xonly(bytes(32))
    with pytest.raises(EncodingError):
        ct.mul(0, G)


def _packed(point: Point) -> bytes:
    return point.to_bytes(compressed=False)[1:]


@settings(max_examples=25, deadline=None)
@given(blinds=st.lists(scalars, min_size=1, max_size=4), values=st.lists(scalars, min_size=4,
                                                                         max_size=4),
       h=scalars, offsets=st.lists(scalars, min_size=4, max_size=4))
def test_packed_constant_time_ops_match_the_point_ops(blinds: list[int], values: list[int],
                                                      h: int, offsets: list[int]) -> None:
    """The provers' packed forms give what ct.base_mul / ct.mul and point addition give."""
    def key(k: int) -> bytes:
        return k.to_bytes(32, "big")

    n = len(blinds)
    assert ct.base_mul_packed([key(b) for b in blinds]) == [_packed(ct.base_mul(b))
                                                           for b in blinds]
    base, offset_points = G.mul_var(h), [G.mul_var(o) for o in offsets[:n]]
    sums = ct.commit_packed([key(b) for b in blinds], [key(v) for v in values[:n]],
                            _packed(base), [_packed(p) for p in offset_points])
    expected = [ct.base_mul(b) + ct.mul(v, base) + p
                for b, v, p in zip(blinds, values, offset_points)]
    assert sums == [None if e.is_infinity else _packed(e) for e in expected]


def test_packed_ops_refuse_bad_secrets_and_points_and_report_infinity() -> None:
    one, two = (1).to_bytes(32, "big"), (2).to_bytes(32, "big")
    g = _packed(G)
    def reason(fn: Any, *args: Any) -> str:
        with pytest.raises(EncodingError) as info:
            fn(*args)
        return info.value.reason

    for bad in (bytes(32), N.to_bytes(32, "big"), b"\x01" * 31):
        assert reason(ct.base_mul_packed, [one, bad]) == "scalar-range"
        assert reason(ct.commit_packed, [bad], [one], g, [g]) == "scalar-range"
        assert reason(ct.commit_packed, [one], [bad], g, [g]) == "scalar-range"
    off_curve = bytes(31) + b"\x01" + bytes(31) + b"\x01"
    for bad_point, why in ((off_curve, "off-curve"), (P.to_bytes(32, "big") * 2, "off-curve"),
                           (g[:63], "length")):
        assert reason(ct.commit_packed, [one], [one], bad_point, [g]) == why
        assert reason(ct.commit_packed, [one], [one], g, [bad_point]) == why
    assert reason(ct.commit_packed, [one], [one, one], g, [g]) == "length"
    # 1·G + 2·G + (−3·G) is infinity; the next sum is still computed
    minus_three = _packed(-G.mul_var(3))
    assert ct.commit_packed([one, one], [two, two], g, [minus_three, g]) == [
        None, _packed(G.mul_var(4))]

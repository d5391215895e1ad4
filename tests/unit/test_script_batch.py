"""BIP340 signatures as a claim group of the one batch: it holds exactly when every signature
does (as libsecp256k1 judges them one by one), the culprit is named, and it mixes with other
claims over the same fixed base."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.batch import BatchVerifier
from ctplugin.bulletproofs import consensus_generators
from ctplugin.hashes import sha256
from ctplugin.script.batch import (
    SchnorrClaims,
    lift_many,
    output_key_encoding,
    tweak_claim,
)
from ctplugin.script.taproot import tweak_hash
from ctplugin.secp256k1 import KIND_COMPRESSED, ct, libsecp
from ctplugin.secp256k1.params import N

BASE = consensus_generators().fixed


def _sigs(n: int, offset: int = 1) -> list[tuple[bytes, bytes, bytes]]:
    out = []
    for k in range(offset, offset + n):
        msg = sha256(k.to_bytes(4, "big"))
        out.append((ct.xonly_public_key(k), msg, ct.schnorr_sign(k, msg, bytes(32))))
    return out


def _group(sigs: list[tuple[bytes, bytes, bytes]]) -> SchnorrClaims:
    points = lift_many([x for key, _, sig in sigs for x in (sig[:32], key)])
    assert all(p is not None for p in points)
    return SchnorrClaims(BASE, list(range(len(sigs))), b"".join(points),  # type: ignore[arg-type]
                         [k for k, _, _ in sigs], [m for _, m, _ in sigs],
                         [s for _, _, s in sigs])


def _verdict(*claims: object) -> BatchVerifier:
    batch = BatchVerifier(BASE)
    batch.extend(claims)  # type: ignore[arg-type]
    return batch


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 24), st.data())
def test_group_holds_iff_every_signature_does(n: int, data: st.DataObject) -> None:
    sigs = _sigs(n)
    assert _verdict(_group(sigs)).verify()
    bad = data.draw(st.integers(0, n - 1))
    byte = data.draw(st.integers(32, 63))  # inside s: R still lifts
    key, msg, sig = sigs[bad]
    flipped = sig[:byte] + bytes((sig[byte] ^ 1,)) + sig[byte + 1:]
    if int.from_bytes(flipped[32:], "big") >= N:
        return
    assert not libsecp.schnorr_verify(key, msg, flipped)
    sigs[bad] = (key, msg, flipped)
    batch = _verdict(_group(sigs))
    assert not batch.verify()
    assert batch.first_failure() == bad


def test_a_signature_over_another_message_fails() -> None:
    sigs = _sigs(5)
    key, _, sig = sigs[3]
    sigs[3] = (key, sha256(b"another message"), sig)
    assert _verdict(_group(sigs)).failures() == [3]


def test_group_mixes_with_plain_claims_and_tweaks() -> None:
    internal = ct.xonly_public_key(77)
    tweak = tweak_hash(internal, None)
    q, parity = libsecp.xonly_tweak_add(internal, tweak)  # type: ignore[misc]
    p_point, q_point = lift_many([internal])[0], lift_many(
        [output_key_encoding(q, parity)], KIND_COMPRESSED)[0]
    assert p_point is not None and q_point is not None
    good = tweak_claim("tweak", BASE, q_point, p_point, int.from_bytes(tweak, "big"))
    wrong = tweak_claim("wrong", BASE, q_point, p_point, int.from_bytes(tweak, "big") + 1)
    assert _verdict(_group(_sigs(8)), good, _group(_sigs(3, offset=50))).verify()
    assert _verdict(_group(_sigs(8)), good, wrong).first_failure() == "wrong"


def test_lift_many_reports_bad_entries() -> None:
    good = ct.xonly_public_key(5)
    points = lift_many([good, b"\xff" * 32, good[:31], good])
    assert points[0] == points[3] is not None and points[1] is None and points[2] is None

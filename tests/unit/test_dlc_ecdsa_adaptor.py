"""ECDSA adaptor signatures: dlcspecs / secp256k1-zkp vectors, round trips, hostile inputs."""

from __future__ import annotations

import os

import coincurve
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctplugin.dlc import ecdsa_adaptor as ea
from ctplugin.dlc.errors import DlcError
from ctplugin.errors import EncodingError
from ctplugin.secp256k1 import Point, ct
from ctplugin.secp256k1.params import N
from tests.conftest import FIXTURES, load_json

VECTORS = load_json(FIXTURES / "dlc_ecdsa_adaptor.json")


def _by_kind(kind: str) -> list[dict]:
    return [v for v in VECTORS if v["kind"] == kind]


def _compact(hex_sig: str) -> tuple[int, int]:
    raw = bytes.fromhex(hex_sig)
    return int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")


@pytest.mark.parametrize("vector", _by_kind("verification"),
                         ids=lambda v: v.get("comment", v.get("error")))
def test_verification_vectors(vector: dict) -> None:
    sig = ea.AdaptorSignature.from_bytes(bytes.fromhex(vector["adaptor_sig"]))
    pubkey = Point.from_bytes(bytes.fromhex(vector["public_signing_key"]))
    enc = Point.from_bytes(bytes.fromhex(vector["encryption_key"]))
    msg = bytes.fromhex(vector["message_hash"])
    ok = ea.verify(sig, pubkey, msg, enc)
    assert ok == ("error" not in vector)
    assert ea.verify_many(pubkey, [(sig, msg, enc)]) == [ok]
    if not ok:
        return
    decrypted = ea.decrypt(sig, bytes.fromhex(vector["decryption_key"]))
    assert decrypted == _compact(vector["signature"])
    # The decrypted signature is a valid ECDSA signature (libsecp256k1 via coincurve).
    der = ea.der_encode(decrypted)
    assert coincurve.PublicKey(pubkey.to_bytes()).verify(der, msg, hasher=None)
    assert ea.der_decode(der) == decrypted
    assert ea.recover(enc, sig, decrypted) == int(vector["decryption_key"], 16)


@pytest.mark.parametrize("vector", _by_kind("recovery"),
                         ids=lambda v: v.get("comment", v.get("error")))
def test_recovery_vectors(vector: dict) -> None:
    sig = ea.AdaptorSignature.from_bytes(bytes.fromhex(vector["adaptor_sig"]))
    enc = Point.from_bytes(bytes.fromhex(vector["encryption_key"]))
    signature = _compact(vector["signature"])
    if "error" in vector:
        with pytest.raises(DlcError):
            ea.recover(enc, sig, signature)
    else:
        assert ea.recover(enc, sig, signature) == int(vector["decryption_key"], 16)


@pytest.mark.parametrize("vector", _by_kind("serialization"),
                         ids=lambda v: v.get("comment") or v.get("error") or "valid")
def test_serialization_vectors(vector: dict) -> None:
    raw = bytes.fromhex(vector["adaptor_sig"])
    if vector.get("error"):
        with pytest.raises(EncodingError):
            ea.AdaptorSignature.from_bytes(raw)
    else:
        assert ea.AdaptorSignature.from_bytes(raw).to_bytes() == raw


@settings(max_examples=10, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.integers(1, N - 1), st.integers(1, N - 1),
       st.booleans())
def test_encrypt_verify_decrypt_recover(msg: bytes, x: int, y: int, deterministic: bool) -> None:
    pubkey, enc = ct.base_mul(x), ct.base_mul(y)
    sig = ea.encrypt(x.to_bytes(32, "big"), enc, msg, deterministic=deterministic)
    assert ea.AdaptorSignature.from_bytes(sig.to_bytes()) == sig
    assert ea.verify(sig, pubkey, msg, enc)
    assert not ea.verify(sig, pubkey, bytes(32) if msg != bytes(32) else b"\x01" * 32, enc)
    assert not ea.verify(sig, ct.base_mul(x % (N - 1) + 1 if x != N - 1 else 2), msg, enc)
    signature = ea.decrypt(sig, y)
    assert coincurve.PublicKey(pubkey.to_bytes()).verify(ea.der_encode(signature), msg, hasher=None)
    assert ea.recover(enc, sig, signature) == y


def test_deterministic_nonce_is_deterministic_and_aux_masks_it() -> None:
    x, enc, msg = b"\x07" * 32, ct.base_mul(5), b"\x42" * 32
    det = ea.encrypt(x, enc, msg, deterministic=True)
    assert det == ea.encrypt(x, enc, msg, deterministic=True)
    a = ea.encrypt(x, enc, msg, aux_rand=b"\x01" * 32)
    assert a == ea.encrypt(x, enc, msg, aux_rand=b"\x01" * 32)
    assert a != det
    assert ea.encrypt(x, enc, msg) != ea.encrypt(x, enc, msg)  # fresh aux randomness


def test_verify_many_pinpoints_the_bad_signature() -> None:
    x = 0x1234
    pubkey = ct.base_mul(x)
    items = []
    for i in range(6):
        enc, msg = ct.base_mul(1000 + i), os.urandom(32)
        items.append((ea.encrypt(x.to_bytes(32, "big"), enc, msg), msg, enc))
    assert ea.verify_many(pubkey, items) == [True] * 6
    sig, msg, enc = items[3]
    items[3] = (sig, os.urandom(32), enc)  # valid DLEQ, wrong message: only the batch catches it
    assert ea.verify_many(pubkey, items) == [True, True, True, False, True, True]


def test_hostile_encodings_are_typed_errors() -> None:
    good = ea.encrypt(b"\x01" * 32, ct.base_mul(3), b"\x02" * 32).to_bytes()
    for bad in (good[:-1], good + b"\x00", b"\x05" + good[1:], good[:66] + bytes(32) + good[98:],
                good[:130] + b"\xff" * 32):
        with pytest.raises(EncodingError):
            ea.AdaptorSignature.from_bytes(bad)
    with pytest.raises(EncodingError):
        ea.der_decode(b"\x30\x02\x02\x00")
    with pytest.raises(DlcError):
        ea.encrypt(b"\x01" * 32, ct.base_mul(3), b"\x02" * 31)


def test_hand_built_out_of_range_values_are_rejected_not_crashing() -> None:
    x, enc, msg = 0x4242, ct.base_mul(77), b"\x05" * 32
    good = ea.encrypt(x.to_bytes(32, "big"), enc, msg)
    bad = ea.AdaptorSignature(good.r33, good.ra33, 0, good.dleq_e, good.dleq_s)
    pubkey = ct.base_mul(x)
    assert not ea.verify(bad, pubkey, msg, enc)
    assert ea.verify_many(pubkey, [(good, msg, enc), (bad, msg, enc)]) == [True, False]


def test_nonce_tags_match_secp256k1_zkp_midstates() -> None:
    """zkp hard-codes the SHA-256 midstates of its tagged hashes; ours must use the same tags."""
    from ctplugin.hashes import sha256, sha256_midstate

    expected = {
        "ECDSAadaptor/non": "791dae43e52d3b4437f9edea9bfd2ab1cfb0f44dccf1d880d18f2c13a37b9024",
        "ECDSAadaptor/aux": "d14c7bd9095d35e6b8490a88fb00ef740baa488f693666931c81c5bac33b296a",
        "DLEQ": "8cc4beac2e011f3f355c75fb3ba6a2c5e96f3aef180530fd94582499577fd564",
    }
    for tag, midstate in expected.items():
        assert sha256_midstate(sha256(tag.encode()) * 2).hex() == midstate


def test_encrypt_many_equals_one_by_one() -> None:
    x = b"\x33" * 32
    items = [(ct.base_mul(900 + i), bytes([i]) * 32) for i in range(5)]
    auxes = [bytes([7 + i]) * 32 for i in range(5)]
    assert ea.encrypt_many(x, items, deterministic=True) == [
        ea.encrypt(x, p, m, deterministic=True) for p, m in items]
    assert ea.encrypt_many(x, items, aux_rands=auxes) == [
        ea.encrypt(x, p, m, aux_rand=a) for (p, m), a in zip(items, auxes)]
    many = [(ct.base_mul(2000 + i), bytes([i]) * 32) for i in range(17)]
    assert ea.encrypt_many(x, many, deterministic=True, threads=2) == ea.encrypt_many(
        x, many, deterministic=True)
    pubkey = ct.base_mul(int.from_bytes(x, "big"))
    sigs = ea.encrypt_many(x, items)
    assert ea.verify_many(pubkey, [(s, m, p) for s, (p, m) in zip(sigs, items)]) == [True] * 5
    assert ea.encrypt_many(x, []) == []


def test_hand_built_bad_point_encodings_verify_false() -> None:
    x, enc, msg = 0x4243, ct.base_mul(78), b"\x06" * 32
    good = ea.encrypt(x.to_bytes(32, "big"), enc, msg)
    bad = ea.AdaptorSignature(b"\x05" + good.r33[1:], good.ra33, good.s_a, good.dleq_e,
                              good.dleq_s)
    pubkey = ct.base_mul(x)
    assert not ea.verify(bad, pubkey, msg, enc)
    assert ea.verify_many(pubkey, [(bad, msg, enc), (good, msg, enc)]) == [False, True]

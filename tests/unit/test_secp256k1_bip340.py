"""BIP340 (``ctplugin.secp256k1.bip340``): the challenge against the spec's formula computed
directly, signing and verification against rows of BIP340's ``test-vectors.csv``, and the
precomputed-prefix challenge the DLC oracle uses agreeing with the plain one."""

from __future__ import annotations

import hashlib

import pytest

from ctplugin.secp256k1 import bip340, ct
from ctplugin.secp256k1.params import N


def _tagged(tag: str, data: bytes) -> bytes:
    """hash_tag(x) = SHA256(SHA256(tag) ‖ SHA256(tag) ‖ x), written out (BIP340 "Design")."""
    tag_hash = hashlib.sha256(tag.encode()).digest()
    return hashlib.sha256(tag_hash + tag_hash + data).digest()


# (secret key, public key, aux_rand, message, signature) of BIP340 test-vectors.csv rows 0 and 1
_SIGNED = [
    ("0000000000000000000000000000000000000000000000000000000000000003",
     "F9308A019258C31049344F85F89D5229B531C845836F99B08601F113BCE036F9",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "E907831F80848D1069A5371B402410364BDF1C5F8307B0084C55F1CE2DCA8215"
     "25F66A4A85EA8B71E482A74F382D2CE5EBEEE8FDB2172F477DF4900D310536C0"),
    ("B7E151628AED2A6ABF7158809CF4F3C762E7160F38B4DA56A784D9045190CFEF",
     "DFF1D77F2A671C5F36183726DB2341BE58FEAE1DA2DECED843240F7B502BA659",
     "0000000000000000000000000000000000000000000000000000000000000001",
     "243F6A8885A308D313198A2E03707344A4093822299F31D0082EFA98EC4E6C89",
     "6896BD60EEAE296DB48A229FF71DFE071BDE413E6D43F917DC8DCF8C78DE3341"
     "8906D11AC976ABCCB20B091292BFF4EA897EFCB639EA871CFA95F6DE339E4B0A"),
]
_KEY1, _MSG1 = bytes.fromhex(_SIGNED[1][1]), bytes.fromhex(_SIGNED[1][3])
_SIG1 = bytes.fromhex(_SIGNED[1][4])


@pytest.mark.parametrize("secret, public, aux, msg, sig", _SIGNED)
def test_signing_vectors(secret: str, public: str, aux: str, msg: str, sig: str) -> None:
    """BIP340's default signing is sign_with_nonce with k derived from the key, aux_rand and
    message (BIP340 "Default Signing"); the signature must then be the vector's."""
    d0, p_x, m = int(secret, 16), bytes.fromhex(public), bytes.fromhex(msg)
    assert ct.base_mul(d0).xonly() == p_x
    d = d0 if ct.base_mul(d0).has_even_y() else N - d0
    t = bytes(a ^ b for a, b in zip(d.to_bytes(32, "big"),
                                    _tagged("BIP0340/aux", bytes.fromhex(aux))))
    k = int.from_bytes(_tagged("BIP0340/nonce", t + p_x + m), "big") % N
    signature = bip340.sign_with_nonce(d0, k, m)
    assert signature.hex().upper() == sig
    assert bip340.verify(p_x, m, signature)


def test_challenge_is_the_specs_formula() -> None:
    r_x, msg = _SIG1[:32], _MSG1
    direct = int.from_bytes(_tagged("BIP0340/challenge", r_x + _KEY1 + msg), "big") % N
    assert bip340.challenge(r_x, _KEY1, msg) == direct
    assert bip340.PartialChallenge(r_x, _KEY1).challenge(msg) == direct
    assert bip340.challenge(r_x, _KEY1, msg + b"\x00") != direct  # any message length


_P = 2**256 - 2**32 - 977


@pytest.mark.parametrize("key, sig, why", [
    (_KEY1, _SIG1[:32] + (N - int.from_bytes(_SIG1[32:], "big")).to_bytes(32, "big"),
     "negated s"),
    (_KEY1, _SIG1[:32] + N.to_bytes(32, "big"), "s equal to the curve order"),
    (_KEY1, _P.to_bytes(32, "big") + _SIG1[32:], "r equal to the field size"),
    (bytes.fromhex("EEFDEA4CDB677750A420FEE807EACF21EB9898AE79B9768766E4FAA04A2D4A34"), _SIG1,
     "public key not on the curve"),
    ((_P + 1).to_bytes(32, "big"), _SIG1, "public key beyond the field size"),
    (_KEY1, _SIG1[:63], "signature of 63 bytes"),
    (_KEY1[:31], _SIG1, "key of 31 bytes"),
])
def test_verification_refuses(key: bytes, sig: bytes, why: str) -> None:
    assert bip340.verify(_KEY1, _MSG1, _SIG1)
    assert not bip340.verify(key, _MSG1, sig), why


def test_verification_refuses_another_message() -> None:
    assert not bip340.verify(_KEY1, bytes(32), _SIG1)

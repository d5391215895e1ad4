"""Blinding math of the wallet: rewind nonces, blinding factors, final balancing.

Unblinding convention for Bulletproof outputs (decided here; a Borromean proof carried a 64-byte
message, a Bulletproof carries only 20 bytes):

1. The sender draws an ephemeral key e and puts E = e·G in the output's nonce field (02/03).
2. Rewind nonce = SHA256(ECDH(e, B)) where B is the receiver's blinding public key and
   ECDH = libsecp256k1's default = SHA256(compressed e·B). The receiver computes the same value as
   SHA256(ECDH(b, E)). This is exactly Elements' nonce (``wally_ecdh_nonce_hash``).
3. Value and value blinding factor (vbf) come from the Bulletproof rewind with that nonce.
4. The asset blinding factor is derived from the nonce:
   abf = int(tagged_hash("ctplugin/wallet/abf", nonce)) mod n (counter-retried if 0), so it
   needs no room in the proof.
5. The Bulletproof's 20-byte message carries the first 20 bytes of the asset id; the receiver
   picks the known asset with that prefix and confirms asset and abf by recomputing the asset
   commitment generator_generate_blinded(asset, abf) and comparing it with the output's.

Balancing (Elements' final blinding factor): a commitment is v·(A + abf·G) + vbf·G =
v·A + (v·abf + vbf)·G, so the tally Σ in − Σ out = ∞ holds iff for every asset the amounts
balance and Σ_in (v·abf + vbf) = Σ_out (v·abf + vbf) mod n (explicit amounts count with
abf = vbf = 0). The last blinded output's vbf is solved from that equation.
"""

from __future__ import annotations

from collections.abc import Iterable

import coincurve

from ctplugin.errors import EncodingError
from ctplugin.hashes import sha256
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N
from ctplugin.secp256k1.scalar import scalar_from_hash

ABF_TAG = "ctplugin/wallet/abf"


def ecdh(secret: int, pubkey: bytes) -> bytes:
    """libsecp256k1 ECDH with its default hash: SHA256(compressed secret·pubkey)."""
    return coincurve.PrivateKey(ct.secret_bytes(secret)).ecdh(pubkey)


def rewind_nonce(secret: int, pubkey: bytes) -> bytes:
    """SHA256(ECDH): the shared nonce both sides derive (Elements' rangeproof nonce)."""
    return sha256(ecdh(secret, pubkey))


def asset_blinding_factor(nonce: bytes) -> int:
    """The output's abf, derived from its rewind nonce (step 4 of the module docstring)."""
    return scalar_from_hash(ABF_TAG, nonce)


def ephemeral_pubkey(secret: int) -> bytes:
    """The nonce field of a blinded output: E = e·G, compressed (02/03)."""
    return ct.base_mul(secret).to_bytes()


def blinding_total(terms: Iterable[tuple[int, int, int]]) -> int:
    """Σ (v·abf + vbf) mod n over (value, abf, vbf) triples."""
    return sum(v * abf + vbf for v, abf, vbf in terms) % N


def final_value_blind(inputs: Iterable[tuple[int, int, int]],
                      outputs: Iterable[tuple[int, int, int]],
                      last_value: int, last_abf: int) -> int:
    """vbf of the last blinded output so that the tally balances (module docstring).

    ``inputs`` are the (value, abf, vbf) of inputs and issuances, ``outputs`` those of every
    other output (explicit ones may be left out: they contribute 0).
    """
    vbf = (blinding_total(inputs) - blinding_total(outputs) - last_value * last_abf) % N
    if vbf == 0:  # a zero blind would make the commitment reveal v·A; vanishingly unlikely
        raise EncodingError("final value blinding factor is zero; redraw the other blinds",
                            reason="zero")
    return vbf

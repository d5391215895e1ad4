"""Rewind: the owner recovers value, blinding factor and message from a proof and its nonce
(docs/bulletproofs-format.md §9.1), m = 1 only.

With (α0, ρ) = chacha(nonce, 0), (τ1, τ2) = chacha(nonce, 1) and z, x from the transcript:

    vs = (−μ)_stored + ρ·x + α0     (32 bytes BE: 0^4 ‖ message(20) ‖ value(8); 0^4 checked)
    γ  = −((−τx)_stored + τ1·x + τ2·x²) / z²

Stricter than Grin: the recovered (value, γ) must open the commitment (v·g + γ·h = V, computed in
constant time), as the reference's header promises but Grin no longer checks. So a proof made
with another nonce, or for another commitment, rewinds to ``None`` instead of garbage. Rewind
does not verify the proof; verify it separately.

Like the reference, min_value enters the transcript only if it is > 0 (so a proof made with an
explicit min_value of 0 cannot be rewound).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctplugin.bulletproofs.errors import proof_error
from ctplugin.bulletproofs.generators import GeneratorSet
from ctplugin.bulletproofs.layout import OFF_FLAGS, OFF_POINTS, layout
from ctplugin.bulletproofs.nonces import chacha_pair
from ctplugin.bulletproofs.transcript import Transcript, challenge
from ctplugin.bulletproofs.verifier import (
    CommitmentLike,
    GeneratorLike,
    _commitment_bytes,
    _value_gen_bytes,
    default_generators,
)
from ctplugin.errors import EncodingError
from ctplugin.pedersen import Commitment, Generator
from ctplugin.secp256k1 import ct
from ctplugin.secp256k1.params import N


@dataclass(frozen=True, slots=True)
class Rewound:
    """What the owner recovers: value, blinding factor (32 bytes) and the 20-byte message."""

    value: int
    blind: bytes
    message: bytes


def rewind(
    proof: bytes,
    commitment: CommitmentLike,
    value_gen: GeneratorLike,
    nonce: bytes,
    extra_commit: bytes | None = None,
    nbits: int = 64,
    gens: GeneratorSet | None = None,
    *,
    min_value: int = 0,
) -> Rewound | None:
    """Recover (value, blind, message), or None if the proof does not rewind with this nonce
    to an opening of ``commitment``. ProofError if the proof is malformed."""
    if gens is None:
        gens = default_generators()
    if len(nonce) != 32:
        raise proof_error("parameters", "nonce must be 32 bytes")
    proof = bytes(proof)
    lay = layout(nbits, 1)
    if len(proof) != lay.length:
        raise proof_error("length", f"proof is {len(proof)} bytes, expected {lay.length}")
    if not 0 <= min_value < 1 << 64:
        raise proof_error("parameters", "min_value out of range")
    vg = _value_gen_bytes(value_gen)
    cb = _commitment_bytes(commitment)
    taux_s = int.from_bytes(proof[0:32], "big")
    mu_s = int.from_bytes(proof[32:64], "big")
    if not (0 < taux_s < N and 0 < mu_s < N):
        raise proof_error("scalar-range", "stored scalar is zero or not below n")
    flags = proof[OFF_FLAGS]

    tr = Transcript.for_statement([cb], vg, extra_commit, [min_value] if min_value > 0 else None)
    a_s = proof[OFF_POINTS: OFF_POINTS + 64]
    tr.absorb_points(flags & 1, (flags >> 1) & 1, a_s)  # → y (not needed here)
    z = challenge(tr.absorb_points(flags & 1, (flags >> 1) & 1, a_s))
    x = challenge(tr.absorb_points((flags >> 2) & 1, (flags >> 3) & 1,
                                   proof[OFF_POINTS + 64: OFF_POINTS + 128]))

    alpha0, rho = chacha_pair(nonce, 0)
    tau1, tau2 = chacha_pair(nonce, 1)
    vs = ((mu_s + rho * x + alpha0) % N).to_bytes(32, "big")
    if vs[:4] != bytes(4):
        return None
    value = int.from_bytes(vs[24:], "big")
    z2_inv = pow(z * z % N, -1, N)  # z is a public challenge: no blinding needed
    gamma = (-(taux_s + tau1 * x + tau2 * x % N * x) * z2_inv) % N

    # The opening check v·g + γ·h = V, in constant time (v and γ are the owner's secrets).
    try:
        g_point = Generator.parse(vg).point
        expected = Commitment.parse(cb).point
    except EncodingError as exc:
        raise proof_error("commitment-prefix", str(exc)) from None
    opened = ct.mul_or_zero(value, g_point) + ct.mul_or_zero(gamma, gens.blinding_gen)
    if opened != expected:
        return None
    return Rewound(value=value, blind=gamma.to_bytes(32, "big"), message=vs[4:24])

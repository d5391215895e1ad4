"""Borromean range proofs: secp256k1-zkp's ``rangeproof``, what Elements and Liquid carry.

- ``info(proof)`` / ``parse(proof)``: the header (exp, mantissa, min, max) and the layout
  (``format``); malformed bytes raise ``ProofError`` with a stable ``reason`` (``REASONS``).
- ``verify(proof, commitment, generator, extra_commit)`` → (min, max) or False;
  ``verify_many(claims, threads)`` checks many at once on the ring kernel (every ring of every
  proof in waves, across cores).
- ``rewind(proof, commitment, generator, extra_commit, nonce)`` → value, blinding factor,
  message (``RewindResult``), the opening checked; ``rewind_known_valid`` the same for a proof
  the caller knows verifies (only the challenges the recovery needs are computed).
- ``sign(value, blind, nonce, generator, ...)``: byte-identical to ``secp256k1_rangeproof_sign``;
  ``sign.sign_with_ring_points`` also keeps every member's R (``SignedRangeProof``), which
  ``verify_many(..., ring_points=...)`` checks in one multi-scalar multiplication.
- ``elements``: Elements' use: ECDH nonces, unblinding outputs (asset ‖ abf message), the
  wallet's proof parameters, issuance and blind-value (exact) proofs.

Format, algorithms and vectors: ``docs/borromean.md``.
"""

from ctplugin.borromean import elements
from ctplugin.borromean.format import (
    EXACT_PROOF_LEN,
    MAX_MESSAGE_LEN,
    MAX_PROOF_LEN,
    REASONS,
    ParsedRangeProof,
    RangeProofInfo,
    info,
    parse,
    proof_len,
    ring_sizes,
)
from ctplugin.borromean.rewind import RewindResult, rewind, rewind_known_valid
from ctplugin.borromean.sign import ProveParams, SignedRangeProof, prove_params, sign
from ctplugin.borromean.verify import (
    RangeProofClaim,
    RangeProofVerdict,
    default_threads,
    verify,
    verify_many,
)

__all__ = [
    "EXACT_PROOF_LEN",
    "MAX_MESSAGE_LEN",
    "MAX_PROOF_LEN",
    "REASONS",
    "ParsedRangeProof",
    "ProveParams",
    "RangeProofClaim",
    "RangeProofInfo",
    "RangeProofVerdict",
    "RewindResult",
    "SignedRangeProof",
    "default_threads",
    "elements",
    "info",
    "parse",
    "proof_len",
    "prove_params",
    "rewind",
    "rewind_known_valid",
    "ring_sizes",
    "sign",
    "verify",
    "verify_many",
]  # fmt: skip

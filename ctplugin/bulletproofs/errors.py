"""Every ``ProofError.reason`` the Bulletproof modules raise, with its meaning (a caller can
switch on the reason; the message adds the details)."""

from __future__ import annotations

from ctplugin.errors import ProofError

REASONS = {
    "parameters": "unsupported parameters (nbits, m, n_gens, counts, nonce or message sizes)",
    "generators": "the generator set is too small for N = nbits·m",
    "value-generator": "the value generator is not a valid 0a/0b encoding",
    "commitment-length": "a commitment is not 33 bytes (per aggregated value)",
    "commitment-prefix": "a commitment does not start with 08 or 09 (or does not encode)",
    "commitment-point": "a given decoded commitment does not match its encoding",
    "length": "the proof is not exactly the layout's length",
    "flag-bits": "an unused flag bit is set",
    "scalar-range": "a proof scalar is zero or not below the group order",
    "field-range": "a proof point's x is not below the field size",
    "off-curve": "a proof point's x is not on the curve",
    "challenge-range": "a transcript challenge is zero or not below the group order",
    "min-value-unsupported": "min_value other than one value below 2^32 for m = 1",
    "value-range": "a value, min value or blinding factor out of range (prover)",
    "degenerate": "a degenerate proof point (prover; use another nonce)",
}


def proof_error(reason: str, message: str) -> ProofError:
    """A ``ProofError`` with one of ``REASONS`` as its ``reason``."""
    assert reason in REASONS, reason
    return ProofError(message, reason=reason)

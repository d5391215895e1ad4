"""Every ``ProofError.reason`` the surjection-proof modules raise, with its meaning (a caller can
switch on the reason; the message adds the details)."""

from __future__ import annotations

REASONS = {
    "length": "the proof (or a field of it) is not the size its header implies",
    "input-count": "the proof covers no input or more than MAX_INPUTS",
    "used-inputs": "the used-input bitmap is empty, marks inputs beyond the count, or uses "
                   "more inputs than allowed",
    "count-mismatch": "not one s scalar per used input",
    "scalar-range": "an s scalar is zero or not below the group order",
    "parameters": "prover arguments out of range (seed, counts, tags, secrets, list lengths)",
    "no-matching-input": "the prover found no input carrying the output's asset",
    "degenerate": "equal blinding factors or an input generator equal to the output's",
    "retry": "a degenerate value from this seed (negligible probability): use another seed",
}

"""Asset surjection proofs (secp256k1-zkp / Elements): parse, serialize, verify, generate.

- ``SurjectionProof``: the immutable parsed proof (``parse`` is strict: ``ProofError``).
- ``verify(proof, input_generators, output_generator) -> bool``: public data, variable time;
  ``verify_prepared(proof, PreparedTargets(input_generators), output_packed)`` when several
  proofs (a transaction's outputs) share one target list; ``verify_many_prepared`` for many
  proofs at once (a block's: one ring-kernel call), ``rings_of_many_prepared`` the same in two
  parts (the ring kernel's call left to run on another thread).
- ``generate(...)``: wallet side, deterministic from a caller-provided 32-byte seed.
"""

from ctplugin.surjection.proof import (
    MAX_INPUTS,
    MAX_USED_INPUTS,
    WALLET_USED_INPUTS,
    SurjectionProof,
    serialized_size,
)
from ctplugin.surjection.prover import generate, select_inputs
from ctplugin.surjection.verifier import (
    PreparedTargets,
    rings_of_many_prepared,
    surjection_message,
    verify,
    verify_bytes,
    verify_many_prepared,
    verify_prepared,
)

__all__ = [
    "MAX_INPUTS",
    "MAX_USED_INPUTS",
    "WALLET_USED_INPUTS",
    "PreparedTargets",
    "SurjectionProof",
    "generate",
    "rings_of_many_prepared",
    "select_inputs",
    "serialized_size",
    "surjection_message",
    "verify",
    "verify_bytes",
    "verify_many_prepared",
    "verify_prepared",
]

"""Bulletproof range proofs in the secp256k1-zkp production format (Grin; 675 bytes at 64 bits).

Modules (split like dalek's bulletproofs): ``generators`` (generator sets, cached), ``transcript``
(Fiat–Shamir: the one transcript), ``nonces`` (the reference's ChaCha20 randomness), ``layout``
(byte layout and limits), ``prover``, ``verifier`` (single verify and batch claim groups over
``ctplugin.batch``), ``kernel`` (the verification setup of a whole batch in one native call,
with its pure-Python twin ``_reference``),
``rewind`` (owner recovery of value, blind and message), ``params`` / ``consensus`` (our chain's
parameters and the helpers the validator and wallet use).
Spec: docs/bulletproofs-format.md.
"""

from ctplugin.bulletproofs.consensus import (
    consensus_generators,
    output_range_proof_claim,
    output_range_proof_claims,
    prove_output,
    rewind_output,
    verify_output,
)
from ctplugin.bulletproofs.generators import GeneratorSet, generator_set
from ctplugin.bulletproofs.layout import MAX_AGGREGATION, MAX_NBITS, MAX_PROOF_LENGTH, proof_length
from ctplugin.bulletproofs.params import (
    CONSENSUS_BLINDING_GEN,
    CONSENSUS_M,
    CONSENSUS_N_GENS,
    CONSENSUS_NBITS,
    CONSENSUS_PROOF_LENGTH,
)
from ctplugin.bulletproofs.prover import prove
from ctplugin.bulletproofs.verifier import (
    RangeProofClaims,
    default_generators,
    range_proof_claim,
    range_proof_claims,
    verify,
    verify_batch,
)

__all__ = [
    "CONSENSUS_BLINDING_GEN",
    "CONSENSUS_M",
    "CONSENSUS_NBITS",
    "CONSENSUS_N_GENS",
    "CONSENSUS_PROOF_LENGTH",
    "MAX_AGGREGATION",
    "MAX_NBITS",
    "MAX_PROOF_LENGTH",
    "GeneratorSet",
    "RangeProofClaims",
    "consensus_generators",
    "default_generators",
    "generator_set",
    "output_range_proof_claim",
    "output_range_proof_claims",
    "proof_length",
    "prove",
    "prove_output",
    "range_proof_claim",
    "range_proof_claims",
    "rewind_output",
    "verify",
    "verify_batch",
    "verify_output",
]

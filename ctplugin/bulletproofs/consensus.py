"""Range proofs exactly as our chain uses them (docs/design.md "Chain parameters"; params.py).

One confidential output carries one proof: m = 1, nbits = 64, the n_gens = 256 generator set
seeded from G, blinding generator G, value generator = the output's asset generator (33-byte
0a/0b encoding), extra_commit = the output's scriptPubKey (always passed; b"" for an empty
script, never None), no min_value. The validator builds its block batch from
``output_range_proof_claim``; the wallet proves with ``prove_output`` and recovers its outputs
with ``rewind_output``.

For the block batch (docs/design.md "Batch verification"): create one
``BatchVerifier(consensus_generators().fixed)`` and add ``output_range_proof_claims`` of every
output (ONE group: one kernel call prepares them all) and every balance equation as a ``Claim``
on the same base. Index ``GeneratorSet.H_INDEX`` (0) of that base is G, so a balance equation's
G coefficient (e.g. the sum of blinding factors of explicit amounts) can be a
``fixed_const=((0, 1, scalar),)`` term, and asset generators / H can be ``shared`` terms (merged
across the block).
"""

from __future__ import annotations

from collections.abc import Sequence

from ctplugin.batch import Label
from ctplugin.bulletproofs.generators import GeneratorSet, generator_set
from ctplugin.bulletproofs.params import (
    CONSENSUS_BLINDING_GEN,
    CONSENSUS_M,
    CONSENSUS_N_GENS,
    CONSENSUS_NBITS,
)
from ctplugin.bulletproofs.prover import prove
from ctplugin.bulletproofs.rewind import Rewound, rewind
from ctplugin.bulletproofs.verifier import (
    RangeProofClaims,
    prepare_claims,
    range_proof_claim,
    verify,
)
from ctplugin.pedersen import Generator


def consensus_generators() -> GeneratorSet:
    """The chain's generator set (built once per process); its ``fixed`` base is the one the
    block's BatchVerifier should use."""
    return generator_set(CONSENSUS_N_GENS, CONSENSUS_BLINDING_GEN)


def output_range_proof_claims(proofs: Sequence[bytes], commitments: Sequence[bytes],
                              asset_generators: Sequence[bytes],
                              script_pubkeys: Sequence[bytes], labels: Sequence[Label],
                              commitment_points: Sequence[bytes | None] | None = None,
                              threads: int = 0) -> RangeProofClaims:
    """The batch claims of many outputs' range proofs, as one group (one kernel call): each
    output's proof (675 bytes), commitment and asset generator (33-byte encodings) and
    scriptPubKey, with its label. Malformed ones are in ``failures`` (label, ProofError).
    ``commitment_points``: commitments as already decoded by the kernel (optional, per output;
    saves one square root each). ``threads``: cores the kernel may use (0: the kernel
    setting)."""
    return prepare_claims(consensus_generators(), CONSENSUS_NBITS, CONSENSUS_M, proofs,
                          commitments, asset_generators, script_pubkeys, labels,
                          commitment_points=commitment_points, threads=threads)


def output_range_proof_claim(proof: bytes, commitment: bytes, asset_generator: bytes,
                             script_pubkey: bytes, label: Label = None,
                             commitment_point: bytes | None = None) -> RangeProofClaims:
    """The batch claim of one output's range proof; ProofError if malformed or not 675 bytes.
    ``commitment_point``: the commitment as already decoded by the kernel (optional; saves one
    square root)."""
    return range_proof_claim(proof, [commitment], asset_generator, bytes(script_pubkey),
                             CONSENSUS_NBITS, consensus_generators(), label=label,
                             commitment_points=commitment_point)


def verify_output(proof: bytes, commitment: bytes, asset_generator: bytes,
                  script_pubkey: bytes) -> bool:
    """Verify one output's range proof on its own (ProofError if malformed)."""
    return verify(proof, [commitment], asset_generator, bytes(script_pubkey), CONSENSUS_NBITS,
                  consensus_generators())


def prove_output(value: int, blind: int | bytes, asset_generator: Generator, nonce: bytes,
                 script_pubkey: bytes, message: bytes | None = None) -> bytes:
    """The wallet side: a 675-byte proof for value·asset + blind·G bound to the script."""
    return prove([value], [blind], asset_generator, nonce, extra_commit=bytes(script_pubkey),
                 nbits=CONSENSUS_NBITS, gens=consensus_generators(), message=message)


def rewind_output(proof: bytes, commitment: bytes, asset_generator: bytes, nonce: bytes,
                  script_pubkey: bytes) -> Rewound | None:
    """Recover (value, blind, message) of an output we proved with ``nonce``."""
    return rewind(proof, commitment, asset_generator, nonce, bytes(script_pubkey),
                  CONSENSUS_NBITS, consensus_generators())

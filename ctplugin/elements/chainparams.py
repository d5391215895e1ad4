"""Chain parameters: what validation needs to know about a chain, kept out of validation.

As in Bitcoin Core, the rules are written once and read their chain-specific values from a
``ChainParams``; ``regtest.params.chain_params()`` is our regtest chain's instance.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctplugin.elements.consensus import DEFAULT_COINBASE_MATURITY
from ctplugin.errors import EncodingError

RANGE_PROOF_BULLETPROOF = "bulletproof"
"""A secp256k1-zkp Bulletproof (design.md: m = 1, 64 bits, 256 generators)."""
RANGE_PROOF_BORROMEAN = "borromean"
"""A secp256k1-zkp Borromean ``rangeproof``, what Elements and Liquid carry."""
RANGE_PROOF_KINDS = frozenset({RANGE_PROOF_BULLETPROOF, RANGE_PROOF_BORROMEAN})
ELEMENTS_RANGE_PROOFS = frozenset({RANGE_PROOF_BORROMEAN})
"""What Elements and Liquid accept (and what elementsd's decoder assumes every proof is)."""

CONSENSUS_BULLETPROOF_SIZE = 675
"""Bytes of a consensus Bulletproof (m = 1, 64 bits; ``bulletproofs.layout.proof_length``):
no Borromean proof has this size (theirs are 65, 73 or 2·32·rings + ... bytes, never 675)."""


def range_proof_kind(proof: bytes, accepted: frozenset[str]) -> str:
    """The kind a chain accepting ``accepted`` takes ``proof`` for: with one kind, that kind;
    with both, a proof of the consensus Bulletproof size is a Bulletproof, any other a
    Borromean proof."""
    if RANGE_PROOF_BORROMEAN in accepted and (
            RANGE_PROOF_BULLETPROOF not in accepted or len(proof) != CONSENSUS_BULLETPROOF_SIZE):
        return RANGE_PROOF_BORROMEAN
    return RANGE_PROOF_BULLETPROOF


@dataclass(frozen=True, slots=True)
class ChainParams:
    """The chain-specific values of the consensus rules.

    - ``policy_asset``: the asset fees are paid in (32-byte id, internal byte order);
    - ``block_challenge``: the signed-block challenge script every header must carry (our regtest
      chain: ``OP_TRUE`` with an empty solution);
    - ``coinbase_maturity``: blocks before a coinbase output may be spent;
    - ``range_proofs``: the range-proof kinds the chain accepts (``RANGE_PROOF_KINDS``). With
      both, a proof of the consensus Bulletproof size is a Bulletproof and any other a
      Borromean proof (no Borromean proof has that size);
    - ``genesis_hash``: the genesis block's hash (internal byte order); taproot signature
      hashes commit to it twice, so signatures are bound to one chain (``sighash.md`` §2.1);
    - ``network_magic``: the 4 message-start bytes that frame block-file records (Core's
      ``pchMessageStart``; our regtest chain's value is ``regtest.params.NETWORK_MAGIC``).
    """

    policy_asset: bytes
    block_challenge: bytes = b"\x51"
    coinbase_maturity: int = DEFAULT_COINBASE_MATURITY
    range_proofs: frozenset[str] = frozenset({RANGE_PROOF_BULLETPROOF})
    genesis_hash: bytes = bytes(32)
    network_magic: bytes = b"\xfa\xbf\xb5\xda"

    def __post_init__(self) -> None:
        if not self.range_proofs or not self.range_proofs <= RANGE_PROOF_KINDS:
            raise EncodingError("range_proofs must be a non-empty subset of "
                                f"{sorted(RANGE_PROOF_KINDS)}", reason="kind")

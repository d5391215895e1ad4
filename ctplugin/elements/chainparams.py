"""Chain parameters: what validation needs to know about a chain, kept out of validation.

As Bitcoin Core's ``CChainParams`` (``src/kernel/chainparams.cpp``), one value per chain holds
its name, its genesis block and every chain-specific value the rules read; the rules are written
once. The chains we run are registered by name in ``regtest.params`` (``select_chain``); a new
chain is a new ``ChainParams`` value there, not new plumbing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ctplugin.elements.model import Block
from ctplugin.errors import CtpluginError, EncodingError


class RangeProofKind(enum.Enum):
    """A kind of range proof a chain may accept; the value is its command-line spelling."""

    BULLETPROOF = "bulletproof"
    """A secp256k1-zkp Bulletproof (docs/design.md: m = 1, 64 bits, 256 generators)."""
    BORROMEAN = "borromean"
    """A secp256k1-zkp Borromean ``rangeproof``, what Elements and Liquid carry."""


ALL_RANGE_PROOFS = frozenset(RangeProofKind)
"""Both kinds: what the real-data audit reads (``range_proof_kind`` tells them apart)."""
ELEMENTS_RANGE_PROOFS = frozenset({RangeProofKind.BORROMEAN})
"""What Elements and Liquid accept (and what elementsd's decoder assumes every proof is)."""

CONSENSUS_BULLETPROOF_SIZE = 675
"""Bytes of a consensus Bulletproof (m = 1, 64 bits; ``bulletproofs.layout.proof_length``):
no Borromean proof has this size (theirs are 65, 73 or 2·32·rings + ... bytes, never 675)."""


class UnknownChainError(CtpluginError, ValueError):
    """No chain of that name is registered; the message lists the names there are."""


def range_proof_kind(proof: bytes, accepted: frozenset[RangeProofKind]) -> RangeProofKind:
    """The kind a chain accepting ``accepted`` takes ``proof`` for: with one kind, that kind;
    with both, a proof of the consensus Bulletproof size is a Bulletproof, any other a
    Borromean proof."""
    if RangeProofKind.BORROMEAN in accepted and (
            RangeProofKind.BULLETPROOF not in accepted
            or len(proof) != CONSENSUS_BULLETPROOF_SIZE):
        return RangeProofKind.BORROMEAN
    return RangeProofKind.BULLETPROOF


@dataclass(frozen=True, slots=True)
class ChainParams:
    """The chain-specific values of the consensus rules, every one explicit (no defaults: a
    profile states all of its values).

    - ``name``: what selects the chain (``-chain=NAME``) and what its data directories record;
    - ``genesis``: the genesis block; ``genesis_hash`` (internal byte order) is derived from it.
      Taproot signature hashes commit to that hash twice, so signatures are bound to one chain
      (docs/sighash.md §2.1);
    - ``policy_asset``: the asset fees are paid in (32-byte id, internal byte order);
    - ``block_challenge``: the signed-block challenge script every header must carry;
    - ``coinbase_maturity``: blocks before a coinbase output may be spent;
    - ``range_proofs``: the range-proof kinds the chain accepts. With both, a proof of the
      consensus Bulletproof size is a Bulletproof and any other a Borromean proof (no Borromean
      proof has that size: ``range_proof_kind``);
    - ``network_magic``: the 4 message-start bytes that frame block-file records (Core's
      ``pchMessageStart``).
    """

    name: str
    genesis: Block
    policy_asset: bytes
    block_challenge: bytes
    coinbase_maturity: int
    range_proofs: frozenset[RangeProofKind]
    network_magic: bytes
    genesis_hash: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.genesis, Block) or not all(
                isinstance(k, RangeProofKind) for k in self.range_proofs):
            raise EncodingError("genesis must be a Block and range_proofs RangeProofKind values",
                                reason="type")
        if not self.name or not self.range_proofs:
            raise EncodingError("a chain needs a name and at least one range-proof kind",
                                reason="length")
        if len(self.policy_asset) != 32 or len(self.network_magic) != 4:
            raise EncodingError("policy_asset takes 32 bytes and network_magic 4",
                                reason="length")
        # Derived once: the validator reads it for every taproot signature hash.
        object.__setattr__(self, "genesis_hash", self.genesis.hash)

    @property
    def wallet_range_proof(self) -> RangeProofKind:
        """The kind a wallet on this chain makes: a Bulletproof where the chain takes them
        (one batch item instead of a ring check), else the chain's kind."""
        if RangeProofKind.BULLETPROOF in self.range_proofs:
            return RangeProofKind.BULLETPROOF
        return min(self.range_proofs, key=lambda kind: kind.value)

"""Issuance ids (docs/elements-format.md §1.1 "Issuance IDs"), all built on the fast-Merkle
midstate.

entropy = FMR(sha256d(prevout), contract_hash)      (prevout = 32-byte hash || 4-byte LE index)
asset   = FMR(entropy, 0^32)
token   = FMR(entropy, 1 as 32-byte LE)  if the issuance amount is explicit or null
          FMR(entropy, 2 as 32-byte LE)  if it is blinded (a commitment)

A two-leaf fast Merkle root is a single SHA-256 compression of left || right.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctplugin import hashes
from ctplugin.errors import EncodingError

_ZERO32 = bytes(32)
_TOKEN_EXPLICIT = (1).to_bytes(32, "little")
_TOKEN_BLINDED = (2).to_bytes(32, "little")


def _hash32(name: str, value: bytes) -> None:
    if not isinstance(value, bytes) or len(value) != 32:
        raise EncodingError(f"{name} must be 32 bytes", reason="length")


def issuance_entropy(prevout_hash: bytes, prevout_index: int, contract_hash: bytes) -> bytes:
    """GenerateAssetEntropy for a new issuance spending (prevout_hash, prevout_index)."""
    _hash32("prevout_hash", prevout_hash)
    _hash32("contract_hash", contract_hash)
    if not 0 <= prevout_index <= 0xFFFF_FFFF:
        raise EncodingError("prevout index must fit in 32 bits", reason="value-range")
    prevout = prevout_hash + prevout_index.to_bytes(4, "little")
    return hashes.sha256_midstate(hashes.sha256d(prevout) + contract_hash)


def issuance_asset_id(entropy: bytes) -> bytes:
    """CalculateAsset: the issued asset's id (internal byte order)."""
    _hash32("entropy", entropy)
    return hashes.sha256_midstate(entropy + _ZERO32)


def reissuance_token_id(entropy: bytes, amount_is_blinded: bool) -> bytes:
    """CalculateReissuanceToken: the reissuance token's id."""
    _hash32("entropy", entropy)
    return hashes.sha256_midstate(entropy + (_TOKEN_BLINDED if amount_is_blinded
                                             else _TOKEN_EXPLICIT))


@dataclass(frozen=True, slots=True)
class IssuanceIds:
    entropy: bytes
    asset: bytes
    token: bytes


def input_issuance_ids(txin: object) -> IssuanceIds | None:
    """Entropy, asset id and token id of a TxIn's issuance (None without one).

    New issuance: entropy from the input's prevout and the contract hash (``asset_entropy``);
    reissuance: entropy is ``asset_entropy`` itself.  The token id uses whether the issuance
    amount is blinded, as Elements' VerifyAmounts does for both cases.
    """
    issuance = txin.issuance  # type: ignore[attr-defined]
    if issuance is None:
        return None
    if issuance.is_reissuance:
        entropy = issuance.asset_entropy
    else:
        entropy = issuance_entropy(txin.prevout_hash, txin.prevout_index,  # type: ignore[attr-defined]
                                   issuance.asset_entropy)
    return IssuanceIds(entropy, issuance_asset_id(entropy),
                       reissuance_token_id(entropy, issuance.amount_is_blinded))

"""The wallet's receiving addresses: a scriptPubKey with the blinding pubkey outputs to it are
blinded to. Their text is the chain's (``ChainParams.addresses``), written and read by the one
codec, ``ctplugin.elements.address`` (docs/elements-regtest.md §6): on our ctregtest chains and
elementsregtest alike ``el1…`` (blech32) / ``ert1…`` (bech32) for segwit, ``CTE…`` / ``2d…``
and ``Azp…`` / ``X…`` for P2PKH and P2SH.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctplugin.elements.address import Destination, encode_destination
from ctplugin.elements.chainparams import AddressParams
from ctplugin.errors import EncodingError


@dataclass(frozen=True, slots=True)
class ConfidentialAddress:
    """A receiving address: the scriptPubKey to pay and the blinding public key to blind to."""

    script_pubkey: bytes
    blinding_pubkey: bytes

    def __post_init__(self) -> None:
        if len(self.blinding_pubkey) != 33 or self.blinding_pubkey[0] not in (2, 3):
            raise EncodingError("blinding public key must be 33 bytes compressed", reason="length")

    @property
    def destination(self) -> Destination:
        return Destination(self.script_pubkey, self.blinding_pubkey)

    def encode(self, params: AddressParams) -> str:
        """The confidential address on a chain (blech32 for segwit, blinded base58 else)."""
        return encode_destination(self.script_pubkey, params, self.blinding_pubkey)

"""The Pedersen balance of one transaction as a batch claim (docs/elements-format.md §2.2, step 3).

Elements' rule ``pedersen_verify_tally(inputs ‖ issuances, outputs ‖ fees)`` is the equation

    Σ_in C_i + Σ_iss C_k − Σ_out C_j  =  ∞

where a blinded amount is its Pedersen commitment C = v·A + r·G (A the asset generator) and an
explicit amount v of asset generator A is committed with a zero blind, C = v·A (fees included:
they are ordinary explicit outputs). As a ``ctplugin.batch.Claim``:

- each blinded commitment is a *free* term with scalar +1 (inputs, issuances) or −1 (outputs);
- explicit amounts are *shared* terms keyed by the generator point with scalar Σ ±v, so one
  asset costs one point however many explicit amounts use it (and the batch merges it across
  every transaction of the block, and with the range proofs' value-generator terms).

The batch then weights the whole equation by a random 128-bit scalar. The balance is never cached
(docs/design.md): it depends on the spent outputs, not on the transaction alone.
"""

from __future__ import annotations

from collections.abc import Hashable

from ctplugin.batch import Claim
from ctplugin.secp256k1.params import N

_PLUS = (1).to_bytes(32, "big")
_MINUS = (N - 1).to_bytes(32, "big")


class BalanceTally:
    """Accumulates Σ inputs − Σ outputs of one transaction (see the module docstring)."""

    __slots__ = ("explicit", "points", "scalars")

    def __init__(self) -> None:
        self.points: list[bytes] = []
        self.scalars: list[bytes] = []
        self.explicit: dict[bytes, int] = {}

    def add_input_commitment(self, packed: bytes) -> None:
        """A blinded input or issuance amount (kernel-packed commitment point)."""
        self.points.append(packed)
        self.scalars.append(_PLUS)

    def add_output_commitment(self, packed: bytes) -> None:
        self.points.append(packed)
        self.scalars.append(_MINUS)

    def add_explicit(self, generator_packed: bytes, amount: int) -> None:
        """``amount``·A, signed: positive for inputs and issuances, negative for outputs."""
        self.explicit[generator_packed] = self.explicit.get(generator_packed, 0) + amount

    def claim(self, label: Hashable) -> Claim:
        """The claim (built unchecked: every point came out of the kernel's decoder, every
        scalar is reduced here)."""
        shared = tuple((p, s % N) for p, s in self.explicit.items() if s % N)
        return Claim.trusted(label, None, (), b"".join(self.scalars), b"".join(self.points),
                             shared, ())

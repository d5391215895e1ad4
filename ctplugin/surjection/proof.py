"""The asset surjection proof value type and its wire format (secp256k1-zkp).

Serialization (``secp256k1_surjectionproof_serialize``)::

    2 bytes   n_inputs, little-endian, 1 <= n_inputs <= 256
    ceil(n_inputs / 8) bytes   bitmap of used inputs (bit i % 8 of byte i // 8), no bit >= n_inputs
    32 bytes  e0, the Borromean ring signature's closing challenge hash
    32 bytes  s_j for every used input j, in input order (big-endian scalars, 0 < s_j < n)

Parsing here is stricter than the C parser, which accepts n_inputs = 0, no used input and
out-of-range scalars and lets verification fail later: every such proof can never verify, so it is
rejected up front with a ``ProofError`` and the verifier only ever sees well-formed proofs.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctplugin.errors import ProofError
from ctplugin.secp256k1.params import N

MAX_INPUTS = 256
"""SECP256K1_SURJECTIONPROOF_MAX_N_INPUTS: the largest target set a proof can cover."""

MAX_USED_INPUTS = 256
"""SECP256K1_SURJECTIONPROOF_MAX_USED_INPUTS of the standard build (Elements consensus)."""

WALLET_USED_INPUTS = 3
"""How many inputs Elements' wallet and libwally put into the ring (fewer if fewer inputs)."""


_BYTE_BITS = tuple(tuple(b for b in range(8) if v >> b & 1) for v in range(256))
"""The set bit positions of each byte value, in increasing order (bitmap decoding)."""
_ZERO = bytes(32)
_N_BYTES = N.to_bytes(32, "big")


def bitmap_len(n_inputs: int) -> int:
    return (n_inputs + 7) // 8


def serialized_size(n_inputs: int, n_used: int) -> int:
    """SECP256K1_SURJECTIONPROOF_SERIALIZATION_BYTES(n_inputs, n_used)."""
    return 2 + bitmap_len(n_inputs) + 32 * (1 + n_used)


@dataclass(frozen=True, slots=True)
class SurjectionProof:
    """A parsed surjection proof: which inputs form the ring, and the ring signature (e0, s).

    ``used`` holds the used input indices in increasing order; ``s`` the matching scalars as
    32-byte big-endian strings (already checked to be in [1, n)).
    """

    n_inputs: int
    used: tuple[int, ...]
    e0: bytes
    s: tuple[bytes, ...]

    def __post_init__(self) -> None:
        if not 1 <= self.n_inputs <= MAX_INPUTS:
            raise ProofError(f"surjection proof covers {self.n_inputs} inputs, not 1..{MAX_INPUTS}",
                             reason="input-count")
        if not self.used or len(self.used) > MAX_USED_INPUTS:
            raise ProofError(f"surjection proof uses {len(self.used)} inputs", reason="used-inputs")
        increasing = all(a < b for a, b in zip(self.used, self.used[1:]))
        if not increasing or self.used[0] < 0 or self.used[-1] >= self.n_inputs:
            raise ProofError("used input indices must be distinct, increasing and < n_inputs",
                             reason="used-inputs")
        if len(self.s) != len(self.used):
            raise ProofError("one s scalar per used input is required", reason="count-mismatch")
        if len(self.e0) != 32:
            raise ProofError("e0 must be 32 bytes", reason="length")
        for j, s in enumerate(self.s):
            if len(s) != 32:
                raise ProofError(f"s[{j}] must be 32 bytes", reason="length")
            if not 0 < int.from_bytes(s, "big") < N:
                raise ProofError(f"s[{j}] is zero or not below the group order",
                                 reason="scalar-range")

    @property
    def n_used(self) -> int:
        return len(self.used)

    @property
    def bitmap(self) -> bytes:
        out = bytearray(bitmap_len(self.n_inputs))
        for i in self.used:
            out[i >> 3] |= 1 << (i & 7)
        return bytes(out)

    @classmethod
    def parse(cls, data: bytes | bytearray | memoryview, *,
              max_used: int = MAX_USED_INPUTS) -> SurjectionProof:
        """Strict ``secp256k1_surjectionproof_parse``; ``ProofError`` on any malformation.

        ``max_used`` caps the ring size (verification cost is one double multiplication per
        used input). The default is the consensus limit; a policy may pass a smaller one
        (Elements' wallet never uses more than ``WALLET_USED_INPUTS``).
        """
        data = bytes(data)
        if len(data) < 2:
            raise ProofError(f"surjection proof of {len(data)} bytes is shorter than its header",
                             reason="length")
        n_inputs = data[0] | data[1] << 8
        if not 1 <= n_inputs <= MAX_INPUTS:
            raise ProofError(f"surjection proof covers {n_inputs} inputs, not 1..{MAX_INPUTS}",
                             reason="input-count")
        nbytes = bitmap_len(n_inputs)
        if len(data) < 2 + nbytes:
            raise ProofError("surjection proof truncated inside its used-input bitmap",
                             reason="length")
        bitmap = data[2: 2 + nbytes]
        if n_inputs % 8 and bitmap[-1] >> (n_inputs % 8):
            raise ProofError("surjection proof bitmap marks inputs beyond n_inputs",
                             reason="used-inputs")
        # (no bit at or beyond n_inputs is set, so every set bit is a used input)
        if nbytes == 1:
            used = _BYTE_BITS[bitmap[0]]
        else:
            used = tuple(8 * k + b for k, byte in enumerate(bitmap) for b in _BYTE_BITS[byte])
        if not used:
            raise ProofError("surjection proof uses no input", reason="used-inputs")
        if len(used) > max_used:
            raise ProofError(f"surjection proof uses {len(used)} inputs, over {max_used}",
                             reason="used-inputs")
        expected = serialized_size(n_inputs, len(used))
        if len(data) != expected:
            raise ProofError(f"surjection proof is {len(data)} bytes, expected {expected}",
                             reason="length")
        sig = 2 + nbytes
        e0 = data[sig: sig + 32]
        s = tuple(data[sig + 32 * (j + 1): sig + 32 * (j + 2)] for j in range(len(used)))
        for j, scalar in enumerate(s):
            # 0 < s_j < n on the 32-byte big-endian strings (same-length byte order is numeric)
            if not _ZERO < scalar < _N_BYTES:
                raise ProofError(f"s[{j}] is zero or not below the group order",
                                 reason="scalar-range")
        # Every invariant of __post_init__ holds by now (n_inputs in range, used non-empty,
        # increasing and below n_inputs by construction, 32-byte e0 and s_j in [1, n)): build
        # without checking them a second time (parse is on the block's hot path).
        proof = object.__new__(cls)
        _set_n_inputs(proof, n_inputs)
        _set_used(proof, used)
        _set_e0(proof, e0)
        _set_s(proof, s)
        return proof

    def serialize(self) -> bytes:
        return (self.n_inputs.to_bytes(2, "little") + self.bitmap + self.e0 + b"".join(self.s))

    @property
    def size(self) -> int:
        """Length of the serialization in bytes."""
        return serialized_size(self.n_inputs, len(self.used))


# Slot setters bypass the frozen dataclass's __setattr__ (for ``SurjectionProof.parse`` only).
_set_n_inputs = SurjectionProof.__dict__["n_inputs"].__set__
_set_used = SurjectionProof.__dict__["used"].__set__
_set_e0 = SurjectionProof.__dict__["e0"].__set__
_set_s = SurjectionProof.__dict__["s"].__set__

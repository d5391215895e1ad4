"""Surjection proof verification (``secp256k1_surjectionproof_verify``), variable time.

Everything verified here is public (generators, proof), so the variable-time kernel does the
point arithmetic on packed bytes with no per-call object construction.

A proof that output tag A is one of the used input tags T_i is a Borromean ring signature (one
ring) over the public keys P_j = A − T_{i_j}, i.e. knowledge of one discrete log x = r_out − r_in
with P = x·G. With m = ``surjection_message`` (a commitment to the whole target set and A):

    e_0 = H(e0 ‖ m ‖ be32(0) ‖ be32(0))
    R_j = e_j·P_j + s_j·G,    e_{j+1} = H(ser(R_j) ‖ m ‖ be32(0) ‖ be32(j+1))
    accept iff e0 = SHA256(ser(R_last) ‖ m)

where ser is the 33-byte compressed encoding (02/03 by y parity) and every e_j must be a
non-zero scalar below n, no P_j and no R_j may be infinity (Maxwell–Poelstra, "Borromean ring
signatures" 2015; secp256k1-zkp ``borromean_verify``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from functools import cache

from ctplugin.pedersen import Generator
from ctplugin.secp256k1 import g_table, kernel
from ctplugin.secp256k1.params import N
from ctplugin.surjection.proof import SurjectionProof

_k = kernel.backend
_INFINITY = kernel.INFINITY
_RING0 = bytes(4)  # be32(ring index 0): a surjection proof has exactly one ring


def compressed(packed: bytes) -> bytes:
    """33-byte SEC1 compressed encoding of a packed (x ‖ y) finite point."""
    return bytes((2 | (packed[63] & 1),)) + packed[:32]


def surjection_message(input_generators: Sequence[Generator], output_generator: Generator) -> bytes:
    """m = SHA256(ser(T_0) ‖ … ‖ ser(T_{n-1}) ‖ ser(A)), ser = compressed by y parity.

    (secp256k1-zkp ``surjection_genmessage``; note: y parity here, not the 0a/0b residue flag.)
    """
    h = hashlib.sha256()
    for generator in input_generators:
        h.update(compressed(generator.point.packed))
    h.update(compressed(output_generator.point.packed))
    return h.digest()


def borromean_hash(message: bytes, e: bytes, position: int) -> bytes:
    """H(e ‖ m ‖ be32(ring 0) ‖ be32(position)) (secp256k1-zkp ``borromean_hash``)."""
    return hashlib.sha256(e + message + _RING0 + position.to_bytes(4, "big")).digest()


def ring_public_keys(output_packed: bytes, inputs_packed: Sequence[bytes]) -> list[bytes]:
    """P_j = A − T_j for each input (packed bytes), normalized to affine with one shared
    inversion (the kernel's subset sums over the table [A, −T_0, −T_1, …]).

    Precondition: no T_j equals A (P_j would be infinity; callers check first).
    """
    return ring_keys_from_negated(output_packed, [_k.point_neg(t) for t in inputs_packed])


def ring_keys_from_negated(output_packed: bytes, negated_inputs: Sequence[bytes]) -> list[bytes]:
    """``ring_public_keys`` given −T_j (packed) already: P_j = A + (−T_j). Same precondition."""
    if len(negated_inputs) == 1:
        return [_k.point_add_var(output_packed, negated_inputs[0])]
    table = b"".join([output_packed, *negated_inputs])
    sums = _k.subset_sums_var(table, _pair_paths(len(negated_inputs)))
    return [sums[i: i + 64] for i in range(0, len(sums), 64)]


@cache
def _pair_paths(count: int) -> tuple[tuple[int, int], ...]:
    """Subset-sum paths (0, j), j = 1..count: table entry 0 (A) plus entry j (−T_j)."""
    return tuple((0, j) for j in range(1, count + 1))


class PreparedTargets:
    """A target list made ready for verifying many proofs against it (a transaction's outputs
    share one): the packed T_i, their negations −T_i (for P_j = A − T_j) and the SHA256 state
    after ser(T_0) ‖ … ‖ ser(T_{n-1}), the common prefix of every output's message m."""

    __slots__ = ("_prefix", "negated", "packed")

    def __init__(self, input_generators: Sequence[Generator]) -> None:
        self._set([g.point.packed for g in input_generators])

    @classmethod
    def from_packed(cls, points: Sequence[bytes]) -> PreparedTargets:
        """From the targets as packed kernel points (precondition: decoded by the kernel)."""
        targets = object.__new__(cls)
        targets._set(points)
        return targets

    def _set(self, points: Sequence[bytes]) -> None:
        self.packed: tuple[bytes, ...] = tuple(points)
        self.negated: tuple[bytes, ...] = tuple(_k.point_neg(t) for t in self.packed)
        prefix = hashlib.sha256()
        for t in self.packed:
            prefix.update(compressed(t))
        self._prefix = prefix

    def __len__(self) -> int:
        return len(self.packed)

    def message(self, output_packed: bytes) -> bytes:
        """``surjection_message`` of these targets and the output A (packed)."""
        h = self._prefix.copy()
        h.update(compressed(output_packed))
        return h.digest()


def verify(proof: SurjectionProof, input_generators: Sequence[Generator],
           output_generator: Generator) -> bool:
    """True iff ``proof`` shows ``output_generator`` is a blinding of one of the used inputs.

    ``input_generators`` is the full target list in order (Elements: each input's asset
    generator, followed by its issuance asset and token generators when it issues). A proof
    built for a different count is a ``False`` verdict, as in the C.
    """
    if proof.n_inputs != len(input_generators):
        return False
    return verify_prepared(proof, PreparedTargets(input_generators),
                           output_generator.point.packed)


def verify_prepared(proof: SurjectionProof, targets: PreparedTargets,
                    output_packed: bytes) -> bool:
    """``verify`` against prepared targets and the output generator A as a packed kernel point
    (decoded by the caller): the per-output work when several outputs share one target list."""
    if proof.n_inputs != len(targets.packed):
        return False
    used = proof.used
    inputs = targets.packed
    if any(inputs[i] == output_packed for i in used):  # some P_j would be infinity
        return False
    negated = targets.negated
    pubs = ring_keys_from_negated(output_packed, [negated[i] for i in used])
    message = targets.message(output_packed)
    e = borromean_hash(message, proof.e0, 0)
    last = len(pubs) - 1
    r_ser = b""
    table = g_table()
    for j, (pub, s) in enumerate(zip(pubs, proof.s)):
        if not 0 < int.from_bytes(e, "big") < N:
            return False
        r = table.msm_var(s, e, pub)  # s_j·G + e_j·P_j
        if r == _INFINITY:
            return False
        r_ser = compressed(r)
        if j != last:
            e = borromean_hash(message, r_ser, j + 1)
    return hashlib.sha256(r_ser + message).digest() == proof.e0


def verify_many_prepared(cases: Sequence[tuple[SurjectionProof, PreparedTargets, bytes]],
                         threads: int = 0) -> list[bool]:
    """``verify_prepared`` of many (proof, targets, output generator as a packed kernel point)
    at once, with the same verdicts: every ring in ONE ring-kernel call (``borromean_verify_var``:
    the rings advance in waves, their double multiplications sixteen at a time in IFMA lanes,
    one batch inversion per wave, on ``threads`` threads, 0 = the kernel setting), and every ring
    key P_j = A − T_j of every proof from one ``subset_sums_var`` call (one shared inversion)
    over a table of the distinct target lists' −T_i followed by the outputs."""
    return rings_of_many_prepared(cases)(threads)


def rings_of_many_prepared(cases: Sequence[tuple[SurjectionProof, PreparedTargets, bytes]]
                           ) -> Callable[[int], list[bool]]:
    """``verify_many_prepared`` in two parts: everything but the ring kernel now (the ring
    keys, messages and scalars), and the returned call runs the ring kernel on its ``threads``
    argument (0 = the kernel setting) and returns the verdicts. The call holds the GIL only to
    start and to finish: another thread can run it beside this thread's Python."""
    verdicts = [False] * len(cases)
    ready = [k for k, (proof, targets, output) in enumerate(cases)
             if proof.n_inputs == len(targets.packed)
             and not any(targets.packed[i] == output for i in proof.used)]  # else P_j = ∞
    if not ready:
        def none_ready(threads: int = 0) -> list[bool]:
            return verdicts

        return none_ready
    table: list[bytes] = []
    first: dict[int, int] = {}  # id(targets) -> table index of its −T_0
    for k in ready:
        targets = cases[k][1]
        if id(targets) not in first:
            first[id(targets)] = len(table)
            table += targets.negated
    outputs_at = len(table)
    paths: list[tuple[int, int]] = []
    sizes: list[bytes] = []
    scalars: list[bytes] = []
    e0m: list[bytes] = []
    for w, k in enumerate(ready):
        proof, targets, output = cases[k]
        table.append(output)
        start = first[id(targets)]
        paths += [(outputs_at + w, start + i) for i in proof.used]
        sizes.append(b"\x01\x00" + proof.n_used.to_bytes(2, "little"))
        scalars += proof.s
        e0m += (proof.e0, targets.message(output))
    pubs = _k.subset_sums_var(b"".join(table), paths)
    packed = (b"".join(sizes), b"".join(scalars), b"".join(e0m))

    def rings(threads: int = 0) -> list[bool]:
        ok, _ = _k.borromean_verify_var(packed[0], pubs, packed[1], packed[2],
                                        threads or kernel.threads())
        for k, flag in zip(ready, ok):
            verdicts[k] = flag == 1
        return verdicts

    return rings


def verify_bytes(proof: bytes, input_generators: Sequence[Generator],
                 output_generator: Generator) -> bool:
    """Parse then verify; a malformed proof raises ``ProofError``."""
    return verify(SurjectionProof.parse(proof), input_generators, output_generator)

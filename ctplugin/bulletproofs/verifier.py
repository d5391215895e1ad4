"""Bulletproof range-proof verification: one multi-scalar multiplication per proof, and claims for
batch verification (docs/bulletproofs-format.md §8, strict parsing per docs/design.md).

A proof is valid iff, for the transcript weight w (= SHA256 of the state after −τx‖−μ):

    A + x·S + Σ_k (−z − sG_k)·G_k + Σ_k (z + (z^{2+j(k)}·2^{i(k)} − sH_k)·y^{−k})·H_k
      + Σ_r (x_r²·L_r + x_r^{−2}·R_r) + (u·(t − a1·b1 − a2·b2) + (−μ) + w·(−τx))·h
      + w·((δ − t)·g + x·T1 + x²·T2 + Σ_j z^{2+j}·V_j)  =  ∞

with sG_k = a_sel(k)·Π_r x_r^{±1} (+1 where bit r of k is set; a_sel = a1 for k < N/2, else a2),
sH_k = b_sel(k)·Π_r x_r^{∓1}, δ = (z − z²)·Σ_{k<N} y^k − Σ_j z^{3+j}·(2^nbits − 1) − z²·min.

``range_proof_claims`` turns many proofs of one shape into ONE ``RangeProofClaims`` group of
batch claims over the generator set's fixed base ``[h, G_i…, H_i…]``: the Bulletproof kernel
(``ctplugin.bulletproofs.kernel``) parses strictly (exact length; zero unused flag bits; x < p
and on the curve; every scalar and challenge in [1, n)), decodes every point in one batch, runs
the transcript and keeps compact per-proof records; a check expands them, weighted, straight
into the batch's native accumulator. No per-proof Python work is left beyond gathering the
inputs. The value generator g is a shared term, so a batch of one asset multiplies it once.
A malformed proof is a ``ProofError`` in ``failures`` (raised by the one-proof helpers); a
well-formed wrong proof gives a claim that fails (``verify`` → False).

min_value: supported for m = 1 and min < 2^32 only, which is where the reference verifier is
correct (§9.2); anything else is a ``ProofError`` (unsupported), matching the reference's
rejections. Our chain forbids min_value altogether (consensus.py).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ctplugin.batch import BatchVerifier, Claim, ClaimGroup, GroupTerms, Label
from ctplugin.bulletproofs import kernel as _bpk
from ctplugin.bulletproofs.errors import proof_error
from ctplugin.bulletproofs.generators import GeneratorSet, generator_set
from ctplugin.bulletproofs.layout import OFF_FLAGS, layout
from ctplugin.bulletproofs.params import CONSENSUS_N_GENS
from ctplugin.errors import EncodingError, ProofError
from ctplugin.pedersen import Commitment, Generator
from ctplugin.secp256k1 import kernel

_k = kernel.backend
_bk = _bpk.backend

CommitmentLike = bytes | bytearray | memoryview | Commitment
GeneratorLike = bytes | bytearray | memoryview | Generator

_CHALLENGE_NAMES = ("y", "z", "x", "w", "u")
_INFINITY = bytes(64)


@lru_cache(maxsize=1024)
def _serialize_generator(gen: Generator) -> bytes:
    return gen.serialize()


def _value_gen_bytes(value_gen: GeneratorLike) -> bytes:
    if isinstance(value_gen, Generator):
        try:
            return _serialize_generator(value_gen)
        except EncodingError as exc:
            raise proof_error("value-generator", f"value generator: {exc}") from None
    if len(value_gen) != 33:
        raise proof_error("value-generator", "value generator must be 33 bytes")
    return bytes(value_gen)


def _commitment_bytes(c: CommitmentLike) -> bytes:
    if isinstance(c, Commitment):
        try:
            encoded = c.serialize()
        except EncodingError as exc:
            raise proof_error("commitment-prefix", f"commitment: {exc}") from None
    else:
        if len(c) != 33:
            raise proof_error("commitment-length", "commitment must be 33 bytes")
        encoded = bytes(c)
    if encoded[0] not in (8, 9):
        raise proof_error("commitment-prefix", "commitment must start with 08 or 09")
    return encoded


def default_generators() -> GeneratorSet:
    return generator_set(CONSENSUS_N_GENS)


def _failure(code: int, detail: int, nbits: int, m: int) -> ProofError:
    """The ProofError of a kernel failure code (see ``ctplugin.bulletproofs.kernel``)."""
    if code == _bpk.ERR_LENGTH:
        return proof_error("length", f"proof is {detail} bytes, expected {layout(nbits, m).length}")
    if code == _bpk.ERR_COMMITMENT_LENGTH:
        return proof_error("commitment-length",
                           f"commitments are {detail} bytes, expected {33 * m}")
    if code == _bpk.ERR_VALUE_GENERATOR:
        why = {_bpk.GEN_PREFIX: "does not start with 0a or 0b",
               _bpk.GEN_RANGE: "x coordinate not below the field size"}.get(detail,
                                                                            "not on the curve")
        return proof_error("value-generator", f"value generator: {why}")
    if code == _bpk.ERR_COMMITMENT_PREFIX:
        return proof_error("commitment-prefix", f"commitment {detail} must start with 08 or 09")
    if code == _bpk.ERR_FLAG_BITS:
        where = "flag bits of byte 64" if detail == OFF_FLAGS else "L/R flag bits"
        return proof_error("flag-bits", f"unused {where} are not zero")
    if code == _bpk.ERR_SCALAR:
        return proof_error("scalar-range", f"scalar at offset {detail} is zero or not below n")
    if code == _bpk.ERR_COMMITMENT_POINT:
        return proof_error("commitment-point", "commitment points do not match the commitments"
                           f" (commitment {detail})")
    if code == _bpk.ERR_POINT_RANGE:
        return proof_error("field-range",
                           f"proof point {detail}: x coordinate not below the field size")
    if code == _bpk.ERR_POINT_CURVE:
        return proof_error("off-curve", f"proof point {detail}: not on the curve")
    name = _CHALLENGE_NAMES[detail] if detail < 5 else f"x_{detail - 5}"
    return proof_error("challenge-range", f"transcript challenge {name} out of range")


class RangeProofClaims(ClaimGroup):
    """The batch claims of many range proofs of one shape (nbits, m) over ``gens``, prepared by
    the Bulletproof kernel: one member per well-formed proof (``labels``), in input order.

    ``failures``: (label, ProofError) of the malformed proofs, which are not members.
    ``generator_points``: value generator encoding → the packed point decoded for it (the
    validator reuses them for surjection proofs). Members' points and weight-independent
    scalars are kept packed (``records``, ``points``); ``terms`` (called by ``BatchVerifier``)
    expands the checked members into its accumulator with one kernel call.
    """

    __slots__ = ("_offsets", "failures", "gen_index", "gen_points", "generator_points", "m",
                 "nbits", "points", "records")

    def __init__(self, gens: GeneratorSet, nbits: int, m: int, labels: Sequence[Label],
                 records: bytes, points: bytes, gen_index: bytes, encodings: Sequence[bytes],
                 gen_points: bytes, failures: Sequence[tuple[Label, ProofError]]) -> None:
        super().__init__(gens.fixed, labels)
        self.nbits = nbits
        self.m = m
        self.records = records
        self.points = points
        self.gen_index = gen_index
        self.gen_points = gen_points
        self.generator_points = {
            enc: gen_points[64 * j: 64 * j + 64] for j, enc in enumerate(encodings)
            if gen_points[64 * j: 64 * j + 64] != _INFINITY}
        self.failures = tuple(failures)
        self._offsets = (gens.H_INDEX, gens.G_OFFSET, gens.h_rev_start(nbits * m))

    def terms(self, acc: object, members: bytes, weights: bytes) -> GroupTerms:
        free_s, free_p, sums = _bk.bulletproof_accumulate_var(
            acc, self.nbits, self.m, *self._offsets, self.records, self.points, self.gen_index,
            len(self.gen_points) // 64, members, weights)
        return GroupTerms(free_s, free_p, self.gen_points, sums)


def prepare_claims(
    gens: GeneratorSet,
    nbits: int,
    m: int,
    proofs: Sequence[bytes],
    commitments: Sequence[bytes],
    value_gens: Sequence[bytes],
    extra_commits: Sequence[bytes | None],
    labels: Sequence[Label],
    *,
    min_values: Sequence[int | None] | None = None,
    commitment_points: Sequence[bytes | None] | None = None,
    failures: Sequence[tuple[int, ProofError]] = (),
    threads: int = 0,
) -> RangeProofClaims:
    """The byte-level path: each commitment entry is the proof's m encodings joined (33·m
    bytes), each value generator its 33-byte encoding. ``failures`` (input index, error) are
    proofs the caller already found malformed: they are left out. ProofError (raised) only for
    parameters that concern every proof (shape, generator set too small). ``threads``: cores
    the kernel may use (0: the kernel setting)."""
    lay = layout(nbits, m)
    if lay.n > gens.capacity:
        raise proof_error("generators",
                          f"generator set of {gens.n_gens} is too small for N = {lay.n}")
    failed: dict[int, ProofError] = dict(failures)
    # Distinct value generators (the kernel decodes them all in its batch; a block has one per
    # blinded output, a benchmark batch often one in all).
    table: dict[bytes, int] = {}
    index: list[int] = []
    for i, vg in enumerate(value_gens):
        j = table.get(vg)
        if j is None:
            j = table[vg] = len(table) if len(vg) == 33 else -1
        if j < 0 and i not in failed:
            failed[i] = proof_error("value-generator", "value generator must be 33 bytes")
        index.append(j)
    encodings = [vg for vg, j in table.items() if j >= 0]
    keep: Sequence[int] = range(len(proofs))
    if failed:
        keep = [i for i in keep if i not in failed]
        proofs = [proofs[i] for i in keep]
        commitments = [commitments[i] for i in keep]
        extra_commits = [extra_commits[i] for i in keep]
        index = [index[i] for i in keep]
        if min_values is not None:
            min_values = [min_values[i] for i in keep]
        if commitment_points is not None:
            commitment_points = [commitment_points[i] for i in keep]
    records, packed, gen_points, kernel_failures = _bk.bulletproof_prepare_var(
        nbits, m, proofs, commitments, b"".join(encodings),
        struct.pack(f"<{len(index)}I", *index), extra_commits, min_values, commitment_points,
        threads)
    if kernel_failures:
        bad_kept = set()
        for k, code, detail in kernel_failures:
            failed[keep[k]] = _failure(code, detail, nbits, m)
            bad_kept.add(k)
        index = [j for k, j in enumerate(index) if k not in bad_kept]
    if failed:
        ok_labels = [label for i, label in enumerate(labels) if i not in failed]
        bad = [(labels[i], failed[i]) for i in sorted(failed)]
    else:
        ok_labels, bad = list(labels), []
    return RangeProofClaims(gens, nbits, m, ok_labels, records, packed,
                            struct.pack(f"<{len(index)}I", *index), encodings, gen_points, bad)


def range_proof_claims(
    proofs: Sequence[bytes],
    commitments: Sequence[Sequence[CommitmentLike]],
    value_gens: Sequence[GeneratorLike],
    extra_commits: Sequence[bytes | None] | None = None,
    nbits: int = 64,
    gens: GeneratorSet | None = None,
    *,
    labels: Sequence[Label] | None = None,
    min_values: Sequence[Sequence[int] | None] | None = None,
    commitment_points: Sequence[bytes | None] | None = None,
) -> RangeProofClaims:
    """The claims of many proofs (one per proof, each over its own list of commitments, the
    same aggregation size m for all) as one group for ``BatchVerifier``.

    ``extra_commits`` None means None for every proof (None and b"" differ, §6 step 4);
    ``labels`` default to the proof positions; ``commitment_points[i]``: proof i's commitments
    already decoded by the kernel (``decode_points_var(…, KIND_PEDERSEN)`` of the same
    encodings, 64 bytes each, joined), saving their square roots when the caller decoded them
    anyway (the validator's balance equations) — their x coordinates are checked against the
    encodings. Malformed proofs (and unsupported min values) are in ``failures``; ProofError is
    raised only for parameters that concern all of them.
    """
    if gens is None:
        gens = default_generators()
    count = len(proofs)
    for name, seq in (("commitments", commitments), ("value_gens", value_gens),
                      ("extra_commits", extra_commits), ("labels", labels),
                      ("min_values", min_values), ("commitment_points", commitment_points)):
        if seq is not None and len(seq) != count:
            raise proof_error("parameters", f"{name}: one entry per proof")
    m = len(commitments[0]) if count else 1
    if m == 0:
        raise proof_error("parameters", "no commitments")
    failures: list[tuple[int, ProofError]] = []
    joined: list[bytes] = []
    gens_bytes: list[bytes] = []
    mins: list[int | None] | None = None if min_values is None else []
    for i in range(count):
        try:
            cs = commitments[i]
            if len(cs) != m:
                raise proof_error("parameters",
                                  f"{len(cs)} commitments where the batch has m = {m}")
            enc = b"".join(_commitment_bytes(c) for c in cs)
            vg = _value_gen_bytes(value_gens[i])
            mv = None if min_values is None else min_values[i]
            if mv is not None:
                if len(mv) != m:
                    raise proof_error("min-value-unsupported",
                                      "min_value needs one entry per commitment")
                if m != 1 or not 0 <= mv[0] < 1 << 32:
                    raise proof_error("min-value-unsupported",
                                      "min_value is supported for m = 1 and min < 2^32 only")
        except ProofError as exc:
            failures.append((i, exc))
            enc, vg, mv = b"", b"", None
        joined.append(enc)
        gens_bytes.append(vg)
        if mins is not None:
            mins.append(None if mv is None else int(mv[0]))
    return prepare_claims(
        gens, nbits, m, proofs, joined, gens_bytes,
        [None] * count if extra_commits is None else extra_commits,
        list(range(count)) if labels is None else labels,
        min_values=mins, commitment_points=commitment_points, failures=failures)


def range_proof_claim(
    proof: bytes,
    commitments: Sequence[CommitmentLike],
    value_gen: GeneratorLike,
    extra_commit: bytes | None = None,
    nbits: int = 64,
    gens: GeneratorSet | None = None,
    *,
    min_value: Sequence[int] | None = None,
    label: Label = None,
    commitment_points: bytes | None = None,
) -> RangeProofClaims:
    """The verification equation of one (possibly aggregated) proof as a batch claim (a group
    of one). ``commitments``: 33-byte encodings (or ``Commitment``), one per aggregated value;
    ``extra_commit`` None and b"" differ (§6 step 4); ``commitment_points``: see
    ``range_proof_claims``. Raises ProofError on malformed input."""
    if not commitments:
        raise proof_error("parameters", "no commitments")
    claims = range_proof_claims(
        [proof], [commitments], [value_gen], [extra_commit], nbits, gens, labels=[label],
        min_values=[min_value], commitment_points=[commitment_points])
    if claims.failures:
        raise claims.failures[0][1]
    return claims


def verify(
    proof: bytes,
    commitments: Sequence[CommitmentLike],
    value_gen: GeneratorLike,
    extra_commit: bytes | None = None,
    nbits: int = 64,
    gens: GeneratorSet | None = None,
    *,
    min_value: Sequence[int] | None = None,
) -> bool:
    """Verify one proof (a batch of one: a single MSM). ProofError if malformed."""
    if gens is None:
        gens = default_generators()
    claim = range_proof_claim(proof, commitments, value_gen, extra_commit, nbits, gens,
                              min_value=min_value)
    batch = BatchVerifier(gens.fixed)
    batch.add(claim)
    return batch.verify()


def verify_batch(claims: Iterable[Claim | ClaimGroup], gens: GeneratorSet | None = None) -> bool:
    """Check many claims (from ``range_proof_claim(s)``) in one MSM."""
    batch = BatchVerifier((gens or default_generators()).fixed)
    batch.extend(claims)
    return batch.verify()

"""Rangeproof verification (``secp256k1_rangeproof_verify``), variable time, public data only.

Given the proof, the value commitment C, the value generator gen and the extra commitment
(Elements: the output's scriptPubKey), ``docs/borromean.md`` §2:

1. parse the layout (``format.parse``; malformed bytes are a ``ProofError``);
2. decode the r − 1 stored digit commitments C_i (x-only with a sign bit: the y that is a
   quadratic residue, negated when the bit is set) and derive the last one,
   C_{r−1} = C − min·gen − Σ C_i (infinity: invalid);
3. m = SHA256(rpser(C) ‖ rpser(gen) ‖ header ‖ rpser(C_0) ‖ … ‖ rpser(C_{r−2}) ‖ extra), where
   rpser is one byte (0 if y is a square, else 1) then x;
4. ring members P_{i,j} = C_i − j·4^i·10^exp·gen (the prover knows the discrete log of the one
   at the true base-4 digit);
5. the Borromean ring signature over those rings with e0, s and m (the ring kernel,
   ``kernel.backend.borromean_verify_var``: every ring of every proof at once).

A valid proof shows C commits to a value in [min, max] (``info``). Steps 1-3 run per proof
over batch kernel calls; steps 2's C_{r−1} and 4 run for a whole batch of proofs in one
``borromean_members_var`` call (Jacobian, one shared inversion), step 5 in one ring-kernel call.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from ctplugin.borromean.format import ParsedRangeProof, RangeProofInfo, parse, proof_error
from ctplugin.errors import EncodingError, ProofError
from ctplugin.pedersen import Commitment, Generator
from ctplugin.secp256k1 import KIND_GENERATOR, KIND_PEDERSEN, kernel
from ctplugin.secp256k1.params import N

_k = kernel.backend


def default_threads() -> int:
    """The kernel's thread setting (``kernel.set_threads``, like Core's ``-par``: the machine's
    cores unless set; docs/design.md "Threads")."""
    return kernel.threads()


@dataclass(frozen=True, slots=True)
class RangeProofClaim:
    """One verification's inputs: the proof, C and gen (33-byte encodings), the extra commit."""

    proof: bytes
    commitment: bytes
    generator: bytes
    extra_commit: bytes = b""

    @classmethod
    def of(cls, proof: bytes, commitment: Commitment | bytes, generator: Generator | bytes,
           extra_commit: bytes = b"") -> RangeProofClaim:
        return cls(bytes(proof), _encoding(commitment), _encoding(generator), bytes(extra_commit))


def _encoding(value: Commitment | Generator | bytes) -> bytes:
    if isinstance(value, Commitment | Generator):
        return value.serialize()
    return bytes(value)


@dataclass(frozen=True, slots=True)
class PreparedRangeProof:
    """A parsed proof with its ring members and message: the ring kernel's input for it."""

    parsed: ParsedRangeProof
    message: bytes
    pubs: bytes
    sizes: bytes

    @property
    def info(self) -> RangeProofInfo:
        return self.parsed.info


@cache
def _sizes(ring_sizes: tuple[int, ...]) -> bytes:
    """The ring kernel's layout record: u16 LE ring count, then each ring's size (u16 LE)."""
    return b"".join(v.to_bytes(2, "little") for v in (len(ring_sizes), *ring_sizes))


def scalar_bytes(value: int) -> bytes:
    return (value % N).to_bytes(32, "big")


def _decode_pair(commitment: bytes, generator: bytes) -> tuple[bytes, bytes]:
    if len(commitment) != 33 or len(generator) != 33:
        raise EncodingError("commitment and generator must be 33 bytes", reason="length")
    # the kernel raises EncodingError with its reason (off-curve, prefix, ...)
    return (_k.decode_points_var(commitment, KIND_PEDERSEN),
            _k.decode_points_var(generator, KIND_GENERATOR))


@dataclass(frozen=True, slots=True)
class _Staged:
    """Steps 1-3 of one claim: what the members kernel and the ring kernel take from it."""

    parsed: ParsedRangeProof
    message: bytes
    commit_packed: bytes
    gen_packed: bytes
    digits: bytes  # the r − 1 stored digit commitments, decoded (packed)


def _stage(claim: RangeProofClaim, commit_packed: bytes | None = None,
           gen_packed: bytes | None = None) -> _Staged:
    """Parse, decode and hash one claim (malformed input raises ``ProofError`` /
    ``EncodingError``)."""
    parsed = parse(claim.proof)
    if commit_packed is None or gen_packed is None:
        commit_packed, gen_packed = _decode_pair(claim.commitment, claim.generator)
    digits_n = len(parsed.info.ring_sizes) - 1
    if digits_n:
        try:
            digits = _k.decode_xqr_flags_var(parsed.digit_xs, parsed.signs)
        except ValueError as exc:
            text = str(exc)
            reason = "digit-x-range" if "field size" in text else "digit-off-curve"
            raise proof_error(reason, text) from None
    else:
        digits = b""

    h = hashlib.sha256()
    h.update(bytes((claim.commitment[0] - 0x08,)) + claim.commitment[1:])
    h.update(bytes((claim.generator[0] - 0x0A,)) + claim.generator[1:])
    h.update(parsed.header)
    xs, bits = parsed.digit_xs, int.from_bytes(parsed.signs, "little")
    for i in range(digits_n):
        h.update(bytes(((bits >> i) & 1,)))
        h.update(xs[32 * i: 32 * i + 32])
    h.update(claim.extra_commit)
    return _Staged(parsed, h.digest(), commit_packed, gen_packed, digits)


def _with_members(staged: Sequence[_Staged]) -> list[PreparedRangeProof | None]:
    """Step 4 for many staged claims in one ``borromean_members_var`` call: C_{r−1} and every
    ring member (one shared inversion); None where C_{r−1} is infinity."""
    if not staged:
        return []
    layouts = [_sizes(s.parsed.info.ring_sizes) for s in staged]
    pubs, ok = _k.borromean_members_var(
        b"".join(layouts), b"".join(s.commit_packed for s in staged),
        b"".join(s.gen_packed for s in staged), b"".join(s.digits for s in staged),
        b"".join(scalar_bytes(s.parsed.info.min_value) for s in staged),
        b"".join(scalar_bytes(s.parsed.info.scale) for s in staged))
    out: list[PreparedRangeProof | None] = []
    at = 0
    for s, layout, valid in zip(staged, layouts, ok):
        size = 64 * sum(s.parsed.info.ring_sizes)
        out.append(PreparedRangeProof(s.parsed, s.message, pubs[at: at + size], layout)
                   if valid else None)
        at += size
    return out


def prepare(claim: RangeProofClaim, commit_packed: bytes | None = None,
            gen_packed: bytes | None = None) -> PreparedRangeProof | None:
    """Steps 1-4 for one claim; None if the proof already fails (the last digit is infinity).

    ``commit_packed`` / ``gen_packed`` are the decoded points when the caller has them (the
    encodings in ``claim`` must match them); otherwise they are decoded here.
    """
    return _with_members([_stage(claim, commit_packed, gen_packed)])[0]


def run_rings(prepared: Sequence[PreparedRangeProof], threads: int = 1,
              challenges: bool = False) -> tuple[bytes, bytes]:
    """Step 5 for many proofs in one kernel call: (verdict byte per proof, challenges)."""
    if not prepared:
        return b"", b""
    sizes = b"".join(p.sizes for p in prepared)
    pubs = b"".join(p.pubs for p in prepared)
    scalars = b"".join(p.parsed.s for p in prepared)
    e0m = b"".join(p.parsed.e0 + p.message for p in prepared)
    return _k.borromean_verify_var(sizes, pubs, scalars, e0m, threads, challenges)


def points_show_valid(prepared: Sequence[PreparedRangeProof], ring_points: Sequence[bytes],
                      threads: int = 1) -> bool:
    """Step 5 given each proof's ring points (its signer's R per member,
    ``sign.SignedRangeProof``): True iff they show every proof valid — the challenges hashed
    from the points, and R = s·G + e·P for every member at once in one multi-scalar
    multiplication with fresh random 128-bit weights (``secrets``; a false member passes with
    probability at most 2^-128). False shows nothing about which proof, if any, is invalid
    (``docs/borromean.md`` §5)."""
    if not prepared:
        return True
    sizes = b"".join(p.sizes for p in prepared)
    pubs = b"".join(p.pubs for p in prepared)
    return bool(_k.borromean_verify_points_var(
        sizes, pubs, b"".join(p.parsed.s for p in prepared),
        b"".join(p.parsed.e0 + p.message for p in prepared), b"".join(ring_points),
        secrets.token_bytes(len(pubs) // 4), threads))


def verify_claim(claim: RangeProofClaim) -> tuple[int, int] | bool:
    """(min, max) if the proof is valid, else False; a malformed proof raises ``ProofError``."""
    prepared = prepare(claim)
    if prepared is None:
        return False
    verdicts, _ = run_rings([prepared])
    return (prepared.info.min_value, prepared.info.max_value) if verdicts[0] else False


def verify(proof: bytes, commitment: Commitment | bytes, generator: Generator | bytes,
           extra_commit: bytes = b"") -> tuple[int, int] | bool:
    """``secp256k1_rangeproof_verify``: the proven (min, max) when ``proof`` shows that
    ``commitment`` (under value generator ``generator``) holds a value in that range, else
    False. Malformed proofs raise ``ProofError`` (``reason`` in ``format.REASONS``); a bad
    commitment or generator encoding raises ``EncodingError``."""
    return verify_claim(RangeProofClaim.of(proof, commitment, generator, extra_commit))


RangeProofVerdict = tuple[int, int] | bool | Exception
"""Per claim in ``verify_many``: (min, max), False, or the ``ProofError`` / ``EncodingError``."""


def verify_many(claims: Sequence[RangeProofClaim], threads: int | None = None,
                ring_points: Sequence[bytes | None] | None = None) -> list[RangeProofVerdict]:
    """Verify many claims with one ring-kernel call (all rings of all proofs in waves, across
    ``threads`` cores, default all). A malformed claim's entry is its error instead of raising,
    so one bad proof cannot hide the verdicts of the others.

    ``ring_points`` (per claim: its signer's ring points, or None): the claims that have them
    are first checked together with them (``points_show_valid``, under a quarter of the ring
    kernel's work); if that shows them valid, that is their verdict, otherwise they join the
    ring kernel's call. The verdicts are the ring kernel's either way (up to the 2^-128)."""
    results: list[RangeProofVerdict] = [False] * len(claims)
    staged: list[_Staged] = []
    staged_at: list[int] = []
    for index, claim in enumerate(claims):
        try:
            staged.append(_stage(claim))
        except (EncodingError, ProofError) as exc:
            results[index] = exc
            continue
        staged_at.append(index)
    ready: list[PreparedRangeProof] = []
    where: list[int] = []
    for index, prepared in zip(staged_at, _with_members(staged)):
        if prepared is not None:
            ready.append(prepared)
            where.append(index)
    threads = threads or default_threads()
    if ring_points is not None:
        shown = [k for k, index in enumerate(where)
                 if len(ring_points[index] or b"") == len(ready[k].pubs)]
        try:
            valid = bool(shown) and points_show_valid(
                [ready[k] for k in shown], [ring_points[where[k]] or b"" for k in shown], threads)
        except EncodingError:  # points that are not points (off the curve) show nothing
            valid = False
        if valid:
            for k in shown:
                info = ready[k].info
                results[where[k]] = (info.min_value, info.max_value)
            taken = set(shown)
            where = [index for k, index in enumerate(where) if k not in taken]
            ready = [prepared for k, prepared in enumerate(ready) if k not in taken]
    verdicts, _ = run_rings(ready, threads)
    for index, prepared, ok in zip(where, ready, verdicts):
        if ok:
            results[index] = (prepared.info.min_value, prepared.info.max_value)
    return results

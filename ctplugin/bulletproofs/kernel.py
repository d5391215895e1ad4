"""The Bulletproof verification-setup kernel: everything between proof bytes and the one
multi-scalar multiplication, for a whole batch of proofs in one call.

Two interchangeable backends implement exactly this API, like ``ctplugin.secp256k1.kernel``:
the native entries of ``ctplugin.secp256k1._native`` (C: SHA-256 transcript, batched inversions
and square roots, GIL released) whenever that module is built, and the pure-Python twin
``ctplugin.bulletproofs._reference`` (the executable specification, on ``Transcript``), which
tests cross-check the native one against, hostile inputs included. ``CTPLUGIN_PURE=1`` selects
the reference. Variable time: public data only.

``bulletproof_prepare_var(nbits, m, proofs, commitments, value_gens, gen_index, extra_commits,
min_values=None, commitment_points=None, threads=0) -> (records, points, gen_points, failures)``
    For proofs of one shape (N = nbits·m): strict parsing (exact length; unused flag bits zero;
    scalars in [1, n); x < p and on the curve; transcript challenges in [1, n)), the batch decode
    of every point (the distinct value generators, then V_j unless given, A, S, T1, T2, L_0, R_0,
    …), the §6 transcript and a compact record of the proof's weight-independent scalars (layout
    in ``_reference``). Checks run in this order and the first that fails is the proof's
    failure: length, commitment length, its value generator, commitment prefixes, flag bits
    (byte 64, then the last L/R flag byte), scalars (by offset), given commitment points, point
    decoding (in point order), challenges (y, z, x, w, u, x_r). ``failures`` is a list of
    (proof index, ERR_* code, detail); the other proofs' records and points come out in order,
    and ``gen_points`` has the decoded generators (64 zero bytes for one that does not decode).
    Bad arguments (shape, counts, generator encoding lengths or indices, min_values) raise
    EncodingError (the same reason and message from both backends).

``bulletproof_accumulate_var(acc, nbits, m, h_index, g_start, h_start, records, points,
gen_index, n_gens, members, weights, threads=0) -> (free_scalars, free_points, gen_sums)``
    For the members (u32 record indices) with weights (32-byte scalars): adds every fixed-base
    coefficient Σ_c ρ_c·(…) to the ``ScalarAccumulator`` ``acc`` (h at ``h_index``, G_k at
    ``g_start + k``, H_{N−1} … H_0 from ``h_start``), and returns the weighted free scalars with
    the members' points (ready for the MSM) and per distinct value generator the weighted sum of
    its scalars. EncodingError on any inconsistency, before ``acc`` changes.

``threads`` (0: the kernel setting, ``ctplugin.secp256k1.kernel.set_threads``): the native
entries split the proofs (members) into contiguous shares on up to that many threads, with the
GIL released; results are bit-identical for any thread count (each proof's record depends on
that proof alone, and the accumulated sums are exact or mod N).

Failure codes: ``ERR_LENGTH``, ``ERR_COMMITMENT_LENGTH``, ``ERR_VALUE_GENERATOR`` (detail
``GEN_PREFIX``, ``GEN_RANGE``, ``GEN_CURVE``), ``ERR_COMMITMENT_PREFIX``, ``ERR_FLAG_BITS``,
``ERR_SCALAR``, ``ERR_COMMITMENT_POINT``, ``ERR_POINT_RANGE``, ``ERR_POINT_CURVE``,
``ERR_CHALLENGE`` (see ``_reference``).
"""

from __future__ import annotations

from types import ModuleType

from ctplugin.bulletproofs import _reference
from ctplugin.bulletproofs._reference import (
    ERR_CHALLENGE,
    ERR_COMMITMENT_LENGTH,
    ERR_COMMITMENT_POINT,
    ERR_COMMITMENT_PREFIX,
    ERR_FLAG_BITS,
    ERR_LENGTH,
    ERR_POINT_CURVE,
    ERR_POINT_RANGE,
    ERR_SCALAR,
    ERR_VALUE_GENERATOR,
    GEN_CURVE,
    GEN_PREFIX,
    GEN_RANGE,
    record_scalars,
)
from ctplugin.secp256k1 import kernel as _secp


def _load() -> ModuleType:
    native = _secp.backend
    if _secp.IS_NATIVE and hasattr(native, "bulletproof_prepare_var"):
        return native
    return _reference


backend: ModuleType = _load()
"""The module serving the Bulletproof setup entries (native C when built)."""

IS_NATIVE = backend is not _reference

__all__ = [
    "ERR_CHALLENGE",
    "ERR_COMMITMENT_LENGTH",
    "ERR_COMMITMENT_POINT",
    "ERR_COMMITMENT_PREFIX",
    "ERR_FLAG_BITS",
    "ERR_LENGTH",
    "ERR_POINT_CURVE",
    "ERR_POINT_RANGE",
    "ERR_SCALAR",
    "ERR_VALUE_GENERATOR",
    "GEN_CURVE",
    "GEN_PREFIX",
    "GEN_RANGE",
    "IS_NATIVE",
    "backend",
    "record_scalars",
]

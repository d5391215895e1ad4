"""The variable-time kernel: bulk secp256k1 work on PUBLIC data, over packed bytes.

Interchangeable backends implement exactly this API:

- ``ctplugin.secp256k1._native_adx`` (C with the x86-64 BMI2/ADX field multiplication), used
  when it is built and ``cpu_supported()`` says this CPU has those instructions;
- ``ctplugin.secp256k1._native`` (the same C with portable field arithmetic), used otherwise;
- ``ctplugin.secp256k1._reference`` (pure Python), the executable specification that tests
  cross-check the native ones against, and the fallback when no extension is built.

The choice is made once, when this module is first imported (a CPU capability query, no other
work); ``backend.FIELD_BACKEND`` names it ("adx", "portable") for the native modules.

No secret may ever enter this kernel: its running time depends on its inputs. Secret-dependent
operations go through ``ctplugin.secp256k1.ct`` (coincurve / libsecp256k1, constant time).

Packed formats (all big-endian):

- scalar: 32 bytes, an integer in [0, N). A scalar >= N is rejected (callers reduce first; the
  high-level API in ``ctplugin.secp256k1.msm`` does).
- point: 64 bytes affine ``x || y``; the point at infinity is 64 zero bytes ((0, 0) is not on the
  curve, so the encoding is unambiguous). Both backends check that given points have x, y < p
  and lie on the curve.
- vectors are plain concatenations; n is implied by the length.

Errors: bad input (wrong lengths, scalars >= N, coordinates >= p, off-curve points, bad prefixes,
counts that disagree, zero where an inverse is needed, runs or indices out of range, sizes above
a bound) raises ``ctplugin.errors.EncodingError`` -- a ``CtpluginError`` and a ``ValueError`` --
whose ``reason`` is one of ``length``, ``scalar-range``, ``field-range``, ``off-curve``,
``prefix``, ``infinity``, ``count-mismatch``, ``zero``, ``too-large``, ``index-range``, ``kind``,
``flags``, ``type``; the message names the element (``"point 3: not on the curve"``). Both
backends raise the same reason for the same input. Arguments of the wrong Python type altogether
(``None`` for bytes) are a caller bug and raise ``TypeError``.

API (``Kernel`` protocol below):

``msm_var(scalars, points, threads=0) -> point``
    Σ scalars[i]·points[i].  len(scalars) = 32n, len(points) = 64n, n >= 0 (n = 0 gives infinity).

Threads (like Core's ``-par``): ``set_threads(n) -> previous`` sets how many threads a kernel
call may use, 0 = the machine's cores (the default); ``threads()`` is the number in effect. Calls
that take ``threads=`` override it for that call (0 = the setting). Large MSMs (Pippenger:
windows split among threads; FixedBaseTable: ranges of table points) run on up to that many
threads with the GIL released; results are bit-identical for any thread count. The reference
backend accepts the same arguments and computes on the caller's thread.

``FixedBaseTable(points)``
    Precomputation for points reused across many MSMs (G, the Bulletproof generators...).
    ``table.msm_var(scalars, extra_scalars=b"", extra_points=b"", threads=0) -> point`` computes
    Σ scalars[i]·table[i] + Σ extra_scalars[j]·extra_points[j] as one multi-scalar
    multiplication; ``len(scalars)`` may be shorter than the table (missing scalars are zero).
    ``len(table)`` is the number of points. Native cost model: construction builds the bucket
    tables (≈0.04 ms per point), so build a table once and keep it; calls with fewer than 8
    table scalars (s·G + e·P, ECDSA-style checks) take a Straus path over wide-window affine
    tables (≤ 1 MiB per table; built at first use for 1–2 points, after entries/16 such calls for
    larger tables, never above 1024 points).

``decode_points_var(data, kind) -> points``
    Batch decoding with full validation (x < p, on the curve, prefix byte). Kinds:
    ``KIND_COMPRESSED`` 33 B 02/03 (y parity); ``KIND_PEDERSEN`` 33 B 08/09 and
    ``KIND_GENERATOR`` 33 B 0a/0b (low bit = y is NOT a quadratic residue, secp256k1-zkp);
    ``KIND_XONLY`` 32 B (BIP340 lift_x, even y); ``KIND_XQR`` 33 B: flag byte 0/1 then x
    (flag 1 = y not a quadratic residue), used for Bulletproof points whose flags are packed
    elsewhere. Errors name the point: ``"point <i>: not on the curve"``.

``decode_xqr_flags_var(xs, flags) -> points``
    ``KIND_XQR`` decoding with the flags kept apart, as Bulletproofs store them: ``xs`` is n
    32-byte x coordinates, ``flags`` exactly ceil(n/8) bytes, bit i (byte i // 8, bit i % 8) set
    iff point i's y is NOT a quadratic residue; unused high bits must be zero. Same validation
    and errors as ``decode_points_var``.

``encode_points_var(points, kind) -> data``
    The inverse for the same kinds (infinity cannot be encoded: reason ``infinity``).
    KIND_XONLY gives the x coordinate only (the caller tracks the y parity if it matters).

``point_add_var(a, b) -> point``, ``point_neg(a) -> point``

Scalar vectors (mod N):

``scalar_powers(x, n)``            [1, x, x², …, x^(n-1)]
``scalar_batch_inverse(v)``        [v_i^-1]; reason ``zero`` if any v_i = 0
``scalar_challenge_products(xs)``  2^k scalars for k challenges: s[i] = Π_r x_r^(+1 if bit r of i
                                   is set else -1), bit 0 = least significant; xs must be non-zero
``scalar_vec_mul(a, b)``           elementwise a_i·b_i
``scalar_vec_add(a, b)``           elementwise a_i + b_i
``scalar_vec_scale(a, k)``         k·a_i
``scalar_vec_sum(a) -> scalar``    Σ a_i
``scalar_vec_inner(a, b) -> scalar``  Σ a_i·b_i

``ScalarAccumulator(n)``
    n scalars, all 0, held natively between calls (no per-call conversion of the whole vector;
    the native one keeps unreduced 576-bit sums of products and reduces in ``to_bytes``):
    ``acc.axpy(k, x, offset=0)``: acc[offset + i] += k·x_i; ``acc.add_const(offset, count,
    value)``: acc[offset + i] += value for i < count; ``acc.axpy_terms(weight, terms)``:
    for each (offset, mult, x) in terms, acc[offset + i] += (weight·mult)·x_i, weight and mult
    32-byte scalars (a weighted linear combination of vectors in one call); ``acc.to_bytes()``
    the packed scalars; ``len(acc)``. A bad term or run changes nothing (every term is
    validated before the first update). 0 <= n <= 2^24.

``subset_sums_var(table, paths) -> points``
    For each path (a sequence of indices into the point table), the sum of those table points.
    Consecutive paths that share a prefix reuse its partial sum (a depth-first walk of the
    digit trie: one point addition per trie node), and the results are normalized to affine
    together. Used for DLC adaptor points over precomputed oracle signature points.

``borromean_verify_var(sizes, pubs, scalars, e0m, threads=1, challenges=False)``
    -> ``(verdicts, challenges)``: many Borromean ring signatures (secp256k1-zkp
    ``borromean_verify``; range proofs, surjection proofs) at once.  Per proof: ``e0m`` is
    e0 ‖ m (64 bytes), ``sizes`` its layout (u16 LE ring count >= 1, then each ring's size
    >= 1, u16 LE); ``pubs`` / ``scalars`` one point (infinity fails the proof) / scalar per
    member, proofs concatenated.  Ring i: e = H(e0 ‖ m ‖ be32(i) ‖ be32(0)), then per member
    R = s·G + e·P and e = H(ser33(R) ‖ m ‖ be32(i) ‖ be32(j+1)); valid iff every e, s is in
    [1, n), no P, R is infinity and H(ser33(last R of each ring) ‖ m) = e0.  Native: every
    ring of every proof advances in waves (one batch inversion per wave for the affine R,
    SHA-256 in C), the rings split over ``threads`` threads (clamped to [1, 64]) with the GIL
    released.  ``verdicts`` has one byte (1/0) per proof; ``challenges`` every member's e
    (32 bytes, zeros where a failed ring stopped) when asked, else b"".  Errors: ``length``
    (e0m, a malformed layout), the point and scalar errors, ``count-mismatch``, ``too-large``
    (more than 2^31 members).

``borromean_verify_points_var(sizes, pubs, scalars, e0m, points, weights, threads=1) -> bool``
    True iff the signer's ring points show every proof valid (``docs/borromean.md`` §5): the
    arguments of ``borromean_verify_var`` plus ``points``, one R per member (64 bytes each, as
    the signer computed it), and ``weights``, 16 bytes per member, uniformly random and unknown
    to whoever made the points. The challenges are hashed from the points (with every check of
    ``borromean_verify_var`` on e, s, P and R), and R = s·G + e·P for all members at once:
    (Σ z·s)·G + Σ (z·e)·P − Σ z·R = O in one MSM, which a false member passes with probability
    at most 2^-128. False says nothing about which proof is wrong. Native: the hashes, then
    the MSM (``threads``, clamped to [1, 64]), the GIL released; the pure-Python twin checks
    member by member. Errors: those of ``borromean_verify_var``, ``count-mismatch`` for points,
    ``length`` for weights.

``borromean_members_var(sizes, commitments, generators, digits, min_values, scales)``
    -> ``(pubs, ok)``: range proofs' ring members for ``borromean_verify_var``
    (``rangeproof_pub_expand``), many proofs at once. Per proof: its layout in ``sizes`` (as
    above; rings of at most 4 members), C and gen (one point each), its r − 1 stored digit
    commitments D_i (points, proofs concatenated), min_value and scale = 10^exp (one scalar
    each). The last digit commitment is D_{r-1} = C − (min·gen + Σ D_i) and ring i's members
    P_{i,j} = D_i − j·4^i·scale·gen. ``pubs`` every member in order; ``ok`` one byte per proof,
    0 when D_{r-1} is infinity (the proof is invalid; its members are then infinity). Native:
    Jacobian arithmetic, one shared inversion for all members, the GIL released. Errors: the
    layout, point and scalar errors, ``count-mismatch``, ``too-large`` (a ring over 4 members).

``double_mult_many_var(s, e, points, threads=0) -> points``
    R_i = s_i·G + e_i·P_i for every i (the ring steps of Borromean signatures, ECDSA-style
    checks): len(s) = len(e) = 32n, len(points) = 64n; P_i may be infinity (R_i = s_i·G), R_i
    is infinity as 64 zero bytes.  Native: sixteen at a time in AVX-512 IFMA lanes where the CPU
    has them (a lane that meets an exceptional addition is recomputed with the scalar code, so
    results never depend on the path), else the scalar code two at a time with their field
    operations interleaved (no AVX2 lanes: on a Zen 2 a four-lane AVX2 field multiplication
    measured 2.7x slower per element than the mulx/adx one, docs/borromean.md §5); split over
    ``threads`` threads with the GIL released.  ``_dmult_backend(name=None)`` (private, tests):
    the path ("ifma", "scalar"); the ring kernel below uses the same one.  Errors: the scalar
    and point errors, ``count-mismatch``.

``bulletproof_prepare_var``, ``bulletproof_accumulate_var``
    The Bulletproof verification setup of a whole batch (native only here; API and the
    pure-Python twin in ``ctplugin.bulletproofs.kernel`` / ``ctplugin.bulletproofs._reference``).
    ``_sqrt_backend(name=None)`` (private, tests): the batch square-root path ("ifma", "scalar").
"""

from __future__ import annotations

import importlib
from types import ModuleType

KIND_COMPRESSED = 0
KIND_PEDERSEN = 1
KIND_GENERATOR = 2
KIND_XONLY = 3
KIND_XQR = 4

INFINITY = bytes(64)

MAX_THREADS = 64
"""The most threads ``set_threads`` and a call's ``threads=`` accept (the native builds'
KERNEL_MAX_THREADS, the reference's MAX_THREADS): command lines check options against it."""


NATIVE_MODULES = ("ctplugin.secp256k1._native_adx", "ctplugin.secp256k1._native")
"""The native builds, fastest first (each says by ``cpu_supported()`` whether it runs here)."""


def _load() -> ModuleType:
    """The fastest native build this CPU runs, else the reference (no environment switch: the
    library's behaviour never depends on the environment; tests call ``_reference`` directly)."""
    for name in NATIVE_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if module.cpu_supported():
            return module
    from ctplugin.secp256k1 import _reference

    return _reference


backend: ModuleType = _load()
"""The module serving the kernel API (native C when built)."""

IS_NATIVE = backend.__name__ in NATIVE_MODULES


def set_threads(n: int) -> int:
    """Threads kernel calls may use, 0 = the machine's cores (the default); returns the previous
    setting.  Results never depend on it."""
    previous: int = backend.set_threads(n)
    return previous


def threads() -> int:
    """The threads a kernel call uses by default (the setting, or the machine's cores)."""
    count: int = backend.threads()
    return count

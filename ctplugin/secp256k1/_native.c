/* ctplugin.secp256k1._native: the variable-time secp256k1 kernel (API in kernel.py's docstring;
 * executable specification in _reference.py, which this module agrees with bit for bit).
 *
 * PUBLIC DATA ONLY.  Every function here runs in time that depends on its inputs (branches on
 * scalar digits, infinity, equal coordinates...).  Secrets must go through ctplugin.secp256k1.ct.
 *
 * Layout (libsecp256k1's: algorithms apart from the glue; one translation unit, compiled twice:
 * _native with the portable field multiplication, _native_adx with the BMI2/ADX one):
 *
 *   native/   algorithms, no Python, callable without the GIL, preconditions stated per header:
 *             field.h (mod p, 4x64 limbs, sqrt, Jacobi; the multiplication from field_adx.h in
 *             the ADX build) -- field_batch.h (radix-2^52 AVX-512 IFMA lanes; many square roots
 *             at once) -- modinv.h (safegcd) -- scalar.h (mod N, lazy sums) -- inverse.h
 *             (single and THE batch inversion, Montgomery's trick, for field and scalar) --
 *             group.h (affine/Jacobian group law, batch normalisation, affine additions sharing
 *             an inversion) -- glv.h (endomorphism split) -- digits.h (wNAF, signed windows) --
 *             threads.h (parallel parts) -- straus.h, pippenger.h (+ pippenger_ifma.h: bucket
 *             rounds in IFMA lanes), fixed.h (FixedBaseTable algorithms) -- msm.h (algorithm
 *             choice under an msm_config) -- subset.h (subset sums over a trie) --
 *             bulletproof.h (Bulletproof verification setup) -- dmult_ifma.h (many s·G + e·P
 *             at once in IFMA lanes) -- borromean.h (ring signatures).
 *   glue/     the Python entries, one file per API family: common.h (typed errors, parsing,
 *             the kernel settings: threads, tuning), msm.h, fixed_base.h, accumulator.h,
 *             points.h, scalars.h, subset_sums.h, selftest.h, dmult.h, bulletproof.h (API in
 *             ctplugin/bulletproofs/kernel.py, specification in ctplugin/bulletproofs/
 *             _reference.py), borromean.h.
 *
 * Adding an entry (a newcomer's checklist):
 *   1. the algorithm in native/<concern>.h: plain C over fe/sc/ge arrays, no Python, malloc'ed
 *      scratch, returns 0 on allocation failure, `_var` suffix if its time depends on the data
 *      (everything here does: public data only), preconditions in the comment above it;
 *   2. the entry in glue/<family>.h (a new file for a new API family, #included below): parse
 *      and validate every argument with the GIL held (parse_scalars / parse_points ...: bad input
 *      raises EncodingError with a KERR_* reason, never a bare ValueError), copy what the
 *      computation needs, snapshot the settings (settings_snapshot) if it uses them, release the
 *      GIL around the long computation (Py_BEGIN/END_ALLOW_THREADS; above GIL_RELEASE_MIN
 *      elements), build the result bytes;
 *   3. ONE line in METHODS below (a new type: one line in TYPES);
 *   4. the same function in _reference.py (the executable specification), the API in kernel.py's
 *      docstring, and a hypothesis cross-test native vs reference with hostile inputs (scalars
 *      >= N, x >= p, off-curve points, wrong lengths, empty inputs) in
 *      tests/test_secp256k1_kernel.py.
 *
 * Conventions: inputs are bytes-like (buffer protocol), parsed and validated into C arrays while
 * holding the GIL; long computations then run with the GIL released on those private copies.
 * Bad input raises ctplugin.errors.EncodingError (a ValueError) with a stable `reason`; wrong
 * Python types of the arguments themselves raise TypeError; allocation failure MemoryError.
 * Points given as x||y are checked to lie on the curve (stricter than the reference, which
 * assumes it).
 *
 * Memory of a FixedBaseTable of n points (n <= 1024) once a few-scalar call was made: the odd
 * multiples of P and 2^64·P with the widest window w <= 15 fitting 1 MiB, i.e. n·2^(w-1)·64 bytes
 * (1 MiB for [G], 512 KiB-1 MiB otherwise; larger tables keep the generic fallback).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "glue/common.h"

#include "glue/accumulator.h"
#include "glue/borromean.h"
#include "glue/bulletproof.h"
#include "glue/dmult.h"
#include "glue/fixed_base.h"
#include "glue/msm.h"
#include "glue/points.h"
#include "glue/scalars.h"
#include "glue/selftest.h"
#include "glue/subset_sums.h"

static PyMethodDef METHODS[] = {
    /* glue/borromean.h */
    {"borromean_verify_var", (PyCFunction)(void (*)(void))py_borromean_verify_var,
     METH_VARARGS | METH_KEYWORDS,
     "borromean_verify_var(sizes, pubs, scalars, e0m, threads=1, challenges=False) -> (verdicts, challenges)."},
    {"borromean_verify_points_var", (PyCFunction)(void (*)(void))py_borromean_verify_points_var,
     METH_VARARGS | METH_KEYWORDS,
     "borromean_verify_points_var(sizes, pubs, scalars, e0m, points, weights, threads=1) -> bool: the proofs shown valid by their signer's ring points."},
    {"borromean_members_var", py_borromean_members_var, METH_VARARGS,
     "borromean_members_var(sizes, commitments, generators, digits, min_values, scales) -> (pubs, ok): range proofs' ring members."},
    /* glue/dmult.h */
    {"double_mult_many_var", (PyCFunction)(void (*)(void))py_double_mult_many_var,
     METH_VARARGS | METH_KEYWORDS,
     "double_mult_many_var(s, e, points, threads=0) -> points: s_i·G + e_i·P_i for every i."},
    {"_dmult_backend", py_dmult_backend, METH_VARARGS,
     "_dmult_backend(name=None) -> previous: 'ifma' or 'scalar' double multiplications (testing only)"},
    /* glue/msm.h */
    {"msm_var", (PyCFunction)(void (*)(void))py_msm_var, METH_VARARGS | METH_KEYWORDS,
     "msm_var(scalars, points, threads=0) -> point: Σ k_i·P_i."},
    {"set_threads", py_set_threads, METH_O,
     "set_threads(n) -> previous: threads kernel calls may use (0 = the machine's cores)."},
    {"threads", py_threads, METH_NOARGS, "threads() -> the threads a call uses by default."},
    {"_tune", py_tune, METH_VARARGS, "_tune(window, straus_max) -> previous (tuning only)"},
    {"_bucket_backend", py_bucket_backend, METH_VARARGS,
     "_bucket_backend(name=None) -> previous: 'ifma' or 'scalar' bucket rounds (testing only)"},
    /* glue/points.h */
    {"decode_points_var", py_decode_points_var, METH_VARARGS,
     "decode_points_var(data, kind) -> points (64 B each), with full validation."},
    {"decode_xqr_flags_var", py_decode_xqr_flags_var, METH_VARARGS,
     "decode_xqr_flags_var(xs, flags) -> points: x coordinates with a packed non-residue bitmask."},
    {"encode_points_var", py_encode_points_var, METH_VARARGS,
     "encode_points_var(points, kind) -> encoded points."},
    {"point_add_var", py_point_add_var, METH_VARARGS, "point_add_var(a, b) -> a + b."},
    {"point_neg", py_point_neg, METH_VARARGS, "point_neg(a) -> -a."},
    /* glue/scalars.h */
    {"scalar_powers", py_scalar_powers, METH_VARARGS, "scalar_powers(x, n) -> [x^0 .. x^(n-1)]."},
    {"scalar_batch_inverse", py_scalar_batch_inverse, METH_VARARGS,
     "scalar_batch_inverse(v) -> [v_i^-1]."},
    {"scalar_challenge_products", py_scalar_challenge_products, METH_VARARGS,
     "scalar_challenge_products(xs) -> 2^k products Π x_r^(±1)."},
    {"scalar_vec_mul", py_scalar_vec_mul, METH_VARARGS, "elementwise a_i·b_i"},
    {"scalar_vec_add", py_scalar_vec_add, METH_VARARGS, "elementwise a_i + b_i"},
    {"scalar_vec_scale", py_scalar_vec_scale, METH_VARARGS, "k·a_i"},
    {"scalar_vec_sum", py_scalar_vec_sum, METH_VARARGS, "Σ a_i"},
    {"scalar_vec_inner", py_scalar_vec_inner, METH_VARARGS, "Σ a_i·b_i"},
    /* glue/subset_sums.h */
    {"subset_sums_var", py_subset_sums_var, METH_VARARGS,
     "subset_sums_var(table, paths) -> for each path the sum of its table points."},
    /* glue/bulletproof.h */
    {"bulletproof_prepare_var", (PyCFunction)(void (*)(void))py_bulletproof_prepare_var,
     METH_VARARGS | METH_KEYWORDS,
     "bulletproof_prepare_var(nbits, m, proofs, commitments, value_gens, gen_index, "
     "extra_commits, min_values=None, commitment_points=None, threads=0) -> (records, points, "
     "gen_points, failures)."},
    {"bulletproof_accumulate_var", (PyCFunction)(void (*)(void))py_bulletproof_accumulate_var,
     METH_VARARGS | METH_KEYWORDS,
     "bulletproof_accumulate_var(acc, nbits, m, h_index, g_start, h_start, records, points, "
     "gen_index, n_gens, members, weights, threads=0) -> (free_scalars, free_points, gen_sums)."},
    {"_sqrt_backend", py_sqrt_backend, METH_VARARGS,
     "_sqrt_backend(name=None) -> previous batch square-root backend (testing only)"},
    /* glue/selftest.h */
    {"_selftest", py_selftest, METH_VARARGS,
     "_selftest(iterations, seed) -> mismatch counts of internal cross-checks (testing only)"},
    {NULL, NULL, 0, NULL},
};

/* The types: (attribute name, spec). */
static const struct {
    const char *name;
    PyType_Spec *spec;
} TYPES[] = {
    {"FixedBaseTable", &fbt_spec},        /* glue/fixed_base.h */
    {"ScalarAccumulator", &sacc_spec},    /* glue/accumulator.h */
};

static const struct {
    const char *name;
    int value;
} CONSTANTS[] = {
    {"KIND_COMPRESSED", KIND_COMPRESSED}, {"KIND_PEDERSEN", KIND_PEDERSEN},
    {"KIND_GENERATOR", KIND_GENERATOR},   {"KIND_XONLY", KIND_XONLY},
    {"KIND_XQR", KIND_XQR},
};

/* The module name (KERNEL_MODULE, glue/common.h): _native (portable field arithmetic), or
 * _native_adx when _native_adx.c compiles this file again with CTP_FIELD_ADX (BMI2/ADX assembly,
 * native/field_adx.h). */
#define KERNEL_STR_(x) #x
#define KERNEL_STR(x) KERNEL_STR_(x)
#define KERNEL_INIT_(m) PyInit_##m
#define KERNEL_INIT(m) KERNEL_INIT_(m)

/* 1 iff this build holds the AVX-512 IFMA lanes (native/field_batch.h): 0 off x86-64 and in a
 * CTPLUGIN_NO_IFMA=1 build.  Whether they run is the backend switches' business (CPUID). */
#ifdef FE_HAVE_IFMA_CODE
#define IFMA_BUILT 1
#else
#define IFMA_BUILT 0
#endif

static PyObject *py_cpu_supported(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyBool_FromLong(kernel_cpu_supported());
}

static PyMethodDef MODULE_METHODS[] = {
    {"cpu_supported", py_cpu_supported, METH_NOARGS,
     "cpu_supported() -> bool: this build's instructions run on this CPU (kernel.py asks)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, KERNEL_STR(KERNEL_MODULE),
    "Variable-time secp256k1 kernel over public data (see ctplugin.secp256k1.kernel).", -1,
    METHODS, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC KERNEL_INIT(KERNEL_MODULE)(void) {
    if (module_init_errors() < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    if (PyModule_AddFunctions(m, MODULE_METHODS) < 0 ||
        PyModule_AddStringConstant(m, "FIELD_BACKEND", FIELD_BACKEND) < 0 ||
        PyModule_AddIntConstant(m, "IFMA_BUILT", IFMA_BUILT) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) {
        PyObject *type = PyType_FromSpec(TYPES[i].spec);
        if (!type || PyModule_AddObject(m, TYPES[i].name, type) < 0) {
            Py_XDECREF(type);
            Py_DECREF(m);
            return NULL;
        }
    }
    for (size_t i = 0; i < sizeof CONSTANTS / sizeof CONSTANTS[0]; i++) {
        if (PyModule_AddIntConstant(m, CONSTANTS[i].name, CONSTANTS[i].value) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}

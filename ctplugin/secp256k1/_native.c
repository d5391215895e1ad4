/* ctplugin.secp256k1._native: the variable-time secp256k1 kernel (API in kernel.py's docstring;
 * executable specification in _reference.py, which this module agrees with bit for bit).
 *
 * PUBLIC DATA ONLY.  Every function here runs in time that depends on its inputs (branches on
 * scalar digits, infinity, equal coordinates...).  Secrets must go through ctplugin.secp256k1.ct.
 *
 * Conventions: inputs are bytes-like (buffer protocol), parsed and validated into C arrays while
 * holding the GIL; long computations then run with the GIL released on those private copies.
 * Bad input raises ValueError (lengths, encodings, scalars >= N, points off the curve) or
 * TypeError (wrong Python types); allocation failure raises MemoryError.  Points given as x||y
 * are checked to lie on the curve (stricter than the reference, which assumes it).
 *
 * Layers (native/): field.h (4x64-bit limbs mod p, special reduction, sqrt chain, binary Jacobi),
 * scalar.h (mod N), modinv.h (safegcd inversion), group.h (affine/Jacobian group law, batch
 * normalisation, isomorphic-curve mixed addition), msm.h (GLV split, Straus/wNAF, batch-affine
 * Pippenger), fixed.h (FixedBaseTable: window-shifted tables sharing one bucket set for many
 * scalars; for fewer than 8, Straus over large-window odd multiples built on first use, e.g.
 * s·G + e·P for FixedBaseTable([G]); also the inversion-free one-point msm).
 *
 * Memory of a FixedBaseTable of n points (n <= 1024) once a few-scalar call was made: the odd
 * multiples of P and 2^64·P with the widest window w <= 15 fitting 1 MiB, i.e. n·2^(w-1)·64 bytes
 * (1 MiB for [G], 512 KiB-1 MiB otherwise; larger tables keep the generic fallback).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native/field.h"
#include "native/scalar.h"
#include "native/group.h"
#include "native/msm.h"
#include "native/fixed.h"

enum { KIND_COMPRESSED = 0, KIND_PEDERSEN = 1, KIND_GENERATOR = 2, KIND_XONLY = 3, KIND_XQR = 4 };

/* Above this many elements a computation releases the GIL (below, the switch costs more). */
#define GIL_RELEASE_MIN 32
/* scalar_challenge_products returns 2^k scalars: cap k so the output stays bounded (32 MiB). */
#define MAX_CHALLENGES 20

/* --- parsing helpers (GIL held) ------------------------------------------------------------- */

/* Parse a packed scalar vector; *out is malloc'ed (NULL for n = 0).  Returns -1 with an exception. */
static int parse_scalars(const Py_buffer *buf, sc **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (buf->len % 32) {
        PyErr_SetString(PyExc_ValueError, "scalar vector length is not a multiple of 32");
        return -1;
    }
    size_t count = (size_t)buf->len / 32;
    if (count == 0) return 0;
    sc *v = malloc(count * sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    const unsigned char *p = buf->buf;
    for (size_t i = 0; i < count; i++) {
        if (!sc_set_b32(&v[i], p + 32 * i)) {
            free(v);
            PyErr_Format(PyExc_ValueError, "scalar %zu: not below the group order", i);
            return -1;
        }
    }
    *out = v;
    *n = count;
    return 0;
}

/* One scalar argument of exactly 32 bytes. */
static int parse_one_scalar(const Py_buffer *buf, sc *out) {
    if (buf->len != 32) {
        PyErr_SetString(PyExc_ValueError, "a scalar is exactly 32 bytes");
        return -1;
    }
    if (!sc_set_b32(out, buf->buf)) {
        PyErr_SetString(PyExc_ValueError, "scalar 0: not below the group order");
        return -1;
    }
    return 0;
}

/* Decode a 64-byte x||y point (64 zero bytes = infinity) and check it lies on the curve. */
static const char *point_from_64(ge *r, const unsigned char *b) {
    int zero = 1;
    for (int i = 0; i < 64; i++) {
        if (b[i]) {
            zero = 0;
            break;
        }
    }
    if (zero) {
        r->inf = 1;
        r->x = FE_ZERO;
        r->y = FE_ZERO;
        return NULL;
    }
    r->inf = 0;
    if (!fe_set_b32(&r->x, b) || !fe_set_b32(&r->y, b + 32)) {
        return "coordinate not below the field size";
    }
    if (!ge_is_on_curve(r)) return "not on the curve";
    return NULL;
}

static void point_to_64(unsigned char *b, const ge *a) {
    if (a->inf) {
        memset(b, 0, 64);
        return;
    }
    fe_get_b32(b, &a->x);
    fe_get_b32(b + 32, &a->y);
}

/* Parse a packed point vector; *out is malloc'ed (NULL for n = 0). */
static int parse_points(const Py_buffer *buf, ge **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (buf->len % 64) {
        PyErr_SetString(PyExc_ValueError, "point vector length is not a multiple of 64");
        return -1;
    }
    size_t count = (size_t)buf->len / 64;
    if (count == 0) return 0;
    ge *v = malloc(count * sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    const unsigned char *p = buf->buf;
    for (size_t i = 0; i < count; i++) {
        const char *err = point_from_64(&v[i], p + 64 * i);
        if (err) {
            free(v);
            PyErr_Format(PyExc_ValueError, "point %zu: %s", i, err);
            return -1;
        }
    }
    *out = v;
    *n = count;
    return 0;
}

static int parse_one_point(const Py_buffer *buf, ge *out) {
    if (buf->len != 64) {
        PyErr_SetString(PyExc_ValueError, "a point is exactly 64 bytes");
        return -1;
    }
    const char *err = point_from_64(out, buf->buf);
    if (err) {
        PyErr_Format(PyExc_ValueError, "point 0: %s", err);
        return -1;
    }
    return 0;
}

static PyObject *point_bytes(const ge *a) {
    PyObject *res = PyBytes_FromStringAndSize(NULL, 64);
    if (res) point_to_64((unsigned char *)PyBytes_AS_STRING(res), a);
    return res;
}

static PyObject *gej_bytes(const gej *a) {
    ge g;
    ge_set_gej_var(&g, a);
    return point_bytes(&g);
}

static PyObject *scalars_bytes(const sc *v, size_t n) {
    PyObject *res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * n));
    if (!res) return NULL;
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(res);
    for (size_t i = 0; i < n; i++) sc_get_b32(p + 32 * i, &v[i]);
    return res;
}

/* --- multi-scalar multiplication ------------------------------------------------------------ */

static PyObject *msm_of(const ge *pts, const sc *ks, size_t n) {
    gej r;
    int ok;
    if (n >= GIL_RELEASE_MIN) {
        Py_BEGIN_ALLOW_THREADS
        ok = msm_auto_var(&r, pts, ks, n);
        Py_END_ALLOW_THREADS
    } else {
        ok = msm_auto_var(&r, pts, ks, n);
    }
    if (!ok) return PyErr_NoMemory();
    return gej_bytes(&r);
}

static PyObject *py_msm_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bs, bp;
    if (!PyArg_ParseTuple(args, "y*y*:msm_var", &bs, &bp)) return NULL;
    sc *ks = NULL;
    ge *pts = NULL;
    size_t nk, np;
    PyObject *res = NULL;
    if (parse_scalars(&bs, &ks, &nk) || parse_points(&bp, &pts, &np)) goto done;
    if (nk != np) {
        PyErr_SetString(PyExc_ValueError, "msm_var: scalar and point counts differ");
        goto done;
    }
    res = msm_of(pts, ks, nk);
done:
    free(ks);
    free(pts);
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bp);
    return res;
}

/* --- FixedBaseTable ------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    fixed_table tab;
    size_t few_calls; /* few-scalar calls served so far (tp_alloc zeroes it) */
} FixedBaseTableObject;

/* When to build the few-scalar Straus tables (~0.8 µs per entry: 13 ms for the 16384 of a
 * one-point table) -- a rent-or-buy choice: a table of one or two points (G, H) is a base point
 * its owner will reuse, so it buys at once; a larger one keeps using the generic path until it
 * has served about as many few-scalar calls as the build would cost (entries / 16 calls, saving
 * some 15 µs each), so a table used a handful of times never pays for it.  At most 1024 calls. */
static size_t fixed_straus_build_after_(size_t n) {
    if (n <= 2) return 0;
    return n * ((size_t)1 << (fixed_straus_window_(n) - 1)) / 16;
}

/* Below this many table scalars the shared bucket set costs more than it saves: the table points
 * then go through Straus with their precomputed odd multiples (fixed.h, built on first use), or
 * join the generic MSM when the table is too large to keep those.  Measured (thread CPU time,
 * tables of 8, 32 and 257 points, 0, 1 or 17 extra points): the two paths cross between 8 and 12
 * table scalars. */
#define FIXED_MIN_SCALARS 8

static void fbt_dealloc(FixedBaseTableObject *self) {
    fixed_table_free(&self->tab);
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *fbt_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"points", NULL};
    Py_buffer bp;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*:FixedBaseTable", kwlist, &bp)) return NULL;
    ge *pts = NULL;
    size_t n;
    if (parse_points(&bp, &pts, &n)) {
        PyBuffer_Release(&bp);
        return NULL;
    }
    PyBuffer_Release(&bp);
    FixedBaseTableObject *self = (FixedBaseTableObject *)type->tp_alloc(type, 0);
    if (!self) {
        free(pts);
        return NULL;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = fixed_table_build(&self->tab, pts, n);
    Py_END_ALLOW_THREADS
    free(pts);
    if (!ok) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static Py_ssize_t fbt_len(FixedBaseTableObject *self) { return (Py_ssize_t)self->tab.n; }

/* Σ ks[i]·table[i] + Σ eks[j]·eps[j]: the table part through the shifted tables, the extra part
 * through the generic MSM (GIL released by the caller). */
static int fbt_compute(gej *r, const fixed_table *tab, int straus, const sc *ks, size_t nk,
                       const sc *eks, const ge *eps, size_t ne) {
    gej fixed, extra;
    if (straus) return fixed_straus_var(r, tab, ks, nk, eks, eps, ne);
    int st = nk >= FIXED_MIN_SCALARS ? fixed_msm_var(&fixed, tab, ks, nk) : 2;
    if (st == 0) return 0;
    if (st == 2) {
        /* generic: the table's points join the extra terms */
        size_t total = nk + ne;
        sc *allk = malloc((total + 1) * sizeof *allk);
        ge *allp = malloc((total + 1) * sizeof *allp);
        int ok = allk && allp;
        if (ok) {
            if (nk) memcpy(allk, ks, nk * sizeof *allk);
            if (nk) memcpy(allp, tab->base, nk * sizeof *allp);
            if (ne) memcpy(allk + nk, eks, ne * sizeof *allk);
            if (ne) memcpy(allp + nk, eps, ne * sizeof *allp);
            ok = msm_var(r, allp, allk, total);
        }
        free(allk);
        free(allp);
        return ok;
    }
    if (!msm_var(&extra, eps, eks, ne)) return 0;
    gej_add_var(r, &fixed, &extra);
    return 1;
}

static PyObject *fbt_msm_var(FixedBaseTableObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"scalars", "extra_scalars", "extra_points", NULL};
    Py_buffer bs, bes = {0}, bep = {0};
    int have_es = 0, have_ep = 0;
    bes.len = bep.len = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|y*y*:msm_var", kwlist, &bs, &bes, &bep))
        return NULL;
    have_es = bes.obj != NULL;
    have_ep = bep.obj != NULL;
    sc *ks = NULL, *eks = NULL;
    ge *eps = NULL;
    size_t nk = 0, nek = 0, nep = 0;
    PyObject *res = NULL;
    if (bs.len > (Py_ssize_t)(32 * self->tab.n)) {
        PyErr_SetString(PyExc_ValueError, "more scalars than table points");
        goto done;
    }
    if (parse_scalars(&bs, &ks, &nk)) goto done;
    if (have_es && parse_scalars(&bes, &eks, &nek)) goto done;
    if (have_ep && parse_points(&bep, &eps, &nep)) goto done;
    if (nek != nep) {
        PyErr_SetString(PyExc_ValueError, "msm_var: scalar and point counts differ");
        goto done;
    }
    /* The Straus tables are built once, with the GIL held, and the choice is made here too: a call
     * running without the GIL never looks at a table being built. */
    /* (many extra points: their Pippenger is faster than Straus, and Straus digits would take
     * O(points x 130) memory) */
    int straus = nk < FIXED_MIN_SCALARS && self->tab.n <= FIXED_STRAUS_MAX_POINTS &&
                 nek <= g_straus_max;
    if (straus && !self->tab.odd) {
        if (self->few_calls < fixed_straus_build_after_(self->tab.n)) {
            self->few_calls++;
            straus = 0;
        } else if (!fixed_straus_build(&self->tab)) {
            PyErr_NoMemory();
            goto done;
        }
    }
    gej r;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = fbt_compute(&r, &self->tab, straus, ks, nk, eks, eps, nek);
    Py_END_ALLOW_THREADS
    res = ok ? gej_bytes(&r) : PyErr_NoMemory();
done:
    free(ks);
    free(eks);
    free(eps);
    PyBuffer_Release(&bs);
    if (have_es) PyBuffer_Release(&bes);
    if (have_ep) PyBuffer_Release(&bep);
    return res;
}

static PyMethodDef fbt_methods[] = {
    {"msm_var", (PyCFunction)(void (*)(void))fbt_msm_var, METH_VARARGS | METH_KEYWORDS,
     "msm_var(scalars, extra_scalars=b'', extra_points=b'') -> point: Σ scalars[i]·table[i] + "
     "Σ extra_scalars[j]·extra_points[j]."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot fbt_slots[] = {
    {Py_tp_dealloc, fbt_dealloc},
    {Py_tp_new, fbt_new},
    {Py_tp_methods, fbt_methods},
    {Py_sq_length, fbt_len},
    {Py_mp_length, fbt_len},
    {Py_tp_doc, "FixedBaseTable(points): precomputation for points reused across many MSMs."},
    {0, NULL},
};

static PyType_Spec fbt_spec = {
    "ctplugin.secp256k1._native.FixedBaseTable",
    sizeof(FixedBaseTableObject),
    0,
    Py_TPFLAGS_DEFAULT,
    fbt_slots,
};

/* --- ScalarAccumulator ---------------------------------------------------------------------- */

/* Largest accumulator: 2^24 scalars (512 MiB of limbs) -- far above any fixed base we build, and
 * a bound on what one call may allocate. */
#define SCALAR_ACC_MAX ((Py_ssize_t)1 << 24)

typedef struct {
    PyObject_HEAD
    sc_wide *v; /* n lazily reduced sums (scalar.h), kept as limbs between calls */
    size_t n;
    u64 terms;  /* terms added to any one entry since creation: bounded below 2^64 */
} ScalarAccumulatorObject;

static void sacc_dealloc(ScalarAccumulatorObject *self) {
    free(self->v);
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *sacc_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"n", NULL};
    Py_ssize_t n;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n:ScalarAccumulator", kwlist, &n)) return NULL;
    if (n < 0 || n > SCALAR_ACC_MAX) {
        PyErr_Format(PyExc_ValueError, "accumulator size must be in [0, %zd]", SCALAR_ACC_MAX);
        return NULL;
    }
    ScalarAccumulatorObject *self = (ScalarAccumulatorObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->n = (size_t)n;
    self->v = calloc(n ? (size_t)n : 1, sizeof(sc_wide)); /* all-zero limbs = the scalar 0 */
    if (!self->v) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static Py_ssize_t sacc_len(ScalarAccumulatorObject *self) { return (Py_ssize_t)self->n; }

/* [offset, offset + count) lies inside the accumulator; -1 with ValueError otherwise. */
static int sacc_check_run(const ScalarAccumulatorObject *self, Py_ssize_t offset,
                          Py_ssize_t count) {
    if (offset < 0 || count < 0 || (size_t)offset > self->n || (size_t)count > self->n - offset) {
        PyErr_SetString(PyExc_ValueError, "run outside the accumulator");
        return -1;
    }
    return 0;
}

/* Count `more` terms per entry against the lazy-reduction bound (each term < 2^512, 9 limbs hold
 * 2^64 of them); past it (not reachable in practice: 2^63 calls) the call is refused. */
static int sacc_count_terms(ScalarAccumulatorObject *self, u64 more) {
    if (more >= ((u64)1 << 63) - self->terms) {
        PyErr_SetString(PyExc_OverflowError, "accumulator term count exhausted");
        return -1;
    }
    self->terms += more;
    return 0;
}

/* acc[offset + i] += k·x_i.  Every x_i is validated before the first write (no partial update). */
static PyObject *sacc_axpy(ScalarAccumulatorObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"k", "x", "offset", NULL};
    Py_buffer bk, bx;
    Py_ssize_t offset = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*|n:axpy", kwlist, &bk, &bx, &offset))
        return NULL;
    PyObject *res = NULL;
    sc k;
    if (parse_one_scalar(&bk, &k)) goto done;
    if (bx.len % 32) {
        PyErr_SetString(PyExc_ValueError, "scalar vector length is not a multiple of 32");
        goto done;
    }
    Py_ssize_t count = bx.len / 32;
    if (sacc_check_run(self, offset, count)) goto done;
    const unsigned char *xb = bx.buf;
    for (Py_ssize_t i = 0; i < count; i++) {
        sc t;
        if (!sc_set_b32(&t, xb + 32 * i)) {
            PyErr_Format(PyExc_ValueError, "scalar %zd: not below the group order", i);
            goto done;
        }
    }
    if (sacc_count_terms(self, 1)) goto done;
    sc_wide *acc = self->v + offset;
    for (Py_ssize_t i = 0; i < count; i++) {
        sc t;
        sc_set_b32(&t, xb + 32 * i);
        sc_wide_add_mul(&acc[i], &t, &k);
    }
    res = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&bk);
    PyBuffer_Release(&bx);
    return res;
}

/* A Python int in [0, N) as a scalar; -1 with an exception otherwise. */
static int scalar_from_int(PyObject *obj, sc *out) {
    unsigned char b[32];
    if (!PyLong_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "a scalar multiplier must be an int");
        return -1;
    }
#if PY_VERSION_HEX >= 0x030D0000
    if (_PyLong_AsByteArray((PyLongObject *)obj, b, 32, 0, 0, 1) < 0) goto range;
#else
    if (_PyLong_AsByteArray((PyLongObject *)obj, b, 32, 0, 0) < 0) goto range;
#endif
    if (sc_set_b32(out, b)) return 0;
range:
    PyErr_Clear();
    PyErr_SetString(PyExc_ValueError, "multiplier not in [0, N)");
    return -1;
}

/* For each term (offset, multiplier, x): acc[offset + i] += (weight·multiplier)·x_i; weight and
 * the multipliers are ints in [0, N).  Consecutive terms over the same x object convert it once.
 * Pass 1 validates every term (types, runs, scalars) so that a bad term changes nothing. */
static PyObject *sacc_axpy_terms(ScalarAccumulatorObject *self, PyObject *args) {
    PyObject *weight_obj, *terms_obj;
    if (!PyArg_ParseTuple(args, "OO:axpy_terms", &weight_obj, &terms_obj)) return NULL;
    sc weight;
    if (scalar_from_int(weight_obj, &weight)) return NULL;
    PyObject *seq = PySequence_Fast(terms_obj, "terms must be a sequence");
    if (!seq) return NULL;
    PyObject *res = NULL;
    sc *x = NULL;
    size_t x_cap = 0;
    Py_ssize_t nterms = PySequence_Fast_GET_SIZE(seq);
    u64 nsum = 0;
    for (int pass = 0; pass < 2; pass++) {
        PyObject *last_x = NULL;
        size_t nx = 0;
        for (Py_ssize_t j = 0; j < nterms; j++) {
            PyObject *term = PySequence_Fast_GET_ITEM(seq, j);
            if (!PyTuple_Check(term) || PyTuple_GET_SIZE(term) != 3) {
                PyErr_SetString(PyExc_TypeError, "a term is a tuple (offset, multiplier, x)");
                goto done;
            }
            Py_ssize_t offset = PyLong_AsSsize_t(PyTuple_GET_ITEM(term, 0));
            if (offset == -1 && PyErr_Occurred()) goto done;
            sc mult;
            if (scalar_from_int(PyTuple_GET_ITEM(term, 1), &mult)) goto done;
            PyObject *xo = PyTuple_GET_ITEM(term, 2);
            if (pass == 1 && xo == last_x) {
                /* same vector object as the previous term: already converted */
            } else {
                Py_buffer bx;
                if (PyObject_GetBuffer(xo, &bx, PyBUF_SIMPLE) < 0) goto done;
                int bad = 0;
                if (bx.len % 32) {
                    PyErr_SetString(PyExc_ValueError,
                                    "scalar vector length is not a multiple of 32");
                    bad = 1;
                } else {
                    nx = (size_t)bx.len / 32;
                    if (pass == 1 && nx > x_cap) {
                        free(x);
                        x = malloc(nx * sizeof *x);
                        x_cap = x ? nx : 0;
                        if (!x) {
                            PyErr_NoMemory();
                            bad = 1;
                        }
                    }
                    for (size_t i = 0; !bad && i < nx; i++) {
                        sc t;
                        if (!sc_set_b32(pass ? &x[i] : &t, (const unsigned char *)bx.buf + 32 * i)) {
                            PyErr_Format(PyExc_ValueError,
                                         "term %zd: scalar %zu not below the group order", j, i);
                            bad = 1;
                        }
                    }
                }
                PyBuffer_Release(&bx);
                if (bad) goto done;
                last_x = xo;
            }
            if (pass == 0) {
                if (sacc_check_run(self, offset, (Py_ssize_t)nx)) goto done;
                nsum++;
                continue;
            }
            sc k;
            sc_mul(&k, &weight, &mult);
            sc_wide *acc = self->v + offset;
            for (size_t i = 0; i < nx; i++) sc_wide_add_mul(&acc[i], &x[i], &k);
        }
        if (pass == 0 && sacc_count_terms(self, nsum)) goto done;
    }
    res = Py_NewRef(Py_None);
done:
    free(x);
    Py_DECREF(seq);
    return res;
}

/* acc[offset + i] += value for i < count. */
static PyObject *sacc_add_const(ScalarAccumulatorObject *self, PyObject *args) {
    Py_ssize_t offset, count;
    Py_buffer bv;
    if (!PyArg_ParseTuple(args, "nny*:add_const", &offset, &count, &bv)) return NULL;
    PyObject *res = NULL;
    sc value;
    if (parse_one_scalar(&bv, &value) || sacc_check_run(self, offset, count)) goto done;
    if (sacc_count_terms(self, 1)) goto done;
    for (Py_ssize_t i = 0; i < count; i++) sc_wide_add(&self->v[offset + i], &value);
    res = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&bv);
    return res;
}

static PyObject *sacc_to_bytes(ScalarAccumulatorObject *self, PyObject *unused) {
    (void)unused;
    PyObject *res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * self->n));
    if (!res) return NULL;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    for (size_t i = 0; i < self->n; i++) {
        sc r;
        sc_wide_reduce(&r, &self->v[i]);
        sc_get_b32(out + 32 * i, &r);
    }
    return res;
}

static PyMethodDef sacc_methods[] = {
    {"axpy", (PyCFunction)(void (*)(void))sacc_axpy, METH_VARARGS | METH_KEYWORDS,
     "axpy(k, x, offset=0): acc[offset + i] += k·x_i."},
    {"axpy_terms", (PyCFunction)sacc_axpy_terms, METH_VARARGS,
     "axpy_terms(weight, terms): acc[offset + i] += (weight·mult)·x_i per (offset, mult, x)."},
    {"add_const", (PyCFunction)sacc_add_const, METH_VARARGS,
     "add_const(offset, count, value): acc[offset + i] += value for i < count."},
    {"to_bytes", (PyCFunction)sacc_to_bytes, METH_NOARGS, "to_bytes() -> packed scalars."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot sacc_slots[] = {
    {Py_tp_dealloc, sacc_dealloc},
    {Py_tp_new, sacc_new},
    {Py_tp_methods, sacc_methods},
    {Py_sq_length, sacc_len},
    {Py_mp_length, sacc_len},
    {Py_tp_doc, "ScalarAccumulator(n): n scalars mod N (all 0), updated in place."},
    {0, NULL},
};

static PyType_Spec sacc_spec = {
    "ctplugin.secp256k1._native.ScalarAccumulator",
    sizeof(ScalarAccumulatorObject),
    0,
    Py_TPFLAGS_DEFAULT,
    sacc_slots,
};

/* --- point encodings ------------------------------------------------------------------------ */

/* The point with x coordinate xb (32 bytes) and the y selected by flag for the kind: parity for
 * KIND_COMPRESSED / KIND_XONLY, "not a quadratic residue" for the others. */
static const char *decode_x_(ge *r, const unsigned char *xb, int flag, int kind) {
    if (!fe_set_b32(&r->x, xb)) return "x coordinate not below the field size";
    fe rhs, seven = {{7, 0, 0, 0}};
    fe_sqr(&rhs, &r->x);
    fe_mul(&rhs, &rhs, &r->x);
    fe_add(&rhs, &rhs, &seven);
    if (!fe_sqrt_var(&r->y, &rhs)) return "not on the curve";
    fe_normalize(&r->y);
    if (kind == KIND_COMPRESSED || kind == KIND_XONLY) {
        if ((int)(r->y.n[0] & 1) != flag) fe_neg(&r->y, &r->y);
    } else if (flag) {
        fe_neg(&r->y, &r->y); /* the root found is the residue one; flag 1 asks for the other */
    }
    fe_normalize(&r->y);
    r->inf = 0;
    return NULL;
}

static const char *decode_one(ge *r, const unsigned char *b, int kind) {
    if (kind == KIND_XONLY) return decode_x_(r, b, 0, kind);
    int base = kind == KIND_COMPRESSED ? 0x02 : kind == KIND_PEDERSEN ? 0x08
             : kind == KIND_GENERATOR  ? 0x0a : 0x00;
    if ((b[0] & ~1) != base) return "bad prefix byte";
    return decode_x_(r, b + 1, b[0] & 1, kind);
}

static PyObject *py_decode_points_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b;
    int kind;
    if (!PyArg_ParseTuple(args, "y*i:decode_points_var", &b, &kind)) return NULL;
    PyObject *res = NULL;
    unsigned char *copy = NULL;
    if (kind < 0 || kind > 4) {
        PyErr_Format(PyExc_ValueError, "unknown point kind %d", kind);
        goto done;
    }
    size_t width = kind == KIND_XONLY ? 32 : 33;
    if ((size_t)b.len % width) {
        PyErr_Format(PyExc_ValueError, "encoded point vector length is not a multiple of %zu",
                     width);
        goto done;
    }
    size_t n = (size_t)b.len / width;
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * n));
    if (!res || n == 0) goto done;
    copy = malloc((size_t)b.len);
    if (!copy) {
        Py_CLEAR(res);
        PyErr_NoMemory();
        goto done;
    }
    memcpy(copy, b.buf, (size_t)b.len);
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    const char *err = NULL;
    size_t bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        ge g;
        err = decode_one(&g, copy + width * i, kind);
        if (err) {
            bad = i;
            break;
        }
        point_to_64(out + 64 * i, &g);
    }
    Py_END_ALLOW_THREADS
    if (err) {
        Py_CLEAR(res);
        if (err[0] == 'b') {
            PyErr_Format(PyExc_ValueError, "point %zu: bad prefix byte 0x%02x", bad,
                         copy[width * bad]);
        } else {
            PyErr_Format(PyExc_ValueError, "point %zu: %s", bad, err);
        }
    }
done:
    free(copy);
    PyBuffer_Release(&b);
    return res;
}

/* x coordinates (32 bytes each) and a little-endian bit string of flags (bit i = byte i/8, bit
 * i%8: point i's y is NOT a quadratic residue), exactly ceil(n/8) bytes with unused bits zero. */
static PyObject *py_decode_xqr_flags_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bx, bf;
    if (!PyArg_ParseTuple(args, "y*y*:decode_xqr_flags_var", &bx, &bf)) return NULL;
    PyObject *res = NULL;
    unsigned char *copy = NULL;
    if (bx.len % 32) {
        PyErr_SetString(PyExc_ValueError, "x coordinate vector length is not a multiple of 32");
        goto done;
    }
    size_t n = (size_t)bx.len / 32;
    const unsigned char *fl = bf.buf;
    if ((size_t)bf.len != (n + 7) / 8) {
        PyErr_Format(PyExc_ValueError, "flags must be %zu bytes for %zu points", (n + 7) / 8, n);
        goto done;
    }
    if (n % 8 && (fl[n / 8] >> (n % 8))) {
        PyErr_SetString(PyExc_ValueError, "unused flag bits are not zero");
        goto done;
    }
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * n));
    if (!res || n == 0) goto done;
    copy = malloc((size_t)bx.len + (size_t)bf.len);
    if (!copy) {
        Py_CLEAR(res);
        PyErr_NoMemory();
        goto done;
    }
    memcpy(copy, bx.buf, (size_t)bx.len);
    memcpy(copy + bx.len, bf.buf, (size_t)bf.len);
    const unsigned char *flags = copy + bx.len;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    const char *err = NULL;
    size_t bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        ge g;
        err = decode_x_(&g, copy + 32 * i, (flags[i / 8] >> (i % 8)) & 1, KIND_XQR);
        if (err) {
            bad = i;
            break;
        }
        point_to_64(out + 64 * i, &g);
    }
    Py_END_ALLOW_THREADS
    if (err) {
        Py_CLEAR(res);
        PyErr_Format(PyExc_ValueError, "point %zu: %s", bad, err);
    }
done:
    free(copy);
    PyBuffer_Release(&bx);
    PyBuffer_Release(&bf);
    return res;
}

/* y is a quadratic residue mod p (0 counts as one, as in the reference). */
static int fe_is_square_var(const fe *a) { return fe_jacobi_var(a) >= 0; }

static PyObject *py_encode_points_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b;
    int kind;
    if (!PyArg_ParseTuple(args, "y*i:encode_points_var", &b, &kind)) return NULL;
    PyObject *res = NULL;
    ge *pts = NULL;
    size_t n;
    if (kind < 0 || kind > 4) {
        PyErr_Format(PyExc_ValueError, "unknown point kind %d", kind);
        goto done;
    }
    if (parse_points(&b, &pts, &n)) goto done;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].inf) {
            PyErr_Format(PyExc_ValueError, "point %zu: infinity has no encoding", i);
            goto done;
        }
    }
    size_t width = kind == KIND_XONLY ? 32 : 33;
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(width * n));
    if (!res) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    int base = kind == KIND_COMPRESSED ? 0x02 : kind == KIND_PEDERSEN ? 0x08
             : kind == KIND_GENERATOR  ? 0x0a : 0x00;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        unsigned char *o = out + width * i;
        if (kind == KIND_XONLY) {
            fe_get_b32(o, &pts[i].x);
            continue;
        }
        int flag = kind == KIND_COMPRESSED ? fe_is_odd(&pts[i].y) : !fe_is_square_var(&pts[i].y);
        o[0] = (unsigned char)(base | flag);
        fe_get_b32(o + 1, &pts[i].x);
    }
    Py_END_ALLOW_THREADS
done:
    free(pts);
    PyBuffer_Release(&b);
    return res;
}

static PyObject *py_point_add_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer ba, bb;
    if (!PyArg_ParseTuple(args, "y*y*:point_add_var", &ba, &bb)) return NULL;
    PyObject *res = NULL;
    ge a, b;
    if (parse_one_point(&ba, &a) == 0 && parse_one_point(&bb, &b) == 0) {
        gej r;
        gej_set_ge(&r, &a);
        gej_add_ge_var(&r, &r, &b);
        res = gej_bytes(&r);
    }
    PyBuffer_Release(&ba);
    PyBuffer_Release(&bb);
    return res;
}

static PyObject *py_point_neg(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer ba;
    if (!PyArg_ParseTuple(args, "y*:point_neg", &ba)) return NULL;
    PyObject *res = NULL;
    ge a;
    if (parse_one_point(&ba, &a) == 0) {
        if (!a.inf) fe_neg(&a.y, &a.y);
        res = point_bytes(&a);
    }
    PyBuffer_Release(&ba);
    return res;
}

/* --- scalar vectors ------------------------------------------------------------------------- */

static PyObject *py_scalar_powers(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bx;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y*n:scalar_powers", &bx, &n)) return NULL;
    PyObject *res = NULL;
    sc x;
    if (parse_one_scalar(&bx, &x)) goto done;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "negative length");
        goto done;
    }
    if (n > PY_SSIZE_T_MAX / 32) {
        PyErr_NoMemory();
        goto done;
    }
    res = PyBytes_FromStringAndSize(NULL, 32 * n);
    if (!res) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    sc acc = SC_ONE;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        sc_get_b32(out + 32 * i, &acc);
        sc_mul(&acc, &acc, &x);
    }
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&bx);
    return res;
}

/* Montgomery's trick: out[i] = v[i]^-1 with one inversion; v[i] != 0 (checked by callers). */
static void sc_batch_inverse_var(sc *out, const sc *v, size_t n) {
    if (n == 0) return;
    sc acc = SC_ONE;
    for (size_t i = 0; i < n; i++) {
        out[i] = acc;
        sc_mul(&acc, &acc, &v[i]);
    }
    sc inv;
    sc_inv_var(&inv, &acc);
    for (size_t i = n; i-- > 0;) {
        sc t;
        sc_mul(&t, &inv, &out[i]);
        sc_mul(&inv, &inv, &v[i]);
        out[i] = t;
    }
}

static PyObject *py_scalar_batch_inverse(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bv;
    if (!PyArg_ParseTuple(args, "y*:scalar_batch_inverse", &bv)) return NULL;
    PyObject *res = NULL;
    sc *v = NULL, *out = NULL;
    size_t n;
    if (parse_scalars(&bv, &v, &n)) goto done;
    for (size_t i = 0; i < n; i++) {
        if (sc_is_zero(&v[i])) {
            PyErr_SetString(PyExc_ValueError, "cannot invert zero");
            goto done;
        }
    }
    out = malloc((n ? n : 1) * sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    sc_batch_inverse_var(out, v, n);
    Py_END_ALLOW_THREADS
    res = scalars_bytes(out, n);
done:
    free(v);
    free(out);
    PyBuffer_Release(&bv);
    return res;
}

static PyObject *py_scalar_challenge_products(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bx;
    if (!PyArg_ParseTuple(args, "y*:scalar_challenge_products", &bx)) return NULL;
    PyObject *res = NULL;
    sc *x = NULL, *xinv = NULL, *out = NULL;
    size_t k;
    if (parse_scalars(&bx, &x, &k)) goto done;
    if (k > MAX_CHALLENGES) {
        PyErr_Format(PyExc_ValueError, "too many challenges (%zu > %d)", k, MAX_CHALLENGES);
        goto done;
    }
    for (size_t r = 0; r < k; r++) {
        if (sc_is_zero(&x[r])) {
            PyErr_SetString(PyExc_ValueError, "challenge is zero");
            goto done;
        }
    }
    size_t count = (size_t)1 << k;
    out = malloc(count * sizeof *out);
    xinv = malloc((k ? k : 1) * sizeof *xinv);
    if (!out || !xinv) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    /* s[0] = Π x_r^-1; setting bit r multiplies by x_r / x_r^-1 = x_r^2. */
    sc_batch_inverse_var(xinv, x, k);
    out[0] = SC_ONE;
    for (size_t r = 0; r < k; r++) sc_mul(&out[0], &out[0], &xinv[r]);
    for (size_t r = 0; r < k; r++) {
        sc sq;
        sc_mul(&sq, &x[r], &x[r]);
        size_t half = (size_t)1 << r;
        for (size_t j = 0; j < half; j++) sc_mul(&out[j + half], &out[j], &sq);
    }
    Py_END_ALLOW_THREADS
    res = scalars_bytes(out, count);
done:
    free(x);
    free(xinv);
    free(out);
    PyBuffer_Release(&bx);
    return res;
}

/* Parse two vectors of the same length. */
static int parse_pair(const Py_buffer *ba, const Py_buffer *bb, sc **a, sc **b, size_t *n) {
    size_t na, nb;
    *a = *b = NULL;
    if (parse_scalars(ba, a, &na)) return -1;
    if (parse_scalars(bb, b, &nb)) return -1;
    if (na != nb) {
        PyErr_SetString(PyExc_ValueError, "vector lengths differ");
        return -1;
    }
    *n = na;
    return 0;
}

typedef enum { OP_MUL, OP_ADD } pair_op;

static PyObject *pairwise(PyObject *args, const char *fmt, pair_op op) {
    Py_buffer ba, bb;
    if (!PyArg_ParseTuple(args, fmt, &ba, &bb)) return NULL;
    PyObject *res = NULL;
    sc *a = NULL, *b = NULL;
    size_t n;
    if (parse_pair(&ba, &bb, &a, &b, &n)) goto done;
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * n));
    if (!res) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    /* the new bytes object is private until returned: safe to fill without the GIL */
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        sc r;
        if (op == OP_MUL) sc_mul(&r, &a[i], &b[i]);
        else sc_add(&r, &a[i], &b[i]);
        sc_get_b32(out + 32 * i, &r);
    }
    Py_END_ALLOW_THREADS
done:
    free(a);
    free(b);
    PyBuffer_Release(&ba);
    PyBuffer_Release(&bb);
    return res;
}

static PyObject *py_scalar_vec_mul(PyObject *self, PyObject *args) {
    (void)self;
    return pairwise(args, "y*y*:scalar_vec_mul", OP_MUL);
}

static PyObject *py_scalar_vec_add(PyObject *self, PyObject *args) {
    (void)self;
    return pairwise(args, "y*y*:scalar_vec_add", OP_ADD);
}

static PyObject *py_scalar_vec_scale(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer ba, bk;
    if (!PyArg_ParseTuple(args, "y*y*:scalar_vec_scale", &ba, &bk)) return NULL;
    PyObject *res = NULL;
    sc *a = NULL, k;
    size_t n;
    if (parse_scalars(&ba, &a, &n) || parse_one_scalar(&bk, &k)) goto done;
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * n));
    if (!res) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        sc r;
        sc_mul(&r, &a[i], &k);
        sc_get_b32(out + 32 * i, &r);
    }
    Py_END_ALLOW_THREADS
done:
    free(a);
    PyBuffer_Release(&ba);
    PyBuffer_Release(&bk);
    return res;
}

static PyObject *py_scalar_vec_sum(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer ba;
    if (!PyArg_ParseTuple(args, "y*:scalar_vec_sum", &ba)) return NULL;
    PyObject *res = NULL;
    sc *a = NULL;
    size_t n;
    if (parse_scalars(&ba, &a, &n)) goto done;
    sc acc = SC_ZERO;
    for (size_t i = 0; i < n; i++) sc_add(&acc, &acc, &a[i]);
    res = scalars_bytes(&acc, 1);
done:
    free(a);
    PyBuffer_Release(&ba);
    return res;
}

static PyObject *py_scalar_vec_inner(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer ba, bb;
    if (!PyArg_ParseTuple(args, "y*y*:scalar_vec_inner", &ba, &bb)) return NULL;
    PyObject *res = NULL;
    sc *a = NULL, *b = NULL;
    size_t n;
    if (parse_pair(&ba, &bb, &a, &b, &n)) goto done;
    sc acc = SC_ZERO;
    for (size_t i = 0; i < n; i++) {
        sc t;
        sc_mul(&t, &a[i], &b[i]);
        sc_add(&acc, &acc, &t);
    }
    res = scalars_bytes(&acc, 1);
done:
    free(a);
    free(b);
    PyBuffer_Release(&ba);
    PyBuffer_Release(&bb);
    return res;
}

/* --- subset sums ---------------------------------------------------------------------------- */

/* Trie node ids are 32-bit; the Python wrapper caps the total number of path indices. */
#define SUBSET_NONE ((uint32_t)0xFFFFFFFFu)

/* Denominator of the affine addition a + b: x_b - x_a, or 2·y_a for a doubling; returns 0 if the
 * sum needs no inversion (an operand at infinity or b = -a). */
static int ge_add_denominator(fe *den, const ge *a, const ge *b) {
    if (a->inf || b->inf) return 0;
    fe_sub(den, &b->x, &a->x);
    if (LIKELY(!fe_is_zero(den))) return 1;
    fe s;
    fe_add(&s, &a->y, &b->y);
    if (fe_is_zero(&s)) return 0;
    fe_add(den, &a->y, &a->y);
    return 1;
}

/* r = a + b given inv = 1 / ge_add_denominator(a, b) when that returned 1.  r may alias a or b. */
static void ge_add_with_inverse(ge *r, const ge *a, const ge *b, const fe *inv, int has_den) {
    if (!has_den) {
        if (a->inf) *r = *b;
        else if (b->inf) *r = *a;
        else r->inf = 1, r->x = FE_ZERO, r->y = FE_ZERO; /* b = -a */
        return;
    }
    fe lam, t;
    fe_sub(&t, &b->x, &a->x);
    if (UNLIKELY(fe_is_zero(&t))) {
        fe_sqr(&t, &a->x); /* doubling: λ = 3·x² / (2·y) */
        fe_mul_small(&t, &t, 3);
    } else {
        fe_sub(&t, &b->y, &a->y);
    }
    fe_mul(&lam, &t, inv);
    fe x3, y3;
    fe_sqr(&x3, &lam);
    fe_sub(&x3, &x3, &a->x);
    fe_sub(&x3, &x3, &b->x);
    fe_sub(&t, &a->x, &x3);
    fe_mul(&y3, &lam, &t);
    fe_sub(&y3, &y3, &a->y);
    fe_normalize(&x3);
    fe_normalize(&y3);
    r->x = x3;
    r->y = y3;
    r->inf = 0;
}

/* out[i] = Σ table[idx[j]] for j in [off[i], off[i+1]).  The paths form a trie (a path shares
 * with the previous one its common prefix); every trie node is parent + one table point, and the
 * nodes of one depth are added in affine coordinates sharing one inversion, so each node costs
 * about 6 field multiplications and the results come out affine. */
static int subset_sums_run(ge *out, const ge *table, const uint32_t *idx, const size_t *off,
                           size_t npaths, size_t maxlen) {
    size_t total = off[npaths];
    uint32_t *parent = malloc((total + 1) * sizeof *parent);
    uint32_t *order = malloc((total + 1) * sizeof *order);
    uint32_t *depth = malloc((total + 1) * sizeof *depth);
    uint32_t *node_of_path = malloc((npaths + 1) * sizeof *node_of_path);
    uint32_t *stack = malloc((maxlen + 1) * sizeof *stack);
    size_t *level_start = malloc((maxlen + 2) * sizeof *level_start);
    uint32_t *point_of = malloc((total + 1) * sizeof *point_of);
    ge *val = NULL;
    fe *inv = NULL, *den = NULL;
    unsigned char *has = NULL;
    int ok = 0;
    if (!parent || !order || !depth || !node_of_path || !stack || !level_start || !point_of)
        goto done;
    /* trie nodes in depth-first order */
    size_t nn = 0, prev_off = 0, prev_len = 0;
    for (size_t i = 0; i < npaths; i++) {
        size_t len = off[i + 1] - off[i];
        const uint32_t *path = idx + off[i];
        size_t common = 0;
        while (common < len && common < prev_len && path[common] == idx[prev_off + common]) common++;
        for (size_t d = common; d < len; d++) {
            parent[nn] = d ? stack[d - 1] : SUBSET_NONE;
            point_of[nn] = path[d];
            depth[nn] = (uint32_t)d;
            stack[d] = (uint32_t)nn++;
        }
        node_of_path[i] = len ? stack[len - 1] : SUBSET_NONE;
        prev_off = off[i];
        prev_len = len;
    }
    /* per-node arrays sized by the trie, not by the (larger) number of path indices */
    val = malloc((nn + 1) * sizeof *val);
    inv = malloc((nn + 1) * sizeof *inv);
    den = malloc((nn + 1) * sizeof *den);
    has = malloc(nn + 1);
    if (!val || !inv || !den || !has) goto done;
    /* counting sort of the nodes by depth */
    memset(level_start, 0, (maxlen + 2) * sizeof *level_start);
    for (size_t k = 0; k < nn; k++) level_start[depth[k] + 1]++;
    for (size_t d = 0; d < maxlen; d++) level_start[d + 1] += level_start[d];
    {
        size_t *fill = malloc((maxlen + 1) * sizeof *fill);
        if (!fill) goto done;
        memcpy(fill, level_start, (maxlen + 1) * sizeof *fill);
        for (size_t k = 0; k < nn; k++) order[fill[depth[k]]++] = (uint32_t)k;
        free(fill);
    }
    for (size_t d = 0; d < maxlen; d++) {
        size_t lo = level_start[d], hi = level_start[d + 1];
        if (d == 0) {
            for (size_t j = lo; j < hi; j++) val[order[j]] = table[point_of[order[j]]];
            continue;
        }
        fe acc = FE_ONE;
        size_t m = 0;
        for (size_t j = lo; j < hi; j++) {
            uint32_t k = order[j];
            has[j] = (unsigned char)ge_add_denominator(&den[j], &val[parent[k]], &table[point_of[k]]);
            if (has[j]) {
                inv[j] = acc;
                fe_mul(&acc, &acc, &den[j]);
                m++;
            }
        }
        if (m) {
            fe ai;
            fe_inv_var(&ai, &acc);
            for (size_t j = hi; j-- > lo;) {
                if (!has[j]) continue;
                fe t;
                fe_mul(&t, &ai, &inv[j]);
                fe_mul(&ai, &ai, &den[j]);
                inv[j] = t;
            }
        }
        for (size_t j = lo; j < hi; j++) {
            uint32_t k = order[j];
            ge_add_with_inverse(&val[k], &val[parent[k]], &table[point_of[k]], &inv[j], has[j]);
        }
    }
    for (size_t i = 0; i < npaths; i++) {
        if (node_of_path[i] == SUBSET_NONE) {
            out[i].inf = 1;
            out[i].x = FE_ZERO;
            out[i].y = FE_ZERO;
        } else {
            out[i] = val[node_of_path[i]];
        }
    }
    ok = 1;
done:
    free(parent);
    free(order);
    free(depth);
    free(node_of_path);
    free(stack);
    free(level_start);
    free(point_of);
    free(val);
    free(inv);
    free(den);
    free(has);
    return ok;
}

static PyObject *py_subset_sums_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bt;
    PyObject *paths_obj;
    if (!PyArg_ParseTuple(args, "y*O:subset_sums_var", &bt, &paths_obj)) return NULL;
    PyObject *res = NULL, *paths = NULL;
    ge *table = NULL, *out = NULL;
    uint32_t *idx = NULL;
    size_t *off = NULL;
    size_t nt;
    if (parse_points(&bt, &table, &nt)) goto done;
    paths = PySequence_Fast(paths_obj, "paths must be a sequence of index sequences");
    if (!paths) goto done;
    size_t npaths = (size_t)PySequence_Fast_GET_SIZE(paths);
    off = malloc((npaths + 1) * sizeof *off);
    if (!off) {
        PyErr_NoMemory();
        goto done;
    }
    size_t cap = 64, total = 0, maxlen = 0;
    idx = malloc(cap * sizeof *idx);
    if (!idx) {
        PyErr_NoMemory();
        goto done;
    }
    off[0] = 0;
    /* The previous path stays referenced: an item that is the very object at the same position of
     * the previous path (small ints are shared) reuses its already validated index, which skips
     * most conversions when consecutive paths share prefixes. */
    PyObject *prev = NULL;
    size_t prev_len = 0, prev_off = 0;
    for (size_t i = 0; i < npaths; i++) {
        PyObject *path = PySequence_Fast(PySequence_Fast_GET_ITEM(paths, i),
                                         "each path must be a sequence of indices");
        if (!path) goto parse_failed;
        size_t len = (size_t)PySequence_Fast_GET_SIZE(path);
        if (total + len >= (size_t)SUBSET_NONE) {
            Py_DECREF(path);
            PyErr_SetString(PyExc_ValueError, "too many path indices in total");
            goto parse_failed;
        }
        if (total + len > cap) {
            while (total + len > cap) cap *= 2;
            uint32_t *grown = realloc(idx, cap * sizeof *idx);
            if (!grown) {
                Py_DECREF(path);
                PyErr_NoMemory();
                goto parse_failed;
            }
            idx = grown;
        }
        PyObject **items = PySequence_Fast_ITEMS(path);
        PyObject **prev_items = prev ? PySequence_Fast_ITEMS(prev) : NULL;
        for (size_t j = 0; j < len; j++) {
            PyObject *item = items[j];
            if (j < prev_len && item == prev_items[j]) {
                idx[total + j] = idx[prev_off + j];
                continue;
            }
            if (!PyLong_Check(item)) {
                Py_DECREF(path);
                PyErr_Format(PyExc_TypeError, "path index must be an int, not %.100s",
                             Py_TYPE(item)->tp_name);
                goto parse_failed;
            }
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
            if (v == -1 && PyErr_Occurred()) {
                Py_DECREF(path);
                goto parse_failed;
            }
            if (overflow || v < 0 || (unsigned long long)v >= nt) {
                PyObject *repr = PyObject_Repr(item);
                Py_DECREF(path);
                if (repr) {
                    PyErr_Format(PyExc_ValueError, "path index %U out of range", repr);
                    Py_DECREF(repr);
                }
                goto parse_failed;
            }
            idx[total + j] = (uint32_t)v;
        }
        Py_XDECREF(prev);
        prev = path;
        prev_len = len;
        prev_off = total;
        total += len;
        if (len > maxlen) maxlen = len;
        off[i + 1] = total;
    }
    Py_XDECREF(prev);
    prev = NULL;
    out = malloc((npaths ? npaths : 1) * sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = subset_sums_run(out, table, idx, off, npaths, maxlen);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * npaths));
    if (!res) goto done;
    goto fill;
parse_failed:
    Py_XDECREF(prev);
    goto done;
fill:
    for (size_t i = 0; i < npaths; i++) point_to_64((unsigned char *)PyBytes_AS_STRING(res) + 64 * i, &out[i]);
done:
    Py_XDECREF(paths);
    free(table);
    free(out);
    free(idx);
    free(off);
    PyBuffer_Release(&bt);
    return res;
}

/* Private: force the Pippenger window (0 = automatic) and the Straus/Pippenger switch, for the
 * tuning runs behind bench/msm.py; returns the previous values. */
static PyObject *py_tune(PyObject *self, PyObject *args) {
    (void)self;
    int window;
    Py_ssize_t straus_max;
    if (!PyArg_ParseTuple(args, "in:_tune", &window, &straus_max)) return NULL;
    if (window < 0 || window > 16 || window == 1 || straus_max < 0) {
        PyErr_SetString(PyExc_ValueError, "window must be 0 or 2..16, straus_max >= 0");
        return NULL;
    }
    PyObject *prev = Py_BuildValue("(in)", g_pippenger_window, (Py_ssize_t)g_straus_max);
    g_pippenger_window = window;
    g_straus_max = (size_t)straus_max;
    return prev;
}

/* Private: cross-checks of C internals that the Python API cannot reach directly (the fast
 * inversions against Fermat, square roots, GLV bounds and recomposition, weakly reduced field
 * inputs in [p, 2^256), wNAF recomposition).  Returns a dict of mismatch counts (all must be 0) and
 * the largest GLV half seen, in bits. */
static u64 selftest_rng_(u64 *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void selftest_value_(u64 out[4], u64 *st, int it) {
    for (int i = 0; i < 4; i++) out[i] = selftest_rng_(st);
    switch (it % 8) {
    case 1: out[1] = out[2] = out[3] = 0; break;            /* small */
    case 2: out[3] = out[2] = out[1] = FE_ONES; break;      /* near 2^256 (and p) */
    case 3: out[0] &= 0xFF; out[3] >>= 60; break;
    case 4: out[3] = FE_ONES; out[2] = FE_ONES; break;       /* near N */
    default: break;
    }
}

static PyObject *py_selftest(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t iterations;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "nK:_selftest", &iterations, &seed)) return NULL;
    u64 st = seed | 1;
    long bad_fe_inv = 0, bad_sc_inv = 0, bad_sqrt = 0, bad_field = 0, bad_glv = 0, bad_wnaf = 0;
    int glv_max_bits = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t it = 0; it < iterations; it++) {
        u64 v[4], w[4];
        selftest_value_(v, &st, (int)it);
        selftest_value_(w, &st, (int)(it / 8));
        /* field: weakly reduced inputs (any 256-bit value) against canonical ones */
        fe a = {{v[0], v[1], v[2], v[3]}}, b = {{w[0], w[1], w[2], w[3]}}, an = a, bn = b;
        fe_normalize(&an);
        fe_normalize(&bn);
        fe r1, r2, r3;
        fe_mul(&r1, &a, &b);
        fe_mul(&r2, &an, &bn);
        if (!fe_equal(&r1, &r2)) bad_field++;
        fe_sqr(&r1, &a);
        fe_mul(&r2, &an, &an);
        if (!fe_equal(&r1, &r2)) bad_field++;
        fe_add(&r1, &a, &b);
        fe_sub(&r3, &r1, &b);
        if (!fe_equal(&r3, &an)) bad_field++;
        fe_sub(&r1, &a, &b);
        fe_add(&r3, &r1, &b);
        if (!fe_equal(&r3, &a)) bad_field++;
        fe_neg(&r1, &a);
        fe_add(&r1, &r1, &a);
        if (!fe_is_zero(&r1)) bad_field++;
        /* inversion */
        fe_inv_var(&r1, &a);
        fe_inv_fermat(&r2, &an);
        if (!fe_equal(&r1, &r2)) bad_fe_inv++;
        fe_mul(&r3, &r1, &a);
        if (!fe_is_zero(&an) && !fe_equal(&r3, &FE_ONE)) bad_fe_inv++;
        /* square roots: a² has the residue root ±a; consistency of the flag otherwise */
        fe sq;
        fe_sqr(&sq, &a);
        if (!fe_sqrt_var(&r1, &sq)) bad_sqrt++;
        fe_neg(&r2, &r1);
        if (!fe_equal(&r1, &an) && !fe_equal(&r2, &an)) bad_sqrt++;
        int has = fe_sqrt_var(&r1, &a);
        fe_neg(&r3, &a);
        int has_neg = fe_sqrt_var(&r2, &r3);
        if (!fe_is_zero(&a) && has == has_neg) bad_sqrt++; /* -1 is a non-residue mod p */
        if (fe_jacobi_var(&a) != (fe_is_zero(&a) ? 0 : has ? 1 : -1)) bad_sqrt++;
        if (fe_jacobi_var(&sq) != (fe_is_zero(&a) ? 0 : 1)) bad_sqrt++;
        /* scalars */
        sc k = {{v[0], v[1], v[2], v[3]}};
        if (sc_ge_n_(k.n)) sc_sub_n_(k.n);
        sc i1, i2, one;
        sc_inv_var(&i1, &k);
        sc_inv_fermat(&i2, &k);
        if (memcmp(i1.n, i2.n, sizeof i1.n)) bad_sc_inv++;
        sc_mul(&one, &i1, &k);
        if (!sc_is_zero(&k) && memcmp(one.n, SC_ONE.n, sizeof one.n)) bad_sc_inv++;
        /* GLV: k = ±m1 ± m2·λ with small halves */
        sc m1, m2, t1, t2;
        int n1, n2;
        sc_split_lambda_var(&m1, &n1, &m2, &n2, &k);
        int b1 = limbs_bitlen_(m1.n, 4), b2 = limbs_bitlen_(m2.n, 4);
        if (b1 > glv_max_bits) glv_max_bits = b1;
        if (b2 > glv_max_bits) glv_max_bits = b2;
        t1 = m1;
        if (n1) sc_neg(&t1, &t1);
        sc_mul(&t2, &m2, &SC_LAMBDA);
        if (n2) sc_neg(&t2, &t2);
        sc_add(&t1, &t1, &t2);
        if (memcmp(t1.n, k.n, sizeof k.n)) bad_glv++;
        /* wNAF of m1 recomposes to m1 (mod N) */
        int digits[260];
        int len = b1 + 1;
        wnaf_var(digits, len, &m1, 5);
        sc acc = SC_ZERO, two = {{2, 0, 0, 0}};
        for (int j = len - 1; j >= 0; j--) {
            sc_mul(&acc, &acc, &two);
            if (digits[j]) {
                sc d = {{(u64)(digits[j] < 0 ? -digits[j] : digits[j]), 0, 0, 0}};
                if (digits[j] < 0) sc_neg(&d, &d);
                sc_add(&acc, &acc, &d);
            }
        }
        if (memcmp(acc.n, m1.n, sizeof acc.n)) bad_wnaf++;
    }
    Py_END_ALLOW_THREADS
    return Py_BuildValue("{s:l,s:l,s:l,s:l,s:l,s:l,s:i}", "fe_inv", bad_fe_inv, "sc_inv",
                         bad_sc_inv, "sqrt", bad_sqrt, "field", bad_field, "glv", bad_glv, "wnaf",
                         bad_wnaf, "glv_max_bits", glv_max_bits);
}

/* --- module --------------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"msm_var", py_msm_var, METH_VARARGS, "msm_var(scalars, points) -> point: Σ k_i·P_i."},
    {"decode_points_var", py_decode_points_var, METH_VARARGS,
     "decode_points_var(data, kind) -> points (64 B each), with full validation."},
    {"decode_xqr_flags_var", py_decode_xqr_flags_var, METH_VARARGS,
     "decode_xqr_flags_var(xs, flags) -> points: x coordinates with a packed non-residue bitmask."},
    {"encode_points_var", py_encode_points_var, METH_VARARGS,
     "encode_points_var(points, kind) -> encoded points."},
    {"point_add_var", py_point_add_var, METH_VARARGS, "point_add_var(a, b) -> a + b."},
    {"point_neg", py_point_neg, METH_VARARGS, "point_neg(a) -> -a."},
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
    {"subset_sums_var", py_subset_sums_var, METH_VARARGS,
     "subset_sums_var(table, paths) -> for each path the sum of its table points."},
    {"_tune", py_tune, METH_VARARGS, "_tune(window, straus_max) -> previous (tuning only)"},
    {"_selftest", py_selftest, METH_VARARGS,
     "_selftest(iterations, seed) -> mismatch counts of internal cross-checks (testing only)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_native",
    "Variable-time secp256k1 kernel over public data (see ctplugin.secp256k1.kernel).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    PyObject *fbt = PyType_FromSpec(&fbt_spec);
    if (!fbt || PyModule_AddObject(m, "FixedBaseTable", fbt) < 0) {
        Py_XDECREF(fbt);
        Py_DECREF(m);
        return NULL;
    }
    PyObject *sacc = PyType_FromSpec(&sacc_spec);
    if (!sacc || PyModule_AddObject(m, "ScalarAccumulator", sacc) < 0) {
        Py_XDECREF(sacc);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "KIND_COMPRESSED", KIND_COMPRESSED) < 0 ||
        PyModule_AddIntConstant(m, "KIND_PEDERSEN", KIND_PEDERSEN) < 0 ||
        PyModule_AddIntConstant(m, "KIND_GENERATOR", KIND_GENERATOR) < 0 ||
        PyModule_AddIntConstant(m, "KIND_XONLY", KIND_XONLY) < 0 ||
        PyModule_AddIntConstant(m, "KIND_XQR", KIND_XQR) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

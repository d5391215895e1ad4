/* Glue: the ScalarAccumulator type (n scalars mod N kept as lazily reduced limbs between calls). */
#ifndef CTPLUGIN_GLUE_ACCUMULATOR_H
#define CTPLUGIN_GLUE_ACCUMULATOR_H

#include "common.h"

/* Largest accumulator: 2^24 scalars (512 MiB of limbs) -- far above any fixed base we build, and
 * a bound on what one call may allocate. */
#define SCALAR_ACC_MAX ((Py_ssize_t)1 << 24)

typedef struct {
    PyObject_HEAD
    sc_wide *v; /* n lazily reduced sums (scalar.h), kept as limbs between calls */
    size_t n;
    u64 terms;  /* terms added to any one entry since creation: bounded below 2^63 */
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
        kernel_error(KERR_TOO_LARGE, "accumulator size must be in [0, %zd]", SCALAR_ACC_MAX);
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

/* [offset, offset + count) lies inside the accumulator; -1 with EncodingError otherwise. */
static int sacc_check_run(const ScalarAccumulatorObject *self, Py_ssize_t offset,
                          Py_ssize_t count) {
    if (offset < 0 || count < 0 || (size_t)offset > self->n || (size_t)count > self->n - offset)
        return kernel_error(KERR_INDEX_RANGE, "run outside the accumulator");
    return 0;
}

/* Count `more` terms per entry against the lazy-reduction bound (each term < 2^512, 9 limbs hold
 * 2^64 of them); past it (not reachable in practice: 2^63 calls) the call is refused. */
static int sacc_count_terms(ScalarAccumulatorObject *self, u64 more) {
    if (more >= ((u64)1 << 63) - self->terms)
        return kernel_error(KERR_TOO_LARGE, "accumulator term count exhausted");
    self->terms += more;
    return 0;
}

/* Validate a packed vector: a multiple of 32 bytes, every scalar < N.  `term` names it in
 * messages (-1: a plain argument).  *count = its scalars. */
static int check_scalar_vector(const Py_buffer *bx, Py_ssize_t term, size_t *count) {
    if (bx->len % 32) return kernel_error(KERR_LENGTH, "scalar vector length is not a multiple of 32");
    *count = (size_t)bx->len / 32;
    const unsigned char *xb = bx->buf;
    for (size_t i = 0; i < *count; i++) {
        sc t;
        if (sc_set_b32(&t, xb + 32 * i)) continue;
        if (term < 0) return kernel_error(KERR_SCALAR_RANGE, "scalar %zu: not below the group order", i);
        return kernel_error(KERR_SCALAR_RANGE, "term %zd: scalar %zu not below the group order",
                            term, i);
    }
    return 0;
}

/* acc[offset + i] += k·x[i] for the validated packed vector x (count scalars). */
static void sacc_add_scaled(ScalarAccumulatorObject *self, size_t offset, const sc *k,
                            const unsigned char *x, size_t count) {
    sc_wide *acc = self->v + offset;
    for (size_t i = 0; i < count; i++) {
        sc t;
        sc_set_b32(&t, x + 32 * i);
        sc_wide_add_mul(&acc[i], &t, k);
    }
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
    size_t count = 0;
    if (parse_one_scalar(&bk, &k) == 0 && check_scalar_vector(&bx, -1, &count) == 0 &&
        sacc_check_run(self, offset, (Py_ssize_t)count) == 0 && sacc_count_terms(self, 1) == 0) {
        sacc_add_scaled(self, (size_t)offset, &k, bx.buf, count);
        res = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&bk);
    PyBuffer_Release(&bx);
    return res;
}

/* One term (offset, multiplier, x) of axpy_terms: the multiplier is 32 bytes, a scalar < N. */
typedef struct {
    Py_ssize_t offset;
    sc mult;
    PyObject *x; /* borrowed from the term tuple, which the caller's sequence keeps alive */
} sacc_term_;

static int sacc_parse_term(PyObject *term, Py_ssize_t j, sacc_term_ *out) {
    if (!PyTuple_Check(term) || PyTuple_GET_SIZE(term) != 3)
        return kernel_error(KERR_TYPE, "term %zd: a term is a tuple (offset, multiplier, x)", j);
    PyObject *off = PyTuple_GET_ITEM(term, 0), *mult = PyTuple_GET_ITEM(term, 1);
    if (!PyLong_Check(off)) return kernel_error(KERR_TYPE, "term %zd: the offset is an int", j);
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(off, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    out->offset = overflow || v < 0 || v > PY_SSIZE_T_MAX ? -1 : (Py_ssize_t)v;
    if (!PyBytes_Check(mult) || PyBytes_GET_SIZE(mult) != 32)
        return kernel_error(KERR_LENGTH, "term %zd: the multiplier is 32 bytes", j);
    if (!sc_set_b32(&out->mult, (const unsigned char *)PyBytes_AS_STRING(mult)))
        return kernel_error(KERR_SCALAR_RANGE, "term %zd: multiplier not below the group order", j);
    out->x = PyTuple_GET_ITEM(term, 2);
    return 0;
}

/* For each term (offset, multiplier, x): acc[offset + i] += (weight·multiplier)·x_i; weight and
 * the multipliers are 32-byte scalars < N.  Pass 1 validates every term (types, runs, scalars)
 * so that a bad term changes nothing; pass 2 adds. */
static PyObject *sacc_axpy_terms(ScalarAccumulatorObject *self, PyObject *args) {
    Py_buffer bw;
    PyObject *terms_obj;
    if (!PyArg_ParseTuple(args, "y*O:axpy_terms", &bw, &terms_obj)) return NULL;
    sc weight;
    int bad = parse_one_scalar_named(&bw, &weight, "weight");
    PyBuffer_Release(&bw);
    if (bad) return NULL;
    PyObject *seq = PySequence_Fast(terms_obj, "terms must be a sequence");
    if (!seq) return NULL;
    PyObject *res = NULL;
    const Py_ssize_t nterms = PySequence_Fast_GET_SIZE(seq);
    for (int pass = 0; pass < 2; pass++) {
        for (Py_ssize_t j = 0; j < nterms; j++) {
            sacc_term_ t = {0};
            Py_buffer bx;
            size_t count = 0;
            if (sacc_parse_term(PySequence_Fast_GET_ITEM(seq, j), j, &t)) goto done;
            if (PyObject_GetBuffer(t.x, &bx, PyBUF_SIMPLE) < 0) goto done;
            /* (pass 2 checks the run again: no Python code runs between the passes, so it
             * holds, but the writes never rely on that) */
            int err = (pass == 0 && check_scalar_vector(&bx, j, &count)) ||
                      sacc_check_run(self, t.offset, bx.len / 32);
            if (pass == 1 && !err) {
                sc k;
                sc_mul(&k, &weight, &t.mult);
                sacc_add_scaled(self, (size_t)t.offset, &k, bx.buf, (size_t)bx.len / 32);
            }
            PyBuffer_Release(&bx);
            if (err) goto done;
        }
        if (pass == 0 && sacc_count_terms(self, (u64)nterms)) goto done;
    }
    res = Py_NewRef(Py_None);
done:
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
    if (parse_one_scalar(&bv, &value) == 0 && sacc_check_run(self, offset, count) == 0 &&
        sacc_count_terms(self, 1) == 0) {
        for (Py_ssize_t i = 0; i < count; i++) sc_wide_add(&self->v[offset + i], &value);
        res = Py_NewRef(Py_None);
    }
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
     "axpy_terms(weight, terms): acc[offset + i] += (weight·mult)·x_i per (offset, mult, x); "
     "weight and mult are 32-byte scalars."},
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
    KERNEL_TYPE_NAME("ScalarAccumulator"),
    sizeof(ScalarAccumulatorObject),
    0,
    Py_TPFLAGS_DEFAULT,
    sacc_slots,
};

#endif

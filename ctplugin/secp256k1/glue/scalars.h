/* Glue: scalar vectors mod N (powers, batch inverse, challenge products, elementwise ops). */
#ifndef CTPLUGIN_GLUE_SCALARS_H
#define CTPLUGIN_GLUE_SCALARS_H

#include "../native/inverse.h"
#include "common.h"

/* scalar_challenge_products returns 2^k scalars: cap k so the output stays bounded (32 MiB). */
#define MAX_CHALLENGES 20

static int check_nonzero(const sc *v, size_t n, const char *message) {
    for (size_t i = 0; i < n; i++) {
        if (sc_is_zero(&v[i])) return kernel_error(KERR_ZERO, "%s", message);
    }
    return 0;
}

static PyObject *py_scalar_powers(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bx;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y*n:scalar_powers", &bx, &n)) return NULL;
    PyObject *res = NULL;
    sc x;
    if (parse_one_scalar(&bx, &x)) goto done;
    if (n < 0) {
        kernel_error(KERR_INDEX_RANGE, "negative length");
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
    KERNEL_MAYBE_NOGIL(n >= GIL_RELEASE_SCALARS, {
        for (Py_ssize_t i = 0; i < n; i++) {
            sc_get_b32(out + 32 * i, &acc);
            sc_mul(&acc, &acc, &x);
        }
    });
done:
    PyBuffer_Release(&bx);
    return res;
}

static PyObject *py_scalar_batch_inverse(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bv;
    if (!PyArg_ParseTuple(args, "y*:scalar_batch_inverse", &bv)) return NULL;
    PyObject *res = NULL;
    sc *v = NULL, *out = NULL;
    size_t n;
    if (parse_scalars(&bv, &v, &n) || check_nonzero(v, n, "cannot invert zero")) goto done;
    out = malloc((n ? n : 1) * sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    KERNEL_MAYBE_NOGIL(n >= GIL_RELEASE_SCALARS, sc_inv_all_var(out, v, n, out));
    res = scalars_bytes(out, n);
done:
    free(v);
    free(out);
    PyBuffer_Release(&bv);
    return res;
}

/* s[i] = Π_r x_r^(+1 if bit r of i else -1): s[0] = Π x_r^-1, and setting bit r multiplies by
 * x_r / x_r^-1 = x_r^2.  xinv: scratch of k scalars; out: 2^k. */
static void challenge_products_(sc *out, sc *xinv, const sc *x, size_t k) {
    sc_inv_all_var(xinv, x, k, xinv);
    out[0] = SC_ONE;
    for (size_t r = 0; r < k; r++) sc_mul(&out[0], &out[0], &xinv[r]);
    for (size_t r = 0; r < k; r++) {
        sc sq;
        sc_mul(&sq, &x[r], &x[r]);
        size_t half = (size_t)1 << r;
        for (size_t j = 0; j < half; j++) sc_mul(&out[j + half], &out[j], &sq);
    }
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
        kernel_error(KERR_TOO_LARGE, "too many challenges (%zu > %d)", k, MAX_CHALLENGES);
        goto done;
    }
    if (check_nonzero(x, k, "challenge is zero")) goto done;
    out = malloc(((size_t)1 << k) * sizeof *out);
    xinv = malloc((k ? k : 1) * sizeof *xinv);
    if (!out || !xinv) {
        PyErr_NoMemory();
        goto done;
    }
    KERNEL_MAYBE_NOGIL(((size_t)1 << k) >= GIL_RELEASE_SCALARS,
                       challenge_products_(out, xinv, x, k));
    res = scalars_bytes(out, (size_t)1 << k);
done:
    free(x);
    free(xinv);
    free(out);
    PyBuffer_Release(&bx);
    return res;
}

/* Parse two vectors of the same length (both freed on failure). */
static int parse_pair(const Py_buffer *ba, const Py_buffer *bb, sc **a, sc **b, size_t *n) {
    size_t na = 0, nb = 0;
    *a = *b = NULL;
    if (parse_scalars(ba, a, &na) == 0 && parse_scalars(bb, b, &nb) == 0) {
        if (na == nb) {
            *n = na;
            return 0;
        }
        kernel_error(KERR_COUNT_MISMATCH, "vector lengths differ");
    }
    free(*a);
    free(*b);
    *a = *b = NULL;
    return -1;
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
    KERNEL_MAYBE_NOGIL(n >= GIL_RELEASE_SCALARS, {
        for (size_t i = 0; i < n; i++) {
            sc r;
            if (op == OP_MUL) sc_mul(&r, &a[i], &b[i]);
            else sc_add(&r, &a[i], &b[i]);
            sc_get_b32(out + 32 * i, &r);
        }
    });
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
    KERNEL_MAYBE_NOGIL(n >= GIL_RELEASE_SCALARS, {
        for (size_t i = 0; i < n; i++) {
            sc r;
            sc_mul(&r, &a[i], &k);
            sc_get_b32(out + 32 * i, &r);
        }
    });
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
    if (parse_scalars(&ba, &a, &n) == 0) {
        sc acc = SC_ZERO;
        for (size_t i = 0; i < n; i++) sc_add(&acc, &acc, &a[i]);
        res = scalars_bytes(&acc, 1);
    }
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
    if (parse_pair(&ba, &bb, &a, &b, &n) == 0) {
        sc acc = SC_ZERO;
        for (size_t i = 0; i < n; i++) {
            sc t;
            sc_mul(&t, &a[i], &b[i]);
            sc_add(&acc, &acc, &t);
        }
        res = scalars_bytes(&acc, 1);
    }
    free(a);
    free(b);
    PyBuffer_Release(&ba);
    PyBuffer_Release(&bb);
    return res;
}

#endif

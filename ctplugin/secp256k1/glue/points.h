/* Glue: point encodings (decode_points_var, decode_xqr_flags_var, encode_points_var) and single
 * point operations (point_add_var, point_neg). */
#ifndef CTPLUGIN_GLUE_POINTS_H
#define CTPLUGIN_GLUE_POINTS_H

#include "../native/decode.h"
#include "common.h"

static int check_kind(int kind) {
    if (kind < 0 || kind >= KIND_COUNT) return kernel_error(KERR_KIND, "unknown point kind %d", kind);
    return 0;
}

static int decode_error(decode_status status, size_t i, const unsigned char *encoding) {
    if (status == DECODE_PREFIX)
        return kernel_error(KERR_PREFIX, "point %zu: bad prefix byte 0x%02x", i, encoding[0]);
    if (status == DECODE_FIELD_RANGE)
        return kernel_error(KERR_FIELD_RANGE, "point %zu: x coordinate not below the field size", i);
    return kernel_error(KERR_OFF_CURVE, "point %zu: not on the curve", i);
}

/* decode_points_var (native/decode.h) over a copy of the input, the GIL released for
 * GIL_RELEASE_CHEAP points or more, as a bytes object of 64n bytes. */
static PyObject *decode_points_bytes(const Py_buffer *b, size_t n, size_t width, int kind,
                                     const Py_buffer *flags) {
    size_t nflags = flags ? (size_t)flags->len : 0;
    PyObject *res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * n));
    if (!res || n == 0) return res;
    unsigned char *copy = malloc((size_t)b->len + nflags);
    ge *pts = malloc(n * sizeof *pts);
    if (!copy || !pts) {
        free(copy);
        free(pts);
        Py_DECREF(res);
        return PyErr_NoMemory();
    }
    memcpy(copy, b->buf, (size_t)b->len);
    if (flags) memcpy(copy + b->len, flags->buf, nflags);
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    decode_status status;
    size_t bad = 0;
    KERNEL_MAYBE_NOGIL(n >= GIL_RELEASE_CHEAP, {
        status = decode_points_var(pts, copy, n, width, kind, flags ? copy + b->len : NULL,
                                   &bad);
        if (status == DECODE_OK)
            for (size_t i = 0; i < n; i++) point_to_64(out + 64 * i, &pts[i]);
    });
    if (status != DECODE_OK) {
        Py_CLEAR(res);
        decode_error(status, bad, copy + width * bad);
    }
    free(copy);
    free(pts);
    return res;
}

static PyObject *py_decode_points_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b;
    int kind;
    if (!PyArg_ParseTuple(args, "y*i:decode_points_var", &b, &kind)) return NULL;
    PyObject *res = NULL;
    if (check_kind(kind) == 0) {
        size_t width = kind_width(kind);
        if ((size_t)b.len % width)
            kernel_error(KERR_LENGTH, "encoded point vector length is not a multiple of %zu", width);
        else
            res = decode_points_bytes(&b, (size_t)b.len / width, width, kind, NULL);
    }
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
    size_t n = (size_t)bx.len / 32;
    const unsigned char *fl = bf.buf;
    if (bx.len % 32)
        kernel_error(KERR_LENGTH, "x coordinate vector length is not a multiple of 32");
    else if ((size_t)bf.len != (n + 7) / 8)
        kernel_error(KERR_LENGTH, "flags must be %zu bytes for %zu points", (n + 7) / 8, n);
    else if (n % 8 && (fl[n / 8] >> (n % 8)))
        kernel_error(KERR_FLAGS, "unused flag bits are not zero");
    else
        res = decode_points_bytes(&bx, n, 32, KIND_XQR, &bf);
    PyBuffer_Release(&bx);
    PyBuffer_Release(&bf);
    return res;
}

/* y is a quadratic residue mod p (0 counts as one, as in the reference). */
static int fe_is_square_var(const fe *a) { return fe_jacobi_var(a) >= 0; }

static void encode_run_(unsigned char *out, const ge *pts, size_t n, int kind) {
    const size_t width = kind_width(kind);
    const int base = kind_prefix(kind);
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
}

static PyObject *py_encode_points_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b;
    int kind;
    if (!PyArg_ParseTuple(args, "y*i:encode_points_var", &b, &kind)) return NULL;
    PyObject *res = NULL;
    ge *pts = NULL;
    size_t n;
    if (check_kind(kind) || parse_points(&b, &pts, &n)) goto done;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].inf) {
            kernel_error(KERR_INFINITY, "point %zu: infinity has no encoding", i);
            goto done;
        }
    }
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(kind_width(kind) * n));
    if (!res) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    KERNEL_MAYBE_NOGIL(n >= GIL_RELEASE_CHEAP, encode_run_(out, pts, n, kind));
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
    ge a = {.inf = 1}; /* set by parse_one_point (initialized: GCC cannot see it through inlining) */
    if (parse_one_point(&ba, &a) == 0) {
        if (!a.inf) fe_neg(&a.y, &a.y);
        res = point_bytes(&a);
    }
    PyBuffer_Release(&ba);
    return res;
}

#endif

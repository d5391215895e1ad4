/* Glue: point encodings (decode_points_var, decode_xqr_flags_var, encode_points_var) and single
 * point operations (point_add_var, point_neg). */
#ifndef CTPLUGIN_GLUE_POINTS_H
#define CTPLUGIN_GLUE_POINTS_H

#include "common.h"
#include "../native/field_batch.h"

enum { KIND_COMPRESSED = 0, KIND_PEDERSEN = 1, KIND_GENERATOR = 2, KIND_XONLY = 3, KIND_XQR = 4 };
#define KIND_COUNT 5

static int check_kind(int kind) {
    if (kind < 0 || kind >= KIND_COUNT) return kernel_error(KERR_KIND, "unknown point kind %d", kind);
    return 0;
}

static size_t kind_width(int kind) { return kind == KIND_XONLY ? 32 : 33; }

/* The prefix byte of a kind with flag 0 (KIND_XQR: a bare flag byte 0/1; KIND_XONLY: none). */
static int kind_prefix(int kind) {
    return kind == KIND_COMPRESSED ? 0x02 : kind == KIND_PEDERSEN ? 0x08
         : kind == KIND_GENERATOR  ? 0x0a : 0x00;
}

/* The point with x coordinate xb (32 bytes) and the y selected by flag for the kind: parity for
 * KIND_COMPRESSED / KIND_XONLY, "not a quadratic residue" for the others.  Returns NULL or the
 * KERR_* reason. */
static const char *decode_x_(ge *r, const unsigned char *xb, int flag, int kind) {
    if (!fe_set_b32(&r->x, xb)) return KERR_FIELD_RANGE;
    fe rhs, seven = {{7, 0, 0, 0}};
    fe_sqr(&rhs, &r->x);
    fe_mul(&rhs, &rhs, &r->x);
    fe_add(&rhs, &rhs, &seven);
    if (!fe_sqrt_var(&r->y, &rhs)) return KERR_OFF_CURVE;
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
    if ((b[0] & ~1) != kind_prefix(kind)) return KERR_PREFIX;
    return decode_x_(r, b + 1, b[0] & 1, kind);
}

static int decode_error(const char *reason, size_t i, const unsigned char *encoding) {
    if (reason == KERR_PREFIX)
        return kernel_error(reason, "point %zu: bad prefix byte 0x%02x", i, encoding[0]);
    return kernel_error(reason, "point %zu: %s", i,
                        reason == KERR_FIELD_RANGE ? "x coordinate not below the field size"
                                                   : "not on the curve");
}

/* Decode n records of `width` bytes at `data` (a private copy: read without the GIL) into out
 * (64 bytes per point); flags (NULL: none) is a bitmask of y flags for KIND_XQR records given
 * as bare x coordinates.  One point at a time (decode_x_).  Returns NULL, or the reason with
 * *bad = the failing index. */
static const char *decode_each_(unsigned char *out, const unsigned char *data, size_t n,
                                size_t width, int kind, const unsigned char *flags, size_t *bad) {
    for (size_t i = 0; i < n; i++) {
        ge g;
        const char *reason = flags
            ? decode_x_(&g, data + 32 * i, (flags[i / 8] >> (i % 8)) & 1, KIND_XQR)
            : decode_one(&g, data + width * i, kind);
        if (reason) {
            *bad = i;
            return reason;
        }
        point_to_64(out + 64 * i, &g);
    }
    return NULL;
}

/* decode_each_ with the square roots of all the records taken together (fe_sqrt_all_var:
 * sixteen at a time where the CPU has IFMA), the same results and the same first failure:
 * pass 1 checks prefixes and x ranges and forms x^3 + 7, pass 2 takes every root, pass 3 walks
 * the records in order, reporting the first failure (a bad prefix or range, or no root).  Falls
 * back to decode_each_ for a few records or if scratch memory is short. */
static const char *decode_run_(unsigned char *out, const unsigned char *data, size_t n,
                               size_t width, int kind, const unsigned char *flags, size_t *bad) {
    if (n < 4) return decode_each_(out, data, n, width, kind, flags, bad);
    fe *x = malloc(3 * n * sizeof *x);
    unsigned char *meta = malloc(2 * n); /* per record: y flag, then 0 / 1 prefix / 2 range */
    if (!x || !meta) {
        free(x);
        free(meta);
        return decode_each_(out, data, n, width, kind, flags, bad);
    }
    fe *rhs = x + n, *y = x + 2 * n;
    unsigned char *flag = meta, *fail = meta + n, *ok = (unsigned char *)out; /* out: scratch */
    const fe one = {{1, 0, 0, 0}}, seven = {{7, 0, 0, 0}};
    const int kind_of_y = flags ? KIND_XQR : kind;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *xb;
        fail[i] = 0;
        if (flags) {
            xb = data + 32 * i;
            flag[i] = (flags[i / 8] >> (i % 8)) & 1;
        } else if (kind == KIND_XONLY) {
            xb = data + 32 * i;
            flag[i] = 0;
        } else {
            const unsigned char *b = data + width * i;
            xb = b + 1;
            flag[i] = b[0] & 1;
            if ((b[0] & ~1) != kind_prefix(kind)) fail[i] = 1;
        }
        if (!fail[i] && !fe_set_b32(&x[i], xb)) fail[i] = 2;
        if (fail[i]) {
            rhs[i] = one;
            continue;
        }
        fe_sqr(&rhs[i], &x[i]);
        fe_mul(&rhs[i], &rhs[i], &x[i]);
        fe_add(&rhs[i], &rhs[i], &seven);
    }
    fe_sqrt_all_var(y, ok, rhs, n); /* ok[i] (the first n bytes of out) before out is written */
    const char *reason = NULL;
    for (size_t i = 0; i < n; i++) {
        if (fail[i] || !ok[i]) {
            reason = fail[i] == 1 ? KERR_PREFIX : fail[i] == 2 ? KERR_FIELD_RANGE : KERR_OFF_CURVE;
            *bad = i;
            break;
        }
    }
    if (!reason) {
        for (size_t i = 0; i < n; i++) { /* ok (in out) is not read any more */
            ge g;
            g.x = x[i];
            g.y = y[i];
            if (kind_of_y == KIND_COMPRESSED || kind_of_y == KIND_XONLY) {
                if ((int)(g.y.n[0] & 1) != flag[i]) fe_neg(&g.y, &g.y);
            } else if (flag[i]) {
                fe_neg(&g.y, &g.y);
            }
            fe_normalize(&g.y);
            g.inf = 0;
            point_to_64(out + 64 * i, &g);
        }
    }
    free(x);
    free(meta);
    return reason;
}

/* decode_run_ over a copy of the input (GIL released), as a bytes object of 64n bytes. */
static PyObject *decode_points_bytes(const Py_buffer *b, size_t n, size_t width, int kind,
                                     const Py_buffer *flags) {
    size_t nflags = flags ? (size_t)flags->len : 0;
    PyObject *res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * n));
    if (!res || n == 0) return res;
    unsigned char *copy = malloc((size_t)b->len + nflags);
    if (!copy) {
        Py_DECREF(res);
        return PyErr_NoMemory();
    }
    memcpy(copy, b->buf, (size_t)b->len);
    if (flags) memcpy(copy + b->len, flags->buf, nflags);
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(res);
    const char *reason;
    size_t bad = 0;
    Py_BEGIN_ALLOW_THREADS
    reason = decode_run_(out, copy, n, width, kind, flags ? copy + b->len : NULL, &bad);
    Py_END_ALLOW_THREADS
    if (reason) {
        Py_CLEAR(res);
        decode_error(reason, bad, copy + width * bad);
    }
    free(copy);
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
    Py_BEGIN_ALLOW_THREADS
    encode_run_(out, pts, n, kind);
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
    ge a = {.inf = 1}; /* set by parse_one_point (initialized: GCC cannot see it through inlining) */
    if (parse_one_point(&ba, &a) == 0) {
        if (!a.inf) fe_neg(&a.y, &a.y);
        res = point_bytes(&a);
    }
    PyBuffer_Release(&ba);
    return res;
}

#endif

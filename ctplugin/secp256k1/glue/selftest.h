/* Glue: _selftest, cross-checks of C internals that the Python API cannot reach directly (the
 * fast inversions against Fermat, square roots, GLV bounds and recomposition, weakly reduced
 * field inputs in [p, 2^256) (products, sums, differences, halvings), wNAF recomposition, batch
 * inversion, the ADX field backend against the portable one).  Testing only. */
#ifndef CTPLUGIN_GLUE_SELFTEST_H
#define CTPLUGIN_GLUE_SELFTEST_H

#include "../native/digits.h"
#include "../native/glv.h"
#include "../native/inverse.h"
#include "common.h"

typedef struct {
    long fe_inv, sc_inv, sqrt, field, glv, wnaf, batch_inv, backend;
    int glv_max_bits;
} selftest_counts_;

static u64 selftest_rng_(u64 *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random limbs, with edge shapes every few iterations. */
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

/* Field operations on weakly reduced inputs (any 256-bit value) against canonical ones, and the
 * safegcd inversion against Fermat's. */
static void selftest_field_(selftest_counts_ *c, const fe *a, const fe *b) {
    fe an = *a, bn = *b, r1, r2, r3;
    fe_normalize(&an);
    fe_normalize(&bn);
    fe_mul(&r1, a, b);
    fe_mul(&r2, &an, &bn);
    if (!fe_equal(&r1, &r2)) c->field++;
    fe_sqr(&r1, a);
    fe_mul(&r2, &an, &an);
    if (!fe_equal(&r1, &r2)) c->field++;
    fe_add(&r1, a, b);
    fe_sub(&r3, &r1, b);
    if (!fe_equal(&r3, &an)) c->field++;
    fe_sub(&r1, a, b);
    fe_add(&r3, &r1, b);
    if (!fe_equal(&r3, a)) c->field++;
    fe_neg(&r1, a);
    fe_add(&r1, &r1, a);
    if (!fe_is_zero(&r1)) c->field++;
    fe_half(&r1, a); /* (a/2)·2 = a, for odd and even, weakly reduced a */
    fe_add(&r3, &r1, &r1);
    if (!fe_equal(&r3, &an)) c->field++;
    fe_inv_var(&r1, a);
    fe_inv_fermat(&r2, &an);
    if (!fe_equal(&r1, &r2)) c->fe_inv++;
    fe_mul(&r3, &r1, a);
    if (!fe_is_zero(&an) && !fe_equal(&r3, &FE_ONE)) c->fe_inv++;
}

/* The field backend in use (ADX assembly in _native_adx; the carry intrinsics of fe_add, fe_sub
 * and fe_half on x86-64) against the portable C, which every build keeps: products, squares,
 * 512-bit products, sums, differences, halvings. */
static void selftest_backend_(selftest_counts_ *c, const fe *a, const fe *b) {
    fe r1, r2;
    u64 l1[8], l2[8];
    fe_mul(&r1, a, b);
    fe_mul_portable_(&r2, a, b);
    if (!fe_equal(&r1, &r2)) c->backend++;
    fe_sqr(&r1, a);
    fe_sqr_portable_(&r2, a);
    if (!fe_equal(&r1, &r2)) c->backend++;
    /* the sums, differences and halvings limb for limb (the same steps, other instructions) */
    fe_add(&r1, a, b);
    fe_add_portable_(&r2, a, b);
    if (memcmp(&r1, &r2, sizeof r1)) c->backend++;
    fe_sub(&r1, a, b);
    fe_sub_portable_(&r2, a, b);
    if (memcmp(&r1, &r2, sizeof r1)) c->backend++;
    fe_half(&r1, a);
    fe_half_portable_(&r2, a);
    if (memcmp(&r1, &r2, sizeof r1)) c->backend++;
    r1 = *a;
    fe_mul(&r1, &r1, b); /* the output aliasing an input */
    fe_mul_portable_(&r2, a, b);
    if (!fe_equal(&r1, &r2)) c->backend++;
    r1 = *a;
    fe_sqr(&r1, &r1);
    fe_sqr_portable_(&r2, a);
    if (!fe_equal(&r1, &r2)) c->backend++;
    u256_mul_512_(l1, a->n, b->n);
    u256_mul_512_portable_(l2, a->n, b->n);
    if (memcmp(l1, l2, sizeof l1)) c->backend++;
}

/* Square roots: a² has the residue root ±a; the existence flag agrees with the Jacobi symbol and
 * flips with the sign (-1 is a non-residue mod p). */
static void selftest_sqrt_(selftest_counts_ *c, const fe *a) {
    fe an = *a, sq, r1, r2, r3;
    fe_normalize(&an);
    fe_sqr(&sq, a);
    if (!fe_sqrt_var(&r1, &sq)) c->sqrt++;
    fe_neg(&r2, &r1);
    if (!fe_equal(&r1, &an) && !fe_equal(&r2, &an)) c->sqrt++;
    int has = fe_sqrt_var(&r1, a);
    fe_neg(&r3, a);
    int has_neg = fe_sqrt_var(&r2, &r3);
    if (!fe_is_zero(a) && has == has_neg) c->sqrt++;
    if (fe_jacobi_var(a) != (fe_is_zero(a) ? 0 : has ? 1 : -1)) c->sqrt++;
    if (fe_jacobi_var(&sq) != (fe_is_zero(a) ? 0 : 1)) c->sqrt++;
}

/* Scalar inversion against Fermat; GLV: k = ±m1 ± m2·λ with small halves; the wNAF of m1
 * recomposes to m1. */
static void selftest_scalar_(selftest_counts_ *c, const u64 v[4]) {
    sc k = {{v[0], v[1], v[2], v[3]}}, i1, i2, one;
    if (sc_ge_n_(k.n)) sc_sub_n_(k.n);
    sc_inv_var(&i1, &k);
    sc_inv_fermat(&i2, &k);
    if (memcmp(i1.n, i2.n, sizeof i1.n)) c->sc_inv++;
    sc_mul(&one, &i1, &k);
    if (!sc_is_zero(&k) && memcmp(one.n, SC_ONE.n, sizeof one.n)) c->sc_inv++;
    sc m1, m2, t1, t2;
    int n1, n2;
    sc_split_lambda_var(&m1, &n1, &m2, &n2, &k);
    int b1 = limbs_bitlen_(m1.n, 4), b2 = limbs_bitlen_(m2.n, 4);
    if (b1 > c->glv_max_bits) c->glv_max_bits = b1;
    if (b2 > c->glv_max_bits) c->glv_max_bits = b2;
    t1 = m1;
    if (n1) sc_neg(&t1, &t1);
    sc_mul(&t2, &m2, &SC_LAMBDA);
    if (n2) sc_neg(&t2, &t2);
    sc_add(&t1, &t1, &t2);
    if (memcmp(t1.n, k.n, sizeof k.n)) c->glv++;
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
    if (memcmp(acc.n, m1.n, sizeof acc.n)) c->wnaf++;
}

/* The batch inversions (both aliasing modes) against single inversions. */
#define SELFTEST_BATCH 9
static void selftest_batch_inverse_(selftest_counts_ *c, u64 *st, int it) {
    fe f[SELFTEST_BATCH], fi[SELFTEST_BATCH], pre[SELFTEST_BATCH];
    sc s[SELFTEST_BATCH], si[SELFTEST_BATCH];
    for (int i = 0; i < SELFTEST_BATCH; i++) {
        u64 v[4];
        selftest_value_(v, st, it + i);
        f[i] = (fe){{v[0], v[1], v[2], v[3]}}; /* weakly reduced, any 256-bit value ... */
        if (fe_is_zero(&f[i])) f[i] = FE_ONE;      /* ... except 0 and p */
        s[i] = (sc){{v[0] | 1, v[1], v[2], v[3] >> 1}}; /* below 2^255 < N, odd: non-zero */
    }
    fe_inv_all_var(fi, f, SELFTEST_BATCH, fi);
    sc_inv_all_var(si, s, SELFTEST_BATCH, si);
    for (int i = 0; i < SELFTEST_BATCH; i++) {
        fe e;
        sc t;
        fe_inv_var(&e, &f[i]);
        if (!fe_equal(&e, &fi[i])) c->batch_inv++;
        sc_inv_var(&t, &s[i]);
        if (memcmp(t.n, si[i].n, sizeof t.n)) c->batch_inv++;
    }
    fe_inv_all_var(f, f, SELFTEST_BATCH, pre); /* in place */
    for (int i = 0; i < SELFTEST_BATCH; i++) {
        if (!fe_equal(&f[i], &fi[i])) c->batch_inv++;
    }
}

/* Field values at the edges of the representation: 0, 1, p - 1, p, p + 1, 2^256 - 1 (whose
 * square makes the reduction wrap past 2^256 twice), 2^256 - C, 2^255, 2^64 - 1, C. */
static const fe SELFTEST_EDGES[] = {
    {{0, 0, 0, 0}},
    {{1, 0, 0, 0}},
    {{FE_P0 - 1, FE_ONES, FE_ONES, FE_ONES}},
    {{FE_P0, FE_ONES, FE_ONES, FE_ONES}},
    {{FE_P0 + 1, FE_ONES, FE_ONES, FE_ONES}},
    {{FE_ONES, FE_ONES, FE_ONES, FE_ONES}},
    {{(u64)0 - FE_C, FE_ONES, FE_ONES, FE_ONES}},
    {{0, 0, 0, (u64)1 << 63}},
    {{FE_ONES, 0, 0, 0}},
    {{FE_C, 0, 0, 0}},
};

static void selftest_edges_(selftest_counts_ *c) {
    const size_t n = sizeof SELFTEST_EDGES / sizeof SELFTEST_EDGES[0];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            selftest_backend_(c, &SELFTEST_EDGES[i], &SELFTEST_EDGES[j]);
            selftest_field_(c, &SELFTEST_EDGES[i], &SELFTEST_EDGES[j]);
        }
    }
}

static PyObject *py_selftest(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t iterations;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "nK:_selftest", &iterations, &seed)) return NULL;
    u64 st = seed | 1;
    selftest_counts_ c = {0};
    Py_BEGIN_ALLOW_THREADS
    selftest_edges_(&c);
    for (Py_ssize_t it = 0; it < iterations; it++) {
        u64 v[4], w[4];
        selftest_value_(v, &st, (int)it);
        selftest_value_(w, &st, (int)(it / 8));
        fe a = {{v[0], v[1], v[2], v[3]}}, b = {{w[0], w[1], w[2], w[3]}};
        selftest_field_(&c, &a, &b);
        selftest_backend_(&c, &a, &b);
        selftest_sqrt_(&c, &a);
        selftest_scalar_(&c, v);
        if (it % 16 == 0) selftest_batch_inverse_(&c, &st, (int)it);
    }
    Py_END_ALLOW_THREADS
    return Py_BuildValue("{s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:l,s:i}", "fe_inv", c.fe_inv, "sc_inv",
                         c.sc_inv, "sqrt", c.sqrt, "field", c.field, "glv", c.glv, "wnaf", c.wnaf,
                         "batch_inv", c.batch_inv, "backend", c.backend, "glv_max_bits",
                         c.glv_max_bits);
}

#endif

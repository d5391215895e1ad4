/* GLV decomposition with the secp256k1 endomorphism λ·(x, y) = (β·x, y), and the expansion of
 * (scalar, point) pairs into half-size terms shared by every multi-scalar algorithm.
 *
 * PUBLIC DATA ONLY (variable time).
 *
 * k = k1 + k2·λ (mod N) with |k1|, |k2| ≈ 2^128 (Guide to ECC, §3.5): the term k·P becomes
 * k1·P + k2·λP.  Signs are folded into the points (−P = (x, −y)), so every term is an affine
 * point with a non-negative magnitude of at most 129 bits (checked by _selftest's "glv" count).
 * A scalar whose signed representative is shorter than 2^128 (a batch's random weight, or minus
 * one) is not split: one term of at most 128 bits and a zero-magnitude one (skipped), so a
 * short-weighted point costs half a full one.
 */
#ifndef CTPLUGIN_GLV_H
#define CTPLUGIN_GLV_H

#include "group.h"
#include "scalar.h"

static const sc SC_LAMBDA = {{0xdf02967c1b23bd72ULL, 0x122e22ea20816678ULL, 0xa5261c028812645aULL,
                              0x5363ad4cc05c30e0ULL}};
/* Lattice basis (a1, b1), (a2, b2) of {(x, y): x + y·λ ≡ 0}: −b1 and −b2 mod N, and
 * g1 = round(2^384·b2/N), g2 = round(2^384·(−b1)/N) (Guide to ECC, §3.5; values checked against
 * params.py in the tests via the decomposition identity). */
static const sc SC_MINUS_B1 = {{0x6f547fa90abfe4c3ULL, 0xe4437ed6010e8828ULL, 0, 0}};
static const sc SC_MINUS_B2 = {{0xd765cda83db1562cULL, 0x8a280ac50774346dULL, 0xfffffffffffffffeULL,
                                0xffffffffffffffffULL}};
static const u64 GLV_G1[4] = {0xe893209a45dbb031ULL, 0x3daa8a1471e8ca7fULL, 0xe86c90e49284eb15ULL,
                              0x3086d221a7d46bcdULL};
static const u64 GLV_G2[4] = {0x1571b4ae8ac47f71ULL, 0x221208ac9df506c6ULL, 0x6f547fa90abfe4c4ULL,
                              0xe4437ed6010e8828ULL};
/* (N - 1) / 2 */
static const u64 SC_HALF_N[4] = {0xdfe92f46681b20a0ULL, 0x5d576e7357a4501dULL, 0xffffffffffffffffULL,
                                 0x7fffffffffffffffULL};

/* round(k·g / 2^384) */
static inline void glv_mul_shift_(sc *r, const sc *k, const u64 g[4]) {
    u64 l[8];
    sc gg = {{g[0], g[1], g[2], g[3]}};
    sc_mul512_(l, k, &gg);
    u128 t = (u128)l[6] + (l[5] >> 63);
    r->n[0] = (u64)t;
    r->n[1] = l[7] + (u64)(t >> 64);
    r->n[2] = r->n[3] = 0;
}

static inline int limbs_gt_(const u64 *a, const u64 *b) {
    for (int i = 3; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] > b[i];
    }
    return 0;
}

/* Signed representative: if v > (N-1)/2 use N - v and report the sign. */
static inline int sc_signed_abs_(sc *v) {
    if (limbs_gt_(v->n, SC_HALF_N)) {
        sc_neg(v, v);
        return 1;
    }
    return 0;
}

/* k ≡ (-1)^neg1·m1 + (-1)^neg2·m2·λ (mod N) with m1, m2 of about 128 bits. */
static void sc_split_lambda_var(sc *m1, int *neg1, sc *m2, int *neg2, const sc *k) {
    sc c1, c2, t;
    glv_mul_shift_(&c1, k, GLV_G1);
    glv_mul_shift_(&c2, k, GLV_G2);
    sc_mul(&c1, &c1, &SC_MINUS_B1);
    sc_mul(&c2, &c2, &SC_MINUS_B2);
    sc_add(m2, &c1, &c2); /* k2 = -(c1·b1 + c2·b2) */
    sc_mul(&t, m2, &SC_LAMBDA);
    sc_neg(&t, &t);
    sc_add(m1, k, &t); /* k1 = k - k2·λ */
    *neg1 = sc_signed_abs_(m1);
    *neg2 = sc_signed_abs_(m2);
}

static inline int limbs_bitlen_(const u64 *n, int limbs) {
    for (int i = limbs - 1; i >= 0; i--) {
        if (n[i]) return 64 * i + 64 - __builtin_clzll(n[i]);
    }
    return 0;
}

/* --- terms ---------------------------------------------------------------------------------- */

/* One term m·P of the expanded sum: P affine (sign already applied), m a non-negative magnitude. */
typedef struct {
    ge p;
    sc m;
    int neg; /* p is the negation of the input point (or of its lambda image) */
} msm_term;

/* Expand (k_i, P_i) into 2n GLV terms; returns the largest magnitude bit length. Zero scalars and
 * infinity points give zero-magnitude terms (skipped by the algorithms). */
static int msm_expand_glv_(msm_term *out, const ge *pts, const sc *ks, size_t n) {
    int maxbits = 0;
    for (size_t i = 0; i < n; i++) {
        msm_term *a = &out[2 * i], *b = &out[2 * i + 1];
        if (pts[i].inf || sc_is_zero(&ks[i])) {
            a->m = SC_ZERO;
            b->m = SC_ZERO;
            a->p = pts[i];
            b->p = pts[i];
            a->p.inf = b->p.inf = 1;
            a->neg = b->neg = 0;
            continue;
        }
        int n1, n2;
        sc k_abs = ks[i];
        int k_neg = sc_signed_abs_(&k_abs);
        if ((k_abs.n[2] | k_abs.n[3]) == 0) {
            /* |k| < 2^128 (a random batch weight, or its negation): one term, no split */
            a->m = k_abs;
            a->p = pts[i];
            if (k_neg) fe_neg(&a->p.y, &a->p.y);
            a->neg = k_neg;
            b->m = SC_ZERO;
            b->p = pts[i];
            b->p.inf = 1;
            b->neg = 0;
            int b1 = limbs_bitlen_(a->m.n, 4);
            if (b1 > maxbits) maxbits = b1;
            continue;
        }
        sc_split_lambda_var(&a->m, &n1, &b->m, &n2, &ks[i]);
        a->p = pts[i];
        if (n1) fe_neg(&a->p.y, &a->p.y);
        ge_mul_lambda(&b->p, &pts[i]);
        if (n2) fe_neg(&b->p.y, &b->p.y);
        a->neg = n1;
        b->neg = n2;
        int b1 = limbs_bitlen_(a->m.n, 4), b2 = limbs_bitlen_(b->m.n, 4);
        if (b1 > maxbits) maxbits = b1;
        if (b2 > maxbits) maxbits = b2;
    }
    return maxbits;
}

#endif

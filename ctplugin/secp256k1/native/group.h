/* secp256k1 group law, y^2 = x^3 + 7: affine (ge) and Jacobian (gej, x = X/Z^2, y = Y/Z^3) points.
 *
 * PUBLIC DATA ONLY (variable time: branches on infinity, equal x, ...).
 * Preconditions: every input point is on the curve (the kernel validates points at its entry).
 * secp256k1 has no point of order 2 (y = 0 is not on the curve), so doubling never divides by 0.
 */
#ifndef CTPLUGIN_GROUP_H
#define CTPLUGIN_GROUP_H

#include "field.h"
#include "inverse.h"

typedef struct {
    fe x, y;
    int inf;
} ge;

typedef struct {
    fe x, y, z;
    int inf;
} gej;

/* A finite affine point without the flag: 64 bytes, one cache line (bucket entries). */
typedef struct {
    fe x, y;
} ge_xy;

static inline void gej_set_inf(gej *r) {
    r->inf = 1;
    r->x = FE_ZERO;
    r->y = FE_ZERO;
    r->z = FE_ZERO;
}

static inline void gej_set_ge(gej *r, const ge *a) {
    r->inf = a->inf;
    r->x = a->x;
    r->y = a->y;
    r->z = FE_ONE;
}

static inline void ge_neg(ge *r, const ge *a) {
    r->inf = a->inf;
    r->x = a->x;
    fe_neg(&r->y, &a->y);
}

/* lambda·(x, y) = (beta·x, y) */
static inline void ge_mul_lambda(ge *r, const ge *a) {
    r->inf = a->inf;
    fe_mul(&r->x, &a->x, &FE_BETA);
    r->y = a->y;
}

/* y^2 == x^3 + 7 (affine, not infinity) */
static inline int ge_is_on_curve(const ge *a) {
    fe y2, x3;
    fe_sqr(&y2, &a->y);
    fe_sqr(&x3, &a->x);
    fe_mul(&x3, &x3, &a->x);
    fe seven = {{7, 0, 0, 0}};
    fe_add(&x3, &x3, &seven);
    return fe_equal(&y2, &x3);
}

/* r = 2a, 3M + 4S (libsecp256k1's secp256k1_gej_double, src/group_impl.h; Elements bundles it):
 * L = (3/2)·X², S = Y², T = X·S; X3 = L² - 2T, Y3 = L·(T - X3) - S², Z3 = Y·Z.  It trades one
 * squaring of dbl-2009-l (2M + 5S) for a multiplication and needs six additions, subtractions,
 * halvings and small multiples instead of eleven, which here cost more than the multiplication:
 * measured on a Zen 2 EPYC (mulx/adx field), 128 against 156 ns per doubling, 0.90x the CPU
 * time of the Borromean ring kernel, msm_var unchanged (docs/borromean.md §5).  r may alias a. */
static inline void gej_double_var(gej *r, const gej *a) {
    if (a->inf) {
        gej_set_inf(r);
        return;
    }
    fe S, L, T, u;
    fe_sqr(&S, &a->y);
    fe_sqr(&L, &a->x);
    fe_mul_small(&L, &L, 3);
    fe_half(&L, &L);
    fe_mul(&T, &a->x, &S);
    fe_mul(&r->z, &a->y, &a->z); /* (a->y is read for the last time) */
    fe_sqr(&u, &L);
    fe_sub(&u, &u, &T);
    fe_sub(&r->x, &u, &T);
    fe_sub(&u, &T, &r->x);
    fe_mul(&u, &L, &u);
    fe_sqr(&S, &S);
    fe_sub(&r->y, &u, &S);
    r->inf = 0;
}

/* r = a + b', b' = (b.x·s², b.y·s³) the image of the affine b on the isomorphic curve the
 * accumulator a lives in (s = NULL: b' = b), "mixed" addition: 8M + 3S (one more M with s).
 * If zr is not NULL and the result is a plain sum (no infinity, no doubling), *zr = r.z / a.z.
 * r may alias a. */
FE_INLINE void gej_add_ge_iso_var(gej *r, const gej *a, const ge *b, const fe *s, fe *zr) {
    if (b->inf) {
        if (r != a) *r = *a;
        return;
    }
    if (a->inf) {
        gej_set_ge(r, b);
        if (s) {
            fe s2;
            fe_sqr(&s2, s);
            fe_mul(&r->x, &r->x, &s2);
            fe_mul(&s2, &s2, s);
            fe_mul(&r->y, &r->y, &s2);
        }
        return;
    }
    fe z1z1, u2, s2, h, rr, az = a->z;
    if (s) fe_mul(&az, &az, s);
    fe_sqr(&z1z1, &az);
    fe_mul(&u2, &b->x, &z1z1);
    fe_mul(&s2, &b->y, &az);
    fe_mul(&s2, &s2, &z1z1);
    fe_sub(&h, &u2, &a->x);
    fe_sub(&rr, &s2, &a->y);
    if (UNLIKELY(fe_is_zero(&h))) {
        if (fe_is_zero(&rr)) {
            gej_double_var(r, a);
        } else {
            gej_set_inf(r);
        }
        return;
    }
    if (zr) *zr = h;
    fe hh, hhh, v, t;
    fe_sqr(&hh, &h);
    fe_mul(&hhh, &h, &hh);
    fe_mul(&v, &a->x, &hh);
    fe_mul(&r->z, &a->z, &h);
    fe_sqr(&t, &rr);
    fe_sub(&t, &t, &hhh);
    fe_sub(&t, &t, &v);
    fe_sub(&t, &t, &v);
    fe_mul(&hhh, &a->y, &hhh);
    fe_sub(&v, &v, &t);
    fe_mul(&v, &rr, &v);
    fe_sub(&r->y, &v, &hhh);
    r->x = t;
    r->inf = 0;
}

/* r = a + b, b affine ("mixed" addition, 8M + 3S).  r may alias a.  (gej_add_ge_iso_var with
 * s = zr = NULL; kept as its own function because the generic Straus loop measured 7% slower with
 * that one inlined in its place.) */
static inline void gej_add_ge_var(gej *r, const gej *a, const ge *b) {
    if (b->inf) {
        if (r != a) *r = *a;
        return;
    }
    if (a->inf) {
        gej_set_ge(r, b);
        return;
    }
    fe z1z1, u2, s2, h, rr;
    fe_sqr(&z1z1, &a->z);
    fe_mul(&u2, &b->x, &z1z1);
    fe_mul(&s2, &b->y, &a->z);
    fe_mul(&s2, &s2, &z1z1);
    fe_sub(&h, &u2, &a->x);
    fe_sub(&rr, &s2, &a->y);
    if (UNLIKELY(fe_is_zero(&h))) {
        if (fe_is_zero(&rr)) {
            gej_double_var(r, a);
        } else {
            gej_set_inf(r);
        }
        return;
    }
    fe hh, hhh, v, t;
    fe_sqr(&hh, &h);
    fe_mul(&hhh, &h, &hh);
    fe_mul(&v, &a->x, &hh);
    fe_mul(&r->z, &a->z, &h);
    fe_sqr(&t, &rr);
    fe_sub(&t, &t, &hhh);
    fe_sub(&t, &t, &v);
    fe_sub(&t, &t, &v);
    fe_mul(&hhh, &a->y, &hhh);
    fe_sub(&v, &v, &t);
    fe_mul(&v, &rr, &v);
    fe_sub(&r->y, &v, &hhh);
    r->x = t;
    r->inf = 0;
}

static inline void gej_add_xy_var(gej *r, const gej *a, const ge_xy *b) {
    ge t;
    t.x = b->x;
    t.y = b->y;
    t.inf = 0;
    gej_add_ge_var(r, a, &t);
}

/* r = a + b, both Jacobian (12M + 4S).  r may alias a or b. */
static inline void gej_add_var(gej *r, const gej *a, const gej *b) {
    if (b->inf) {
        if (r != a) *r = *a;
        return;
    }
    if (a->inf) {
        if (r != b) *r = *b;
        return;
    }
    fe z1z1, z2z2, u1, u2, s1, s2, h, rr;
    fe_sqr(&z1z1, &a->z);
    fe_sqr(&z2z2, &b->z);
    fe_mul(&u1, &a->x, &z2z2);
    fe_mul(&u2, &b->x, &z1z1);
    fe_mul(&s1, &a->y, &b->z);
    fe_mul(&s1, &s1, &z2z2);
    fe_mul(&s2, &b->y, &a->z);
    fe_mul(&s2, &s2, &z1z1);
    fe_sub(&h, &u2, &u1);
    fe_sub(&rr, &s2, &s1);
    if (UNLIKELY(fe_is_zero(&h))) {
        if (fe_is_zero(&rr)) {
            gej_double_var(r, a);
        } else {
            gej_set_inf(r);
        }
        return;
    }
    fe hh, hhh, v, t, z;
    fe_sqr(&hh, &h);
    fe_mul(&hhh, &h, &hh);
    fe_mul(&v, &u1, &hh);
    fe_mul(&z, &a->z, &b->z);
    fe_mul(&r->z, &z, &h);
    fe_sqr(&t, &rr);
    fe_sub(&t, &t, &hhh);
    fe_sub(&t, &t, &v);
    fe_sub(&t, &t, &v);
    fe_mul(&hhh, &s1, &hhh);
    fe_sub(&v, &v, &t);
    fe_mul(&v, &rr, &v);
    fe_sub(&r->y, &v, &hhh);
    r->x = t;
    r->inf = 0;
}

/* Affine from Jacobian given zi = 1/Z. */
static inline void ge_set_gej_zinv(ge *r, const gej *a, const fe *zi) {
    fe zi2, zi3;
    fe_sqr(&zi2, zi);
    fe_mul(&zi3, &zi2, zi);
    fe_mul(&r->x, &a->x, &zi2);
    fe_mul(&r->y, &a->y, &zi3);
    fe_normalize(&r->x);
    fe_normalize(&r->y);
    r->inf = 0;
}

/* Batch normalisation: r[i] = affine a[i], with one inversion for all (fe_inv_all_var).
 * scratch holds 2n field elements.  Points at infinity (or with Z = 0, which cannot occur for
 * on-curve inputs) become infinity.  r must not alias a. */
static void ge_set_all_gej_var(ge *r, const gej *a, size_t n, fe *scratch) {
    fe *zs = scratch, *zinv = scratch + n;
    for (size_t i = 0; i < n; i++) {
        int finite = !a[i].inf && !fe_is_zero(&a[i].z);
        zs[i] = finite ? a[i].z : FE_ONE; /* (a stand-in keeps the batch free of zeros) */
    }
    fe_inv_all_var(zinv, zs, n, zinv);
    for (size_t i = 0; i < n; i++) {
        if (a[i].inf || fe_is_zero(&a[i].z)) {
            r[i].inf = 1;
            r[i].x = FE_ZERO;
            r[i].y = FE_ZERO;
        } else {
            ge_set_gej_zinv(&r[i], &a[i], &zinv[i]);
        }
    }
}

static inline void ge_set_gej_var(ge *r, const gej *a) {
    if (a->inf || fe_is_zero(&a->z)) {
        r->inf = 1;
        r->x = FE_ZERO;
        r->y = FE_ZERO;
        return;
    }
    fe zi;
    fe_inv_var(&zi, &a->z);
    ge_set_gej_zinv(r, a, &zi);
}

/* --- affine additions sharing one inversion ------------------------------------------------
 *
 * Batched affine addition (Pippenger buckets, subset-sum tries): each sum a + b needs one
 * division; the denominators of many sums are inverted together (fe_inv_all_var), then each sum
 * is finished with its inverse.  Two finite points with equal x are a doubling (denominator
 * 2·y_a; y = 0 is not on the curve) or cancel to infinity (nothing to invert).
 */
enum { PAIR_ADD = 0, PAIR_DOUBLE = 1, PAIR_CANCEL = 2 };

/* The kind of the finite sum a + b and its denominator (x_b - x_a, or 2·y_a for a doubling;
 * 1 for a cancellation, so that a batch of denominators never holds a zero). */
static inline int ge_xy_pair_denominator(fe *den, const ge_xy *a, const ge_xy *b) {
    fe_sub(den, &b->x, &a->x);
    if (LIKELY(!fe_is_zero(den))) return PAIR_ADD;
    fe s;
    fe_add(&s, &a->y, &b->y);
    if (fe_is_zero(&s)) {
        *den = FE_ONE;
        return PAIR_CANCEL;
    }
    fe_add(den, &a->y, &a->y);
    return PAIR_DOUBLE;
}

/* r = a + b given inv = 1 / denominator, for kind PAIR_ADD or PAIR_DOUBLE (not PAIR_CANCEL: the
 * sum is infinity, which ge_xy cannot hold).  r may alias a or b.  λ = (y_b - y_a)/(x_b - x_a) or
 * 3·x_a²/(2·y_a); x_r = λ² - x_a - x_b; y_r = λ·(x_a - x_r) - y_a.  The result is weakly reduced. */
static inline void ge_xy_pair_sum(ge_xy *r, const ge_xy *a, const ge_xy *b, const fe *inv,
                                  int kind) {
    fe lam, t, x3, y3;
    if (LIKELY(kind == PAIR_ADD)) {
        fe_sub(&t, &b->y, &a->y);
    } else {
        fe_sqr(&t, &a->x);
        fe_mul_small(&t, &t, 3);
    }
    fe_mul(&lam, &t, inv);
    fe_sqr(&x3, &lam);
    fe_sub(&x3, &x3, &a->x);
    fe_sub(&x3, &x3, &b->x);
    fe_sub(&t, &a->x, &x3);
    fe_mul(&y3, &lam, &t);
    fe_sub(&y3, &y3, &a->y);
    r->x = x3;
    r->y = y3;
}

#endif

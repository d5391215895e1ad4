/* Variable-time modular inversion by Bernstein–Yang divsteps ("safegcd", eprint 2019/266), in
 * batches of 62 divsteps on signed 62-bit limbs.  PUBLIC DATA ONLY (running time depends on x).
 *
 * Each batch works on the low 64 bits of f and g only, producing a 2x2 transition matrix T with
 * 2^62·(f', g') = T·(f, g); T is then applied to the full f, g and (modulo M) to the Bézout-like
 * coefficients d, e, keeping the invariants f ≡ d·x, g ≡ e·x (mod M).  When g reaches 0, f = ±1
 * and x^-1 = ±d.  The matrix entries satisfy |u| + |v| <= 2^62 (paper, §8), which bounds every
 * intermediate below in the int128 arithmetic used here.
 */
#ifndef CTPLUGIN_MODINV_H
#define CTPLUGIN_MODINV_H

#include "field.h"

typedef __int128 i128;

#define M62 ((u64)0x3FFFFFFFFFFFFFFFULL)

typedef struct {
    int64_t v[5]; /* value Σ v[i]·2^(62 i) */
} s62;

typedef struct {
    s62 modulus;
    u64 modulus_inv62; /* modulus^-1 mod 2^62 */
} modinv_info;

static const modinv_info MODINV_P = {
    {{4611686014132419631LL, 4611686018427387903LL, 4611686018427387903LL, 4611686018427387903LL,
      255LL}},
    0x27c7f6e22ddacacfULL};
static const modinv_info MODINV_N = {
    {{4598842128380346689LL, 3079181878673178862LL, 4611686018427387883LL, 4611686018427387903LL,
      255LL}},
    0x34f20099aa774ec1ULL};

typedef struct {
    int64_t u, v, q, r;
} trans2x2;

/* 62 divsteps on the low bits f0 (odd), g0; eta = -delta.  Returns the new eta. */
static int64_t divsteps_62_var(int64_t eta, u64 f0, u64 g0, trans2x2 *t) {
    u64 u = 1, v = 0, q = 0, r = 1;
    u64 f = f0, g = g0, w, tmp;
    int i = 62, limit, zeros;
    for (;;) {
        /* even g: halve (skip all its trailing zeros at once, at most i) */
        zeros = __builtin_ctzll(g | (~(u64)0 << i));
        g >>= zeros;
        u <<= zeros;
        v <<= zeros;
        eta -= zeros;
        i -= zeros;
        if (i == 0) break;
        /* g odd: if delta > 0 swap (f, g) -> (g, -f) */
        if (eta < 0) {
            eta = -eta;
            tmp = f;
            f = g;
            g = (u64)0 - tmp;
            tmp = u;
            u = q;
            q = (u64)0 - tmp;
            tmp = v;
            v = r;
            r = (u64)0 - tmp;
        }
        /* as long as delta <= 0 each odd step adds f: do up to min(eta + 1, i, 6) of them at once
         * with g += w·f, w = -g/f mod 2^limit (f^-1 mod 64 = f·(2 - f²)) */
        limit = ((int)eta + 1) > i ? i : ((int)eta + 1);
        u64 m = (~(u64)0 >> (64 - limit)) & 63U;
        w = (f * g * (f * f - 2)) & m;
        g += f * w;
        q += u * w;
        r += v * w;
    }
    t->u = (int64_t)u;
    t->v = (int64_t)v;
    t->q = (int64_t)q;
    t->r = (int64_t)r;
    return eta;
}

/* (f, g) <- T·(f, g) / 2^62 (exact). */
static void update_fg_62(s62 *f, s62 *g, const trans2x2 *t) {
    const int64_t u = t->u, v = t->v, q = t->q, r = t->r;
    i128 cf = (i128)u * f->v[0] + (i128)v * g->v[0];
    i128 cg = (i128)q * f->v[0] + (i128)r * g->v[0];
    cf >>= 62;
    cg >>= 62;
    for (int i = 1; i < 5; i++) {
        cf += (i128)u * f->v[i] + (i128)v * g->v[i];
        cg += (i128)q * f->v[i] + (i128)r * g->v[i];
        f->v[i - 1] = (int64_t)((u64)cf & M62);
        g->v[i - 1] = (int64_t)((u64)cg & M62);
        cf >>= 62;
        cg >>= 62;
    }
    f->v[4] = (int64_t)cf;
    g->v[4] = (int64_t)cg;
}

/* (d, e) <- T·(d, e) / 2^62 (mod M), adding the multiples of M that make the division exact.
 * Precondition: d, e in (-2M, M); postcondition the same. */
static void update_de_62(s62 *d, s62 *e, const trans2x2 *t, const modinv_info *mi) {
    const int64_t u = t->u, v = t->v, q = t->q, r = t->r;
    const int64_t sd = d->v[4] >> 63, se = e->v[4] >> 63;
    int64_t md = (u & sd) + (v & se);
    int64_t me = (q & sd) + (r & se);
    i128 cd = (i128)u * d->v[0] + (i128)v * e->v[0];
    i128 ce = (i128)q * d->v[0] + (i128)r * e->v[0];
    md -= (int64_t)((mi->modulus_inv62 * (u64)cd + (u64)md) & M62);
    me -= (int64_t)((mi->modulus_inv62 * (u64)ce + (u64)me) & M62);
    cd += (i128)mi->modulus.v[0] * md;
    ce += (i128)mi->modulus.v[0] * me;
    cd >>= 62;
    ce >>= 62;
    for (int i = 1; i < 5; i++) {
        cd += (i128)u * d->v[i] + (i128)v * e->v[i] + (i128)mi->modulus.v[i] * md;
        ce += (i128)q * d->v[i] + (i128)r * e->v[i] + (i128)mi->modulus.v[i] * me;
        d->v[i - 1] = (int64_t)((u64)cd & M62);
        e->v[i - 1] = (int64_t)((u64)ce & M62);
        cd >>= 62;
        ce >>= 62;
    }
    d->v[4] = (int64_t)cd;
    e->v[4] = (int64_t)ce;
}

/* Carry-normalize limbs 0..3 into [0, 2^62), the top limb keeps the sign. */
static void s62_carry(s62 *a) {
    for (int i = 0; i < 4; i++) {
        int64_t c = a->v[i] >> 62;
        a->v[i] -= c * ((int64_t)1 << 62);
        a->v[i + 1] += c;
    }
}

static void s62_add(s62 *a, const s62 *b, int64_t k) {
    for (int i = 0; i < 5; i++) a->v[i] += k * b->v[i];
    s62_carry(a);
}

/* a >= b for carry-normalized non-negative values */
static int s62_ge(const s62 *a, const s62 *b) {
    for (int i = 4; i >= 0; i--) {
        if (a->v[i] != b->v[i]) return a->v[i] > b->v[i];
    }
    return 1;
}

/* r = x^-1 mod M for 0 < x < M given as 4 x 64-bit limbs; x = 0 gives 0. */
static void modinv_var(u64 r[4], const u64 x[4], const modinv_info *mi) {
    if ((x[0] | x[1] | x[2] | x[3]) == 0) {
        r[0] = r[1] = r[2] = r[3] = 0;
        return;
    }
    s62 d = {{0, 0, 0, 0, 0}}, e = {{1, 0, 0, 0, 0}};
    s62 f = mi->modulus;
    s62 g = {{(int64_t)(x[0] & M62), (int64_t)(((x[0] >> 62) | (x[1] << 2)) & M62),
              (int64_t)(((x[1] >> 60) | (x[2] << 4)) & M62),
              (int64_t)(((x[2] >> 58) | (x[3] << 6)) & M62), (int64_t)(x[3] >> 56)}};
    int64_t eta = -1;
    for (;;) {
        trans2x2 t;
        eta = divsteps_62_var(eta, (u64)f.v[0] | ((u64)f.v[1] << 62),
                              (u64)g.v[0] | ((u64)g.v[1] << 62), &t);
        update_de_62(&d, &e, &t, mi);
        update_fg_62(&f, &g, &t);
        if ((g.v[0] | g.v[1] | g.v[2] | g.v[3] | g.v[4]) == 0) break;
    }
    /* f = ±1: x^-1 = sign(f)·d, d in (-2M, M) */
    s62_carry(&d);
    if (f.v[4] < 0 || (f.v[4] == 0 && f.v[3] == 0 && f.v[2] == 0 && f.v[1] == 0 && f.v[0] < 0)) {
        for (int i = 0; i < 5; i++) d.v[i] = -d.v[i];
        s62_carry(&d);
    }
    while (d.v[4] < 0) s62_add(&d, &mi->modulus, 1);
    while (s62_ge(&d, &mi->modulus)) s62_add(&d, &mi->modulus, -1);
    r[0] = (u64)d.v[0] | ((u64)d.v[1] << 62);
    r[1] = ((u64)d.v[1] >> 2) | ((u64)d.v[2] << 60);
    r[2] = ((u64)d.v[2] >> 4) | ((u64)d.v[3] << 58);
    r[3] = ((u64)d.v[3] >> 6) | ((u64)d.v[4] << 56);
}

#endif

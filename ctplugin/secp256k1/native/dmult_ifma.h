/* Many independent double multiplications R_i = s_i·G + e_i·P_i in AVX-512 IFMA lanes.
 * PUBLIC DATA ONLY (variable time).  No Python.
 *
 * What it is for: the ring steps of Borromean signatures (range proofs, surjection proofs) are
 * long runs of unrelated double multiplications — a wave of a block's rings has thousands — and
 * each is a chain of ~125 doublings that no shared work shortens.  So sixteen of them go through
 * the chain together, in two vectors of eight lanes in radix 2^52 (the lane arithmetic of
 * field_batch.h / pippenger_ifma.h), which keeps the multiply-accumulate units busy where one
 * scalar chain waits on its own latency.
 *
 * The algorithm per lane (all lanes in lockstep, so every lane has a digit at every window):
 *   e = ±m1 ± m2·λ (GLV, glv.h), m1, m2 < 2^129 in signed 5-bit windows (digits in [-16, 16],
 *   26 windows) against the multiples 1..16 of P (affine, built per lane: one doubling, 14 mixed
 *   additions, one inversion per lane shared through the sixteen-lane batch inversion) and their
 *   λ images (β·x, y); s = s_lo + s_hi·2^128 in signed 10-bit windows (13 windows each) against
 *   process-wide tables of k·G and k·2^128·G, k = 1..512 (dm_g_tables).  One shared chain of 125
 *   doublings (dbl-2009-l) and 78 mixed additions (Jacobian + affine, 8M + 3S); a zero digit
 *   leaves its lane unchanged (masked), and a lane still at infinity takes the added point as is.
 *
 * Exceptional additions (equal x: a doubling or a cancellation) are NOT handled in the lanes:
 * they give H = 0, hence Z = 0, and Z stays 0 through every later doubling and addition.  A lane
 * whose final Z is 0 mod p is reported in `redo` and the caller recomputes it with its scalar
 * code (which handles every case); so the results are those of the scalar code, always.  Honest
 * inputs never meet this (it needs a discrete-log relation between the partial sums); hostile
 * ones can, and the fallback makes them merely slower.
 *
 * Backend: dm_backend() is 1 when the CPU has AVX-512 IFMA and the lanes agree with the scalar
 * Straus code (straus.h) on a self-test (random and exceptional inputs), else 0; dm_set_backend
 * ("scalar" / "ifma") is the tests' switch.  Callers must use the scalar path when it is 0.
 */
#ifndef CTPLUGIN_DMULT_IFMA_H
#define CTPLUGIN_DMULT_IFMA_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "digits.h"
#include "glv.h"
#include "group.h"
#include "pippenger_ifma.h"
#include "straus.h"

#define DM_LANES 16
#define DM_EW 5                         /* window of the GLV halves of e */
#define DM_ET 16                        /* multiples 1..16 of P (and of λP) */
#define DM_EWIN 26                      /* 26·5 = 130 >= 129 + 1 bits */
#define DM_GW 10                        /* window of the halves of s */
#define DM_GT 512                       /* multiples 1..512 of G and of 2^128·G */
#define DM_GWIN 13                      /* 13·10 = 130 >= 128 + 1 bits */
#define DM_TOP (DM_EW * (DM_EWIN - 1))  /* highest window position: 125 (G windows end at 120) */

/* k·G (entry k-1, k = 1..DM_GT) and then k·2^128·G: 64 KiB, built once by dm_g_tables. */
static ge_xy *dm_g_tab = NULL;

/* Tables of multiples of B_0 = G and B_1 = 2^128·G, affine: entry j of row h (at h·T + j) is
 * (2j+1)·B_h when odd, else (j+1)·B_h.  Returns the malloc'ed 2T entries, NULL on allocation
 * failure.  (Shared by the lanes' tables and dmult.h's scalar ones.) */
static ge_xy *dm_g_rows_(size_t T, int odd) {
    ge_xy *tab = malloc(2 * T * sizeof *tab);
    gej *row = malloc(2 * T * sizeof *row);
    ge *aff = malloc(2 * T * sizeof *aff);
    fe *scratch = malloc(4 * T * sizeof *scratch);
    if (tab && row && aff && scratch) {
        static const unsigned char gx[32] = {
            0x79, 0xBE, 0x66, 0x7E, 0xF9, 0xDC, 0xBB, 0xAC, 0x55, 0xA0, 0x62, 0x95, 0xCE, 0x87, 0x0B, 0x07,
            0x02, 0x9B, 0xFC, 0xDB, 0x2D, 0xCE, 0x28, 0xD9, 0x59, 0xF2, 0x81, 0x5B, 0x16, 0xF8, 0x17, 0x98};
        static const unsigned char gy[32] = {
            0x48, 0x3A, 0xDA, 0x77, 0x26, 0xA3, 0xC4, 0x65, 0x5D, 0xA4, 0xFB, 0xFC, 0x0E, 0x11, 0x08, 0xA8,
            0xFD, 0x17, 0xB4, 0x48, 0xA6, 0x85, 0x54, 0x19, 0x9C, 0x47, 0xD0, 0x8F, 0xFB, 0x10, 0xD4, 0xB8};
        ge base[2];
        gej t;
        base[0].inf = 0;
        fe_set_b32(&base[0].x, gx);
        fe_set_b32(&base[0].y, gy);
        gej_set_ge(&t, &base[0]);
        for (int k = 0; k < 128; k++) gej_double_var(&t, &t);
        ge_set_gej_var(&base[1], &t);
        for (int h = 0; h < 2; h++) {
            /* a chain of mixed additions of the step (2B when odd, else B; 2B = B + B by a
             * doubling, which a mixed addition cannot do) */
            ge step = base[h];
            gej_set_ge(&row[h * T], &base[h]);
            size_t j = 1;
            if (odd) {
                gej_double_var(&t, &row[h * T]);
                ge_set_gej_var(&step, &t);
            } else if (T > 1) {
                gej_double_var(&row[h * T + 1], &row[h * T]);
                j = 2;
            }
            for (; j < T; j++) gej_add_ge_var(&row[h * T + j], &row[h * T + j - 1], &step);
        }
        ge_set_all_gej_var(aff, row, 2 * T, scratch);
        for (size_t k = 0; k < 2 * T; k++) {
            tab[k].x = aff[k].x;
            tab[k].y = aff[k].y;
        }
    } else {
        free(tab);
        tab = NULL;
    }
    free(row);
    free(aff);
    free(scratch);
    return tab;
}

/* Build the lanes' G tables (idempotent).  Call with the GIL held (no two builders at once)
 * before any thread uses them.  Returns 0 on allocation failure. */
static int dm_g_tables(void) {
    if (!dm_g_tab) dm_g_tab = dm_g_rows_(DM_GT, 0);
    return dm_g_tab != NULL;
}

/* Per lane: the recoded scalars of one double multiplication (scalar code). */
typedef struct {
    int16_t de[2][DM_EWIN]; /* signed 5-bit windows of m1 (term P) and m2 (term λP) */
    int16_t dg[2][DM_GWIN]; /* signed 10-bit windows of s_lo (term G) and s_hi (term 2^128·G) */
    int neg[2];             /* e = (-1)^neg[0]·m1 + (-1)^neg[1]·m2·λ */
} dm_recoded;

static void dm_recode_(dm_recoded *r, const sc *s, const sc *e) {
    sc m1, m2;
    sc_split_lambda_var(&m1, &r->neg[0], &m2, &r->neg[1], e);
    const sc slo = {{s->n[0], s->n[1], 0, 0}}, shi = {{s->n[2], s->n[3], 0, 0}};
    signed_digits_var(r->de[0], DM_EWIN, &m1, DM_EW);
    signed_digits_var(r->de[1], DM_EWIN, &m2, DM_EW);
    signed_digits_var(r->dg[0], DM_GWIN, &slo, DM_GW);
    signed_digits_var(r->dg[1], DM_GWIN, &shi, DM_GW);
}

#ifdef FE_HAVE_IFMA_CODE

/* --- sixteen-lane field operations (fe16 = two fe8, field_batch.h) -------------------------- */

FE_IFMA static inline void fe16_sqr_(fe16 *r, const fe16 *a) {
    fe8_sqr_(&r->v[0], &a->v[0]);
    fe8_sqr_(&r->v[1], &a->v[1]);
}

FE_IFMA static inline void fe16_sub_(fe16 *r, const fe16 *a, const fe16 *b) {
    fe8_sub_(&r->v[0], &a->v[0], &b->v[0]);
    fe8_sub_(&r->v[1], &a->v[1], &b->v[1]);
}

/* r = a + b, and small multiples 2a, 3a, 8a (limbs shifted: below 2^55), normalised. */
FE_IFMA static inline void fe16_add_(fe16 *r, const fe16 *a, const fe16 *b) {
    for (int q = 0; q < 2; q++) {
        __m512i t[5];
        for (int i = 0; i < 5; i++) t[i] = _mm512_add_epi64(a->v[q].l[i], b->v[q].l[i]);
        fe8_norm_(&r->v[q], t);
    }
}

FE_IFMA static inline void fe16_small_(fe16 *r, const fe16 *a, int k) {
    for (int q = 0; q < 2; q++) {
        __m512i t[5];
        for (int i = 0; i < 5; i++) {
            const __m512i v = a->v[q].l[i];
            t[i] = k == 2 ? _mm512_slli_epi64(v, 1)
                 : k == 3 ? _mm512_add_epi64(_mm512_slli_epi64(v, 1), v)
                          : _mm512_slli_epi64(v, 3); /* k == 8 */
        }
        fe8_norm_(&r->v[q], t);
    }
}

/* r = a where mask bit l is 0, b where it is 1 (lane l of the sixteen). */
FE_IFMA static inline void fe16_blend_(fe16 *r, uint32_t mask, const fe16 *a, const fe16 *b) {
    for (int q = 0; q < 2; q++) {
        const __mmask8 k = (__mmask8)(mask >> (8 * q));
        for (int i = 0; i < 5; i++) r->v[q].l[i] = _mm512_mask_blend_epi64(k, a->v[q].l[i], b->v[q].l[i]);
    }
}

/* y negated in the lanes of mask. */
FE_IFMA static inline void fe16_cneg_(fe16 *y, uint32_t mask) {
    if (!mask) return;
    fe16 z, n;
    memset(&z, 0, sizeof z);
    fe16_sub_(&n, &z, y);
    fe16_blend_(y, mask, y, &n);
}

FE_IFMA static inline void fe16_set1_(fe16 *r, const fe *a) {
    uint64_t l[5];
    fe_to_52_(l, a);
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < 5; i++) r->v[q].l[i] = _mm512_set1_epi64((long long)l[i]);
}

/* fe16 <-> sixteen fe (normalised). */
FE_IFMA static void fe16_load_(fe16 *r, const fe in[DM_LANES]) {
    fe8_from_fe_lanes_(&r->v[0], in);
    fe8_from_fe_lanes_(&r->v[1], in + 8);
}

FE_IFMA static void fe16_store_(fe out[DM_LANES], const fe16 *a) {
    fe8_lanes_to_fe_(out, &a->v[0]);
    fe8_lanes_to_fe_(out + 8, &a->v[1]);
}

/* --- sixteen-lane group operations ------------------------------------------------------------ */

typedef struct {
    fe16 x, y, z;
} gej16;

/* r = 2a (dbl-2009-l, a = 0: 2M + 5S).  Lanes at infinity (Z = 0) stay at Z = 0.  r may alias a. */
FE_IFMA static void gej16_double_(gej16 *r, const gej16 *a) {
    fe16 A, B, C, D, E, F, t, u;
    fe16_sqr_(&A, &a->x);
    fe16_sqr_(&B, &a->y);
    fe16_sqr_(&C, &B);
    fe16_add_(&t, &a->x, &B);
    fe16_sqr_(&t, &t);
    fe16_sub_(&t, &t, &A);
    fe16_sub_(&t, &t, &C);
    fe16_small_(&D, &t, 2);
    fe16_small_(&E, &A, 3);
    fe16_sqr_(&F, &E);
    fe16_mul_(&u, &a->y, &a->z);
    fe16_small_(&r->z, &u, 2);
    fe16_small_(&t, &D, 2);
    fe16_sub_(&r->x, &F, &t);    /* X3 = F - 2D */
    fe16_sub_(&t, &D, &r->x);
    fe16_mul_(&t, &E, &t);
    fe16_small_(&C, &C, 8);
    fe16_sub_(&r->y, &t, &C);    /* Y3 = E(D - X3) - 8C */
}

/* r = a + (bx, by) for finite affine b, in every lane (8M + 3S); a lane where a is finite and
 * a.x = b.x (a doubling or a cancellation) gets Z = 0 (see the header comment).  r may alias a. */
FE_IFMA static void gej16_add_ge_(gej16 *r, const gej16 *a, const fe16 *bx, const fe16 *by) {
    fe16 z1z1, u2, s2, h, rr, hh, hhh, v, t;
    fe16_sqr_(&z1z1, &a->z);
    fe16_mul_(&u2, bx, &z1z1);
    fe16_mul_(&s2, &a->z, &z1z1);
    fe16_mul_(&s2, by, &s2);
    fe16_sub_(&h, &u2, &a->x);
    fe16_sub_(&rr, &s2, &a->y);
    fe16_sqr_(&hh, &h);
    fe16_mul_(&hhh, &h, &hh);
    fe16_mul_(&v, &a->x, &hh);
    fe16_mul_(&r->z, &a->z, &h);
    fe16_sqr_(&t, &rr);
    fe16_sub_(&t, &t, &hhh);
    fe16_small_(&u2, &v, 2);
    fe16_sub_(&t, &t, &u2);       /* X3 = r² - HHH - 2V */
    fe16_mul_(&hhh, &a->y, &hhh);
    fe16_sub_(&v, &v, &t);
    fe16_mul_(&v, &rr, &v);
    fe16_sub_(&r->y, &v, &hhh);   /* Y3 = r(V - X3) - Y1·HHH */
    r->x = t;
}

/* --- one block of sixteen lanes ----------------------------------------------------------------- */

/* The per-lane tables of P: entry k-1 holds k·P as x, β·x, y (k = 1..16), each a fe16, stored
 * as fe8 vectors T[(3(k-1) + c)·2 + q] (c: 0 x, 1 β·x, 2 y; q: which eight lanes), so the lane l
 * word of limb i of that vector is the 64-bit element (((3(k-1) + c)·2 + q)·5 + i)·8 + l. */
typedef struct {
    fe8 v[DM_ET * 3 * 2];
} dm_ptable;

/* Lanes' signed digits (one per lane) to table indices |d| - 1 (0 for d = 0) and masks. */
FE_IFMA static inline void dm_digits_(__m512i idx[2], uint32_t *nz, uint32_t *neg,
                                      const int16_t d[DM_LANES]) {
    *nz = *neg = 0;
    for (int q = 0; q < 2; q++) {
        __m512i v = _mm512_cvtepi16_epi64(_mm_loadu_si128((const __m128i *)(d + 8 * q)));
        const __mmask8 n = _mm512_cmplt_epi64_mask(v, _mm512_setzero_si512());
        const __mmask8 z = _mm512_cmpneq_epi64_mask(v, _mm512_setzero_si512());
        v = _mm512_abs_epi64(v);
        idx[q] = _mm512_maskz_sub_epi64(z, v, _mm512_set1_epi64(1));
        *nz |= (uint32_t)z << (8 * q);
        *neg |= (uint32_t)n << (8 * q);
    }
}

/* (x, y) of the per-lane entries idx of the P table (lambda: the β·x column). */
FE_IFMA static inline void dm_pick_p_(fe16 *x, fe16 *y, const dm_ptable *T, const __m512i idx[2],
                                      int lambda) {
    const long long *base = (const long long *)T->v;
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    for (int q = 0; q < 2; q++) {
        /* element offset of (entry, c = 0, q, limb 0, lane): entry·240 + q·40 + lane */
        const __m512i row = _mm512_sub_epi64(_mm512_slli_epi64(idx[q], 8), _mm512_slli_epi64(idx[q], 4));
        const __m512i e0 = _mm512_add_epi64(row, _mm512_add_epi64(lane, _mm512_set1_epi64(q * 5 * 8)));
        const __m512i ex = _mm512_add_epi64(e0, _mm512_set1_epi64(lambda ? 2 * 5 * 8 : 0));
        const __m512i ey = _mm512_add_epi64(e0, _mm512_set1_epi64(2 * 2 * 5 * 8));
        for (int i = 0; i < 5; i++) {
            x->v[q].l[i] = _mm512_i64gather_epi64(_mm512_add_epi64(ex, _mm512_set1_epi64(8 * i)), base, 8);
            y->v[q].l[i] = _mm512_i64gather_epi64(_mm512_add_epi64(ey, _mm512_set1_epi64(8 * i)), base, 8);
        }
    }
}

FE_IFMA static inline void dm_pick_g_(fe16 *x, fe16 *y, const ge_xy *tab, const __m512i idx[2]) {
    for (int q = 0; q < 2; q++) {
        fe8_gather_(&x->v[q], tab, idx[q], 0);
        fe8_gather_(&y->v[q], tab, idx[q], 32);
    }
}

/* acc += the picked points in the lanes of nz; lanes at infinity (inf) take the point itself. */
FE_IFMA static inline void dm_accumulate_(gej16 *acc, uint32_t *inf, uint32_t nz, const fe16 *x,
                                          const fe16 *y, const fe16 *one) {
    gej16 sum;
    gej16_add_ge_(&sum, acc, x, y);
    const uint32_t upd = nz & ~*inf, set = nz & *inf;
    fe16_blend_(&acc->x, upd, &acc->x, &sum.x);
    fe16_blend_(&acc->y, upd, &acc->y, &sum.y);
    fe16_blend_(&acc->z, upd, &acc->z, &sum.z);
    if (set) {
        fe16_blend_(&acc->x, set, &acc->x, x);
        fe16_blend_(&acc->y, set, &acc->y, y);
        fe16_blend_(&acc->z, set, &acc->z, one);
    }
    *inf &= ~nz;
}

/* Sixteen lanes: r[l] = s[l]·G + e[l]·P[l] (Jacobian, normalised coordinates; r[l].inf for the
 * point at infinity) and redo[l] = 1 where the lane met an exceptional addition (r[l] is then
 * meaningless: recompute it).  Preconditions: dm_g_tables() succeeded; every P finite and on the
 * curve; s, e canonical. */
FE_IFMA static void dm_block16_(gej r[DM_LANES], unsigned char redo[DM_LANES], const sc *const s[DM_LANES],
                                const sc *const e[DM_LANES], const ge *const p[DM_LANES]) {
    dm_recoded rec[DM_LANES];
    uint32_t negm[2] = {0, 0};
    for (int l = 0; l < DM_LANES; l++) {
        dm_recode_(&rec[l], s[l], e[l]);
        negm[0] |= (uint32_t)rec[l].neg[0] << l;
        negm[1] |= (uint32_t)rec[l].neg[1] << l;
    }
    fe16 one, beta;
    fe16_set1_(&one, &FE_ONE);
    fe16_set1_(&beta, &FE_BETA);

    /* the tables of P: k·P = (k-1)·P + P (Jacobian; no addition here can be exceptional: P has
     * prime order), then affine */
    dm_ptable T;
    fe16 px, py;
    {
        fe lx[DM_LANES], ly[DM_LANES];
        for (int l = 0; l < DM_LANES; l++) {
            lx[l] = p[l]->x;
            ly[l] = p[l]->y;
        }
        fe16_load_(&px, lx);
        fe16_load_(&py, ly);
    }
    gej16 row[DM_ET];
    row[0].x = px;
    row[0].y = py;
    row[0].z = one;
    gej16_double_(&row[1], &row[0]);
    for (int k = 2; k < DM_ET; k++) {
        gej16_add_ge_(&row[k], &row[k - 1], &px, &py);
    }
    /* prefix products of the Z of 2P..16P per lane, one inversion of the lanes' totals (a
     * sixteen-element batch inversion), then the backward pass */
    fe16 pre[DM_ET], acc = one;
    for (int k = 1; k < DM_ET; k++) {
        pre[k] = acc;
        fe16_mul_(&acc, &acc, &row[k].z);
    }
    int tables_ok = 1;
    {
        fe tot[DM_LANES], inv[DM_LANES], scratch[DM_LANES];
        fe16_store_(tot, &acc);
        for (int l = 0; l < DM_LANES; l++) tables_ok &= !fe_is_zero(&tot[l]);
        if (tables_ok) {
            fe_inv_all_var(inv, tot, DM_LANES, scratch);
            fe16_load_(&acc, inv);
        }
    }
    if (!tables_ok) { /* cannot happen for points of prime order; recompute every lane */
        for (int l = 0; l < DM_LANES; l++) redo[l] = 1;
        return;
    }
    for (int k = DM_ET - 1; k >= 0; k--) {
        fe16 zi, zi2, zi3, x, y;
        if (k == 0) {
            x = px;
            y = py;
        } else {
            fe16_mul_(&zi, &acc, &pre[k]);
            fe16_mul_(&acc, &acc, &row[k].z);
            fe16_sqr_(&zi2, &zi);
            fe16_mul_(&zi3, &zi2, &zi);
            fe16_mul_(&x, &row[k].x, &zi2);
            fe16_mul_(&y, &row[k].y, &zi3);
        }
        fe16 bx;
        fe16_mul_(&bx, &x, &beta);
        for (int q = 0; q < 2; q++) {
            T.v[(3 * k + 0) * 2 + q] = x.v[q];
            T.v[(3 * k + 1) * 2 + q] = bx.v[q];
            T.v[(3 * k + 2) * 2 + q] = y.v[q];
        }
    }

    /* the shared chain */
    gej16 R;
    memset(&R, 0, sizeof R);
    uint32_t inf = (1u << DM_LANES) - 1;
    const ge_xy *glo = dm_g_tab, *ghi = dm_g_tab + DM_GT;
    for (int pos = DM_TOP; pos >= 0; pos--) {
        if (inf != (1u << DM_LANES) - 1) gej16_double_(&R, &R);
        if (pos % DM_EW == 0) {
            const int j = pos / DM_EW;
            for (int t = 0; t < 2; t++) {
                int16_t d[DM_LANES];
                for (int l = 0; l < DM_LANES; l++) d[l] = rec[l].de[t][j];
                __m512i idx[2];
                uint32_t nz, neg;
                dm_digits_(idx, &nz, &neg, d);
                if (!nz) continue;
                fe16 x, y;
                dm_pick_p_(&x, &y, &T, idx, t);
                fe16_cneg_(&y, (neg ^ negm[t]) & nz);
                dm_accumulate_(&R, &inf, nz, &x, &y, &one);
            }
        }
        if (pos % DM_GW == 0 && pos / DM_GW < DM_GWIN) {
            const int j = pos / DM_GW;
            for (int t = 0; t < 2; t++) {
                int16_t d[DM_LANES];
                for (int l = 0; l < DM_LANES; l++) d[l] = rec[l].dg[t][j];
                __m512i idx[2];
                uint32_t nz, neg;
                dm_digits_(idx, &nz, &neg, d);
                if (!nz) continue;
                fe16 x, y;
                dm_pick_g_(&x, &y, t ? ghi : glo, idx);
                fe16_cneg_(&y, neg & nz);
                dm_accumulate_(&R, &inf, nz, &x, &y, &one);
            }
        }
    }
    fe X[DM_LANES], Y[DM_LANES], Z[DM_LANES];
    fe16_store_(X, &R.x);
    fe16_store_(Y, &R.y);
    fe16_store_(Z, &R.z);
    for (int l = 0; l < DM_LANES; l++) {
        r[l].x = X[l];
        r[l].y = Y[l];
        r[l].z = Z[l];
        r[l].inf = (int)((inf >> l) & 1);
        redo[l] = (unsigned char)(!r[l].inf && fe_is_zero(&Z[l]));
    }
}

#endif /* FE_HAVE_IFMA_CODE */

/* Backend: -1 unresolved, 0 scalar, 1 IFMA lanes.  Read and written atomically. */
static int dm_backend_ = -1;

/* r[i] = s[i]·G + e[i]·P[i] for i < n in lanes (the last block padded with copies of entry 0),
 * redo[i] = 1 where the caller must recompute r[i] with scalar code.  Preconditions: IFMA usable
 * (dm_backend() == 1, which also built the G tables), n >= 1, every P finite and on the curve,
 * s and e canonical. */
static void dm_many_var(gej *r, unsigned char *redo, const sc *s, const sc *e, const ge *p, size_t n) {
#ifdef FE_HAVE_IFMA_CODE
    for (size_t i = 0; i < n; i += DM_LANES) {
        const sc *ps[DM_LANES], *pe[DM_LANES];
        const ge *pp[DM_LANES];
        const size_t rest = n - i < DM_LANES ? n - i : DM_LANES;
        for (size_t l = 0; l < DM_LANES; l++) {
            const size_t k = i + (l < rest ? l : 0);
            ps[l] = &s[k];
            pe[l] = &e[k];
            pp[l] = &p[k];
        }
        if (rest == DM_LANES) {
            dm_block16_(r + i, redo + i, ps, pe, pp);
        } else {
            gej out[DM_LANES];
            unsigned char flags[DM_LANES];
            dm_block16_(out, flags, ps, pe, pp);
            memcpy(r + i, out, rest * sizeof *out);
            memcpy(redo + i, flags, rest);
        }
    }
#else
    (void)r;
    (void)s;
    (void)e;
    (void)p;
    for (size_t i = 0; i < n; i++) redo[i] = 1;
#endif
}

/* The scalar answer for the self-test: s·G + e·P by Straus over [G, P]. */
static int dm_scalar_var(ge *r, const sc *s, const sc *e, const ge *p) {
    ge pts[2];
    sc ks[2] = {*s, *e};
    pts[0].inf = 0;
    pts[0].x = dm_g_tab[0].x;
    pts[0].y = dm_g_tab[0].y;
    pts[1] = *p;
    gej j;
    if (!msm_straus_var(&j, pts, ks, 2)) return 0;
    ge_set_gej_var(r, &j);
    return 1;
}

/* 1 iff the lanes are usable here: IFMA in the CPU, the G tables built, and agreement with the
 * scalar code on 32 inputs (random ones, and ones meeting a doubling, a cancellation and a
 * point at infinity, which must come back flagged or right). */
static int dm_ifma_works_(void) {
#ifdef FE_HAVE_IFMA_CODE
    if (!fe_cpu_has_ifma_() || !dm_g_tables()) return 0;
    enum { NT = 32 };
    sc s[NT], e[NT];
    ge p[NT];
    gej got[NT];
    unsigned char redo[NT];
    u64 x = 0xD1B54A32D192ED03ULL;
    for (int i = 0; i < NT; i++) {
        unsigned char b[32];
        for (int k = 0; k < 32; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[k] = (unsigned char)x;
        }
        sc_set_b32(&s[i], b);
        b[0] ^= 0x5A;
        sc_set_b32(&e[i], b);
        /* P = k·G for a small k (so the exceptional cases below are easy to make) */
        const size_t k = 1 + (size_t)(x % DM_GT);
        p[i].inf = 0;
        p[i].x = dm_g_tab[k - 1].x;
        p[i].y = dm_g_tab[k - 1].y;
        if (i == 1) { /* e·P = -s·G: the result is infinity */
            sc ek;
            sc kk = {{(u64)k, 0, 0, 0}};
            sc_mul(&ek, &e[i], &kk);
            sc_neg(&s[i], &ek);
        }
        if (i == 2) { /* P = G, e = s = 1: the first G digit doubles the point of the first e digit */
            p[i].x = dm_g_tab[0].x;
            p[i].y = dm_g_tab[0].y;
            s[i] = SC_ONE;
            e[i] = SC_ONE;
        }
        if (i == 3) e[i] = SC_ONE; /* tiny e */
    }
    dm_many_var(got, redo, s, e, p, NT);
    for (int i = 0; i < NT; i++) {
        ge want, have;
        if (!dm_scalar_var(&want, &s[i], &e[i], &p[i])) return 0;
        if (redo[i]) {
            if (i != 1 && i != 2) return 0; /* only the crafted lanes may be flagged */
            continue;
        }
        if (i == 1 || i == 2) return 0; /* they must be flagged */
        ge_set_gej_var(&have, &got[i]);
        if (have.inf != want.inf) return 0;
        if (!want.inf && (!fe_equal(&have.x, &want.x) || !fe_equal(&have.y, &want.y))) return 0;
    }
    return 1;
#else
    return 0;
#endif
}

/* 1 iff dm_many_var may be used (resolved on first call; call it with the GIL held the first
 * time, as it may build the G tables). */
static int dm_backend(void) {
    int b = __atomic_load_n(&dm_backend_, __ATOMIC_ACQUIRE);
    if (b < 0) {
        b = dm_ifma_works_();
        __atomic_store_n(&dm_backend_, b, __ATOMIC_RELEASE);
    }
    return b;
}

/* Select the backend by name (tests run both): "scalar" or "ifma".  0 on success, -1 for an
 * unknown name, -2 when the lanes are unavailable here. */
static int dm_set_backend(const char *name) {
    if (!strcmp(name, "scalar")) {
        __atomic_store_n(&dm_backend_, 0, __ATOMIC_RELEASE);
        return 0;
    }
    if (!strcmp(name, "ifma")) {
        if (!dm_ifma_works_()) return -2;
        __atomic_store_n(&dm_backend_, 1, __ATOMIC_RELEASE);
        return 0;
    }
    return -1;
}

static const char *dm_backend_name(void) { return dm_backend() ? "ifma" : "scalar"; }

#endif

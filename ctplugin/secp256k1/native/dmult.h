/* Double multiplications R = s·G + e·P with G fixed and P variable (the ring steps of Borromean
 * signatures: range proofs and surjection proofs), one at a time and many at once.
 * PUBLIC DATA ONLY (variable time).  No Python.
 *
 * dmult_var, the scalar code: GLV halves of e in width-5 NAF against the odd multiples of P on
 * the curve where they are affine without an inversion (straus_odd_table_iso_), and s split into
 * 128-bit halves in width-15 NAF against process-wide tables of odd multiples of G and 2^128·G
 * (dmult_scalar_tables, built once): one shared chain of ~129 doublings.
 *
 * dmult_many_var, many independent ones: sixteen at a time in AVX-512 IFMA lanes where the CPU has
 * them (dmult_ifma.h, about 3.5x the throughput), the remainder of a batch and every lane that met
 * an exceptional addition with dmult_var — so the results are dmult_var's, whichever runs.
 */
#ifndef CTPLUGIN_DMULT_H
#define CTPLUGIN_DMULT_H

#include <stdlib.h>

#include "digits.h"
#include "dmult_ifma.h"
#include "glv.h"
#include "group.h"
#include "straus.h"

#define DMS_G_W 15                            /* NAF width of the G terms */
#define DMS_G_T ((size_t)1 << (DMS_G_W - 2)) /* odd multiples per table: 8192 */
#define DMS_E_T STRAUS_TABLE                  /* odd multiples of P (width STRAUS_W) */
#define DMS_DIGITS 131                        /* NAF length: GLV halves < 2^129 */

/* (2j+1)·G and (2j+1)·2^128·G for j < DMS_G_T (1 MiB), built once by dmult_scalar_tables. */
static ge_xy *dms_g_tab = NULL;

/* Build the G tables (idempotent).  Call with the GIL held (no two builders at once) before any
 * thread uses them.  Returns 0 on allocation failure. */
static int dmult_scalar_tables(void) {
    if (!dms_g_tab) dms_g_tab = dm_g_rows_(DMS_G_T, 1);
    return dms_g_tab != NULL;
}

/* The point added for NAF digit d of a term over odd multiples tab: ±tab[|d|/2] (y negated when
 * the digit's sign and the term's sign differ), optionally the λ image (x·β). */
static inline void dms_pick_(ge *q, const ge_xy *tab, int d, int neg, int lambda) {
    const ge_xy *e = &tab[(d < 0 ? -d : d) >> 1];
    q->inf = 0;
    if (lambda) fe_mul(&q->x, &e->x, &FE_BETA);
    else q->x = e->x;
    if ((d < 0) ^ neg) fe_neg(&q->y, &e->y);
    else q->y = e->y;
}

/* One double multiplication recoded for the scalar code: the odd multiples of P and λP on the
 * accumulator's curve (scaled by iso), and the four NAF terms (GLV halves of e, halves of s). */
typedef struct {
    ge_xy ptab[2 * DMS_E_T];
    fe iso;
    int neg[2];            /* signs of the GLV halves */
    int d[4][DMS_DIGITS];  /* terms: e1 (P), e2 (λP), s_lo (G), s_hi (2^128·G) */
    int top;               /* highest bit with a digit in some term, -1 for none */
} dms_plan;

static void dms_plan_var_(dms_plan *pl, const sc *s, const sc *e, const ge *p) {
    straus_odd_table_iso_(pl->ptab, &pl->iso, p, DMS_E_T);
    sc e1, e2;
    sc_split_lambda_var(&e1, &pl->neg[0], &e2, &pl->neg[1], e);
    const sc slo = {{s->n[0], s->n[1], 0, 0}}, shi = {{s->n[2], s->n[3], 0, 0}};
    wnaf_var(pl->d[0], DMS_DIGITS, &e1, STRAUS_W);
    wnaf_var(pl->d[1], DMS_DIGITS, &e2, STRAUS_W);
    wnaf_var(pl->d[2], DMS_DIGITS, &slo, DMS_G_W);
    wnaf_var(pl->d[3], DMS_DIGITS, &shi, DMS_G_W);
    int top = DMS_DIGITS - 1;
    while (top >= 0 && !(pl->d[0][top] | pl->d[1][top] | pl->d[2][top] | pl->d[3][top])) top--;
    pl->top = top;
    /* the G tables (1 MiB) mostly miss the caches: ask for the ~16 entries this chain will add
     * now, so they arrive while the chain runs (its stalls on them were ~2% of its time) */
    for (int t = 2; t < 4; t++) {
        for (int bit = 0; bit <= top; bit++) {
            const int d = pl->d[t][bit];
            if (d) __builtin_prefetch(&dms_g_tab[(size_t)(t - 2) * DMS_G_T + (size_t)((d < 0 ? -d : d) >> 1)]);
        }
    }
}

/* The point term t adds at bit (0 when its digit is 0) into *q, and the scale of its addition:
 * the P tables live on the accumulator's curve (NULL), the G tables are true affine points
 * (iso). */
static inline int dms_term_(ge *q, const fe **scale, const dms_plan *pl, int t, int bit) {
    const int d = pl->d[t][bit];
    if (!d) return 0;
    if (t < 2) {
        dms_pick_(q, pl->ptab + t * DMS_E_T, d, pl->neg[t], 0);
        *scale = NULL;
    } else {
        dms_pick_(q, dms_g_tab + (t - 2) * DMS_G_T, d, 0, 0);
        *scale = &pl->iso;
    }
    return 1;
}

/* r = s·G + e·P (Jacobian), the scalar code.  Preconditions: dmult_scalar_tables() succeeded; P
 * finite and on the curve; s, e canonical (< n).  No allocation. */
static void dmult_var(gej *r, const sc *s, const sc *e, const ge *p) {
    dms_plan pl;
    dms_plan_var_(&pl, s, e, p);
    gej_set_inf(r);
    ge q;
    const fe *scale;
    for (int bit = pl.top; bit >= 0; bit--) {
        gej_double_var(r, r);
        for (int t = 0; t < 4; t++) {
            if (dms_term_(&q, &scale, &pl, t, bit)) gej_add_ge_iso_var(r, r, &q, scale, NULL);
        }
    }
    if (!r->inf) fe_mul(&r->z, &r->z, &pl.iso);
}

/* Two of gej_double_var at once, their field operations interleaved (the same operations, the
 * same results): one doubling is a chain of dependent multiplications that leaves the
 * multiplier waiting, two independent ones keep it busy (measured on a Zen 2 EPYC with the
 * mulx/adx field: 104 against 128 ns per doubling; docs/borromean.md §5).  Both finite. */
static inline void dms_double_x2_(gej *a, gej *b) {
    gej *const v[2] = {a, b};
    fe S[2], L[2], T[2], u[2];
    for (int k = 0; k < 2; k++) fe_sqr(&S[k], &v[k]->y);
    for (int k = 0; k < 2; k++) fe_sqr(&L[k], &v[k]->x);
    for (int k = 0; k < 2; k++) {
        fe_mul_small(&L[k], &L[k], 3);
        fe_half(&L[k], &L[k]);
    }
    for (int k = 0; k < 2; k++) fe_mul(&T[k], &v[k]->x, &S[k]);
    for (int k = 0; k < 2; k++) fe_mul(&v[k]->z, &v[k]->y, &v[k]->z);
    for (int k = 0; k < 2; k++) fe_sqr(&u[k], &L[k]);
    for (int k = 0; k < 2; k++) {
        fe_sub(&u[k], &u[k], &T[k]);
        fe_sub(&v[k]->x, &u[k], &T[k]);
        fe_sub(&u[k], &T[k], &v[k]->x);
    }
    for (int k = 0; k < 2; k++) fe_mul(&u[k], &L[k], &u[k]);
    for (int k = 0; k < 2; k++) fe_sqr(&S[k], &S[k]);
    for (int k = 0; k < 2; k++) fe_sub(&v[k]->y, &u[k], &S[k]);
}

/* Two of gej_add_ge_iso_var(a, a, b, s, NULL) at once, interleaved like dms_double_x2_ (the same
 * operations, the same results), for finite a and b.  Returns 0, leaving a untouched, when
 * either addition is exceptional (equal x: a doubling or a cancellation); the caller then makes
 * them one by one. */
static inline int dms_add_x2_(gej *a0, const ge *b0, const fe *s0, gej *a1, const ge *b1,
                              const fe *s1) {
    gej *const a[2] = {a0, a1};
    const ge *const b[2] = {b0, b1};
    const fe *const s[2] = {s0, s1};
    fe az[2], z1z1[2], u2[2], s2[2], h[2], rr[2];
    for (int k = 0; k < 2; k++) {
        az[k] = a[k]->z;
        if (s[k]) fe_mul(&az[k], &az[k], s[k]);
    }
    for (int k = 0; k < 2; k++) fe_sqr(&z1z1[k], &az[k]);
    for (int k = 0; k < 2; k++) fe_mul(&u2[k], &b[k]->x, &z1z1[k]);
    for (int k = 0; k < 2; k++) fe_mul(&s2[k], &b[k]->y, &az[k]);
    for (int k = 0; k < 2; k++) fe_mul(&s2[k], &s2[k], &z1z1[k]);
    for (int k = 0; k < 2; k++) {
        fe_sub(&h[k], &u2[k], &a[k]->x);
        fe_sub(&rr[k], &s2[k], &a[k]->y);
    }
    if (UNLIKELY(fe_is_zero(&h[0]) || fe_is_zero(&h[1]))) return 0;
    fe hh[2], hhh[2], v[2], t[2];
    for (int k = 0; k < 2; k++) fe_sqr(&hh[k], &h[k]);
    for (int k = 0; k < 2; k++) fe_mul(&hhh[k], &h[k], &hh[k]);
    for (int k = 0; k < 2; k++) fe_mul(&v[k], &a[k]->x, &hh[k]);
    for (int k = 0; k < 2; k++) fe_mul(&a[k]->z, &a[k]->z, &h[k]);
    for (int k = 0; k < 2; k++) fe_sqr(&t[k], &rr[k]);
    for (int k = 0; k < 2; k++) {
        fe_sub(&t[k], &t[k], &hhh[k]);
        fe_sub(&t[k], &t[k], &v[k]);
        fe_sub(&t[k], &t[k], &v[k]);
    }
    for (int k = 0; k < 2; k++) fe_mul(&hhh[k], &a[k]->y, &hhh[k]);
    for (int k = 0; k < 2; k++) fe_sub(&v[k], &v[k], &t[k]);
    for (int k = 0; k < 2; k++) fe_mul(&v[k], &rr[k], &v[k]);
    for (int k = 0; k < 2; k++) {
        fe_sub(&a[k]->y, &v[k], &hhh[k]);
        a[k]->x = t[k];
    }
    return 1;
}

/* r0 = dmult_var(s0, e0, p0) and r1 = dmult_var(s1, e1, p1), the two chains in lockstep: the
 * doublings of both through dms_double_x2_, and at each bit the additions of one paired with
 * those of the other through dms_add_x2_ in their order (a lane's operations are exactly
 * dmult_var's, so are its results).  Preconditions as dmult_var. */
static void dmult_pair_var(gej *r0, gej *r1, const sc *s0, const sc *e0, const ge *p0,
                           const sc *s1, const sc *e1, const ge *p1) {
    dms_plan pl[2];
    dms_plan_var_(&pl[0], s0, e0, p0);
    dms_plan_var_(&pl[1], s1, e1, p1);
    /* the accumulators are locals: the compiler then knows the two never alias */
    gej acc[2];
    gej_set_inf(&acc[0]);
    gej_set_inf(&acc[1]);
    const int top = pl[0].top > pl[1].top ? pl[0].top : pl[1].top;
    for (int bit = top; bit >= 0; bit--) {
        if (!acc[0].inf && !acc[1].inf) {
            dms_double_x2_(&acc[0], &acc[1]);
        } else {
            gej_double_var(&acc[0], &acc[0]);
            gej_double_var(&acc[1], &acc[1]);
        }
        /* the additions of each lane at this bit, in dmult_var's order */
        ge q[2][4];
        const fe *scale[2][4];
        int n[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            if (bit > pl[k].top) continue;
            for (int t = 0; t < 4; t++) {
                if (dms_term_(&q[k][n[k]], &scale[k][n[k]], &pl[k], t, bit)) n[k]++;
            }
        }
        int m = 0;
        for (; m < n[0] && m < n[1]; m++) {
            if (!acc[0].inf && !acc[1].inf &&
                dms_add_x2_(&acc[0], &q[0][m], scale[0][m], &acc[1], &q[1][m], scale[1][m]))
                continue;
            for (int k = 0; k < 2; k++) gej_add_ge_iso_var(&acc[k], &acc[k], &q[k][m], scale[k][m], NULL);
        }
        for (int k = 0; k < 2; k++) {
            for (int j = m; j < n[k]; j++) gej_add_ge_iso_var(&acc[k], &acc[k], &q[k][j], scale[k][j], NULL);
        }
    }
    for (int k = 0; k < 2; k++) {
        if (!acc[k].inf) fe_mul(&acc[k].z, &acc[k].z, &pl[k].iso);
    }
    *r0 = acc[0];
    *r1 = acc[1];
}

/* A batch's remainder after whole blocks of DM_LANES goes to the lanes from this many on (a
 * block of sixteen costs about four scalar double multiplications). */
#define DMULT_LANES_MIN 5

/* r[i] = s[i]·G + e[i]·P[i] for i < n (Jacobian; r[i].inf for infinity); lanes: dm_backend()
 * (resolved by the caller with the GIL held), else everything runs in dmult_var.  redo: n bytes
 * of scratch.  Preconditions: dmult_scalar_tables() succeeded; every P finite and on the curve;
 * s, e canonical. */
static void dmult_many_var(gej *r, unsigned char *redo, const sc *s, const sc *e, const ge *p,
                           size_t n, int lanes) {
    size_t in_lanes = 0;
    if (lanes) {
        in_lanes = n - n % DM_LANES;
        if (n % DM_LANES >= DMULT_LANES_MIN) in_lanes = n;
    }
    if (in_lanes) dm_many_var(r, redo, s, e, p, in_lanes);
    /* the rest in pairs (dmult_pair_var), an odd one out alone */
    size_t held = n;
    for (size_t i = 0; i < n; i++) {
        if (i < in_lanes && !redo[i]) continue;
        if (held == n) {
            held = i;
            continue;
        }
        dmult_pair_var(&r[held], &r[i], &s[held], &e[held], &p[held], &s[i], &e[i], &p[i]);
        held = n;
    }
    if (held < n) dmult_var(&r[held], &s[held], &e[held], &p[held]);
}

#endif

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

/* r = s·G + e·P (Jacobian), the scalar code.  Preconditions: dmult_scalar_tables() succeeded; P
 * finite and on the curve; s, e canonical (< n).  No allocation. */
static void dmult_var(gej *r, const sc *s, const sc *e, const ge *p) {
    ge_xy ptab[2 * DMS_E_T];
    fe iso;
    straus_odd_table_iso_(ptab, &iso, p, DMS_E_T);
    sc e1, e2;
    int n1, n2;
    sc_split_lambda_var(&e1, &n1, &e2, &n2, e);
    const sc slo = {{s->n[0], s->n[1], 0, 0}}, shi = {{s->n[2], s->n[3], 0, 0}};
    int d1[DMS_DIGITS], d2[DMS_DIGITS], g1[DMS_DIGITS], g2[DMS_DIGITS];
    wnaf_var(d1, DMS_DIGITS, &e1, STRAUS_W);
    wnaf_var(d2, DMS_DIGITS, &e2, STRAUS_W);
    wnaf_var(g1, DMS_DIGITS, &slo, DMS_G_W);
    wnaf_var(g2, DMS_DIGITS, &shi, DMS_G_W);
    int top = DMS_DIGITS - 1;
    while (top >= 0 && !(d1[top] | d2[top] | g1[top] | g2[top])) top--;
    gej_set_inf(r);
    const ge_xy *glo = dms_g_tab, *ghi = dms_g_tab + DMS_G_T;
    ge q;
    for (int bit = top; bit >= 0; bit--) {
        gej_double_var(r, r);
        /* the P tables live on the accumulator's curve; the G tables are true affine points */
        if (d1[bit]) {
            dms_pick_(&q, ptab, d1[bit], n1, 0);
            gej_add_ge_iso_var(r, r, &q, NULL, NULL);
        }
        if (d2[bit]) {
            dms_pick_(&q, ptab + DMS_E_T, d2[bit], n2, 0);
            gej_add_ge_iso_var(r, r, &q, NULL, NULL);
        }
        if (g1[bit]) {
            dms_pick_(&q, glo, g1[bit], 0, 0);
            gej_add_ge_iso_var(r, r, &q, &iso, NULL);
        }
        if (g2[bit]) {
            dms_pick_(&q, ghi, g2[bit], 0, 0);
            gej_add_ge_iso_var(r, r, &q, &iso, NULL);
        }
    }
    if (!r->inf) fe_mul(&r->z, &r->z, &iso);
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
    for (size_t i = 0; i < n; i++) {
        if (i >= in_lanes || redo[i]) dmult_var(&r[i], &s[i], &e[i], &p[i]);
    }
}

#endif

/* Straus (interleaved wNAF) multi-scalar multiplication for few points, and the odd-multiple
 * tables it shares with the fixed-base Straus path (fixed.h).  PUBLIC DATA ONLY (variable time).
 *
 * Σ k_i·P_i: GLV halves (glv.h) in width-5 NAF, one shared doubling chain of ~129 doublings,
 * one mixed addition per non-zero digit from per-point tables of odd multiples (affine, one
 * batch inversion for all; for one point none: straus_odd_table_iso_).
 *
 * Preconditions: points on the curve (or flagged infinity), scalars canonical (< N).  Memory:
 * O(n) scratch from malloc (callable without the GIL); functions return 0 on allocation failure.
 */
#ifndef CTPLUGIN_STRAUS_H
#define CTPLUGIN_STRAUS_H

#include <stdlib.h>

#include "digits.h"
#include "glv.h"
#include "group.h"

#define STRAUS_W 5
#define STRAUS_TABLE (1 << (STRAUS_W - 2)) /* odd multiples 1, 3, ..., 2^(w-1) - 1 */

/* Odd multiples of every point and of its λ image, affine: with T = STRAUS_TABLE,
 * tab[2iT + j] = (2j+1)·P_i and tab[2iT + T + j] = (2j+1)·λP_i (rows of infinity for P_i = ∞).
 * Scratch: tj holds n·T elements, scratch 2n·T; tab holds 2n·T. */
static void straus_odd_tables_(ge *tab, gej *tj, fe *scratch, const ge *pts, size_t n) {
    const size_t T = STRAUS_TABLE;
    /* odd multiples of every base point: P, P + 2P, ... then one batch inversion for all.  From
     * 4 points on, the 2P are first made affine together (one more inversion) so that the chains
     * use mixed additions (11 instead of 16 multiplications each). */
    const int affine_steps = n >= 4;
    if (affine_steps) {
        for (size_t i = 0; i < n; i++) {
            gej_set_ge(&tj[i], &pts[i]);
            gej_double_var(&tj[i], &tj[i]);
        }
        ge_set_all_gej_var(tab, tj, n, scratch); /* tab[i] = 2·P_i, overwritten below */
    }
    for (size_t i = 0; i < n; i++) {
        gej *row = &tj[i * T]; /* (the Jacobian 2P in tj are no longer needed) */
        if (pts[i].inf) {
            for (size_t j = 0; j < T; j++) gej_set_inf(&row[j]);
            continue;
        }
        if (affine_steps) {
            ge d = tab[i];
            gej_set_ge(&row[0], &pts[i]);
            for (size_t j = 1; j < T; j++) gej_add_ge_var(&row[j], &row[j - 1], &d);
        } else {
            gej d;
            gej_set_ge(&row[0], &pts[i]);
            gej_double_var(&d, &row[0]);
            for (size_t j = 1; j < T; j++) gej_add_var(&row[j], &row[j - 1], &d);
        }
    }
    ge_set_all_gej_var(tab, tj, n * T, scratch);
    for (size_t i = n; i-- > 0;) {
        /* spread to [P table | λP table] rows of 2T (in place, from the end) */
        for (size_t j = T; j-- > 0;) tab[2 * i * T + j] = tab[i * T + j];
        for (size_t j = 0; j < T; j++) ge_mul_lambda(&tab[2 * i * T + T + j], &tab[2 * i * T + j]);
    }
}

/* Odd multiples (2j+1)·P, j < T, and their λ images without any inversion ("effective affine",
 * as libsecp256k1 does for one point): with d = 2P = (X, Y, Z) in Jacobian coordinates, the
 * isomorphism (x, y) -> (x·Z², y·Z³) makes d affine, so the chain P, P + d, ... runs on mixed
 * additions; its entries (X_j, Y_j, Z_j) are then brought to the last Z by the ratios
 * Z_(j+1)/Z_j (out of the additions), which makes them affine on the curve scaled by
 * S = Z·Z_(T-1): the true point of (x, y) is (x/S², y/S³).
 * tab[j] = (2j+1)·P', tab[T + j] = λ of it, both scaled; *s = S.  Precondition: P finite, 1 <= T
 * <= 8 (no two multiples share x, so every addition is a plain sum). */
#define STRAUS_ISO_MAX_T 8
_Static_assert(STRAUS_TABLE <= STRAUS_ISO_MAX_T, "straus_odd_table_iso_ keeps its rows on the stack");
static void straus_odd_table_iso_(ge_xy *tab, fe *s, const ge *p, size_t T) {
    gej d, row[STRAUS_ISO_MAX_T];
    fe zr[STRAUS_ISO_MAX_T], z2, z3;
    gej_set_ge(&d, p);
    gej_double_var(&d, &d);
    const ge d_iso = {d.x, d.y, 0};
    fe_sqr(&z2, &d.z);
    fe_mul(&z3, &z2, &d.z);
    row[0].inf = 0;
    row[0].z = FE_ONE;
    fe_mul(&row[0].x, &p->x, &z2);
    fe_mul(&row[0].y, &p->y, &z3);
    for (size_t j = 1; j < T; j++) gej_add_ge_iso_var(&row[j], &row[j - 1], &d_iso, NULL, &zr[j]);
    fe_mul(s, &d.z, &row[T - 1].z);
    fe acc = FE_ONE; /* Z_(T-1) / Z_j */
    for (size_t j = T; j-- > 0;) {
        fe a2, a3;
        fe_sqr(&a2, &acc);
        fe_mul(&a3, &a2, &acc);
        fe_mul(&tab[j].x, &row[j].x, &a2);
        fe_mul(&tab[j].y, &row[j].y, &a3);
        fe_mul(&tab[T + j].x, &tab[j].x, &FE_BETA);
        tab[T + j].y = tab[j].y;
        if (j) fe_mul(&acc, &acc, &zr[j]);
    }
}

/* r = Σ k_i·P_i by interleaved wNAF. */
static int msm_straus_var(gej *r, const ge *pts, const sc *ks, size_t n) {
    gej_set_inf(r);
    if (n == 0) return 1;
    const size_t T = STRAUS_TABLE;
    msm_term *terms = malloc(2 * n * sizeof *terms);
    gej *tj = malloc(n * T * sizeof *tj);
    ge *tab = malloc(2 * n * T * sizeof *tab); /* [P table | λP table] per base point */
    fe *scratch = malloc(2 * n * T * sizeof *scratch);
    int *wnaf = malloc(2 * 257 * sizeof *wnaf);
    int *digits = NULL;
    int ok = 0;
    if (!terms || !tj || !tab || !scratch || !wnaf) goto done;
    int maxbits = msm_expand_glv_(terms, pts, ks, n);
    int len = maxbits + 1;
    digits = malloc(2 * n * (size_t)len * sizeof *digits); /* bit-major: digits[bit·2n + t] */
    if (!digits) goto done;
    straus_odd_tables_(tab, tj, scratch, pts, n);
    for (size_t t = 0; t < 2 * n; t++) {
        wnaf_var(wnaf, len, &terms[t].m, STRAUS_W);
        for (int bit = 0; bit < len; bit++) digits[(size_t)bit * 2 * n + t] = wnaf[bit];
    }
    for (int bit = len - 1; bit >= 0; bit--) {
        gej_double_var(r, r);
        const int *row = &digits[(size_t)bit * 2 * n];
        for (size_t t = 0; t < 2 * n; t++) {
            int d = row[t];
            if (!d) continue;
            /* term t uses table row t: base point t/2, λ image when t is odd */
            ge q = tab[t * T + (size_t)((d < 0 ? -d : d) >> 1)];
            if ((d < 0) ^ terms[t].neg) fe_neg(&q.y, &q.y);
            gej_add_ge_var(r, r, &q);
        }
    }
    ok = 1;
done:
    free(terms);
    free(tj);
    free(tab);
    free(scratch);
    free(wnaf);
    free(digits);
    return ok;
}

#endif

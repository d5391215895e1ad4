/* Fixed-base multi-scalar multiplication: precomputation for points reused across many MSMs
 * (G, H, the Bulletproof generators).  PUBLIC DATA ONLY (variable time).
 *
 * For every table point P and its endomorphism image λP the table stores the window-shifted
 * multiples 2^(c·w)·P, w = 0 .. W-1 (affine).  With k = ±m1 ± m2·λ and signed c-bit digits
 * m = Σ_w d_w·2^(c·w), the sum Σ_i k_i·P_i becomes Σ d·(±2^(c·w)·P) over all digits: every window
 * falls into ONE set of 2^(c-1) buckets, so there are no doublings and a single running sum, which
 * lets c be larger than in a plain Pippenger of the same size.
 */
#ifndef CTPLUGIN_FIXED_H
#define CTPLUGIN_FIXED_H

#include "msm.h"

/* GLV magnitudes stay below 2^129 (see msm.h); one more bit absorbs the last digit carry. */
#define FIXED_MAX_BITS 129

typedef struct {
    size_t n;     /* table points */
    int c;        /* window width */
    int windows;  /* W, with W·c >= FIXED_MAX_BITS + 1 */
    ge *base;     /* n points as given */
    ge *q;        /* q[(i·W + w)·2 + h] = 2^(c·w)·(h ? λP_i : P_i) */
} fixed_table;

static double fixed_cost_(size_t n, int c) {
    int windows = (FIXED_MAX_BITS + 1 + c - 1) / c;
    return 2.0 * (double)n * windows * 6.5 + (double)(1 << (c - 1)) * 27.0;
}

static int fixed_best_window_(size_t n) {
    int best = 4;
    for (int c = 5; c <= 14; c++) {
        if (fixed_cost_(n, c) < fixed_cost_(n, best)) best = c;
    }
    return best;
}

static void fixed_table_free(fixed_table *t) {
    free(t->base);
    free(t->q);
    t->base = NULL;
    t->q = NULL;
    t->n = 0;
}

/* Build from n affine points (copied).  Returns 0 on allocation failure. */
static int fixed_table_build(fixed_table *t, const ge *pts, size_t n) {
    memset(t, 0, sizeof *t);
    t->n = n;
    t->c = fixed_best_window_(n);
    t->windows = (FIXED_MAX_BITS + 1 + t->c - 1) / t->c;
    if (n == 0) return 1;
    size_t W = (size_t)t->windows;
    t->base = malloc(n * sizeof *t->base);
    t->q = malloc(2 * n * W * sizeof *t->q);
    gej *tj = malloc(n * W * sizeof *tj);
    ge *aff = malloc(n * W * sizeof *aff);
    fe *scratch = malloc(n * W * sizeof *scratch);
    int ok = 0;
    if (!t->base || !t->q || !tj || !aff || !scratch) goto done;
    memcpy(t->base, pts, n * sizeof *pts);
    for (size_t i = 0; i < n; i++) {
        gej cur;
        gej_set_ge(&cur, &pts[i]);
        for (size_t w = 0; w < W; w++) {
            tj[i * W + w] = cur;
            for (int k = 0; k < t->c; k++) gej_double_var(&cur, &cur);
        }
    }
    ge_set_all_gej_var(aff, tj, n * W, scratch);
    for (size_t j = 0; j < n * W; j++) {
        t->q[2 * j] = aff[j];
        ge_mul_lambda(&t->q[2 * j + 1], &aff[j]);
        fe_normalize(&t->q[2 * j + 1].x);
    }
    ok = 1;
done:
    free(tj);
    free(aff);
    free(scratch);
    if (!ok) fixed_table_free(t);
    return ok;
}

/* r = Σ_{i < nk} ks[i]·P_i through the shifted tables.  Returns 1 on success, 0 on allocation
 * failure, 2 if a GLV half exceeded FIXED_MAX_BITS (never seen; the caller then falls back to the
 * generic MSM rather than trusting the bound). */
static int fixed_msm_var(gej *r, const fixed_table *t, const sc *ks, size_t nk) {
    gej_set_inf(r);
    const int c = t->c, W = t->windows;
    const size_t nb = (size_t)1 << (c - 1);
    int16_t *digits = malloc((2 * nk * (size_t)W + 1) * sizeof *digits);
    int *neg = malloc((2 * nk + 1) * sizeof *neg);
    size_t *start = malloc((nb + 1) * sizeof *start);
    size_t *len = malloc(nb * sizeof *len);
    ge_xy *entries = NULL;
    fe *inv = NULL, *den = NULL;
    unsigned char *kind = NULL;
    int ok = 0;
    if (!digits || !neg || !start || !len) goto done;
    memset(len, 0, nb * sizeof *len);
    size_t total = 0;
    for (size_t i = 0; i < nk; i++) {
        int16_t *d = &digits[2 * i * (size_t)W];
        if (sc_is_zero(&ks[i]) || t->base[i].inf) {
            memset(d, 0, 2 * (size_t)W * sizeof *d);
            continue;
        }
        sc m1, m2;
        sc_split_lambda_var(&m1, &neg[2 * i], &m2, &neg[2 * i + 1], &ks[i]);
        if (limbs_bitlen_(m1.n, 4) > FIXED_MAX_BITS || limbs_bitlen_(m2.n, 4) > FIXED_MAX_BITS) {
            ok = 2;
            goto done;
        }
        signed_digits_var(d, W, &m1, c);
        signed_digits_var(d + W, W, &m2, c);
        for (int j = 0; j < 2 * W; j++) {
            if (d[j]) {
                len[(size_t)(d[j] < 0 ? -d[j] : d[j]) - 1]++;
                total++;
            }
        }
    }
    if (total == 0) {
        ok = 1;
        goto done;
    }
    entries = malloc(total * sizeof *entries);
    inv = malloc((total / 2 + 1) * sizeof *inv);
    den = malloc((total / 2 + 1) * sizeof *den);
    kind = malloc(total / 2 + 1);
    if (!entries || !inv || !den || !kind) goto done;
    start[0] = 0;
    for (size_t b = 0; b < nb; b++) start[b + 1] = start[b] + len[b];
    memset(len, 0, nb * sizeof *len);
    for (size_t i = 0; i < nk; i++) {
        const int16_t *d = &digits[2 * i * (size_t)W];
        for (int h = 0; h < 2; h++) {
            for (int w = 0; w < W; w++) {
                int v = d[h * W + w];
                if (!v) continue;
                size_t b = (size_t)(v < 0 ? -v : v) - 1;
                const ge *p = &t->q[(i * (size_t)W + (size_t)w) * 2 + (size_t)h];
                ge_xy *e = &entries[start[b] + len[b]++];
                e->x = p->x;
                if ((v < 0) ^ neg[2 * i + h]) fe_neg(&e->y, &p->y);
                else e->y = p->y;
            }
        }
    }
    pip_reduce_buckets_var(entries, start, len, nb, inv, den, kind);
    gej running;
    gej_set_inf(&running);
    for (size_t j = nb; j-- > 0;) {
        if (len[j]) gej_add_xy_var(&running, &running, &entries[start[j]]);
        gej_add_var(r, r, &running);
    }
    ok = 1;
done:
    free(digits);
    free(neg);
    free(start);
    free(len);
    free(entries);
    free(inv);
    free(den);
    free(kind);
    return ok;
}

#endif

/* Pippenger (bucket) multi-scalar multiplication for many points, and the batch-affine bucket
 * reduction it shares with the fixed-base tables (fixed.h).  PUBLIC DATA ONLY (variable time).
 *
 * Σ m_t·P_t over GLV terms (glv.h): signed c-bit digits (digits.h), 2^(c-1) buckets per window;
 * the points of every bucket are summed in affine coordinates by rounds of pairwise additions
 * sharing one field inversion per round (fe_inv_all_var), then each window's buckets are
 * combined by a Jacobian running sum, and the windows by c doublings each.
 *
 * Threads: the windows are split among them (msm_pippenger_terms_var); the result does not
 * depend on their number.
 *
 * Preconditions: points on the curve (or flagged infinity), magnitudes below 2^(maxbits);
 * 2 <= c <= DIGITS_MAX_WINDOW.  Memory: O(n) scratch from malloc (callable without the GIL);
 * functions return 0 on allocation failure.
 */
#ifndef CTPLUGIN_PIPPENGER_H
#define CTPLUGIN_PIPPENGER_H

#include <stdlib.h>

#include "digits.h"
#include "glv.h"
#include "group.h"
#include "threads.h"

/* Window width by number of input points, measured on this machine kind (thread CPU time, best
 * of 5, bench/msm.py sizes): the optimum moves from 5 bits at 32 points to 13 at 32768. */
static int pippenger_best_window(size_t npoints) {
    static const struct {
        size_t below;
        int c;
    } steps[] = {{96, 5}, {300, 6}, {600, 7}, {1800, 8}, {3000, 9}, {6000, 10}, {12000, 11},
                 {24000, 12}, {60000, 13}};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (npoints < steps[i].below) return steps[i].c;
    }
    return 14;
}

/* --- bucket reduction ---------------------------------------------------------------------- */

/* Bucket b's points are entries[start[b] .. start[b] + len[b]) (finite affine points). */
typedef struct {
    ge_xy *entries;
    const size_t *start;
    size_t *len;
    size_t nbuckets;
    /* scratch of >= (total entries)/2 + 1 elements each */
    fe *inv, *den;
    unsigned char *kind;
} pip_buckets;

/* Pass 1 of a round: the denominators of all pairs (entries 2j, 2j+1 of every bucket), in
 * bucket order.  Returns the number of pairs. */
static size_t pip_pair_denominators_(const pip_buckets *bk) {
    size_t npairs = 0;
    for (size_t b = 0; b < bk->nbuckets; b++) {
        const size_t L = bk->len[b];
        const ge_xy *seg = bk->entries + bk->start[b];
        for (size_t k = 0; k + 1 < L; k += 2, npairs++)
            bk->kind[npairs] = (unsigned char)ge_xy_pair_denominator(&bk->den[npairs], &seg[k],
                                                                     &seg[k + 1]);
    }
    return npairs;
}

/* Pass 3 of a round: the pair sums (inverses in bk->inv, in pass-1 order), compacted to the
 * front of each bucket's segment (the write index never passes the read index); a cancelled
 * pair is dropped.  Returns 1 if some bucket still holds two or more points. */
static int pip_pair_sums_(const pip_buckets *bk) {
    size_t i = 0;
    int again = 0;
    for (size_t b = 0; b < bk->nbuckets; b++) {
        const size_t L = bk->len[b];
        if (L < 2) continue;
        ge_xy *seg = bk->entries + bk->start[b];
        size_t w = 0;
        for (size_t k = 0; k + 1 < L; k += 2, i++) {
            if (UNLIKELY(bk->kind[i] == PAIR_CANCEL)) continue;
            ge_xy_pair_sum(&seg[w++], &seg[k], &seg[k + 1], &bk->inv[i], bk->kind[i]);
        }
        if (L & 1) seg[w++] = seg[L - 1];
        bk->len[b] = w;
        if (w >= 2) again = 1;
    }
    return again;
}

/* Reduce every bucket to at most one point: rounds of pairwise affine additions, all the
 * additions of a round sharing one field inversion. */
static void pip_reduce_buckets_var(const pip_buckets *bk) {
    for (;;) {
        size_t npairs = pip_pair_denominators_(bk);
        if (npairs == 0) return;
        fe_inv_all_var(bk->inv, bk->den, npairs, bk->inv);
        if (!pip_pair_sums_(bk)) return;
    }
}

/* Σ_j j·B_j over a window's nb buckets (bucket j-1 holds digit j; len 0 = empty), as the
 * running sum Σ_j (B_top + ... + B_j). */
static void pip_window_sum_(gej *r, const pip_buckets *bk, size_t base, size_t nb) {
    gej running;
    gej_set_inf(&running);
    gej_set_inf(r);
    for (size_t j = nb; j-- > 0;) {
        if (bk->len[base + j]) gej_add_xy_var(&running, &running, &bk->entries[bk->start[base + j]]);
        gej_add_var(r, r, &running);
    }
}

/* --- Pippenger over GLV terms -------------------------------------------------------------- */

/* Entries of one group of windows stay under this many (4 MB: a cache-friendlier scatter). */
#define PIP_MAX_GROUP_ENTRIES ((size_t)1 << 16)

/* Fill the buckets of windows [w0, w1): a counting sort of the (bucket, point) insertions by
 * bucket, then the scatter (negative digits insert −P). */
static void pip_fill_group_(pip_buckets *bk, size_t *start, const msm_term *terms, size_t nt,
                            const int16_t *digits, int windows, int w0, int w1, size_t nb) {
    const size_t gb = (size_t)(w1 - w0) * nb;
    size_t *len = bk->len;
    memset(len, 0, gb * sizeof *len);
    for (size_t t = 0; t < nt; t++) {
        const int16_t *d = &digits[t * (size_t)windows];
        for (int w = w0; w < w1; w++) {
            int v = d[w];
            if (v) len[(size_t)(w - w0) * nb + (size_t)(v < 0 ? -v : v) - 1]++;
        }
    }
    start[0] = 0;
    for (size_t b = 0; b < gb; b++) start[b + 1] = start[b] + len[b];
    memset(len, 0, gb * sizeof *len);
    for (size_t t = 0; t < nt; t++) {
        const int16_t *d = &digits[t * (size_t)windows];
        for (int w = w0; w < w1; w++) {
            int v = d[w];
            if (!v) continue;
            size_t b = (size_t)(w - w0) * nb + (size_t)(v < 0 ? -v : v) - 1;
            ge_xy *e = &bk->entries[start[b] + len[b]++];
            e->x = terms[t].p.x;
            if (v < 0) fe_neg(&e->y, &terms[t].p.y);
            else e->y = terms[t].p.y;
        }
    }
    bk->nbuckets = gb;
}

/* The work of one Pippenger call, shared by its threads (each takes a range of windows). */
typedef struct {
    const msm_term *terms;
    size_t nt;
    int c, windows;
    const int16_t *digits; /* digits[t·windows + w] */
    gej *wsum;             /* wsum[w] = Σ_j j·B_{w,j}, written by the thread owning window w */
    int failed;            /* some thread could not allocate its scratch */
} pip_job_;

/* Windows [w_lo, w_hi) of the job, in groups whose entries (<= nt per window) stay under
 * PIP_MAX_GROUP_ENTRIES.  Returns 0 on allocation failure. */
static int pip_windows_(pip_job_ *job, int w_lo, int w_hi) {
    const size_t nt = job->nt, nb = (size_t)1 << (job->c - 1);
    size_t group = PIP_MAX_GROUP_ENTRIES / nt;
    if (group < 1) group = 1;
    if (group > (size_t)(w_hi - w_lo)) group = (size_t)(w_hi - w_lo);
    const size_t cap_entries = nt * group;
    size_t *start = malloc((group * nb + 1) * sizeof *start);
    pip_buckets bk = {
        .entries = malloc(cap_entries * sizeof(ge_xy)),
        .start = start,
        .len = malloc(group * nb * sizeof(size_t)),
        .inv = malloc((cap_entries / 2 + 1) * sizeof(fe)),
        .den = malloc((cap_entries / 2 + 1) * sizeof(fe)),
        .kind = malloc(cap_entries / 2 + 1),
    };
    int ok = start && bk.entries && bk.len && bk.inv && bk.den && bk.kind;
    for (int w0 = w_lo; ok && w0 < w_hi; w0 += (int)group) {
        int w1 = w0 + (int)group < w_hi ? w0 + (int)group : w_hi;
        pip_fill_group_(&bk, start, job->terms, nt, job->digits, job->windows, w0, w1, nb);
        pip_reduce_buckets_var(&bk);
        for (int w = w0; w < w1; w++) pip_window_sum_(&job->wsum[w], &bk, (size_t)(w - w0) * nb, nb);
    }
    free(start);
    free(bk.entries);
    free(bk.len);
    free(bk.inv);
    free(bk.den);
    free(bk.kind);
    return ok;
}

static void pip_windows_part_(void *ctx, size_t part, size_t nparts) {
    pip_job_ *job = ctx;
    size_t lo, hi;
    parallel_range((size_t)job->windows, part, nparts, &lo, &hi);
    if (lo < hi && !pip_windows_(job, (int)lo, (int)hi)) __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
}

/* Fewer points than this per thread do not pay for starting one. */
#define PIP_MIN_POINTS_PER_THREAD 128

/* r = Σ m_t·P_t over prepared terms with window width c (2 <= c <= DIGITS_MAX_WINDOW), on up to
 * `threads` threads (each a range of windows; the window sums are combined in order, so the
 * result does not depend on the thread count). */
static int msm_pippenger_terms_var(gej *r, const msm_term *terms, size_t nt, int maxbits, int c,
                                   int threads) {
    gej_set_inf(r);
    if (nt == 0 || maxbits == 0) return 1;
    const int windows = (maxbits + 1 + c - 1) / c;
    int16_t *digits = malloc(nt * (size_t)windows * sizeof *digits);
    gej *wsum = malloc((size_t)windows * sizeof *wsum);
    int ok = 0;
    if (!digits || !wsum) goto done;
    for (size_t t = 0; t < nt; t++) {
        int16_t *d = &digits[t * (size_t)windows];
        if (terms[t].p.inf) memset(d, 0, (size_t)windows * sizeof *d);
        else signed_digits_var(d, windows, &terms[t].m, c);
    }
    pip_job_ job = {terms, nt, c, windows, digits, wsum, 0};
    size_t parts = threads > 0 ? (size_t)threads : 1;
    if (parts > (size_t)windows) parts = (size_t)windows;
    if (parts > nt / 2 / PIP_MIN_POINTS_PER_THREAD) parts = nt / 2 / PIP_MIN_POINTS_PER_THREAD;
    parallel_run(pip_windows_part_, &job, parts ? parts : 1);
    if (job.failed) goto done;
    *r = wsum[windows - 1];
    for (int w = windows - 2; w >= 0; w--) {
        for (int k = 0; k < c && !r->inf; k++) gej_double_var(r, r);
        gej_add_var(r, r, &wsum[w]);
    }
    ok = 1;
done:
    free(digits);
    free(wsum);
    return ok;
}

/* r = Σ k_i·P_i by Pippenger with window c (0 = pippenger_best_window), on up to `threads`
 * threads. */
static int msm_pippenger_var(gej *r, const ge *pts, const sc *ks, size_t n, int c, int threads) {
    msm_term *terms = malloc((2 * n + 1) * sizeof *terms);
    if (!terms) return 0;
    int maxbits = msm_expand_glv_(terms, pts, ks, n);
    if (c == 0) c = pippenger_best_window(n);
    int ok = msm_pippenger_terms_var(r, terms, 2 * n, maxbits, c, threads);
    free(terms);
    return ok;
}

#endif

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

#include "digits.h"
#include "glv.h"
#include "pippenger.h"
#include "straus.h"
#include "threads.h"

/* GLV magnitudes stay below 2^129 (see msm.h); one more bit absorbs the last digit carry. */
#define FIXED_MAX_BITS 129

typedef struct {
    size_t n;     /* table points */
    int c;        /* window width */
    int windows;  /* W, with W·c >= FIXED_MAX_BITS + 1 */
    ge *base;     /* n points as given */
    ge *q;        /* q[(i·W + w)·2 + h] = 2^(c·w)·(h ? λP_i : P_i) */
    /* Straus tables for few scalars, built on first use (fixed_straus_build): with
     * T = 2^(sw-2), odd[(2i + h)·T + j] = (2j+1)·2^(64h)·P_i.  NULL until built. */
    int sw;
    ge_xy *odd;
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
    free(t->odd);
    t->base = NULL;
    t->q = NULL;
    t->odd = NULL;
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
    fe *scratch = malloc(2 * n * W * sizeof *scratch);
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

/* Digits of ks[0..n) against table points base + i (GLV halves, signed c-bit windows) into
 * digits[2·i·W ..] and the halves' signs into neg[2i], neg[2i+1]; counts the insertions per bucket
 * into len[] (which the caller zeroed) and returns their total, or (size_t)-1 if a GLV half
 * exceeded FIXED_MAX_BITS. */
static size_t fixed_digits_(int16_t *digits, int *neg, size_t *len, const fixed_table *t,
                            size_t base, const sc *ks, size_t n) {
    const int c = t->c, W = t->windows;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int16_t *d = &digits[2 * i * (size_t)W];
        if (sc_is_zero(&ks[i]) || t->base[base + i].inf) {
            memset(d, 0, 2 * (size_t)W * sizeof *d);
            continue;
        }
        sc m1, m2;
        sc_split_lambda_var(&m1, &neg[2 * i], &m2, &neg[2 * i + 1], &ks[i]);
        if (limbs_bitlen_(m1.n, 4) > FIXED_MAX_BITS || limbs_bitlen_(m2.n, 4) > FIXED_MAX_BITS)
            return (size_t)-1;
        signed_digits_var(d, W, &m1, c);
        signed_digits_var(d + W, W, &m2, c);
        for (int j = 0; j < 2 * W; j++) {
            if (d[j]) {
                len[(size_t)(d[j] < 0 ? -d[j] : d[j]) - 1]++;
                total++;
            }
        }
    }
    return total;
}

/* The digits of one range of table points as bucket insertions (pip_scatter_fn). */
typedef struct {
    const fixed_table *t;
    size_t base, n;
    const int16_t *digits;
    const int *neg;
} fixed_scatter_ctx_;

/* Insert the shifted table points ±2^(c·w)·(λ)P of every digit into its bucket, for the buckets
 * [b0, b1) (bk->start relative to b0, bk->len zeroed). */
static void fixed_scatter_(void *ctx, pip_buckets *bk, size_t b0, size_t b1) {
    const fixed_scatter_ctx_ *f = ctx;
    const int W = f->t->windows;
    for (size_t i = 0; i < f->n; i++) {
        const int16_t *d = &f->digits[2 * i * (size_t)W];
        for (int h = 0; h < 2; h++) {
            for (int w = 0; w < W; w++) {
                int v = d[h * W + w];
                if (!v) continue;
                size_t b = (size_t)(v < 0 ? -v : v) - 1;
                if (b < b0 || b >= b1) continue;
                b -= b0;
                const ge *p = &f->t->q[((f->base + i) * (size_t)W + (size_t)w) * 2 + (size_t)h];
                ge_xy *e = &bk->entries[bk->start[b] + bk->len[b]++];
                e->x = p->x;
                if ((v < 0) ^ f->neg[2 * i + h]) fe_neg(&e->y, &p->y);
                else e->y = p->y;
            }
        }
    }
}

/* r = Σ_{base <= i < base + n} ks[i - base]·P_i through the shifted tables: every window in ONE
 * bucket set.  Returns 1 on success, 0 on allocation failure, 2 if a GLV half exceeded
 * FIXED_MAX_BITS (never seen; the caller then falls back to the generic MSM rather than trusting
 * the bound). */
static int fixed_msm_range_var(gej *r, const fixed_table *t, size_t base, const sc *ks,
                               size_t n) {
    gej_set_inf(r);
    const size_t nb = (size_t)1 << (t->c - 1), nd = 2 * n * (size_t)t->windows + 1;
    int owned;
    void *block = scratch_take(SCRATCH_FIXED, scratch_round(nd * sizeof(int16_t)) +
                                                  scratch_round((2 * n + 1) * sizeof(int)) +
                                                  scratch_round(nb * sizeof(size_t)) +
                                                  scratch_round(nb * sizeof(ge_xy)) +
                                                  scratch_round(nb), &owned);
    if (!block) return 0;
    size_t used = 0;
    int16_t *digits = scratch_carve(block, &used, nd * sizeof *digits);
    int *neg = scratch_carve(block, &used, (2 * n + 1) * sizeof *neg);
    size_t *count = scratch_carve(block, &used, nb * sizeof *count);
    ge_xy *bsum = scratch_carve(block, &used, nb * sizeof *bsum);
    unsigned char *present = scratch_carve(block, &used, nb);
    memset(count, 0, nb * sizeof *count);
    const size_t total = fixed_digits_(digits, neg, count, t, base, ks, n);
    fixed_scatter_ctx_ ctx = {t, base, n, digits, neg};
    int ok;
    if (total == (size_t)-1) ok = 2;
    else if (total == 0) ok = 1;
    else ok = pip_bucket_sums_(bsum, present, count, nb, fixed_scatter_, &ctx) &&
              pip_window_sums_(r, bsum, present, 1, nb);
    scratch_release(block, owned);
    return ok;
}

/* One call's table part split across threads: part p takes a range of the table points. */
typedef struct {
    const fixed_table *t;
    const sc *ks;
    size_t nk;
    gej part_sum[KERNEL_MAX_THREADS];
    int status[KERNEL_MAX_THREADS];
} fixed_job_;

static void fixed_part_(void *ctx, size_t part, size_t nparts) {
    fixed_job_ *job = ctx;
    size_t lo, hi;
    parallel_range(job->nk, part, nparts, &lo, &hi);
    job->status[part] = fixed_msm_range_var(&job->part_sum[part], job->t, lo, job->ks + lo, hi - lo);
}

/* Fewer table scalars than this per thread do not pay for starting one. */
#define FIXED_MIN_SCALARS_PER_THREAD 256

/* r = Σ_{i < nk} ks[i]·P_i on up to `threads` threads (ranges of points; the partial sums are
 * added in order).  Same returns as fixed_msm_range_var. */
static int fixed_msm_var(gej *r, const fixed_table *t, const sc *ks, size_t nk, int threads) {
    size_t parts = threads > 0 ? (size_t)threads : 1;
    if (parts > nk / FIXED_MIN_SCALARS_PER_THREAD) parts = nk / FIXED_MIN_SCALARS_PER_THREAD;
    if (parts <= 1) return fixed_msm_range_var(r, t, 0, ks, nk);
    fixed_job_ *job = malloc(sizeof *job);
    if (!job) return 0;
    job->t = t;
    job->ks = ks;
    job->nk = nk;
    parallel_run(fixed_part_, job, parts);
    int status = 1;
    gej_set_inf(r);
    for (size_t p = 0; p < parts; p++) {
        if (job->status[p] != 1) status = job->status[p] == 2 && status ? 2 : 0;
        else gej_add_var(r, r, &job->part_sum[p]);
    }
    free(job);
    return status;
}

/* --- few scalars: Straus with large precomputed windows ---------------------------------------
 *
 * With k = ±m1 ± m2·λ (GLV, m < 2^129) and m = lo + hi·2^64, a table point contributes four
 * terms lo1·P, hi1·(2^64 P), lo2·λP, hi2·(2^64 λP) of at most 65 bits each, whose width-w NAF
 * digits index precomputed affine odd multiples of P and 2^64·P (λ applied at lookup: x·β).
 * Alone, Σ k_i·P_i then needs 65 doublings and about 4·65/(w+1) mixed additions per scalar.
 * Extra points (w = 5 odd multiples, GLV halves of 129 bits) share the doubling chain; as they
 * make it 129 long anyway, the table halves are then not split (two NAFs of 129 bits have fewer
 * digits than four of 65).
 * This is the layout of libsecp256k1's ecmult (a big window for G, a small one for the variable
 * point), with GLV on the fixed points and a 2^64 split where it splits G at 2^128.
 */

#define FIXED_STRAUS_BUDGET ((size_t)1 << 20) /* bytes of odd multiples per table (1 MiB) */
#define FIXED_STRAUS_MAX_W 15
#define FIXED_STRAUS_MIN_W 4
#define FIXED_STRAUS_MAX_POINTS 1024 /* beyond: few-scalar calls use the generic MSM */
#define FIXED_SPLIT 64

/* Largest width whose tables (2^(w-1) entries of 64 bytes per point) fit the budget. */
static int fixed_straus_window_(size_t n) {
    int w = FIXED_STRAUS_MIN_W;
    while (w < FIXED_STRAUS_MAX_W &&
           n * ((size_t)1 << w) * sizeof(ge_xy) <= FIXED_STRAUS_BUDGET)
        w++;
    return w;
}

/* Build t->odd (idempotent).  Returns 0 on allocation failure (the table stays usable). */
static int fixed_straus_build(fixed_table *t) {
    if (t->odd || t->n == 0) return 1;
    const size_t n = t->n, nb = 2 * n;
    const int w = fixed_straus_window_(n);
    const size_t T = (size_t)1 << (w - 2);
    ge *bases = malloc(nb * sizeof *bases);
    ge *dbl = malloc(nb * sizeof *dbl);
    gej *tj = malloc(nb * T * sizeof *tj);
    ge *aff = malloc(nb * T * sizeof *aff);
    fe *scratch = malloc(2 * nb * T * sizeof *scratch);
    ge_xy *odd = malloc(nb * T * sizeof *odd);
    int ok = 0;
    if (!bases || !dbl || !tj || !aff || !scratch || !odd) goto done;
    /* bases: P_i and 2^64·P_i */
    for (size_t i = 0; i < n; i++) {
        gej_set_ge(&tj[2 * i], &t->base[i]);
        gej cur = tj[2 * i];
        for (int k = 0; k < FIXED_SPLIT; k++) gej_double_var(&cur, &cur);
        tj[2 * i + 1] = cur;
    }
    ge_set_all_gej_var(bases, tj, nb, scratch);
    for (size_t b = 0; b < nb; b++) {
        gej_set_ge(&tj[b], &bases[b]);
        gej_double_var(&tj[b], &tj[b]);
    }
    ge_set_all_gej_var(dbl, tj, nb, scratch);
    /* rows of odd multiples by mixed additions of the affine 2Q (rows overwrite the 2Q in tj) */
    for (size_t b = nb; b-- > 0;) {
        gej *row = &tj[b * T];
        if (bases[b].inf) {
            for (size_t j = 0; j < T; j++) gej_set_inf(&row[j]);
            continue;
        }
        gej_set_ge(&row[0], &bases[b]);
        for (size_t j = 1; j < T; j++) gej_add_ge_var(&row[j], &row[j - 1], &dbl[b]);
    }
    ge_set_all_gej_var(aff, tj, nb * T, scratch);
    for (size_t k = 0; k < nb * T; k++) {
        odd[k].x = aff[k].x;
        odd[k].y = aff[k].y;
    }
    t->sw = w;
    t->odd = odd;
    odd = NULL;
    ok = 1;
done:
    free(bases);
    free(dbl);
    free(tj);
    free(aff);
    free(scratch);
    free(odd);
    return ok;
}

/* One Straus term: wNAF digits of mag (width `width`) index tab (odd multiples (2j+1)·Q); the
 * point added for digit d is sign(d)·(-1)^neg·(2|d|/2+1)·Q, with x multiplied by β first when
 * lambda is set. */
typedef struct {
    const ge_xy *tab;
    int lambda, neg;
    int scaled; /* a true affine table added to an accumulator on the isomorphic curve */
    int width;
    sc mag;
} straus_src_;

/* The terms of one Straus run and the tables of its extra points. */
typedef struct {
    straus_src_ *src;
    size_t nt;
    int maxbits;
    int iso;   /* one extra point: the accumulator lives on the curve scaled by iso_s */
    fe iso_s;
    ge_xy *etab_xy;
} straus_run_;

/* Sources for the extra points: width-5 odd-multiple tables of their GLV terms.  One point gets
 * its table on the isomorphic curve where it is affine without an inversion (the accumulator
 * then lives there: table points are scaled on the fly, Z fixed at the end).  Scratch: etab,
 * tj, scratch as straus_odd_tables_ wants them for ne points.  eterms holds 2·ne terms. */
static void fixed_straus_extra_sources_(straus_run_ *run, msm_term *eterms, ge *etab, gej *tj,
                                        fe *scratch, const sc *eks, const ge *eps, size_t ne) {
    const size_t TE = STRAUS_TABLE;
    int eb = msm_expand_glv_(eterms, eps, eks, ne);
    if (eb > run->maxbits) run->maxbits = eb;
    if (eb == 0) return; /* all zero: no table needed */
    if (ne == 1) {
        run->iso = 1;
        straus_odd_table_iso_(run->etab_xy, &run->iso_s, &eps[0], TE);
    } else {
        straus_odd_tables_(etab, tj, scratch, eps, ne);
        for (size_t k = 0; k < 2 * ne * TE; k++) {
            run->etab_xy[k].x = etab[k].x;
            run->etab_xy[k].y = etab[k].y;
        }
    }
    for (size_t u = 0; u < 2 * ne; u++) {
        if (eterms[u].p.inf || sc_is_zero(&eterms[u].m)) continue;
        straus_src_ *s = &run->src[run->nt++];
        s->tab = &run->etab_xy[u * TE]; /* row u: point u/2, λ image when u is odd */
        s->lambda = 0;
        s->neg = eterms[u].neg;
        s->scaled = 0;
        s->width = STRAUS_W;
        s->mag = eterms[u].m;
    }
}

/* Sources for the table points: each GLV half m against P (or λP), split as lo = m mod 2^64
 * against P and hi = m >> 64 against 2^64·P -- unsplit when the extra points need the long
 * doubling chain anyway (one term has fewer additions than two of half the length: each NAF ends
 * with a part window).  Precondition: t->odd is built. */
static void fixed_straus_table_sources_(straus_run_ *run, const fixed_table *t, const sc *ks,
                                        size_t nk) {
    const size_t T = (size_t)1 << (t->sw - 2);
    const int split = run->maxbits <= FIXED_SPLIT + 1;
    for (size_t i = 0; i < nk; i++) {
        if (sc_is_zero(&ks[i]) || t->base[i].inf) continue;
        sc m[2];
        int neg[2];
        sc_split_lambda_var(&m[0], &neg[0], &m[1], &neg[1], &ks[i]);
        for (int h = 0; h < 2; h++) {
            sc lo = {{m[h].n[0], 0, 0, 0}}, hi = {{m[h].n[1], m[h].n[2], m[h].n[3], 0}};
            const sc *parts[2] = {&lo, &hi};
            if (!split) {
                parts[0] = &m[h];
                parts[1] = &SC_ZERO;
            }
            for (int p = 0; p < 2; p++) {
                if (sc_is_zero(parts[p])) continue;
                straus_src_ *s = &run->src[run->nt++];
                s->tab = &t->odd[(2 * i + (size_t)p) * T];
                s->lambda = h;
                s->neg = neg[h];
                s->scaled = run->iso;
                s->width = t->sw;
                s->mag = *parts[p];
                int bl = limbs_bitlen_(s->mag.n, 4);
                if (bl > run->maxbits) run->maxbits = bl;
            }
        }
    }
}

/* r = Σ over the run's sources: one doubling chain, one mixed addition per non-zero digit.
 * Returns 0 on allocation failure. */
static int straus_run_sources_var_(gej *r, const straus_run_ *run) {
    gej_set_inf(r);
    const size_t nt = run->nt;
    if (nt == 0) return 1;
    const int len = run->maxbits + 1;
    int wnaf[2 * FIXED_MAX_BITS + 8];
    int *digits = malloc(nt * (size_t)len * sizeof *digits); /* bit-major: digits[bit·nt + u] */
    if (!digits) return 0;
    for (size_t u = 0; u < nt; u++) {
        wnaf_var(wnaf, len, &run->src[u].mag, run->src[u].width);
        for (int bit = 0; bit < len; bit++) digits[(size_t)bit * nt + u] = wnaf[bit];
    }
    for (int bit = len - 1; bit >= 0; bit--) {
        gej_double_var(r, r);
        const int *row = &digits[(size_t)bit * nt];
        for (size_t u = 0; u < nt; u++) {
            int d = row[u];
            if (!d) continue;
            const straus_src_ *s = &run->src[u];
            const ge_xy *e = &s->tab[(d < 0 ? -d : d) >> 1];
            ge q;
            q.inf = 0;
            if (s->lambda) fe_mul(&q.x, &e->x, &FE_BETA);
            else q.x = e->x;
            if ((d < 0) ^ s->neg) fe_neg(&q.y, &e->y);
            else q.y = e->y;
            gej_add_ge_iso_var(r, r, &q, s->scaled ? &run->iso_s : NULL, NULL);
        }
    }
    if (run->iso && !r->inf) fe_mul(&r->z, &r->z, &run->iso_s);
    free(digits);
    return 1;
}

/* r = Σ_{i<nk} ks[i]·P_i (table points) + Σ_{j<ne} eks[j]·eps[j].
 * Precondition: t->odd is built (unless nk = 0).  Returns 1, or 0 on allocation failure. */
static int fixed_straus_var(gej *r, const fixed_table *t, const sc *ks, size_t nk, const sc *eks,
                            const ge *eps, size_t ne) {
    gej_set_inf(r);
    const size_t TE = STRAUS_TABLE;
    straus_run_ run = {0};
    run.src = malloc((4 * nk + 2 * ne + 1) * sizeof *run.src);
    run.etab_xy = malloc((2 * ne * TE + 1) * sizeof *run.etab_xy);
    msm_term *eterms = malloc((2 * ne + 1) * sizeof *eterms);
    gej *tj = malloc((ne * TE + 1) * sizeof *tj);
    ge *etab = malloc((2 * ne * TE + 1) * sizeof *etab);
    fe *scratch = malloc((2 * ne * TE + 1) * sizeof *scratch);
    int ok = 0;
    if (run.src && run.etab_xy && eterms && tj && etab && scratch) {
        if (ne) fixed_straus_extra_sources_(&run, eterms, etab, tj, scratch, eks, eps, ne);
        if (nk) fixed_straus_table_sources_(&run, t, ks, nk);
        ok = straus_run_sources_var_(r, &run);
    }
    free(run.src);
    free(run.etab_xy);
    free(eterms);
    free(tj);
    free(etab);
    free(scratch);
    return ok;
}

#endif

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
#include "pippenger_ifma.h"
#include "scratch.h"
#include "threads.h"

/* Window width by number of input points, measured on this machine kind with the IFMA bucket
 * rounds (thread CPU time, median of 5, sizes 64 .. 32768): the optimum moves from 5 bits at 64
 * points to 12 at 32768. */
static int pippenger_best_window(size_t npoints) {
    static const struct {
        size_t below;
        int c;
    } steps[] = {{96, 5}, {300, 6}, {450, 7}, {1800, 8}, {3000, 9}, {6000, 10}, {12000, 11},
                 {48000, 12}, {100000, 13}};
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
    void *lanes; /* NULL, or pip_lanes_bytes(total entries) bytes for the IFMA rounds */
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

/* --- IFMA rounds (pippenger_ifma.h) ---------------------------------------------------------- */

/* Below this many pairs a round stays scalar (the lanes' setup would not pay). */
#define PIP_IFMA_MIN_PAIRS 32

/* Scratch of the IFMA rounds for up to `entries` entries: per block of 8 pairs two fe8 and 16
 * indices. */
static size_t pip_lanes_bytes(size_t entries) {
#ifdef FE_HAVE_IFMA_CODE
    const size_t blocks = entries / 16 + 1;
    return blocks * (2 * sizeof(fe8) + 16 * sizeof(int64_t)) + 64;
#else
    (void)entries;
    return 0;
#endif
}

static int pip_ifma_selftest_(void);

/* -1 unresolved, 0 off, 1 on: the CPU has IFMA and the lanes agree with the scalar round on a
 * self-test (resolved once, atomically; pip_set_ifma switches it for tests). */
static int pip_ifma_state_ = -1;

static int pip_ifma_enabled(void) {
    int s = __atomic_load_n(&pip_ifma_state_, __ATOMIC_ACQUIRE);
    if (s < 0) {
#ifdef FE_HAVE_IFMA_CODE
        s = fe_cpu_has_ifma_() && pip_ifma_selftest_();
#else
        s = 0;
#endif
        __atomic_store_n(&pip_ifma_state_, s, __ATOMIC_RELEASE);
    }
    return s;
}

/* Select the rounds by name (tests run both): "scalar" or "ifma".  0 on success, -1 for an
 * unknown name, -2 when the IFMA rounds are unavailable here. */
static int pip_set_backend(const char *name) {
    if (!strcmp(name, "scalar")) {
        __atomic_store_n(&pip_ifma_state_, 0, __ATOMIC_RELEASE);
        return 0;
    }
    if (!strcmp(name, "ifma")) {
#ifdef FE_HAVE_IFMA_CODE
        if (!fe_cpu_has_ifma_() || !pip_ifma_selftest_()) return -2;
        __atomic_store_n(&pip_ifma_state_, 1, __ATOMIC_RELEASE);
        return 0;
#else
        return -2;
#endif
    }
    return -1;
}

static const char *pip_backend_name(void) { return pip_ifma_enabled() ? "ifma" : "scalar"; }

/* One round in IFMA lanes: 1 done (len[] updated, *again set), 0 not done (too few pairs, or a
 * pair with equal x: the scalar round takes it; nothing was written). */
static int pip_round_ifma_(const pip_buckets *bk, int *again) {
#ifdef FE_HAVE_IFMA_CODE
    size_t npairs = 0;
    for (size_t b = 0; b < bk->nbuckets; b++) npairs += bk->len[b] / 2;
    if (npairs < PIP_IFMA_MIN_PAIRS) return 0;
    const size_t blocks = (npairs + 7) / 8;
    unsigned char *base = (unsigned char *)(((uintptr_t)bk->lanes + 63) & ~(uintptr_t)63);
    pip_ifma_pairs_ r = {bk->entries, NULL, NULL, npairs, blocks, (fe8 *)base, (fe8 *)base + blocks};
    int64_t *first = (int64_t *)((fe8 *)base + 2 * blocks), *out = first + 8 * blocks;
    size_t i = 0;
    for (size_t b = 0; b < bk->nbuckets; b++) {
        const size_t L = bk->len[b], s0 = bk->start[b];
        for (size_t k = 0; k + 1 < L; k += 2, i++) {
            first[i] = (int64_t)(s0 + k);
            out[i] = (int64_t)(s0 + k / 2);
        }
    }
    for (; i < 8 * blocks; i++) first[i] = first[0], out[i] = out[0];
    r.first = first;
    r.out = out;
    if (!pip_ifma_round_(&r)) return 0;
    *again = 0;
    for (size_t b = 0; b < bk->nbuckets; b++) {
        const size_t L = bk->len[b];
        if (L < 2) continue;
        ge_xy *seg = bk->entries + bk->start[b];
        if (L & 1) seg[L / 2] = seg[L - 1];
        bk->len[b] = (L + 1) / 2;
        if (bk->len[b] >= 2) *again = 1;
    }
    return 1;
#else
    (void)bk;
    (void)again;
    return 0;
#endif
}

/* Reduce every bucket to at most one point: rounds of pairwise affine additions, all the
 * additions of a round sharing one field inversion; in IFMA lanes when bk->lanes is given and
 * the CPU has them, else (and for rounds with a doubling or cancellation) in scalar code. */
static void pip_reduce_buckets_with_(const pip_buckets *bk, int lanes) {
    for (;;) {
        int again;
        if (lanes && pip_round_ifma_(bk, &again)) {
            if (!again) return;
            continue;
        }
        size_t npairs = pip_pair_denominators_(bk);
        if (npairs == 0) return;
        fe_inv_all_var(bk->inv, bk->den, npairs, bk->inv);
        if (!pip_pair_sums_(bk)) return;
    }
}

static void pip_reduce_buckets_var(const pip_buckets *bk) {
    pip_reduce_buckets_with_(bk, bk->lanes != NULL && pip_ifma_enabled());
}

/* The IFMA rounds against the scalar ones on a pseudo-random bucket set (multiples of a point
 * built by the group law): 1 iff every resulting bucket agrees. */
static int pip_ifma_selftest_(void) {
#ifdef FE_HAVE_IFMA_CODE
    enum { NB = 7, NE = 150 };
    ge_xy e1[NE], e2[NE];
    size_t start[NB], len1[NB], len2[NB];
    unsigned char lanes_mem[16384];
    fe inv[NE], den[NE];
    unsigned char kind[NE];
    /* entries: x, y of k·P for P = (x, y) with x = 7, a point exists for some small x */
    ge p;
    p.inf = 0;
    fe seven = {{7, 0, 0, 0}}, x = {{1, 0, 0, 0}}, rhs;
    for (;;) {
        fe_sqr(&rhs, &x);
        fe_mul(&rhs, &rhs, &x);
        fe_add(&rhs, &rhs, &seven);
        if (fe_sqrt_var(&p.y, &rhs)) break;
        x.n[0]++;
    }
    p.x = x;
    gej acc;
    gej_set_ge(&acc, &p);
    gej pts[NE];
    for (int i = 0; i < NE; i++) {
        pts[i] = acc;
        gej_double_var(&acc, &acc);
        gej_add_ge_var(&acc, &acc, &p);
    }
    ge aff[NE];
    fe scratch[2 * NE];
    ge_set_all_gej_var(aff, pts, NE, scratch);
    size_t pos = 0;
    for (int b = 0; b < NB; b++) {
        start[b] = pos;
        len1[b] = len2[b] = (size_t)(b * 7 + 3) % 41;
        pos += len1[b];
    }
    for (size_t i = 0; i < pos && i < NE; i++) {
        e1[i].x = e2[i].x = aff[i].x;
        e1[i].y = e2[i].y = aff[i].y;
    }
    pip_buckets scalar = {e1, start, len1, NB, inv, den, kind, NULL};
    pip_buckets lanes = {e2, start, len2, NB, inv, den, kind, lanes_mem};
    if (pip_lanes_bytes(pos) > sizeof lanes_mem) return 0;
    pip_reduce_buckets_with_(&scalar, 0);
    pip_reduce_buckets_with_(&lanes, 1);
    for (int b = 0; b < NB; b++) {
        if (len1[b] != len2[b]) return 0;
        if (len1[b] && (!fe_equal(&e1[start[b]].x, &e2[start[b]].x) ||
                        !fe_equal(&e1[start[b]].y, &e2[start[b]].y)))
            return 0;
    }
    return 1;
#else
    return 0;
#endif
}

/* --- window sums Σ_j j·B_j, affine ------------------------------------------------------------
 *
 * The running-sum form R_j = B_top + ... + B_j, S = Σ_j R_j is a chain of 2·nb additions per
 * window.  Done in affine coordinates with the additions of many independent chains sharing one
 * inversion per step, each costs ~6 multiplications instead of 11 (mixed) and 16 (Jacobian).
 * To have enough chains per inversion, each window's buckets are cut into K segments of L
 * buckets (chains); segment k gives R_k = Σ_{seg} B and S_k = Σ_{seg} (j - kL + 1)·B_j, and
 * the window sum is Σ_k S_k + L·Σ_k k·R_k (a short Jacobian running sum over the K segments, and
 * log2 L doublings). */

/* Chains wanted per inversion (an inversion costs about 90 multiplications). */
#define PIP_SUM_CHAINS 64

/* acc_i += *add_i for every chain i with add_i non-NULL (flagged infinities handled), all the
 * divisions sharing one inversion.  den, inv, kind, list: scratch of m elements. */
static void pip_chains_add_(ge_xy *acc, unsigned char *acc_inf, const ge_xy *const *add, size_t m,
                            fe *den, fe *inv, unsigned char *kind, size_t *list) {
    size_t q = 0;
    for (size_t i = 0; i < m; i++) {
        if (!add[i]) continue;
        if (acc_inf[i]) {
            acc[i] = *add[i];
            acc_inf[i] = 0;
            continue;
        }
        kind[q] = (unsigned char)ge_xy_pair_denominator(&den[q], &acc[i], add[i]);
        list[q++] = i;
    }
    if (q == 0) return;
    fe_inv_all_var(inv, den, q, inv);
    for (size_t t = 0; t < q; t++) {
        const size_t i = list[t];
        if (kind[t] == PAIR_CANCEL) acc_inf[i] = 1;
        else ge_xy_pair_sum(&acc[i], &acc[i], add[i], &inv[t], kind[t]);
    }
}

static inline void gej_set_xy_(gej *r, const ge_xy *a, int inf) {
    if (inf) {
        gej_set_inf(r);
        return;
    }
    r->x = a->x;
    r->y = a->y;
    r->z = FE_ONE;
    r->inf = 0;
}

/* wsum[g] = Σ_j (j+1)·B_{g,j} for the G windows of a group (bucket j of window g is
 * bsum[g·nb + j], present[g·nb + j] = 0 for an empty one).  Returns 0 on allocation failure. */
static int pip_window_sums_(gej *wsum, const ge_xy *bsum, const unsigned char *present, size_t G,
                            size_t nb) {
    size_t K = 1; /* segments per window: a power of two, L = nb / K >= 1 */
    while (K < nb && G * K < PIP_SUM_CHAINS) K *= 2;
    const size_t L = nb / K, m = G * K;
    ge_xy *R = malloc(2 * m * sizeof *R), *S = R ? R + m : NULL;
    unsigned char *flags = malloc(3 * m), *r_inf = flags, *s_inf = flags ? flags + m : NULL;
    unsigned char *kind = flags ? flags + 2 * m : NULL;
    const ge_xy **add = malloc(m * sizeof *add);
    fe *den = malloc(2 * m * sizeof *den), *inv = den ? den + m : NULL;
    size_t *list = malloc(m * sizeof *list);
    int ok = R && flags && add && den && list;
    if (ok) {
        memset(flags, 1, 2 * m); /* R, S = infinity */
        for (size_t step = L; step-- > 0;) {
            for (size_t i = 0; i < m; i++) { /* chain i: window i / K, segment i % K */
                const size_t b = (i / K) * nb + (i % K) * L + step;
                add[i] = present[b] ? &bsum[b] : NULL;
            }
            pip_chains_add_(R, r_inf, add, m, den, inv, kind, list);
            for (size_t i = 0; i < m; i++) add[i] = r_inf[i] ? NULL : &R[i];
            pip_chains_add_(S, s_inf, add, m, den, inv, kind, list);
        }
        for (size_t g = 0; g < G; g++) { /* Σ_k S_k + L·Σ_k k·R_k */
            gej t, u, sum, x;
            gej_set_inf(&t);
            gej_set_inf(&u);
            gej_set_inf(&sum);
            for (size_t k = K; k-- > 0;) {
                const size_t i = g * K + k;
                gej_set_xy_(&x, &S[i], s_inf[i]);
                gej_add_var(&sum, &sum, &x);
                if (k == 0) break;
                gej_set_xy_(&x, &R[i], r_inf[i]);
                gej_add_var(&t, &t, &x);
                gej_add_var(&u, &u, &t);
            }
            for (size_t l = L; l > 1 && !u.inf; l >>= 1) gej_double_var(&u, &u);
            gej_add_var(&wsum[g], &sum, &u);
        }
    }
    free(R);
    free(flags);
    free(add);
    free(den);
    free(list);
    return ok;
}

/* --- bucket sums in cache-sized chunks -------------------------------------------------------
 *
 * The entries of a large MSM's buckets do not fit the caches (32768 points: 4 MB per window):
 * the buckets are processed in consecutive ranges holding about PIP_CHUNK_ENTRIES entries each
 * (a range takes whole buckets), every range filled by a pass over the digits, reduced, and its
 * bucket sums collected. */

#define PIP_CHUNK_ENTRIES ((size_t)1 << 16)

/* Fill the entries of buckets [b0, b1) (bk->start set relative to the range, bk->len zeroed). */
typedef void (*pip_scatter_fn)(void *ctx, pip_buckets *bk, size_t b0, size_t b1);

/* bsum[b], present[b] for b < nbk, given count[b] entries per bucket.  Returns 0 on allocation
 * failure. */
static int pip_bucket_sums_(ge_xy *bsum, unsigned char *present, const size_t *count, size_t nbk,
                            pip_scatter_fn scatter, void *ctx) {
    size_t total = 0, big = 0;
    for (size_t b = 0; b < nbk; b++) {
        total += count[b];
        big = count[b] > big ? count[b] : big;
    }
    /* entries of one chunk: whole buckets up to PIP_CHUNK_ENTRIES (one larger bucket alone) */
    size_t cap = total < PIP_CHUNK_ENTRIES ? total : PIP_CHUNK_ENTRIES;
    if (big > cap) cap = big;
    const size_t lanes = pip_lanes_bytes(cap) && pip_ifma_enabled() ? pip_lanes_bytes(cap) : 0;
    const size_t bytes = 2 * scratch_round((nbk + 1) * sizeof(size_t)) +
                         scratch_round(cap * sizeof(ge_xy)) +
                         2 * scratch_round((cap / 2 + 1) * sizeof(fe)) +
                         scratch_round(cap / 2 + 1) + scratch_round(lanes);
    int owned;
    void *block = scratch_take(SCRATCH_BUCKETS, bytes, &owned);
    if (!block) return 0;
    size_t used = 0;
    size_t *start = scratch_carve(block, &used, (nbk + 1) * sizeof *start);
    size_t *len = scratch_carve(block, &used, (nbk + 1) * sizeof *len);
    pip_buckets bk;
    bk.entries = scratch_carve(block, &used, cap * sizeof(ge_xy));
    bk.inv = scratch_carve(block, &used, (cap / 2 + 1) * sizeof(fe));
    bk.den = scratch_carve(block, &used, (cap / 2 + 1) * sizeof(fe));
    bk.kind = scratch_carve(block, &used, cap / 2 + 1);
    bk.lanes = lanes ? scratch_carve(block, &used, lanes) : NULL;
    for (size_t b0 = 0, b1; b0 < nbk; b0 = b1) {
        size_t fill = 0;
        for (b1 = b0; b1 < nbk && (b1 == b0 || fill + count[b1] <= cap); b1++) {
            start[b1] = fill;
            len[b1] = 0;
            fill += count[b1];
        }
        bk.start = start + b0;
        bk.len = len + b0;
        bk.nbuckets = b1 - b0;
        scatter(ctx, &bk, b0, b1);
        pip_reduce_buckets_var(&bk);
        for (size_t b = b0; b < b1; b++) {
            present[b] = len[b] != 0;
            if (present[b]) bsum[b] = bk.entries[start[b]];
        }
    }
    scratch_release(block, owned);
    return 1;
}

/* --- Pippenger over GLV terms -------------------------------------------------------------- */

/* Windows per group: their bucket sums share the inversions of the window-sum chains. */
#define PIP_MAX_GROUP_ENTRIES ((size_t)1 << 16)

/* The digits of windows [w0, w1) of the terms, as bucket insertions: bucket (w - w0)·nb + |d| - 1
 * gets sign(d)·P_t. */
typedef struct {
    const msm_term *terms;
    size_t nt;
    const int16_t *digits; /* digits[t·windows + w] */
    int windows, w0, w1;
    size_t nb;
} pip_group_;

static void pip_count_group_(size_t *count, const pip_group_ *g) {
    memset(count, 0, (size_t)(g->w1 - g->w0) * g->nb * sizeof *count);
    for (size_t t = 0; t < g->nt; t++) {
        const int16_t *d = &g->digits[t * (size_t)g->windows];
        for (int w = g->w0; w < g->w1; w++) {
            int v = d[w];
            if (v) count[(size_t)(w - g->w0) * g->nb + (size_t)(v < 0 ? -v : v) - 1]++;
        }
    }
}

/* pip_scatter_fn: the insertions of the group into buckets [b0, b1). */
static void pip_scatter_group_(void *ctx, pip_buckets *bk, size_t b0, size_t b1) {
    const pip_group_ *g = ctx;
    for (size_t t = 0; t < g->nt; t++) {
        const int16_t *d = &g->digits[t * (size_t)g->windows];
        for (int w = g->w0; w < g->w1; w++) {
            int v = d[w];
            if (!v) continue;
            size_t b = (size_t)(w - g->w0) * g->nb + (size_t)(v < 0 ? -v : v) - 1;
            if (b < b0 || b >= b1) continue;
            b -= b0;
            ge_xy *e = &bk->entries[bk->start[b] + bk->len[b]++];
            e->x = g->terms[t].p.x;
            if (v < 0) fe_neg(&e->y, &g->terms[t].p.y);
            else e->y = g->terms[t].p.y;
        }
    }
}

/* The work of one Pippenger call, shared by its threads (each takes runs of `unit` windows from
 * `next` until none is left). */
typedef struct {
    const msm_term *terms;
    size_t nt;
    int c, windows;
    const int16_t *digits; /* digits[t·windows + w] */
    gej *wsum;             /* wsum[w] = Σ_j j·B_{w,j}, written by the thread that took window w */
    int unit;              /* windows a thread takes at a time */
    int next;              /* the first window nobody has taken (atomic) */
    int failed;            /* some thread could not allocate its scratch */
} pip_job_;

/* Windows [w_lo, w_hi) of the job, in groups whose entries (<= nt per window) stay under
 * PIP_MAX_GROUP_ENTRIES.  Returns 0 on allocation failure. */
static int pip_windows_(pip_job_ *job, int w_lo, int w_hi) {
    const size_t nt = job->nt, nb = (size_t)1 << (job->c - 1);
    size_t group = PIP_MAX_GROUP_ENTRIES / nt;
    if (group < 1) group = 1;
    if (group > (size_t)(w_hi - w_lo)) group = (size_t)(w_hi - w_lo);
    const size_t gbmax = group * nb;
    int owned;
    void *block = scratch_take(SCRATCH_GROUP, scratch_round(gbmax * sizeof(size_t)) +
                                                  scratch_round(gbmax * sizeof(ge_xy)) +
                                                  scratch_round(gbmax), &owned);
    if (!block) return 0;
    size_t used = 0;
    size_t *count = scratch_carve(block, &used, gbmax * sizeof *count);
    ge_xy *bsum = scratch_carve(block, &used, gbmax * sizeof *bsum);
    unsigned char *present = scratch_carve(block, &used, gbmax);
    int ok = 1;
    for (int w0 = w_lo; ok && w0 < w_hi; w0 += (int)group) {
        int w1 = w0 + (int)group < w_hi ? w0 + (int)group : w_hi;
        pip_group_ g = {job->terms, nt, job->digits, job->windows, w0, w1, nb};
        const size_t gb = (size_t)(w1 - w0) * nb;
        pip_count_group_(count, &g);
        ok = pip_bucket_sums_(bsum, present, count, gb, pip_scatter_group_, &g) &&
             pip_window_sums_(&job->wsum[w0], bsum, present, (size_t)(w1 - w0), nb);
    }
    scratch_release(block, owned);
    return ok;
}

/* One thread's share: runs of windows taken as it becomes free, so a thread whose core is also
 * running something else (the interpreter, a helper's ring kernel) takes fewer of them instead
 * of finishing last. */
static void pip_windows_part_(void *ctx, size_t part, size_t nparts) {
    (void)part;
    (void)nparts;
    pip_job_ *job = ctx;
    for (;;) {
        const int w0 = __atomic_fetch_add(&job->next, job->unit, __ATOMIC_RELAXED);
        if (w0 >= job->windows) return;
        const int w1 = w0 + job->unit < job->windows ? w0 + job->unit : job->windows;
        if (!pip_windows_(job, w0, w1)) {
            __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
            return;
        }
    }
}

/* Fewer points than this per thread do not pay for starting one. */
#define PIP_MIN_POINTS_PER_THREAD 128

/* r = Σ m_t·P_t over prepared terms with window width c (2 <= c <= DIGITS_MAX_WINDOW), on up to
 * `threads` threads (each takes windows as it becomes free; the window sums are combined in
 * order, so the result does not depend on the thread count). */
static int msm_pippenger_terms_var(gej *r, const msm_term *terms, size_t nt, int maxbits, int c,
                                   int threads) {
    gej_set_inf(r);
    if (nt == 0 || maxbits == 0) return 1;
    const int windows = (maxbits + 1 + c - 1) / c;
    int owned;
    int16_t *digits = scratch_take(SCRATCH_DIGITS, nt * (size_t)windows * sizeof *digits, &owned);
    gej *wsum = malloc((size_t)windows * sizeof *wsum);
    int ok = 0;
    if (!digits || !wsum) goto done;
    for (size_t t = 0; t < nt; t++) {
        int16_t *d = &digits[t * (size_t)windows];
        if (terms[t].p.inf) memset(d, 0, (size_t)windows * sizeof *d);
        else signed_digits_var(d, windows, &terms[t].m, c);
    }
    size_t parts = threads > 0 ? (size_t)threads : 1;
    if (parts > (size_t)windows) parts = (size_t)windows;
    if (parts > nt / 2 / PIP_MIN_POINTS_PER_THREAD) parts = nt / 2 / PIP_MIN_POINTS_PER_THREAD;
    /* one thread takes every window at once (pip_windows_ groups them); with more, a run is at
     * most one such group, and short enough that each thread can take at least two */
    size_t unit = (size_t)windows;
    if (parts > 1) {
        unit = PIP_MAX_GROUP_ENTRIES / nt;
        if (unit > (size_t)windows / (2 * parts)) unit = (size_t)windows / (2 * parts);
        if (unit < 1) unit = 1;
    }
    pip_job_ job = {terms, nt, c, windows, digits, wsum, (int)unit, 0, 0};
    parallel_run(pip_windows_part_, &job, parts ? parts : 1);
    if (job.failed) goto done;
    *r = wsum[windows - 1];
    for (int w = windows - 2; w >= 0; w--) {
        for (int k = 0; k < c && !r->inf; k++) gej_double_var(r, r);
        gej_add_var(r, r, &wsum[w]);
    }
    ok = 1;
done:
    if (digits) scratch_release(digits, owned);
    free(wsum);
    return ok;
}

/* r = Σ k_i·P_i by Pippenger with window c (0 = pippenger_best_window), on up to `threads`
 * threads. */
static int msm_pippenger_var(gej *r, const ge *pts, const sc *ks, size_t n, int c, int threads) {
    int owned;
    msm_term *terms = scratch_take(SCRATCH_TERMS, (2 * n + 1) * sizeof *terms, &owned);
    if (!terms) return 0;
    int maxbits = msm_expand_glv_(terms, pts, ks, n);
    if (c == 0) c = pippenger_best_window(n);
    int ok = msm_pippenger_terms_var(r, terms, 2 * n, maxbits, c, threads);
    scratch_release(terms, owned);
    return ok;
}

#endif

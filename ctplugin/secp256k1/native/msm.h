/* Multi-scalar multiplication Σ k_i·P_i over PUBLIC data (variable time): the algorithm choice.
 *
 * Algorithms: straus.h (few points), pippenger.h (many), fixed.h (precomputed tables for points
 * reused across calls), all over GLV terms (glv.h).  This header picks among them by size; the
 * choice is parameterised by an msm_config the caller captured once (the Python glue snapshots
 * the tuning settings while holding the GIL), so a computation never reads mutable globals.
 *
 * Preconditions: points on the curve (or flagged infinity); scalars canonical (< N).
 * Memory: O(n) scratch from malloc (callable without the GIL); functions return 0 on allocation
 * failure.
 */
#ifndef CTPLUGIN_MSM_H
#define CTPLUGIN_MSM_H

#include "fixed.h"
#include "pippenger.h"
#include "straus.h"

/* Largest n handled by Straus: the measured crossover with Pippenger, whose bucket rounds are
 * faster in IFMA lanes (msm_config.straus_max = MSM_STRAUS_MAX_AUTO picks by the CPU). */
#define MSM_STRAUS_MAX_SCALAR 28
#define MSM_STRAUS_MAX_IFMA 22
#define MSM_STRAUS_MAX_AUTO ((size_t)-1)
#define MSM_STRAUS_MAX_DEFAULT MSM_STRAUS_MAX_AUTO

typedef struct {
    int window;        /* Pippenger window: 0 = by size (pippenger_best_window), else 2..15 */
    size_t straus_max; /* largest n handled by Straus (MSM_STRAUS_MAX_AUTO: by the CPU) */
    int threads;       /* threads a call may use (>= 1) */
} msm_config;

static const msm_config MSM_CONFIG_DEFAULT = {0, MSM_STRAUS_MAX_DEFAULT, 1};

/* Σ k_i·P_i, Straus or Pippenger by size. */
/* The largest n a call hands to Straus. */
static inline size_t msm_straus_max(const msm_config *cfg) {
    if (cfg->straus_max != MSM_STRAUS_MAX_AUTO) return cfg->straus_max;
    return pip_ifma_enabled() ? MSM_STRAUS_MAX_IFMA : MSM_STRAUS_MAX_SCALAR;
}

/* Above this many points a single Pippenger run costs MORE per point (its GLV terms, digits and
 * bucket entries outgrow the caches; one thread, CPU time per point, whatever the window:
 * 1.63 µs at 32768 points, 2.2 at 65536, 3.2 at 131072, 2.5 at best with a forced window), so
 * larger MSMs are the sum of equal chunks of at most this size (Σ is linear: the same point). */
#define MSM_CHUNK_POINTS ((size_t)1 << 15)

static int msm_var(gej *r, const ge *pts, const sc *ks, size_t n, const msm_config *cfg) {
    if (n <= msm_straus_max(cfg)) return msm_straus_var(r, pts, ks, n);
    if (n <= MSM_CHUNK_POINTS) return msm_pippenger_var(r, pts, ks, n, cfg->window, cfg->threads);
    size_t chunks = (n + MSM_CHUNK_POINTS - 1) / MSM_CHUNK_POINTS;
    size_t size = (n + chunks - 1) / chunks;
    gej_set_inf(r);
    for (size_t off = 0; off < n; off += size) {
        gej part;
        size_t m = n - off < size ? n - off : size;
        if (!msm_pippenger_var(&part, pts + off, ks + off, m, cfg->window, cfg->threads)) return 0;
        gej_add_var(r, r, &part);
    }
    return 1;
}

/* msm_var, except one point: the inversion-free single-point Straus of fixed_straus_var. */
static int msm_auto_var(gej *r, const ge *pts, const sc *ks, size_t n, const msm_config *cfg) {
    if (n == 1) {
        fixed_table none;
        memset(&none, 0, sizeof none);
        return fixed_straus_var(r, &none, NULL, 0, ks, pts, 1);
    }
    return msm_var(r, pts, ks, n, cfg);
}

/* Below this many table scalars the shared bucket set costs more than it saves: the table points
 * then go through Straus with their precomputed odd multiples (fixed.h, built on first use), or
 * join the generic MSM when the table is too large to keep those.  Measured (thread CPU time,
 * tables of 8, 32 and 257 points, 0, 1 or 17 extra points): the two paths cross between 8 and 12
 * table scalars. */
#define FIXED_MIN_SCALARS 8

/* How a FixedBaseTable call is computed (chosen by the glue, which owns the lazy tables). */
typedef enum { FIXED_PATH_BUCKETS, FIXED_PATH_STRAUS } fixed_path;

/* Σ ks[i]·table[i] + Σ eks[j]·eps[j].  FIXED_PATH_STRAUS: one Straus run over the table's odd
 * multiples (precondition: built) and the extra points.  FIXED_PATH_BUCKETS: the shifted tables
 * for the table part (from FIXED_MIN_SCALARS scalars on; below, or if a GLV half exceeded the
 * bound, the table points join the extra terms in one generic MSM), the generic MSM for the
 * extra part. */
static int fixed_msm_with_extra_var(gej *r, const fixed_table *tab, fixed_path path, const sc *ks,
                                    size_t nk, const sc *eks, const ge *eps, size_t ne,
                                    const msm_config *cfg) {
    if (path == FIXED_PATH_STRAUS) return fixed_straus_var(r, tab, ks, nk, eks, eps, ne);
    gej fixed, extra;
    int st = nk >= FIXED_MIN_SCALARS ? fixed_msm_var(&fixed, tab, ks, nk, cfg->threads) : 2;
    if (st == 0) return 0;
    if (st == 1) {
        if (!msm_var(&extra, eps, eks, ne, cfg)) return 0;
        gej_add_var(r, &fixed, &extra);
        return 1;
    }
    /* generic: the table's points join the extra terms */
    size_t total = nk + ne;
    sc *allk = malloc((total + 1) * sizeof *allk);
    ge *allp = malloc((total + 1) * sizeof *allp);
    int ok = allk && allp;
    if (ok) {
        if (nk) memcpy(allk, ks, nk * sizeof *allk);
        if (nk) memcpy(allp, tab->base, nk * sizeof *allp);
        if (ne) memcpy(allk + nk, eks, ne * sizeof *allk);
        if (ne) memcpy(allp + nk, eps, ne * sizeof *allp);
        ok = msm_var(r, allp, allk, total, cfg);
    }
    free(allk);
    free(allp);
    return ok;
}

#endif

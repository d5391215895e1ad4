/* Multi-scalar multiplication Σ k_i·P_i over PUBLIC data (variable time).
 *
 * Pipeline:
 *  1. GLV split (endomorphism): k = k1 + k2·λ (mod N) with |k1|, |k2| ≈ 2^128; the term k·P
 *     becomes k1·P + k2·λP where λP = (β·x, y).  Signs are folded into the points (−P = (x, −y)),
 *     so every term is (affine point, non-negative magnitude of about 128 bits).
 *  2. Small inputs: Straus (interleaved wNAF, shared doublings, per-point odd-multiple tables
 *     normalised to affine with one inversion, or for one point with none: straus_odd_table_iso_).  Large inputs: Pippenger with signed c-bit digits
 *     and 2^(c-1) buckets per window, bucket sums accumulated in affine coordinates by batched
 *     pairwise addition (one field inversion per round, Montgomery's trick).
 *
 * Preconditions: points are on the curve (or flagged infinity); scalars are canonical (< N).
 * Memory: O(n) scratch, allocated with malloc (callable without the GIL); functions return 0 on
 * allocation failure.
 */
#ifndef CTPLUGIN_MSM_H
#define CTPLUGIN_MSM_H

#include <stdlib.h>

#include "group.h"
#include "scalar.h"

/* --- GLV decomposition --------------------------------------------------------------------- */

static const sc SC_LAMBDA = {{0xdf02967c1b23bd72ULL, 0x122e22ea20816678ULL, 0xa5261c028812645aULL,
                              0x5363ad4cc05c30e0ULL}};
/* Lattice basis (a1, b1), (a2, b2) of {(x, y): x + y·λ ≡ 0}: −b1 and −b2 mod N, and
 * g1 = round(2^384·b2/N), g2 = round(2^384·(−b1)/N) (Guide to ECC, §3.5; values checked against
 * params.py in the tests via the decomposition identity). */
static const sc SC_MINUS_B1 = {{0x6f547fa90abfe4c3ULL, 0xe4437ed6010e8828ULL, 0, 0}};
static const sc SC_MINUS_B2 = {{0xd765cda83db1562cULL, 0x8a280ac50774346dULL, 0xfffffffffffffffeULL,
                                0xffffffffffffffffULL}};
static const u64 GLV_G1[4] = {0xe893209a45dbb031ULL, 0x3daa8a1471e8ca7fULL, 0xe86c90e49284eb15ULL,
                              0x3086d221a7d46bcdULL};
static const u64 GLV_G2[4] = {0x1571b4ae8ac47f71ULL, 0x221208ac9df506c6ULL, 0x6f547fa90abfe4c4ULL,
                              0xe4437ed6010e8828ULL};
/* (N - 1) / 2 */
static const u64 SC_HALF_N[4] = {0xdfe92f46681b20a0ULL, 0x5d576e7357a4501dULL, 0xffffffffffffffffULL,
                                 0x7fffffffffffffffULL};

/* round(k·g / 2^384) */
static inline void glv_mul_shift_(sc *r, const sc *k, const u64 g[4]) {
    u64 l[8];
    sc gg = {{g[0], g[1], g[2], g[3]}};
    sc_mul512_(l, k, &gg);
    u128 t = (u128)l[6] + (l[5] >> 63);
    r->n[0] = (u64)t;
    r->n[1] = l[7] + (u64)(t >> 64);
    r->n[2] = r->n[3] = 0;
}

static inline int limbs_gt_(const u64 *a, const u64 *b) {
    for (int i = 3; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] > b[i];
    }
    return 0;
}

/* Signed representative: if v > (N-1)/2 use N - v and report the sign. */
static inline int sc_signed_abs_(sc *v) {
    if (limbs_gt_(v->n, SC_HALF_N)) {
        sc_neg(v, v);
        return 1;
    }
    return 0;
}

/* k ≡ (-1)^neg1·m1 + (-1)^neg2·m2·λ (mod N) with m1, m2 of about 128 bits. */
static void sc_split_lambda_var(sc *m1, int *neg1, sc *m2, int *neg2, const sc *k) {
    sc c1, c2, t;
    glv_mul_shift_(&c1, k, GLV_G1);
    glv_mul_shift_(&c2, k, GLV_G2);
    sc_mul(&c1, &c1, &SC_MINUS_B1);
    sc_mul(&c2, &c2, &SC_MINUS_B2);
    sc_add(m2, &c1, &c2); /* k2 = -(c1·b1 + c2·b2) */
    sc_mul(&t, m2, &SC_LAMBDA);
    sc_neg(&t, &t);
    sc_add(m1, k, &t); /* k1 = k - k2·λ */
    *neg1 = sc_signed_abs_(m1);
    *neg2 = sc_signed_abs_(m2);
}

static inline int limbs_bitlen_(const u64 *n, int limbs) {
    for (int i = limbs - 1; i >= 0; i--) {
        if (n[i]) return 64 * i + 64 - __builtin_clzll(n[i]);
    }
    return 0;
}

/* --- terms ---------------------------------------------------------------------------------- */

/* One term m·P of the expanded sum: P affine (sign already applied), m a non-negative magnitude. */
typedef struct {
    ge p;
    sc m;
    int neg; /* p is the negation of the input point (or of its lambda image) */
} msm_term;

/* Expand (k_i, P_i) into 2n GLV terms; returns the largest magnitude bit length. Zero scalars and
 * infinity points give zero-magnitude terms (skipped by the algorithms). */
static int msm_expand_glv_(msm_term *out, const ge *pts, const sc *ks, size_t n) {
    int maxbits = 0;
    for (size_t i = 0; i < n; i++) {
        msm_term *a = &out[2 * i], *b = &out[2 * i + 1];
        if (pts[i].inf || sc_is_zero(&ks[i])) {
            a->m = SC_ZERO;
            b->m = SC_ZERO;
            a->p = pts[i];
            b->p = pts[i];
            a->p.inf = b->p.inf = 1;
            a->neg = b->neg = 0;
            continue;
        }
        int n1, n2;
        sc_split_lambda_var(&a->m, &n1, &b->m, &n2, &ks[i]);
        a->p = pts[i];
        if (n1) fe_neg(&a->p.y, &a->p.y);
        ge_mul_lambda(&b->p, &pts[i]);
        if (n2) fe_neg(&b->p.y, &b->p.y);
        a->neg = n1;
        b->neg = n2;
        int b1 = limbs_bitlen_(a->m.n, 4), b2 = limbs_bitlen_(b->m.n, 4);
        if (b1 > maxbits) maxbits = b1;
        if (b2 > maxbits) maxbits = b2;
    }
    return maxbits;
}

/* --- wNAF / Straus -------------------------------------------------------------------------- */

/* Width-w NAF of m into d[0..len): odd digits in (-2^(w-1), 2^(w-1)), at least w-1 zeros between
 * non-zero digits.  Precondition: len >= bitlen(m) + 1 (the NAF is at most one digit longer). */
static void wnaf_var(int *d, int len, const sc *m, int w) {
    memset(d, 0, (size_t)len * sizeof(int));
    int carry = 0, bit = 0;
    while (bit < len) {
        if ((int)limbs_bits_(m->n, 4, bit, 1) == carry) {
            bit++;
            continue;
        }
        int word = (int)limbs_bits_(m->n, 4, bit, w) + carry;
        carry = (word >> (w - 1)) & 1;
        word -= carry << w;
        d[bit] = word;
        bit += w;
    }
}

#define STRAUS_W 5
#define STRAUS_TABLE (1 << (STRAUS_W - 2)) /* odd multiples 1, 3, ..., 2^(w-1) - 1 */

/* Odd multiples of every point and of its λ image, affine: with T = STRAUS_TABLE,
 * tab[2iT + j] = (2j+1)·P_i and tab[2iT + T + j] = (2j+1)·λP_i (rows of infinity for P_i = ∞).
 * Scratch: tj and scratch hold n·T elements; tab holds 2n·T. */
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
    fe *scratch = malloc(n * T * sizeof *scratch);
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

/* --- Pippenger ------------------------------------------------------------------------------ */

/* Signed c-bit digits of m into d[0..windows): digits in [-2^(c-1), 2^(c-1)], Σ d_j 2^(cj) = m.
 * Precondition: windows·c >= bitlen(m) + 1 (so the last carry is absorbed). */
static inline void signed_digits_var(int16_t *d, int windows, const sc *m, int c) {
    int carry = 0;
    const int half = 1 << (c - 1);
    for (int j = 0; j < windows; j++) {
        int v = (int)limbs_bits_(m->n, 4, j * c, c) + carry;
        carry = v > half;
        d[j] = (int16_t)(v - (carry << c));
    }
}

/* Window override for tuning (0 = automatic). */
static int g_pippenger_window = 0;

/* Window width by number of input points, measured on this machine kind (thread CPU time, best
 * of 5, bench/msm.py sizes): the optimum moves from 5 bits at 32 points to 13 at 32768. */
static int pippenger_best_window_(size_t npoints) {
    static const struct {
        size_t below;
        int c;
    } steps[] = {{96, 5}, {300, 6}, {600, 7}, {1800, 8}, {3000, 9}, {6000, 10}, {12000, 11},
                 {24000, 12}, {60000, 13}};
    if (g_pippenger_window) return g_pippenger_window;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        if (npoints < steps[i].below) return steps[i].c;
    }
    return 14;
}

/* Entries of the bucket lists live in one array, bucket b in [start[b], start[b] + len[b]). */
#define PIP_MAX_GROUP_ENTRIES ((size_t)1 << 16) /* 4 MB of entries: cache-friendlier scatter */

/* Reduce every bucket list to at most one point by rounds of pairwise affine additions; all the
 * additions of a round share one field inversion (Montgomery's trick).
 * entries: affine points (not infinity); start/len per bucket; inv, den, kind: scratch of
 * >= total/2 elements.
 * Pairs with equal x are doublings (denominator 2·y1) or cancel to infinity (dropped). */
enum { PAIR_ADD = 0, PAIR_DOUBLE = 1, PAIR_CANCEL = 2 };

static void pip_reduce_buckets_var(ge_xy *entries, const size_t *start, size_t *len, size_t nbuckets,
                                   fe *inv, fe *den, unsigned char *kind) {
    for (;;) {
        /* pass 1: denominators and their prefix products */
        size_t npairs = 0;
        fe acc = FE_ONE;
        for (size_t b = 0; b < nbuckets; b++) {
            size_t L = len[b];
            if (L < 2) continue;
            const ge_xy *seg = entries + start[b];
            for (size_t k = 0; k + 1 < L; k += 2) {
                fe *d = &den[npairs];
                fe_sub(d, &seg[k + 1].x, &seg[k].x);
                kind[npairs] = PAIR_ADD;
                if (UNLIKELY(fe_is_zero(d))) {
                    fe s;
                    fe_add(&s, &seg[k].y, &seg[k + 1].y);
                    if (fe_is_zero(&s)) {
                        *d = FE_ONE; /* P + (-P): infinity, nothing to invert */
                        kind[npairs] = PAIR_CANCEL;
                    } else {
                        fe_add(d, &seg[k].y, &seg[k].y);
                        kind[npairs] = PAIR_DOUBLE;
                    }
                }
                inv[npairs++] = acc;
                fe_mul(&acc, &acc, d);
            }
        }
        if (npairs == 0) return;
        /* pass 2 (backward): inv[i] = 1 / den[i] */
        fe ai;
        fe_inv_var(&ai, &acc);
        for (size_t i = npairs; i-- > 0;) {
            fe t;
            fe_mul(&t, &ai, &inv[i]);
            fe_mul(&ai, &ai, &den[i]);
            inv[i] = t;
        }
        /* pass 3 (forward): affine sums, compacted to the front of each bucket's segment (the
         * write index never passes the read index) */
        size_t i = 0;
        int again = 0;
        for (size_t b = 0; b < nbuckets; b++) {
            size_t L = len[b];
            if (L < 2) continue;
            ge_xy *seg = entries + start[b];
            size_t w = 0;
            for (size_t k = 0; k + 1 < L; k += 2) {
                const ge_xy *p1 = &seg[k], *p2 = &seg[k + 1];
                const fe *di = &inv[i];
                const unsigned char pk = kind[i++];
                fe lam, t;
                if (LIKELY(pk == PAIR_ADD)) {
                    fe_sub(&t, &p2->y, &p1->y); /* λ = (y2 - y1) / (x2 - x1) */
                } else if (pk == PAIR_CANCEL) {
                    continue; /* infinity: dropped from the bucket */
                } else {
                    fe_sqr(&t, &p1->x); /* doubling: λ = 3·x1² / (2·y1) */
                    fe_mul_small(&t, &t, 3);
                }
                fe_mul(&lam, &t, di);
                ge_xy r;
                fe_sqr(&r.x, &lam);
                fe_sub(&r.x, &r.x, &p1->x);
                fe_sub(&r.x, &r.x, &p2->x);
                fe_sub(&t, &p1->x, &r.x);
                fe_mul(&r.y, &lam, &t);
                fe_sub(&r.y, &r.y, &p1->y);
                seg[w++] = r;
            }
            if (L & 1) seg[w++] = seg[L - 1];
            len[b] = w;
            if (w >= 2) again = 1;
        }
        if (!again) return;
    }
}

/* r = Σ m_t·P_t over prepared terms: signed c-bit digits, batch-affine bucket accumulation,
 * Jacobian running sums per window. */
static int msm_pippenger_terms_var(gej *r, const msm_term *terms, size_t nt, int maxbits) {
    gej_set_inf(r);
    if (nt == 0 || maxbits == 0) return 1;
    int c = pippenger_best_window_(nt / 2);
    int windows = (maxbits + 1 + c - 1) / c;
    size_t nb = (size_t)1 << (c - 1);
    /* windows per group: the group's entries (<= nt per window) stay under the cap */
    size_t group = PIP_MAX_GROUP_ENTRIES / nt;
    if (group < 1) group = 1;
    if (group > (size_t)windows) group = (size_t)windows;
    size_t cap_entries = nt * group;
    int16_t *digits = malloc(nt * (size_t)windows * sizeof *digits);
    ge_xy *entries = malloc(cap_entries * sizeof *entries);
    fe *inv = malloc((cap_entries / 2 + 1) * sizeof *inv);
    fe *den = malloc((cap_entries / 2 + 1) * sizeof *den);
    unsigned char *kind = malloc(cap_entries / 2 + 1);
    size_t *start = malloc((group * nb + 1) * sizeof *start);
    size_t *len = malloc(group * nb * sizeof *len);
    gej *wsum = malloc((size_t)windows * sizeof *wsum);
    int ok = 0;
    if (!digits || !entries || !inv || !den || !kind || !start || !len || !wsum) goto done;
    for (size_t t = 0; t < nt; t++) {
        if (terms[t].p.inf) {
            memset(&digits[t * windows], 0, (size_t)windows * sizeof *digits);
        } else {
            signed_digits_var(&digits[t * windows], windows, &terms[t].m, c);
        }
    }
    for (int w0 = 0; w0 < windows; w0 += (int)group) {
        int w1 = w0 + (int)group < windows ? w0 + (int)group : windows;
        size_t gb = (size_t)(w1 - w0) * nb;
        /* counting sort of the (bucket, point) insertions by bucket */
        memset(len, 0, gb * sizeof *len);
        for (size_t t = 0; t < nt; t++) {
            const int16_t *d = &digits[t * windows];
            for (int w = w0; w < w1; w++) {
                int v = d[w];
                if (v) len[(size_t)(w - w0) * nb + (size_t)(v < 0 ? -v : v) - 1]++;
            }
        }
        start[0] = 0;
        for (size_t b = 0; b < gb; b++) start[b + 1] = start[b] + len[b];
        for (size_t b = 0; b < gb; b++) len[b] = 0;
        for (size_t t = 0; t < nt; t++) {
            const int16_t *d = &digits[t * windows];
            for (int w = w0; w < w1; w++) {
                int v = d[w];
                if (!v) continue;
                size_t b = (size_t)(w - w0) * nb + (size_t)(v < 0 ? -v : v) - 1;
                ge_xy *e = &entries[start[b] + len[b]++];
                e->x = terms[t].p.x;
                if (v < 0) fe_neg(&e->y, &terms[t].p.y);
                else e->y = terms[t].p.y;
            }
        }
        pip_reduce_buckets_var(entries, start, len, gb, inv, den, kind);
        /* running sums: S_w = Σ_j j·B_j = Σ_j (B_top + ... + B_j) */
        for (int w = w0; w < w1; w++) {
            gej running, sum;
            gej_set_inf(&running);
            gej_set_inf(&sum);
            size_t base = (size_t)(w - w0) * nb;
            for (size_t j = nb; j-- > 0;) {
                if (len[base + j]) gej_add_xy_var(&running, &running, &entries[start[base + j]]);
                gej_add_var(&sum, &sum, &running);
            }
            wsum[w] = sum;
        }
    }
    *r = wsum[windows - 1];
    for (int w = windows - 2; w >= 0; w--) {
        for (int k = 0; k < c && !r->inf; k++) gej_double_var(r, r);
        gej_add_var(r, r, &wsum[w]);
    }
    ok = 1;
done:
    free(digits);
    free(entries);
    free(inv);
    free(den);
    free(kind);
    free(start);
    free(len);
    free(wsum);
    return ok;
}

static int msm_pippenger_var(gej *r, const ge *pts, const sc *ks, size_t n) {
    msm_term *terms = malloc((2 * n + 1) * sizeof *terms);
    if (!terms) return 0;
    int maxbits = msm_expand_glv_(terms, pts, ks, n);
    int ok = msm_pippenger_terms_var(r, terms, 2 * n, maxbits);
    free(terms);
    return ok;
}

/* Σ k_i·P_i, choosing the algorithm by size. */
static size_t g_straus_max = 28; /* largest n handled by Straus (measured crossover) */

static int msm_var(gej *r, const ge *pts, const sc *ks, size_t n) {
    if (n <= g_straus_max) return msm_straus_var(r, pts, ks, n);
    return msm_pippenger_var(r, pts, ks, n);
}

#endif

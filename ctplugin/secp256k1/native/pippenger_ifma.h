/* Bucket reduction rounds in AVX-512 IFMA lanes: the pairwise affine additions of a round, eight
 * at a time in radix 2^52 (the lane arithmetic of field_batch.h), with the batch inversion run as
 * eight interleaved Montgomery chains whose eight totals share one scalar inversion.
 * PUBLIC DATA ONLY (variable time).  No Python.
 *
 * A round where some pair has equal x (a doubling, or P + (-P)) is left to the scalar round
 * (pip_pair_denominators_ / pip_pair_sums_): such a pair makes its lane's chain product 0, which
 * is detected before anything is written.  Results are identical to the scalar round's (the
 * same affine sums, weakly reduced; the kernel's outputs are normalised): _selftest and the
 * tests compare both paths.  Used when the CPU has AVX-512 IFMA and the lanes agree with the
 * scalar code on a self-test round (pip_ifma_enabled).
 */
#ifndef CTPLUGIN_PIPPENGER_IFMA_H
#define CTPLUGIN_PIPPENGER_IFMA_H

#include "field_batch.h"
#include "inverse.h"

#ifdef FE_HAVE_IFMA_CODE

/* 32·p in radix 2^52, every limb >= 2^52: a - b + 32p has no negative limb. */
#define FE52_32P0 0x1FFFFDFFFFF85E0ULL
#define FE52_32P1 0x1FFFFFFFFFFFFE0ULL
#define FE52_32P4 0x1FFFFFFFFFFFE0ULL

/* r = a - b (mod p), limbs < 2^52, value < 2^260 (a, b the same). */
FE_IFMA static inline void fe8_sub_(fe8 *r, const fe8 *a, const fe8 *b) {
    __m512i t[5];
    t[0] = _mm512_sub_epi64(_mm512_add_epi64(a->l[0], _mm512_set1_epi64((long long)FE52_32P0)), b->l[0]);
    for (int k = 1; k < 4; k++)
        t[k] = _mm512_sub_epi64(_mm512_add_epi64(a->l[k], _mm512_set1_epi64((long long)FE52_32P1)), b->l[k]);
    t[4] = _mm512_sub_epi64(_mm512_add_epi64(a->l[4], _mm512_set1_epi64((long long)FE52_32P4)), b->l[4]);
    fe8_norm_(r, t);
}

/* Lanes i < 8 of the coordinate at byte offset `off` of the ge_xy entries[idx_i] (4x64, weakly
 * reduced) into radix 2^52. */
FE_IFMA static inline void fe8_gather_(fe8 *r, const ge_xy *entries, __m512i idx, int off) {
    const __m512i m = _mm512_set1_epi64((long long)FE52_MASK);
    const long long *base = (const long long *)((const unsigned char *)entries + off);
    const __m512i q = _mm512_slli_epi64(idx, 3); /* 8 words per entry */
    __m512i n0 = _mm512_i64gather_epi64(q, base, 8);
    __m512i n1 = _mm512_i64gather_epi64(_mm512_add_epi64(q, _mm512_set1_epi64(1)), base, 8);
    __m512i n2 = _mm512_i64gather_epi64(_mm512_add_epi64(q, _mm512_set1_epi64(2)), base, 8);
    __m512i n3 = _mm512_i64gather_epi64(_mm512_add_epi64(q, _mm512_set1_epi64(3)), base, 8);
    r->l[0] = _mm512_and_si512(n0, m);
    r->l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(n0, 52), _mm512_slli_epi64(n1, 12)), m);
    r->l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(n1, 40), _mm512_slli_epi64(n2, 24)), m);
    r->l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(n2, 28), _mm512_slli_epi64(n3, 36)), m);
    r->l[4] = _mm512_srli_epi64(n3, 16);
}

/* Store lanes (mask) of a (value < 2^260) as weakly reduced 4x64 coordinates at byte offset
 * `off` of entries[idx_i]: the 256 low bits plus (bits 256..259)·(2^32 + 977). */
FE_IFMA static inline void fe8_scatter_(ge_xy *entries, __m512i idx, int off, __mmask8 mask,
                                        const fe8 *a) {
    const __m512i one = _mm512_set1_epi64(1), C = _mm512_set1_epi64((long long)FE_C);
    __m512i n0 = _mm512_or_si512(a->l[0], _mm512_slli_epi64(a->l[1], 52));
    __m512i n1 = _mm512_or_si512(_mm512_srli_epi64(a->l[1], 12), _mm512_slli_epi64(a->l[2], 40));
    __m512i n2 = _mm512_or_si512(_mm512_srli_epi64(a->l[2], 24), _mm512_slli_epi64(a->l[3], 28));
    __m512i n3 = _mm512_or_si512(_mm512_srli_epi64(a->l[3], 36), _mm512_slli_epi64(a->l[4], 16));
    __m512i t = _mm512_madd52lo_epu64(_mm512_setzero_si512(), _mm512_srli_epi64(a->l[4], 48), C);
    n0 = _mm512_add_epi64(n0, t);
    __mmask8 c = _mm512_cmplt_epu64_mask(n0, t);
    n1 = _mm512_mask_add_epi64(n1, c, n1, one);
    c &= _mm512_cmpeq_epi64_mask(n1, _mm512_setzero_si512());
    n2 = _mm512_mask_add_epi64(n2, c, n2, one);
    c &= _mm512_cmpeq_epi64_mask(n2, _mm512_setzero_si512());
    n3 = _mm512_mask_add_epi64(n3, c, n3, one);
    c &= _mm512_cmpeq_epi64_mask(n3, _mm512_setzero_si512());
    n0 = _mm512_mask_add_epi64(n0, c, n0, C); /* wrapped past 2^256: the value is tiny */
    long long *base = (long long *)((unsigned char *)entries + off);
    const __m512i q = _mm512_slli_epi64(idx, 3);
    _mm512_mask_i64scatter_epi64(base, mask, q, n0, 8);
    _mm512_mask_i64scatter_epi64(base, mask, _mm512_add_epi64(q, one), n1, 8);
    _mm512_mask_i64scatter_epi64(base, mask, _mm512_add_epi64(q, _mm512_set1_epi64(2)), n2, 8);
    _mm512_mask_i64scatter_epi64(base, mask, _mm512_add_epi64(q, _mm512_set1_epi64(3)), n3, 8);
}

/* fe8 lane i <-> fe (through radix 2^52 words). */
FE_IFMA static void fe8_lanes_to_fe_(fe out[8], const fe8 *a) {
    uint64_t w[5][8];
    for (int k = 0; k < 5; k++) _mm512_storeu_si512((void *)w[k], a->l[k]);
    for (int i = 0; i < 8; i++) {
        uint64_t l[5] = {w[0][i], w[1][i], w[2][i], w[3][i], w[4][i]};
        fe_from_52_(&out[i], l);
    }
}

FE_IFMA static void fe8_from_fe_lanes_(fe8 *r, const fe in[8]) {
    uint64_t w[5][8];
    for (int i = 0; i < 8; i++) {
        uint64_t l[5];
        fe_to_52_(l, &in[i]);
        for (int k = 0; k < 5; k++) w[k][i] = l[k];
    }
    for (int k = 0; k < 5; k++) r->l[k] = _mm512_loadu_si512((const void *)w[k]);
}

/* The pairs of one round: pair i adds entries[first[i]] and entries[first[i] + 1] and writes the
 * sum to entries[out[i]]; lanes beyond npairs (the last block) repeat pair 0 and are not stored.
 * blocks = ceil(npairs / 8); den, acc: 2·blocks fe8 of scratch. */
typedef struct {
    ge_xy *entries;
    const int64_t *first, *out; /* blocks·8 indices each */
    size_t npairs, blocks;
    fe8 *den, *pre;
} pip_ifma_pairs_;

/* Denominators x2 - x1 and the eight lanes' prefix products (pre[q] = Π_{q' < q} den[q']);
 * returns the lane totals in tot.  Padding lanes get the denominator 1. */
FE_IFMA static void pip_ifma_forward_(const pip_ifma_pairs_ *r, fe8 *tot) {
    fe8 acc, x1, x2;
    for (int k = 0; k < 5; k++) acc.l[k] = _mm512_setzero_si512();
    acc.l[0] = _mm512_set1_epi64(1);
    for (size_t q = 0; q < r->blocks; q++) {
        const __m512i f = _mm512_loadu_si512((const void *)&r->first[8 * q]);
        fe8_gather_(&x1, r->entries, f, 0);
        fe8_gather_(&x2, r->entries, _mm512_add_epi64(f, _mm512_set1_epi64(1)), 0);
        fe8_sub_(&r->den[q], &x2, &x1);
        const size_t rest = r->npairs - 8 * q;
        if (rest < 8) { /* padding lanes: denominator 1 */
            const __mmask8 pad = (__mmask8)(0xFF << rest);
            for (int k = 0; k < 5; k++)
                r->den[q].l[k] = _mm512_mask_mov_epi64(r->den[q].l[k], pad,
                                                       _mm512_set1_epi64(k == 0));
        }
        r->pre[q] = acc;
        fe8_mul_(&acc, &acc, &r->den[q]);
    }
    *tot = acc;
}

/* Given inv = the lanes' inverse totals: pre[q] becomes 1/den[q] (backward), then every pair's
 * affine sum is written (forward: a block writes only after reading, and never where a later
 * block reads). */
FE_IFMA static void pip_ifma_backward_sums_(const pip_ifma_pairs_ *r, fe8 inv) {
    for (size_t q = r->blocks; q-- > 0;) {
        fe8 t;
        fe8_mul_(&t, &inv, &r->pre[q]);
        fe8_mul_(&inv, &inv, &r->den[q]);
        r->pre[q] = t;
    }
    for (size_t q = 0; q < r->blocks; q++) {
        const __m512i f = _mm512_loadu_si512((const void *)&r->first[8 * q]);
        const __m512i f2 = _mm512_add_epi64(f, _mm512_set1_epi64(1));
        fe8 x1, y1, x2, y2, lam, t, x3, y3;
        fe8_gather_(&x1, r->entries, f, 0);
        fe8_gather_(&y1, r->entries, f, 32);
        fe8_gather_(&x2, r->entries, f2, 0);
        fe8_gather_(&y2, r->entries, f2, 32);
        fe8_sub_(&t, &y2, &y1);
        fe8_mul_(&lam, &t, &r->pre[q]); /* λ = (y2 - y1) / (x2 - x1) */
        fe8_sqr_(&t, &lam);
        fe8_sub_(&t, &t, &x1);
        fe8_sub_(&x3, &t, &x2); /* x3 = λ² - x1 - x2 */
        fe8_sub_(&t, &x1, &x3);
        fe8_mul_(&t, &lam, &t);
        fe8_sub_(&y3, &t, &y1); /* y3 = λ·(x1 - x3) - y1 */
        const size_t rest = r->npairs - 8 * q;
        const __mmask8 mask = rest >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << rest) - 1);
        const __m512i o = _mm512_loadu_si512((const void *)&r->out[8 * q]);
        fe8_scatter_(r->entries, o, 0, mask, &x3);
        fe8_scatter_(r->entries, o, 32, mask, &y3);
    }
}

/* One round in lanes.  Returns 0 (nothing written) if some lane's product is 0: a pair with equal
 * x, which the caller then adds with the scalar round. */
FE_IFMA static int pip_ifma_round_(const pip_ifma_pairs_ *r) {
    fe8 tot, inv;
    fe lanes[8], lanes_inv[8], prefix[8];
    pip_ifma_forward_(r, &tot);
    fe8_lanes_to_fe_(lanes, &tot);
    for (int i = 0; i < 8; i++) {
        if (fe_is_zero(&lanes[i])) return 0;
    }
    fe_inv_all_var(lanes_inv, lanes, 8, prefix);
    fe8_from_fe_lanes_(&inv, lanes_inv);
    pip_ifma_backward_sums_(r, inv);
    return 1;
}

#endif /* FE_HAVE_IFMA_CODE */

#endif

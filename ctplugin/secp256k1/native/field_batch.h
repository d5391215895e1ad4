/* Many field elements at once: batch square roots (the x-coordinate lifts of point decoding).
 *
 * PUBLIC DATA ONLY (variable time).  No Python.
 *
 * fe_sqrt_all_var computes the "quadratic residue" root a^((p+1)/4) of many elements.  A square
 * root is 253 squarings and 13 multiplications in a chain no shared work can shorten, so the gain
 * is in doing several at once: with AVX-512 IFMA (52-bit multiply-accumulate) sixteen elements
 * go through the chain together, as two vectors of eight lanes in radix 2^52 (five limbs), about
 * eight times the throughput of the 4x64 scalar chain on the machines this project runs on.
 * Without IFMA (or if the vector code disagrees with the scalar chain on a self-test input) the
 * scalar fe_sqrt_var runs.  Results are identical either way: the root is unique and every
 * result is checked by squaring it in the scalar field code.
 *
 * Lane arithmetic (fe8): limbs l_0..l_4 < 2^52, value Σ l_i·2^(52i) < 2^260 (weakly reduced).
 * A product's ten columns stay below 2^57; the columns at 2^260 and above fold back with
 * 2^260 ≡ R = 0x1000003D10 (mod p) — twice, since the first fold leaves a < 2^43 column at
 * 2^260 — then a carry pass, one more fold of its < 2^6 carry-out, and a last carry, which
 * leaves every limb below 2^52 again (the multiply-accumulate instructions read 52 bits).
 */
#ifndef CTPLUGIN_FIELD_BATCH_H
#define CTPLUGIN_FIELD_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "field.h"

/* The AVX-512 IFMA lanes are compiled on x86-64 with GCC or Clang and chosen at run time by
 * CPUID; CTP_NO_IFMA (setup.py sets it when CTPLUGIN_NO_IFMA=1 at build time) leaves them out,
 * so that an IFMA machine can measure the scalar paths that other CPUs run. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(CTP_NO_IFMA)
#include <cpuid.h>
#include <immintrin.h>
#define FE_HAVE_IFMA_CODE 1
#endif

#ifdef FE_HAVE_IFMA_CODE
#define FE52_MASK 0xFFFFFFFFFFFFFULL
#define FE52_R 0x1000003D10ULL /* 2^260 mod p */
#define FE_IFMA __attribute__((target("avx512f,avx512ifma")))

typedef struct {
    __m512i l[5];
} fe8;

FE_IFMA static inline void fe8_carry_(__m512i t[5], __m512i *top) {
    const __m512i m = _mm512_set1_epi64((long long)FE52_MASK);
    for (int k = 0; k < 4; k++) {
        t[k + 1] = _mm512_add_epi64(t[k + 1], _mm512_srli_epi64(t[k], 52));
        t[k] = _mm512_and_si512(t[k], m);
    }
    *top = _mm512_srli_epi64(t[4], 52);
    t[4] = _mm512_and_si512(t[4], m);
}

/* Limbs below 2^63 to limbs below 2^52, the same value mod p: a carry pass (its top < 2^12, so
 * top·R < 2^49 folds back into l_0 in one multiply-add); then, only when some lane's l_0 reached
 * 2^52 by that fold (rare: the fold adds at most 2^49, far less for product and difference
 * inputs), a second pass (top is 0, or 1 with l_1..l_4 small), one more fold and the carry out of
 * limb 0.  Skipping the second pass when no l_0 overflowed gives the same limbs it would (all its
 * carries are zero then), so the result never depends on the branch. */
FE_IFMA static inline void fe8_norm_(fe8 *r, __m512i t[5]) {
    const __m512i m = _mm512_set1_epi64((long long)FE52_MASK), R = _mm512_set1_epi64((long long)FE52_R);
    __m512i top;
    fe8_carry_(t, &top);
    t[0] = _mm512_madd52lo_epu64(t[0], top, R);
    if (UNLIKELY(_mm512_test_epi64_mask(t[0], _mm512_set1_epi64((long long)~FE52_MASK)))) {
        fe8_carry_(t, &top);
        t[0] = _mm512_madd52lo_epu64(t[0], top, R);
        t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
        t[0] = _mm512_and_si512(t[0], m);
    }
    for (int k = 0; k < 5; k++) r->l[k] = t[k];
}

/* Ten product columns (each < 2^57) to five limbs < 2^52 (see the header comment). */
FE_IFMA static inline void fe8_reduce_(fe8 *r, __m512i t[10]) {
    const __m512i m = _mm512_set1_epi64((long long)FE52_MASK), R = _mm512_set1_epi64((long long)FE52_R);
    for (int k = 5; k < 9; k++) {
        t[k + 1] = _mm512_add_epi64(t[k + 1], _mm512_srli_epi64(t[k], 52));
        t[k] = _mm512_and_si512(t[k], m);
    }
    __m512i c10 = _mm512_srli_epi64(t[9], 52); /* < 2^6: the column at 2^520 */
    t[9] = _mm512_and_si512(t[9], m);
    __m512i c5 = _mm512_madd52lo_epu64(_mm512_setzero_si512(), c10, R); /* 2^520 ≡ R·2^260 */
    for (int k = 0; k < 4; k++) {
        t[k] = _mm512_madd52lo_epu64(t[k], t[k + 5], R);
        t[k + 1] = _mm512_madd52hi_epu64(t[k + 1], t[k + 5], R);
    }
    t[4] = _mm512_madd52lo_epu64(t[4], t[9], R);
    c5 = _mm512_madd52hi_epu64(c5, t[9], R); /* < 2^43 */
    t[0] = _mm512_madd52lo_epu64(t[0], c5, R);
    t[1] = _mm512_madd52hi_epu64(t[1], c5, R);
    fe8_norm_(r, t); /* limbs < 2^57 here */
}

FE_IFMA static inline void fe8_mul_(fe8 *r, const fe8 *a, const fe8 *b) {
    __m512i t[10];
    for (int k = 0; k < 10; k++) t[k] = _mm512_setzero_si512();
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < 5; j++) {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a->l[i], b->l[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a->l[i], b->l[j]);
        }
    }
    fe8_reduce_(r, t);
}

/* Squaring: the ten off-diagonal products once, doubled, plus the five squares. */
FE_IFMA static inline void fe8_sqr_(fe8 *r, const fe8 *a) {
    __m512i t[10];
    for (int k = 0; k < 10; k++) t[k] = _mm512_setzero_si512();
    for (int i = 0; i < 5; i++) {
        for (int j = i + 1; j < 5; j++) {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a->l[i], a->l[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a->l[i], a->l[j]);
        }
    }
    for (int k = 0; k < 10; k++) t[k] = _mm512_slli_epi64(t[k], 1);
    for (int i = 0; i < 5; i++) {
        t[2 * i] = _mm512_madd52lo_epu64(t[2 * i], a->l[i], a->l[i]);
        t[2 * i + 1] = _mm512_madd52hi_epu64(t[2 * i + 1], a->l[i], a->l[i]);
    }
    fe8_reduce_(r, t);
}

/* Two vectors through the chain together: independent instruction streams hide the latency. */
typedef struct {
    fe8 v[2];
} fe16;

FE_IFMA static inline void fe16_mul_(fe16 *r, const fe16 *a, const fe16 *b) {
    fe8_mul_(&r->v[0], &a->v[0], &b->v[0]);
    fe8_mul_(&r->v[1], &a->v[1], &b->v[1]);
}

FE_IFMA static inline void fe16_sqr_n_(fe16 *r, const fe16 *a, int n) {
    fe8_sqr_(&r->v[0], &a->v[0]);
    fe8_sqr_(&r->v[1], &a->v[1]);
    for (int i = 1; i < n; i++) {
        fe8_sqr_(&r->v[0], &r->v[0]);
        fe8_sqr_(&r->v[1], &r->v[1]);
    }
}

/* r = a^((p+1)/4), the addition chain of fe_sqrt_var (field.h), sixteen lanes at a time. */
FE_IFMA static void fe16_sqrt_chain_(fe16 *r, const fe16 *a) {
    fe16 x2, x3, x6, x9, x11, x22, x44, x88, x176, x220, x223, t;
    fe16_sqr_n_(&x2, a, 1);
    fe16_mul_(&x2, &x2, a);
    fe16_sqr_n_(&x3, &x2, 1);
    fe16_mul_(&x3, &x3, a);
    fe16_sqr_n_(&t, &x3, 3);
    fe16_mul_(&x6, &t, &x3);
    fe16_sqr_n_(&t, &x6, 3);
    fe16_mul_(&x9, &t, &x3);
    fe16_sqr_n_(&t, &x9, 2);
    fe16_mul_(&x11, &t, &x2);
    fe16_sqr_n_(&t, &x11, 11);
    fe16_mul_(&x22, &t, &x11);
    fe16_sqr_n_(&t, &x22, 22);
    fe16_mul_(&x44, &t, &x22);
    fe16_sqr_n_(&t, &x44, 44);
    fe16_mul_(&x88, &t, &x44);
    fe16_sqr_n_(&t, &x88, 88);
    fe16_mul_(&x176, &t, &x88);
    fe16_sqr_n_(&t, &x176, 44);
    fe16_mul_(&x220, &t, &x44);
    fe16_sqr_n_(&t, &x220, 3);
    fe16_mul_(&x223, &t, &x3);
    fe16_sqr_n_(&t, &x223, 23);
    fe16_mul_(&t, &t, &x22);
    fe16_sqr_n_(&t, &t, 6);
    fe16_mul_(&t, &t, &x2);
    fe16_sqr_n_(r, &t, 2);
}

/* 4x64 (any representation fe_normalize accepts) to five 52-bit limbs of the canonical value. */
static inline void fe_to_52_(uint64_t l[5], const fe *a) {
    fe t = *a;
    fe_normalize(&t);
    l[0] = t.n[0] & FE52_MASK;
    l[1] = ((t.n[0] >> 52) | (t.n[1] << 12)) & FE52_MASK;
    l[2] = ((t.n[1] >> 40) | (t.n[2] << 24)) & FE52_MASK;
    l[3] = ((t.n[2] >> 28) | (t.n[3] << 36)) & FE52_MASK;
    l[4] = t.n[3] >> 16;
}

/* Five 52-bit limbs (value < 2^260) to a normalized 4x64 element. */
static inline void fe_from_52_(fe *r, const uint64_t l[5]) {
    fe v = {{l[0] | (l[1] << 52), (l[1] >> 12) | (l[2] << 40), (l[2] >> 24) | (l[3] << 28),
             (l[3] >> 36) | (l[4] << 16)}};
    fe top = {{(l[4] >> 48) * 0x1000003D1ULL, 0, 0, 0}}; /* bits 256..259: 2^256 ≡ 2^32 + 977 */
    fe_add(&v, &v, &top);
    fe_normalize(&v);
    *r = v;
}

/* Roots of 16 elements (r[i] = a[i]^((p+1)/4), normalized; unchecked). */
FE_IFMA static void fe_sqrt16_ifma_(fe *r, const fe *a) {
    uint64_t lim[16][5], out[5][16];
    fe16 x, y;
    for (int i = 0; i < 16; i++) fe_to_52_(lim[i], &a[i]);
    for (int q = 0; q < 2; q++) {
        for (int k = 0; k < 5; k++) {
            const uint64_t *b = &lim[8 * q][0];
            x.v[q].l[k] = _mm512_set_epi64((long long)b[35 + k], (long long)b[30 + k],
                                           (long long)b[25 + k], (long long)b[20 + k],
                                           (long long)b[15 + k], (long long)b[10 + k],
                                           (long long)b[5 + k], (long long)b[k]);
        }
    }
    fe16_sqrt_chain_(&y, &x);
    for (int q = 0; q < 2; q++)
        for (int k = 0; k < 5; k++) _mm512_storeu_si512((void *)&out[k][8 * q], y.v[q].l[k]);
    for (int i = 0; i < 16; i++) {
        uint64_t l[5] = {out[0][i], out[1][i], out[2][i], out[3][i], out[4][i]};
        fe_from_52_(&r[i], l);
    }
}

/* AVX512F + AVX512IFMA in the CPU and ZMM state enabled by the OS (XCR0 bits 1, 2, 5, 6, 7). */
static int fe_cpu_has_ifma_(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0; /* OSXSAVE */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    if (!(b & (1u << 16)) || !(b & (1u << 21))) return 0; /* AVX512F, AVX512IFMA */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    return (lo & 0xE6) == 0xE6;
}
#endif /* FE_HAVE_IFMA_CODE */

/* Backend of fe_sqrt_all_var: -1 unresolved, 0 scalar, 1 IFMA.  Read and written atomically
 * (any thread, with or without the GIL). */
static int fe_sqrt_backend_ = -1;

/* 1 iff the IFMA chain is usable here: CPU support and agreement with the scalar chain on
 * sixteen test inputs. */
static int fe_sqrt_ifma_works_(void) {
#ifdef FE_HAVE_IFMA_CODE
    if (!fe_cpu_has_ifma_()) return 0;
    fe in[16], got[16];
    u64 s = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 16; i++) {
        for (int k = 0; k < 4; k++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            in[i].n[k] = s;
        }
        if (i == 0) in[i] = FE_ZERO;
        if (i == 1) in[i] = (fe){{FE_P0 - 1, FE_ONES, FE_ONES, FE_ONES}}; /* p - 2 */
        fe_normalize(&in[i]);
    }
    fe_sqrt16_ifma_(got, in);
    for (int i = 0; i < 16; i++) {
        fe want;
        fe_sqrt_var(&want, &in[i]);
        fe_normalize(&want);
        if (!fe_equal(&want, &got[i])) return 0;
    }
    return 1;
#else
    return 0;
#endif
}

static int fe_sqrt_backend(void) {
    int b = __atomic_load_n(&fe_sqrt_backend_, __ATOMIC_ACQUIRE);
    if (b < 0) {
        b = fe_sqrt_ifma_works_();
        __atomic_store_n(&fe_sqrt_backend_, b, __ATOMIC_RELEASE);
    }
    return b;
}

/* Select the backend by name (tests run both): "scalar" or "ifma".  0 on success, -1 for an
 * unknown name, -2 when the IFMA chain is unavailable here. */
static int fe_sqrt_set_backend(const char *name) {
    if (!strcmp(name, "scalar")) {
        __atomic_store_n(&fe_sqrt_backend_, 0, __ATOMIC_RELEASE);
        return 0;
    }
    if (!strcmp(name, "ifma")) {
        if (!fe_sqrt_ifma_works_()) return -2;
        __atomic_store_n(&fe_sqrt_backend_, 1, __ATOMIC_RELEASE);
        return 0;
    }
    return -1;
}

static const char *fe_sqrt_backend_name(void) { return fe_sqrt_backend() ? "ifma" : "scalar"; }

/* r[i] = a[i]^((p+1)/4), normalized, and ok[i] = 1 iff r[i]² = a[i] (a[i] is a square), for
 * i < n.  r must not alias a. */
static void fe_sqrt_all_var(fe *r, unsigned char *ok, const fe *a, size_t n) {
    size_t i = 0;
#ifdef FE_HAVE_IFMA_CODE
    if (n >= 4 && fe_sqrt_backend()) {
        for (; i < n; i += 16) {
            if (n - i >= 16) {
                fe_sqrt16_ifma_(r + i, a + i);
                continue;
            }
            fe in[16], out[16]; /* the tail, padded with zeros */
            size_t rest = n - i;
            memcpy(in, a + i, rest * sizeof *in);
            for (size_t k = rest; k < 16; k++) in[k] = FE_ZERO;
            fe_sqrt16_ifma_(out, in);
            memcpy(r + i, out, rest * sizeof *out);
        }
        for (i = 0; i < n; i++) {
            fe sq, want = a[i];
            fe_sqr(&sq, &r[i]);
            fe_normalize(&want);
            ok[i] = (unsigned char)fe_equal(&sq, &want);
        }
        return;
    }
#endif
    for (; i < n; i++) {
        ok[i] = (unsigned char)fe_sqrt_var(&r[i], &a[i]);
        fe_normalize(&r[i]);
    }
}

#endif

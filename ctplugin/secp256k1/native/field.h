/* Field arithmetic mod p = 2^256 - 2^32 - 977 (secp256k1), 4 x 64-bit limbs, little-endian limbs.
 *
 * PUBLIC DATA ONLY: every function here may branch on its inputs (variable time).
 *
 * Representation invariant ("weakly reduced"): a fe holds a value v < 2^256 with v ≡ x (mod p);
 * v may lie in [p, 2^256).  fe_normalize makes it canonical (< p).  Every operation accepts and
 * returns weakly reduced values, so no magnitude bookkeeping is needed.
 *
 * Reduction: 2^256 ≡ C = 2^32 + 977 = 0x1000003D1 (mod p), so hi·2^256 + lo ≡ hi·C + lo.
 */
#ifndef CTPLUGIN_FIELD_H
#define CTPLUGIN_FIELD_H

#include <stdint.h>
#include <string.h>

typedef unsigned __int128 u128;
typedef uint64_t u64;

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
/* the short carry chains are cheaper inlined than called (measured: fe_add was 10% as a call) */
#define FE_INLINE static inline __attribute__((always_inline))

typedef struct {
    u64 n[4];
} fe;

#define FE_C 0x1000003D1ULL
#define FE_P0 0xFFFFFFFEFFFFFC2FULL
#define FE_ONES 0xFFFFFFFFFFFFFFFFULL

static const fe FE_ZERO = {{0, 0, 0, 0}};
static const fe FE_ONE = {{1, 0, 0, 0}};
/* BETA: a cube root of unity mod p; (x, y) -> (BETA·x, y) is multiplication by LAMBDA. */
static const fe FE_BETA = {{0xc1396c28719501eeULL, 0x9cf0497512f58995ULL, 0x6e64479eac3434e9ULL,
                            0x7ae96a2b657c0710ULL}};

/* r = (r0..r3) + c·2^256 reduced: adds c·C; c < 2^64. */
FE_INLINE void fe_fold_(fe *r, u64 r0, u64 r1, u64 r2, u64 r3, u64 c) {
    u128 t = (u128)r0 + (u128)c * FE_C;
    r->n[0] = (u64)t;
    t >>= 64;
    t += r1;
    r->n[1] = (u64)t;
    t >>= 64;
    t += r2;
    r->n[2] = (u64)t;
    t >>= 64;
    t += r3;
    r->n[3] = (u64)t;
    if (UNLIKELY(t >> 64)) {
        /* Wrapped past 2^256 again: the value is now below c·C < 2^98, adding C cannot wrap. */
        t = (u128)r->n[0] + FE_C;
        r->n[0] = (u64)t;
        t = (t >> 64) + r->n[1];
        r->n[1] = (u64)t;
        t = (t >> 64) + r->n[2];
        r->n[2] = (u64)t;
        r->n[3] += (u64)(t >> 64);
    }
}

FE_INLINE void fe_add_portable_(fe *r, const fe *a, const fe *b) {
    u128 t = (u128)a->n[0] + b->n[0];
    u64 r0 = (u64)t;
    t = (t >> 64) + a->n[1] + b->n[1];
    u64 r1 = (u64)t;
    t = (t >> 64) + a->n[2] + b->n[2];
    u64 r2 = (u64)t;
    t = (t >> 64) + a->n[3] + b->n[3];
    fe_fold_(r, r0, r1, r2, (u64)t, (u64)(t >> 64));
}

/* r = a - b.  A borrow means the 256-bit result is a - b + 2^256 ≡ a - b + C: subtract C. */
FE_INLINE void fe_sub_portable_(fe *r, const fe *a, const fe *b) {
    u64 r0, r1, r2, r3;
    unsigned char bo = 0;
    bo = __builtin_sub_overflow(a->n[0], b->n[0], &r0);
    {
        u64 t1;
        unsigned char b1 = __builtin_sub_overflow(a->n[1], b->n[1], &t1);
        b1 |= __builtin_sub_overflow(t1, (u64)bo, &r1);
        bo = b1;
    }
    {
        u64 t2;
        unsigned char b2 = __builtin_sub_overflow(a->n[2], b->n[2], &t2);
        b2 |= __builtin_sub_overflow(t2, (u64)bo, &r2);
        bo = b2;
    }
    {
        u64 t3;
        unsigned char b3 = __builtin_sub_overflow(a->n[3], b->n[3], &t3);
        b3 |= __builtin_sub_overflow(t3, (u64)bo, &r3);
        bo = b3;
    }
    u64 m = (u64)0 - (u64)bo; /* all ones on borrow */
    u64 s = FE_C & m;
    unsigned char b0 = __builtin_sub_overflow(r0, s, &r0);
    unsigned char c1 = __builtin_sub_overflow(r1, (u64)b0, &r1);
    unsigned char c2 = __builtin_sub_overflow(r2, (u64)c1, &r2);
    unsigned char c3 = __builtin_sub_overflow(r3, (u64)c2, &r3);
    if (UNLIKELY(c3)) {
        /* r was below C: the true value is r - C + p = r - 2C + 2^256, i.e. subtract C again. */
        b0 = __builtin_sub_overflow(r0, FE_C, &r0);
        c1 = __builtin_sub_overflow(r1, (u64)b0, &r1);
        c2 = __builtin_sub_overflow(r2, (u64)c1, &r2);
        r3 -= c2;
    }
    r->n[0] = r0;
    r->n[1] = r1;
    r->n[2] = r2;
    r->n[3] = r3;
}

/* r = a/2: a, plus p when a is odd (a 257-bit even sum), shifted right once (< 2^256 again).
 * Branch-free (the mask of a's low bit selects p). */
FE_INLINE void fe_half_portable_(fe *r, const fe *a) {
    const u64 m = (u64)0 - (a->n[0] & 1);
    u128 t = (u128)a->n[0] + (FE_P0 & m);
    const u64 t0 = (u64)t;
    t = (t >> 64) + a->n[1] + m;
    const u64 t1 = (u64)t;
    t = (t >> 64) + a->n[2] + m;
    const u64 t2 = (u64)t;
    t = (t >> 64) + a->n[3] + m;
    const u64 t3 = (u64)t, c = (u64)(t >> 64);
    r->n[0] = (t0 >> 1) | (t1 << 63);
    r->n[1] = (t1 >> 1) | (t2 << 63);
    r->n[2] = (t2 >> 1) | (t3 << 63);
    r->n[3] = (t3 >> 1) | (c << 63);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same sums, differences and halvings through the carry intrinsics: GCC compiles the portable ones
 * above into serial set-carry/or chains (about 45 instructions for fe_sub, six pushes for
 * fe_add), these into one adc / sbb chain each; the last fold is branch-free.  Any x86-64 has
 * adc and sbb (no BMI2/ADX needed), so both kernel builds use them; _selftest compares them
 * with the portable ones. */
#include <x86intrin.h>

FE_INLINE void fe_add(fe *r, const fe *a, const fe *b) {
    unsigned long long r0, r1, r2, r3;
    unsigned char c = _addcarry_u64(0, a->n[0], b->n[0], &r0);
    c = _addcarry_u64(c, a->n[1], b->n[1], &r1);
    c = _addcarry_u64(c, a->n[2], b->n[2], &r2);
    c = _addcarry_u64(c, a->n[3], b->n[3], &r3);
    /* + carry·C; if that wraps again the value is below C, and + C cannot wrap */
    c = _addcarry_u64(0, r0, ((u64)0 - c) & FE_C, &r0);
    c = _addcarry_u64(c, r1, 0, &r1);
    c = _addcarry_u64(c, r2, 0, &r2);
    c = _addcarry_u64(c, r3, 0, &r3);
    r->n[0] = r0 + (((u64)0 - c) & FE_C);
    r->n[1] = r1;
    r->n[2] = r2;
    r->n[3] = r3;
}

FE_INLINE void fe_sub(fe *r, const fe *a, const fe *b) {
    unsigned long long r0, r1, r2, r3;
    unsigned char c = _subborrow_u64(0, a->n[0], b->n[0], &r0);
    c = _subborrow_u64(c, a->n[1], b->n[1], &r1);
    c = _subborrow_u64(c, a->n[2], b->n[2], &r2);
    c = _subborrow_u64(c, a->n[3], b->n[3], &r3);
    /* - borrow·C; if that borrows again (the difference was below C), - C once more */
    c = _subborrow_u64(0, r0, ((u64)0 - c) & FE_C, &r0);
    c = _subborrow_u64(c, r1, 0, &r1);
    c = _subborrow_u64(c, r2, 0, &r2);
    c = _subborrow_u64(c, r3, 0, &r3);
    c = _subborrow_u64(0, r0, ((u64)0 - c) & FE_C, &r0);
    c = _subborrow_u64(c, r1, 0, &r1);
    c = _subborrow_u64(c, r2, 0, &r2);
    r->n[0] = r0;
    r->n[1] = r1;
    r->n[2] = r2;
    r->n[3] = r3 - c;
}

FE_INLINE void fe_half(fe *r, const fe *a) {
    const u64 m = (u64)0 - (a->n[0] & 1);
    unsigned long long t0, t1, t2, t3;
    unsigned char c = _addcarry_u64(0, a->n[0], FE_P0 & m, &t0);
    c = _addcarry_u64(c, a->n[1], m, &t1);
    c = _addcarry_u64(c, a->n[2], m, &t2);
    c = _addcarry_u64(c, a->n[3], m, &t3);
    r->n[0] = (t0 >> 1) | (t1 << 63);
    r->n[1] = (t1 >> 1) | (t2 << 63);
    r->n[2] = (t2 >> 1) | (t3 << 63);
    r->n[3] = (t3 >> 1) | ((u64)c << 63);
}
#else
FE_INLINE void fe_add(fe *r, const fe *a, const fe *b) { fe_add_portable_(r, a, b); }
FE_INLINE void fe_sub(fe *r, const fe *a, const fe *b) { fe_sub_portable_(r, a, b); }
FE_INLINE void fe_half(fe *r, const fe *a) { fe_half_portable_(r, a); }
#endif

FE_INLINE void fe_neg(fe *r, const fe *a) { fe_sub(r, &FE_ZERO, a); }

/* r = a·k for a small constant k (k < 2^31). */
FE_INLINE void fe_mul_small(fe *r, const fe *a, u64 k) {
    u128 t = (u128)a->n[0] * k;
    u64 r0 = (u64)t;
    t = (t >> 64) + (u128)a->n[1] * k;
    u64 r1 = (u64)t;
    t = (t >> 64) + (u128)a->n[2] * k;
    u64 r2 = (u64)t;
    t = (t >> 64) + (u128)a->n[3] * k;
    fe_fold_(r, r0, r1, r2, (u64)t, (u64)(t >> 64));
}

/* Reduce the 512-bit l[0..7]: lo + hi·C (< 2^290), then fold the top limb once more. */
static inline void fe_reduce512_(fe *r, const u64 l[8]) {
    u128 t = (u128)l[4] * FE_C + l[0];
    u64 r0 = (u64)t;
    t = (t >> 64) + (u128)l[5] * FE_C + l[1];
    u64 r1 = (u64)t;
    t = (t >> 64) + (u128)l[6] * FE_C + l[2];
    u64 r2 = (u64)t;
    t = (t >> 64) + (u128)l[7] * FE_C + l[3];
    fe_fold_(r, r0, r1, r2, (u64)t, (u64)(t >> 64));
}

/* Column-wise (product scanning) accumulation into a 192-bit accumulator (c0, c1, c2): the
 * products of one column are independent, which shortens the carry chains of row-wise schoolbook. */
#define FE_MULADD_(a, b)                                  \
    do {                                                  \
        u128 t_ = (u128)(a) * (b);                        \
        u64 lo_ = (u64)t_, hi_ = (u64)(t_ >> 64);         \
        c0 += lo_;                                        \
        hi_ += (c0 < lo_);                                \
        c1 += hi_;                                        \
        c2 += (c1 < hi_);                                 \
    } while (0)
#define FE_EXTRACT_(out) \
    do {                 \
        out = c0;        \
        c0 = c1;         \
        c1 = c2;         \
        c2 = 0;          \
    } while (0)

/* The full 512-bit product of two 4×64-bit integers (little-endian limbs), shared by the field
 * and the scalar arithmetic, which differ only in how they reduce it.  (Portable C; the ADX
 * build replaces it, see u256_mul_512_ below.) */
static inline void u256_mul_512_portable_(u64 l[8], const u64 a[4], const u64 b[4]) {
    u64 c0 = 0, c1 = 0, c2 = 0;
    const u64 a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    const u64 b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
    FE_MULADD_(a0, b0);
    FE_EXTRACT_(l[0]);
    FE_MULADD_(a0, b1);
    FE_MULADD_(a1, b0);
    FE_EXTRACT_(l[1]);
    FE_MULADD_(a0, b2);
    FE_MULADD_(a1, b1);
    FE_MULADD_(a2, b0);
    FE_EXTRACT_(l[2]);
    FE_MULADD_(a0, b3);
    FE_MULADD_(a1, b2);
    FE_MULADD_(a2, b1);
    FE_MULADD_(a3, b0);
    FE_EXTRACT_(l[3]);
    FE_MULADD_(a1, b3);
    FE_MULADD_(a2, b2);
    FE_MULADD_(a3, b1);
    FE_EXTRACT_(l[4]);
    FE_MULADD_(a2, b3);
    FE_MULADD_(a3, b2);
    FE_EXTRACT_(l[5]);
    FE_MULADD_(a3, b3);
    FE_EXTRACT_(l[6]);
    l[7] = c0;
}

static inline void fe_mul_portable_(fe *r, const fe *a, const fe *b) {
    u64 l[8];
    u256_mul_512_portable_(l, a->n, b->n);
    fe_reduce512_(r, l);
}

/* Add 2·a·b to the accumulator (cross products of a square).  2ab has up to 129 bits: its top
 * bit th_ and the carry out of the middle word both go to c2. */
#define FE_MULADD2_(a, b)                                 \
    do {                                                  \
        u128 t_ = (u128)(a) * (b);                        \
        u64 lo_ = (u64)t_, hi_ = (u64)(t_ >> 64);         \
        u64 th_ = hi_ >> 63;                              \
        hi_ = (hi_ << 1) | (lo_ >> 63);                   \
        lo_ <<= 1;                                        \
        c0 += lo_;                                        \
        u64 cy_ = (c0 < lo_);                             \
        hi_ += cy_;                                       \
        th_ += (hi_ < cy_);                               \
        c1 += hi_;                                        \
        c2 += (c1 < hi_) + th_;                           \
    } while (0)

/* Squaring by columns: each cross product once, doubled in the accumulator. */
static inline void fe_sqr_portable_(fe *r, const fe *a) {
    u64 l[8], c0 = 0, c1 = 0, c2 = 0;
    const u64 a0 = a->n[0], a1 = a->n[1], a2 = a->n[2], a3 = a->n[3];
    FE_MULADD_(a0, a0);
    FE_EXTRACT_(l[0]);
    FE_MULADD2_(a0, a1);
    FE_EXTRACT_(l[1]);
    FE_MULADD2_(a0, a2);
    FE_MULADD_(a1, a1);
    FE_EXTRACT_(l[2]);
    FE_MULADD2_(a0, a3);
    FE_MULADD2_(a1, a2);
    FE_EXTRACT_(l[3]);
    FE_MULADD2_(a1, a3);
    FE_MULADD_(a2, a2);
    FE_EXTRACT_(l[4]);
    FE_MULADD2_(a2, a3);
    FE_EXTRACT_(l[5]);
    FE_MULADD_(a3, a3);
    FE_EXTRACT_(l[6]);
    l[7] = c0;
    fe_reduce512_(r, l);
}

/* The multiplications every algorithm uses: the portable C above, or in the module built with
 * CTP_FIELD_ADX the BMI2/ADX assembly of field_adx.h (same results, same preconditions). */
#if defined(CTP_FIELD_ADX) && defined(__OPTIMIZE__) /* (unoptimised code lacks the registers) */
#include "field_adx.h"
#define FIELD_BACKEND "adx"
#define FE_IMPL_(name) name##_adx
#else
#define FIELD_BACKEND "portable"
#define FE_IMPL_(name) name##_portable_
/* The portable build runs everywhere. */
static int kernel_cpu_supported(void) { return 1; }
#endif

FE_INLINE void u256_mul_512_(u64 l[8], const u64 a[4], const u64 b[4]) {
    FE_IMPL_(u256_mul_512)(l, a, b);
}
FE_INLINE void fe_mul(fe *r, const fe *a, const fe *b) { FE_IMPL_(fe_mul)(r, a, b); }
FE_INLINE void fe_sqr(fe *r, const fe *a) { FE_IMPL_(fe_sqr)(r, a); }

/* Canonical form: subtract p once if v >= p (v < 2^256 < 2p). */
static inline void fe_normalize(fe *r) {
    if (UNLIKELY(r->n[3] == FE_ONES && r->n[2] == FE_ONES && r->n[1] == FE_ONES &&
                 r->n[0] >= FE_P0)) {
        r->n[0] -= FE_P0;
        r->n[1] = r->n[2] = r->n[3] = 0;
    }
}

static inline int fe_is_zero(const fe *a) {
    fe t = *a;
    fe_normalize(&t);
    return (t.n[0] | t.n[1] | t.n[2] | t.n[3]) == 0;
}

static inline int fe_equal(const fe *a, const fe *b) {
    fe t;
    fe_sub(&t, a, b);
    return fe_is_zero(&t);
}

/* Parity of the canonical value. */
static inline int fe_is_odd(const fe *a) {
    fe t = *a;
    fe_normalize(&t);
    return (int)(t.n[0] & 1);
}

/* 32 big-endian bytes -> fe; returns 0 if the value is >= p (r then holds v mod 2^256, still a
 * valid weakly reduced fe). */
/* Big-endian 64-bit load/store through memcpy (one unaligned move plus a byte swap). */
static inline u64 load_be64_(const unsigned char *b) {
    u64 v;
    memcpy(&v, b, 8);
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap64(v);
#else
    v = 0;
    for (int j = 0; j < 8; j++) v = (v << 8) | b[j];
    return v;
#endif
}

static inline void store_be64_(unsigned char *b, u64 v) {
#if defined(__GNUC__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(b, &v, 8);
#else
    for (int j = 7; j >= 0; j--) {
        b[j] = (unsigned char)v;
        v >>= 8;
    }
#endif
}

static inline int fe_set_b32(fe *r, const unsigned char *b) {
    for (int i = 0; i < 4; i++) r->n[i] = load_be64_(b + (3 - i) * 8);
    return !(r->n[3] == FE_ONES && r->n[2] == FE_ONES && r->n[1] == FE_ONES && r->n[0] >= FE_P0);
}

/* Canonical big-endian bytes. */
static inline void fe_get_b32(unsigned char *b, const fe *a) {
    fe t = *a;
    fe_normalize(&t);
    for (int i = 0; i < 4; i++) store_be64_(b + (3 - i) * 8, t.n[i]);
}

static inline void fe_sqr_n_(fe *r, const fe *a, int n) {
    fe_sqr(r, a);
    for (int i = 1; i < n; i++) fe_sqr(r, r);
}

/* a^(2^k - 1) for the chain blocks shared by inversion and square root:
 * out x2, x22, x223 (x_k = a^(2^k - 1)). */
static void fe_pow_blocks_(const fe *a, fe *x2, fe *x22, fe *x223) {
    fe x3, x6, x9, x11, x44, x88, x176, x220, t;
    fe_sqr(x2, a);
    fe_mul(x2, x2, a);
    fe_sqr(&x3, x2);
    fe_mul(&x3, &x3, a);
    fe_sqr_n_(&t, &x3, 3);
    fe_mul(&x6, &t, &x3);
    fe_sqr_n_(&t, &x6, 3);
    fe_mul(&x9, &t, &x3);
    fe_sqr_n_(&t, &x9, 2);
    fe_mul(&x11, &t, x2);
    fe_sqr_n_(&t, &x11, 11);
    fe_mul(x22, &t, &x11);
    fe_sqr_n_(&t, x22, 22);
    fe_mul(&x44, &t, x22);
    fe_sqr_n_(&t, &x44, 44);
    fe_mul(&x88, &t, &x44);
    fe_sqr_n_(&t, &x88, 88);
    fe_mul(&x176, &t, &x88);
    fe_sqr_n_(&t, &x176, 44);
    fe_mul(&x220, &t, &x44);
    fe_sqr_n_(&t, &x220, 3);
    fe_mul(x223, &t, &x3);
}

/* r = a^(p-2) = a^-1 (0 maps to 0).  p-2 in binary: 223 ones, 0, 22 ones, 0000 1 0 11 0 1.
 * Kept as the cross-check of the faster fe_inv_var (modinv.h). */
static void fe_inv_fermat(fe *r, const fe *a) {
    fe x2, x22, x223, t;
    fe_pow_blocks_(a, &x2, &x22, &x223);
    fe_sqr_n_(&t, &x223, 23);
    fe_mul(&t, &t, &x22);
    fe_sqr_n_(&t, &t, 5);
    fe_mul(&t, &t, a);
    fe_sqr_n_(&t, &t, 3);
    fe_mul(&t, &t, &x2);
    fe_sqr_n_(&t, &t, 2);
    fe_mul(r, &t, a);
}

/* r = a^((p+1)/4); returns 1 iff r^2 = a (a is a square).  r must not alias a.  Since (p+1)/4 is even, r is itself a
 * square: this is the "quadratic residue" root of secp256k1-zkp. */
static int fe_sqrt_var(fe *r, const fe *a) {
    fe x2, x22, x223, t;
    fe_pow_blocks_(a, &x2, &x22, &x223);
    fe_sqr_n_(&t, &x223, 23);
    fe_mul(&t, &t, &x22);
    fe_sqr_n_(&t, &t, 6);
    fe_mul(&t, &t, &x2);
    fe_sqr_n_(r, &t, 2);
    fe_sqr(&t, r);
    return fe_equal(&t, a);
}

/* Jacobi symbol (a | p) in {-1, 0, 1} by the binary algorithm on limbs: strip factors of two
 * ((2 | n) = -1 iff n ≡ 3, 5 mod 8), keep a >= n by swapping under quadratic reciprocity (a sign
 * flip iff both ≡ 3 mod 4), subtract; the operands shrink limb by limb.  About twice as fast as
 * Euler's criterion by exponentiation.  a is a quadratic residue iff the result is 1 (or 0). */
static int fe_jacobi_var(const fe *x) {
    fe xa = *x;
    fe_normalize(&xa);
    u64 a[4] = {xa.n[0], xa.n[1], xa.n[2], xa.n[3]};
    u64 n[4] = {FE_P0, FE_ONES, FE_ONES, FE_ONES};
    int t = 1, len = 4;
    for (;;) {
        while (len > 1 && a[len - 1] == 0 && n[len - 1] == 0) len--;
        int zero = 1;
        for (int i = 0; i < len; i++) zero &= a[i] == 0;
        if (zero) break;
        int z = 0;
        if (UNLIKELY(a[0] == 0)) { /* whole zero limbs */
            int wz = 0;
            while (a[wz] == 0) wz++;
            for (int i = 0; i < len; i++) a[i] = i + wz < len ? a[i + wz] : 0;
            z = 64 * wz;
        }
        int bz = __builtin_ctzll(a[0]);
        if (bz) {
            for (int i = 0; i < len - 1; i++) a[i] = (a[i] >> bz) | (a[i + 1] << (64 - bz));
            a[len - 1] >>= bz;
        }
        z += bz;
        if ((z & 1) && ((n[0] & 7) == 3 || (n[0] & 7) == 5)) t = -t;
        int less = 0;
        for (int i = len - 1; i >= 0; i--) {
            if (a[i] != n[i]) {
                less = a[i] < n[i];
                break;
            }
        }
        if (less) {
            for (int i = 0; i < len; i++) {
                u64 tmp = a[i];
                a[i] = n[i];
                n[i] = tmp;
            }
            if ((a[0] & 3) == 3 && (n[0] & 3) == 3) t = -t;
        }
        unsigned char borrow = 0;
        for (int i = 0; i < len; i++) {
            u64 d;
            unsigned char b1 = __builtin_sub_overflow(a[i], n[i], &d);
            b1 |= __builtin_sub_overflow(d, (u64)borrow, &a[i]);
            borrow = b1;
        }
    }
    /* the loop ends with n = gcd(a, p): 1 unless a ≡ 0 */
    int one = n[0] == 1;
    for (int i = 1; i < len; i++) one &= n[i] == 0;
    return one ? t : 0;
}

#endif

/* Scalars mod the group order N, 4 x 64-bit limbs (little-endian limbs), always canonical (< N).
 *
 * PUBLIC DATA ONLY (variable time).
 *
 * Reduction: 2^256 ≡ NC = 2^256 - N (a 129-bit number) mod N, so hi·2^256 + lo ≡ hi·NC + lo; three
 * folds bring a 512-bit product below 2^256 + 2^134, and one conditional subtraction finishes.
 */
#ifndef CTPLUGIN_SCALAR_H
#define CTPLUGIN_SCALAR_H

#include "field.h"
#include "modinv.h"

typedef struct {
    u64 n[4];
} sc;

static const sc SC_N = {{0xbfd25e8cd0364141ULL, 0xbaaedce6af48a03bULL, 0xfffffffffffffffeULL,
                         0xffffffffffffffffULL}};
#define SC_NC0 0x402da1732fc9bebfULL
#define SC_NC1 0x4551231950b75fc4ULL /* NC2 = 1 */

static const sc SC_ZERO = {{0, 0, 0, 0}};
static const sc SC_ONE = {{1, 0, 0, 0}};

static inline int sc_is_zero(const sc *a) { return (a->n[0] | a->n[1] | a->n[2] | a->n[3]) == 0; }

/* a >= N for a 256-bit a */
static inline int sc_ge_n_(const u64 a[4]) {
    for (int i = 3; i >= 0; i--) {
        if (a[i] != SC_N.n[i]) return a[i] > SC_N.n[i];
    }
    return 1;
}

/* 32 big-endian bytes -> sc; returns 0 (and leaves r unspecified) if the value is >= N. */
static inline int sc_set_b32(sc *r, const unsigned char *b) {
    for (int i = 0; i < 4; i++) r->n[i] = load_be64_(b + (3 - i) * 8);
    return !sc_ge_n_(r->n);
}

static inline void sc_get_b32(unsigned char *b, const sc *a) {
    for (int i = 0; i < 4; i++) store_be64_(b + (3 - i) * 8, a->n[i]);
}

/* r = a - N (mod 2^256), i.e. a + NC */
static inline void sc_sub_n_(u64 r[4]) {
    u128 t = (u128)r[0] + SC_NC0;
    r[0] = (u64)t;
    t = (t >> 64) + r[1] + SC_NC1;
    r[1] = (u64)t;
    t = (t >> 64) + r[2] + 1;
    r[2] = (u64)t;
    t = (t >> 64) + r[3];
    r[3] = (u64)t;
}

static inline void sc_add(sc *r, const sc *a, const sc *b) {
    u128 t = (u128)a->n[0] + b->n[0];
    u64 v[4];
    v[0] = (u64)t;
    t = (t >> 64) + a->n[1] + b->n[1];
    v[1] = (u64)t;
    t = (t >> 64) + a->n[2] + b->n[2];
    v[2] = (u64)t;
    t = (t >> 64) + a->n[3] + b->n[3];
    v[3] = (u64)t;
    if ((t >> 64) || sc_ge_n_(v)) sc_sub_n_(v);
    memcpy(r->n, v, sizeof v);
}

static inline void sc_neg(sc *r, const sc *a) {
    if (sc_is_zero(a)) {
        *r = SC_ZERO;
        return;
    }
    u128 t = (u128)SC_N.n[0] - a->n[0];
    u64 v[4];
    v[0] = (u64)t;
    /* borrow propagation through two's complement of the high half */
    t = (u128)SC_N.n[1] - a->n[1] - (u64)((t >> 64) & 1);
    v[1] = (u64)t;
    t = (u128)SC_N.n[2] - a->n[2] - (u64)((t >> 64) & 1);
    v[2] = (u64)t;
    t = (u128)SC_N.n[3] - a->n[3] - (u64)((t >> 64) & 1);
    v[3] = (u64)t;
    memcpy(r->n, v, sizeof v);
}

#define SC_SUMADD_(a)          \
    do {                       \
        u64 a_ = (a);          \
        c0 += a_;              \
        u64 o_ = (c0 < a_);    \
        c1 += o_;              \
        c2 += (c1 < o_);       \
    } while (0)

/* r = l mod N for a 512-bit l: three column-wise folds hi·NC + lo, NC = NC0 + NC1·2^64 + 2^128. */
static inline void sc_reduce512_(sc *r, const u64 l[8]) {
    u64 c0, c1 = 0, c2 = 0;
    const u64 l4 = l[4], l5 = l[5], l6 = l[6], l7 = l[7];
    u64 m0, m1, m2, m3, m4, m5, m6;
    /* m = l[0..3] + l[4..7]·NC  (< 2^386) */
    c0 = l[0];
    FE_MULADD_(l4, SC_NC0);
    FE_EXTRACT_(m0);
    SC_SUMADD_(l[1]);
    FE_MULADD_(l5, SC_NC0);
    FE_MULADD_(l4, SC_NC1);
    FE_EXTRACT_(m1);
    SC_SUMADD_(l[2]);
    FE_MULADD_(l6, SC_NC0);
    FE_MULADD_(l5, SC_NC1);
    SC_SUMADD_(l4);
    FE_EXTRACT_(m2);
    SC_SUMADD_(l[3]);
    FE_MULADD_(l7, SC_NC0);
    FE_MULADD_(l6, SC_NC1);
    SC_SUMADD_(l5);
    FE_EXTRACT_(m3);
    FE_MULADD_(l7, SC_NC1);
    SC_SUMADD_(l6);
    FE_EXTRACT_(m4);
    SC_SUMADD_(l7);
    FE_EXTRACT_(m5);
    m6 = c0;
    /* p = m[0..3] + m[4..6]·NC  (< 2^260) */
    u64 p0, p1, p2, p3, p4;
    c0 = m0;
    c1 = c2 = 0;
    FE_MULADD_(m4, SC_NC0);
    FE_EXTRACT_(p0);
    SC_SUMADD_(m1);
    FE_MULADD_(m5, SC_NC0);
    FE_MULADD_(m4, SC_NC1);
    FE_EXTRACT_(p1);
    SC_SUMADD_(m2);
    FE_MULADD_(m6, SC_NC0);
    FE_MULADD_(m5, SC_NC1);
    SC_SUMADD_(m4);
    FE_EXTRACT_(p2);
    SC_SUMADD_(m3);
    FE_MULADD_(m6, SC_NC1);
    SC_SUMADD_(m5);
    FE_EXTRACT_(p3);
    p4 = c0 + m6;
    /* q = p[0..3] + p4·NC  (< 2^256 + 2^134) */
    u64 q[4];
    u128 t = (u128)p4 * SC_NC0 + p0;
    q[0] = (u64)t;
    t = (t >> 64) + (u128)p4 * SC_NC1 + p1;
    q[1] = (u64)t;
    t = (t >> 64) + (u128)p4 + p2;
    q[2] = (u64)t;
    t = (t >> 64) + p3;
    q[3] = (u64)t;
    if ((u64)(t >> 64) || sc_ge_n_(q)) sc_sub_n_(q); /* q - N = (q mod 2^256) + NC, below N */
    memcpy(r->n, q, sizeof q);
}

static inline void sc_mul512_(u64 l[8], const sc *a, const sc *b) {
    u256_mul_512_(l, a->n, b->n);
}

static inline void sc_mul(sc *r, const sc *a, const sc *b) {
    u64 l[8];
    sc_mul512_(l, a, b);
    sc_reduce512_(r, l);
}

/* Lazily reduced sums of products: 9 limbs (576 bits) hold up to 2^64 products of two scalars
 * (each < N^2 < 2^512) without reduction, so accumulating a·b costs a 512-bit product and an
 * addition; sc_wide_reduce gives the canonical scalar when the sum is read. */
typedef struct {
    u64 n[9];
} sc_wide;

/* 2^512 mod N */
static const sc SC_R512 = {{0x896cf21467d7d140ULL, 0x741496c20e7cf878ULL, 0xe697f5e45bcd07c6ULL,
                            0x9d671cd581c69bc5ULL}};

/* r += a·b (precondition: fewer than 2^64 terms added since r was zero) */
static inline void sc_wide_add_mul(sc_wide *r, const sc *a, const sc *b) {
    u64 l[8];
    sc_mul512_(l, a, b);
    u128 c = 0;
    for (int i = 0; i < 8; i++) {
        c += (u128)r->n[i] + l[i];
        r->n[i] = (u64)c;
        c >>= 64;
    }
    r->n[8] += (u64)c;
}

/* r += a */
static inline void sc_wide_add(sc_wide *r, const sc *a) {
    u128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (u128)r->n[i] + a->n[i];
        r->n[i] = (u64)c;
        c >>= 64;
    }
    for (int i = 4; i < 9 && c; i++) {
        c += r->n[i];
        r->n[i] = (u64)c;
        c >>= 64;
    }
}

/* r = a mod N.  a = lo + a8·2^512 ≡ lo + a8·(2^512 mod N) < 2^512 + 2^320; a second fold (when
 * that overflows 512 bits, the low part is then below 2^320) brings it below 2^512. */
static inline void sc_wide_reduce(sc *r, const sc_wide *a) {
    u64 t[9];
    memcpy(t, a->n, sizeof t);
    while (t[8]) {
        u64 hi = t[8];
        u128 c = 0;
        for (int i = 0; i < 4; i++) {
            c += (u128)hi * SC_R512.n[i] + t[i];
            t[i] = (u64)c;
            c >>= 64;
        }
        t[8] = 0;
        for (int i = 4; i < 9 && c; i++) {
            c += t[i];
            t[i] = (u64)c;
            c >>= 64;
        }
    }
    sc_reduce512_(r, t);
}

/* r = a^(N-2) = a^-1 (0 maps to 0); 4-bit fixed window over the public exponent.  Kept as the
 * cross-check of the faster sc_inv_var below. */
static void sc_inv_fermat(sc *r, const sc *a) {
    static const u64 e[4] = {0xbfd25e8cd036413fULL, 0xbaaedce6af48a03bULL, 0xfffffffffffffffeULL,
                             0xffffffffffffffffULL};
    sc tab[16];
    tab[0] = SC_ONE;
    for (int i = 1; i < 16; i++) sc_mul(&tab[i], &tab[i - 1], a);
    sc acc = SC_ONE;
    for (int i = 63; i >= 0; i--) {
        int d = (int)((e[i / 16] >> (4 * (i % 16))) & 15);
        if (i != 63) {
            for (int k = 0; k < 4; k++) sc_mul(&acc, &acc, &acc);
        }
        if (d) sc_mul(&acc, &acc, &tab[d]);
    }
    *r = acc;
}

/* r = a^-1 mod N (0 maps to 0), variable time (safegcd). */
static inline void sc_inv_var(sc *r, const sc *a) { modinv_var(r->n, a->n, &MODINV_N); }

/* Bits [pos, pos+count) of a 4-limb number, count <= 32. */
static inline u64 limbs_bits_(const u64 *n, int limbs, int pos, int count) {
    int li = pos >> 6, sh = pos & 63;
    if (li >= limbs) return 0;
    u64 v = n[li] >> sh;
    if (sh + count > 64 && li + 1 < limbs) v |= n[li + 1] << (64 - sh);
    return v & ((1ULL << count) - 1);
}

#endif

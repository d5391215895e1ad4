/* SHA-256 (FIPS 180-4) for every C extension of ctplugin: the compression function (portable, and
 * the x86 SHA extensions when the CPU has them), a streaming context, double SHA-256 and the bare
 * one-block midstate Elements' fast Merkle tree uses.  Header-only (static functions): each
 * extension that includes it gets its own copy and its own backend selection.
 *
 * Backend selection is lazy: the first compression call probes the CPU (cpuid) and runs both
 * implementations on a test input, and keeps the SHA-NI one only if they agree.  Nothing runs
 * when an extension is merely imported.  The selection is a single function pointer, read and
 * written atomically, so it may be resolved or switched (sha256_set_backend, for tests) from any
 * thread, with or without the GIL.
 *
 * No Python here: usable from code running without the GIL.  Preconditions are stated per
 * function; none of these functions can fail.
 */
#ifndef CTPLUGIN_NATIVE_SHA256_H
#define CTPLUGIN_NATIVE_SHA256_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define SHA256_HAVE_SHANI_CODE 1
#endif

static const uint32_t SHA256_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
static const uint32_t SHA256_IV[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

#define SHA256_ROTR_(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static inline uint32_t sha256_load_be32_(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* The 8 state words as 32 big-endian bytes (a digest, or Elements' midstate). */
static inline void sha256_store_state_(uint8_t out[32], const uint32_t s[8]) {
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s[i] >> 8);
        out[4 * i + 3] = (uint8_t)s[i];
    }
}

/* Compress `blocks` consecutive 64-byte blocks at p into the state s (portable C). */
static void sha256_compress_portable(uint32_t s[8], const uint8_t *p, size_t blocks) {
    uint32_t w[64];
    while (blocks--) {
        uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
        for (int i = 0; i < 16; i++) w[i] = sha256_load_be32_(p + 4 * i);
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = SHA256_ROTR_(w[i - 15], 7) ^ SHA256_ROTR_(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = SHA256_ROTR_(w[i - 2], 17) ^ SHA256_ROTR_(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = h + (SHA256_ROTR_(e, 6) ^ SHA256_ROTR_(e, 11) ^ SHA256_ROTR_(e, 25)) +
                          ((e & f) ^ (~e & g)) + SHA256_K[i] + w[i];
            uint32_t t2 = (SHA256_ROTR_(a, 2) ^ SHA256_ROTR_(a, 13) ^ SHA256_ROTR_(a, 22)) +
                          ((a & b) ^ (a & c) ^ (b & c));
            h = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        s[0] += a;
        s[1] += b;
        s[2] += c;
        s[3] += d;
        s[4] += e;
        s[5] += f;
        s[6] += g;
        s[7] += h;
        p += 64;
    }
}

#ifdef SHA256_HAVE_SHANI_CODE
/* The same function with the x86 SHA extensions (state kept as ABEF/CDGH lane pairs).
 * Precondition: the CPU has SHA, SSE4.1 and SSSE3 (sha256_cpu_has_shani_). */
__attribute__((target("sha,sse4.1,ssse3")))
static void sha256_compress_shani(uint32_t s[8], const uint8_t *p, size_t blocks) {
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s[0]), 0xB1);
    __m128i st1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s[4]), 0x1B);
    __m128i st0 = _mm_alignr_epi8(tmp, st1, 8);
    st1 = _mm_blend_epi16(st1, tmp, 0xF0);
    while (blocks--) {
        __m128i save0 = st0, save1 = st1, w[16], msg;
        for (int i = 0; i < 16; i++) {
            if (i < 4) {
                w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
            } else {
                __m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(w[i - 4], w[i - 3]),
                                          _mm_alignr_epi8(w[i - 1], w[i - 2], 4));
                w[i] = _mm_sha256msg2_epu32(t, w[i - 1]);
            }
            msg = _mm_add_epi32(w[i], _mm_loadu_si128((const __m128i *)&SHA256_K[4 * i]));
            st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
            st0 = _mm_sha256rnds2_epu32(st0, st1, _mm_shuffle_epi32(msg, 0x0E));
        }
        st0 = _mm_add_epi32(st0, save0);
        st1 = _mm_add_epi32(st1, save1);
        p += 64;
    }
    tmp = _mm_shuffle_epi32(st0, 0x1B);
    st1 = _mm_shuffle_epi32(st1, 0xB1);
    st0 = _mm_blend_epi16(tmp, st1, 0xF0);
    st1 = _mm_alignr_epi8(st1, tmp, 8);
    _mm_storeu_si128((__m128i *)&s[0], st0);
    _mm_storeu_si128((__m128i *)&s[4], st1);
}

/* cpuid: SHA (leaf 7 EBX bit 29), SSE4.1 (leaf 1 ECX bit 19), SSSE3 (leaf 1 ECX bit 9). */
static int sha256_cpu_has_shani_(void) {
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 29)) &&
           __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 19)) && (c & (1u << 9));
}
#endif

typedef void (*sha256_compress_fn)(uint32_t s[8], const uint8_t *p, size_t blocks);

static void sha256_compress_resolve_(uint32_t s[8], const uint8_t *p, size_t blocks);

/* The selected compression function; sha256_compress_resolve_ until the first call. */
static sha256_compress_fn sha256_compress_impl_ = sha256_compress_resolve_;

/* The fastest implementation that agrees with the portable one on a two-block test input. */
static sha256_compress_fn sha256_best_backend_(void) {
#ifdef SHA256_HAVE_SHANI_CODE
    if (sha256_cpu_has_shani_()) {
        uint32_t s1[8], s2[8];
        uint8_t blk[128];
        for (int i = 0; i < 128; i++) blk[i] = (uint8_t)(i * 7 + 3);
        memcpy(s1, SHA256_IV, sizeof s1);
        memcpy(s2, SHA256_IV, sizeof s2);
        sha256_compress_portable(s1, blk, 2);
        sha256_compress_shani(s2, blk, 2);
        if (!memcmp(s1, s2, sizeof s1)) return sha256_compress_shani;
    }
#endif
    return sha256_compress_portable;
}

static sha256_compress_fn sha256_backend_(void) {
    sha256_compress_fn f = __atomic_load_n(&sha256_compress_impl_, __ATOMIC_ACQUIRE);
    if (f == sha256_compress_resolve_) {
        f = sha256_best_backend_();
        __atomic_store_n(&sha256_compress_impl_, f, __ATOMIC_RELEASE);
    }
    return f;
}

static void sha256_compress_resolve_(uint32_t s[8], const uint8_t *p, size_t blocks) {
    sha256_backend_()(s, p, blocks);
}

/* Compress blocks (64 bytes each) at p into s with the selected implementation. */
static inline void sha256_compress(uint32_t s[8], const uint8_t *p, size_t blocks) {
    __atomic_load_n(&sha256_compress_impl_, __ATOMIC_ACQUIRE)(s, p, blocks);
}

/* "portable" or "shani": the implementation in use (resolving it if no call was made yet). */
static const char *sha256_backend_name(void) {
    return sha256_backend_() == sha256_compress_portable ? "portable" : "shani";
}

/* Select an implementation by name (tests run every path).  Returns 0 on success, -1 for an
 * unknown name, -2 when the CPU lacks the SHA extensions. */
static int sha256_set_backend(const char *name) {
    if (!strcmp(name, "portable")) {
        __atomic_store_n(&sha256_compress_impl_, sha256_compress_portable, __ATOMIC_RELEASE);
        return 0;
    }
    if (!strcmp(name, "shani")) {
#ifdef SHA256_HAVE_SHANI_CODE
        if (!sha256_cpu_has_shani_()) return -2;
        __atomic_store_n(&sha256_compress_impl_, sha256_compress_shani, __ATOMIC_RELEASE);
        return 0;
#else
        return -2;
#endif
    }
    return -1;
}

/* --- streaming SHA-256 --------------------------------------------------------------------- */

typedef struct {
    uint32_t s[8];
    uint8_t buf[64];
    size_t fill;    /* bytes pending in buf (< 64) */
    uint64_t total; /* bytes written so far */
} sha256_ctx;

static inline void sha256_init(sha256_ctx *c) {
    memcpy(c->s, SHA256_IV, sizeof SHA256_IV);
    c->fill = 0;
    c->total = 0;
}

/* Append n bytes at p (p may be NULL when n = 0). */
static void sha256_write(sha256_ctx *c, const uint8_t *p, size_t n) {
    if (n == 0) return; /* (p may be NULL then: no memcpy from it) */
    c->total += n;
    if (c->fill) {
        size_t take = 64 - c->fill < n ? 64 - c->fill : n;
        memcpy(c->buf + c->fill, p, take);
        c->fill += take;
        p += take;
        n -= take;
        if (c->fill < 64) return;
        sha256_compress(c->s, c->buf, 1);
        c->fill = 0;
    }
    if (n >= 64) {
        sha256_compress(c->s, p, n / 64);
        p += n & ~(size_t)63;
        n &= 63;
    }
    memcpy(c->buf, p, n);
    c->fill = n;
}

/* Pad and write the digest; the context is spent afterwards (sha256_init to reuse it). */
static void sha256_final(sha256_ctx *c, uint8_t out[32]) {
    uint64_t bits = c->total * 8;
    uint8_t pad[72] = {0x80};
    size_t padlen = (c->fill < 56 ? 56 : 120) - c->fill;
    for (int i = 0; i < 8; i++) pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_write(c, pad, padlen + 8);
    sha256_store_state_(out, c->s);
}

/* SHA256(SHA256(a || b || c)) over up to three byte ranges (NULL with length 0 allowed). */
static void sha256d3(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, const uint8_t *c,
                     size_t nc, uint8_t out[32]) {
    sha256_ctx ctx;
    uint8_t mid[32];
    sha256_init(&ctx);
    sha256_write(&ctx, a, na);
    sha256_write(&ctx, b, nb);
    sha256_write(&ctx, c, nc);
    sha256_final(&ctx, mid);
    sha256_init(&ctx);
    sha256_write(&ctx, mid, 32);
    sha256_final(&ctx, out);
}

static inline void sha256d(const uint8_t *p, size_t n, uint8_t out[32]) {
    sha256d3(p, n, NULL, 0, NULL, 0, out);
}

/* Elements' CSHA256::Midstate of one block left || right: the compression of that block from the
 * IV, no padding, the state written big-endian.  out may alias left or right. */
static void sha256_midstate_pair(const uint8_t left[32], const uint8_t right[32], uint8_t out[32]) {
    uint8_t block[64];
    uint32_t s[8];
    memcpy(block, left, 32);
    memcpy(block + 32, right, 32);
    memcpy(s, SHA256_IV, sizeof SHA256_IV);
    sha256_compress(s, block, 1);
    sha256_store_state_(out, s);
}

#endif

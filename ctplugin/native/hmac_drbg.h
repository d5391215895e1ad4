/* HMAC-SHA256 with a 32-byte key and the RFC 6979 HMAC-SHA256 generator as libsecp256k1 runs it
 * (secp256k1_rfc6979_hmac_sha256: K = 0^32, V = 1^32, two seeding rounds; from the second
 * output on, K = HMAC_K(V ‖ 0x00), V = HMAC_K(V) first; then V = HMAC_K(V) per 32-byte block).
 *
 * The generator's state is SECRET (the rangeproof signer's stream): no branch and no memory
 * access here depends on the key, the state or the seed's contents, only on lengths; the state
 * is wiped before returning.  No Python; no allocation; cannot fail.
 */
#ifndef CTPLUGIN_NATIVE_HMAC_DRBG_H
#define CTPLUGIN_NATIVE_HMAC_DRBG_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctplugin/native/sha256.h"

/* The key's inner and outer pad states (one compression each), so each HMAC of a short message
 * costs two more compressions. */
typedef struct {
    sha256_ctx inner, outer;
} hmac_sha256_key;

static void hmac_sha256_set_key(hmac_sha256_key *h, const uint8_t key[32]) {
    uint8_t pad[64];
    memset(pad, 0x36, sizeof pad);
    for (int i = 0; i < 32; i++) pad[i] ^= key[i];
    sha256_init(&h->inner);
    sha256_write(&h->inner, pad, 64);
    for (int i = 0; i < 64; i++) pad[i] ^= 0x36 ^ 0x5c;
    sha256_init(&h->outer);
    sha256_write(&h->outer, pad, 64);
    memset(pad, 0, sizeof pad);
}

/* out = HMAC_key(a ‖ b ‖ c) (b and c may be NULL with length 0); out may alias a. */
static void hmac_sha256(const hmac_sha256_key *h, const uint8_t *a, size_t na, const uint8_t *b,
                        size_t nb, const uint8_t *c, size_t nc, uint8_t out[32]) {
    sha256_ctx t = h->inner;
    uint8_t mid[32];
    sha256_write(&t, a, na);
    sha256_write(&t, b, nb);
    sha256_write(&t, c, nc);
    sha256_final(&t, mid);
    t = h->outer;
    sha256_write(&t, mid, 32);
    sha256_final(&t, out);
    memset(mid, 0, sizeof mid);
}

/* The first `blocks` 32-byte outputs of the generator seeded with seed[0..len), into out. */
static void rfc6979_hmac_sha256_stream(const uint8_t *seed, size_t len, uint8_t *out,
                                       size_t blocks) {
    static const uint8_t zero = 0x00, one = 0x01;
    uint8_t k[32], v[32];
    hmac_sha256_key h;
    memset(k, 0, 32);
    memset(v, 1, 32);
    hmac_sha256_set_key(&h, k);
    hmac_sha256(&h, v, 32, &zero, 1, seed, len, k);
    hmac_sha256_set_key(&h, k);
    hmac_sha256(&h, v, 32, NULL, 0, NULL, 0, v);
    hmac_sha256(&h, v, 32, &one, 1, seed, len, k);
    hmac_sha256_set_key(&h, k);
    hmac_sha256(&h, v, 32, NULL, 0, NULL, 0, v);
    for (size_t i = 0; i < blocks; i++) {
        if (i) {
            hmac_sha256(&h, v, 32, &zero, 1, NULL, 0, k);
            hmac_sha256_set_key(&h, k);
            hmac_sha256(&h, v, 32, NULL, 0, NULL, 0, v);
        }
        hmac_sha256(&h, v, 32, NULL, 0, NULL, 0, v);
        memcpy(out + 32 * i, v, 32);
    }
    /* wipe the secret state (volatile stores: not optimized away) */
    volatile uint8_t *w = (volatile uint8_t *)&h;
    for (size_t i = 0; i < sizeof h; i++) w[i] = 0;
    w = k;
    for (size_t i = 0; i < 32; i++) w[i] = 0;
    w = v;
    for (size_t i = 0; i < 32; i++) w[i] = 0;
}

#endif

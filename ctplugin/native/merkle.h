/* Elements' fast Merkle root (ComputeFastMerkleRoot), for every C extension of ctplugin.
 * Inner node = sha256_midstate_pair(left, right).  No Python here; cannot fail.
 */
#ifndef CTPLUGIN_NATIVE_MERKLE_H
#define CTPLUGIN_NATIVE_MERKLE_H

#include "ctplugin/native/sha256.h"

/* Largest leaf count fast_merkle_root accepts (its pending-subtree stack has 32 levels). */
#define FAST_MERKLE_MAX_LEAVES 0x7fffffffULL

/* The root over n leaves of 32 bytes each, consecutive at `leaves`, in constant space:
 * inner[level] holds the root of the complete subtree of 2^level leaves pending at that level.
 * An odd node at the end of a level is carried up unchanged (Elements does NOT pair it with
 * itself, unlike Bitcoin's Merkle tree).  n = 0 gives 32 zero bytes.
 * Precondition: n <= FAST_MERKLE_MAX_LEAVES (callers check it). */
static void fast_merkle_root(const uint8_t *leaves, size_t n, uint8_t out[32]) {
    uint8_t inner[32][32], h[32];
    uint32_t count = 0;
    int level;
    if (n == 0) {
        memset(out, 0, 32);
        return;
    }
    while (count < n) {
        memcpy(h, leaves + 32 * (size_t)count, 32);
        count++;
        for (level = 0; !(count & (1u << level)); level++) sha256_midstate_pair(inner[level], h, h);
        memcpy(inner[level], h, 32);
    }
    for (level = 0; !(count & (1u << level)); level++) {
    }
    memcpy(h, inner[level], 32);
    while (count != (1u << level)) {
        count += 1u << level;
        level++;
        while (!(count & (1u << level))) {
            sha256_midstate_pair(inner[level], h, h);
            level++;
        }
    }
    memcpy(out, h, 32);
}

#endif

/* Point decoding: encoded x coordinates (with a prefix or flag choosing y) to affine points, many
 * at once.  PUBLIC DATA ONLY (variable time).  No Python.
 *
 * Kinds: KIND_COMPRESSED 02/03 (y parity), KIND_PEDERSEN 08/09 and KIND_GENERATOR 0a/0b (low bit:
 * y is NOT a quadratic residue, secp256k1-zkp), KIND_XONLY (32 bytes, even y: BIP340 lift_x),
 * KIND_XQR (flag byte 0/1, or flags packed apart, then x; flag 1: y not a residue).
 *
 * The square roots -- all the cost -- go through fe_sqrt_all_var (field_batch.h), sixteen at a
 * time in AVX-512 IFMA lanes where the CPU has them.  Errors are reported for the first bad
 * point in index order, whatever its kind of failure, as a one-by-one decoder would.
 */
#ifndef CTPLUGIN_DECODE_H
#define CTPLUGIN_DECODE_H

#include "field_batch.h"
#include "group.h"

enum { KIND_COMPRESSED = 0, KIND_PEDERSEN = 1, KIND_GENERATOR = 2, KIND_XONLY = 3, KIND_XQR = 4 };
#define KIND_COUNT 5

/* Failures, in the order a point is checked. */
typedef enum { DECODE_OK = 0, DECODE_PREFIX, DECODE_FIELD_RANGE, DECODE_OFF_CURVE } decode_status;

static inline size_t kind_width(int kind) { return kind == KIND_XONLY ? 32 : 33; }

/* The prefix byte of a kind with flag 0 (KIND_XQR: a bare flag byte 0/1; KIND_XONLY: none). */
static inline int kind_prefix(int kind) {
    return kind == KIND_COMPRESSED ? 0x02 : kind == KIND_PEDERSEN ? 0x08
         : kind == KIND_GENERATOR  ? 0x0a : 0x00;
}

/* Points decoded per batch of roots (bounded stack scratch). */
#define DECODE_BLOCK 256

/* Decode n records: record i is data + width·i (a prefix byte then x, or for KIND_XONLY and
 * when flags is given x alone, flag i = bit i%8 of flags[i/8]).  Writes out[i] (affine,
 * normalised) for every i before the first failure; returns DECODE_OK, or the first failure with
 * *bad = its index. */
static decode_status decode_points_var(ge *out, const unsigned char *data, size_t n, size_t width,
                                       int kind, const unsigned char *flags, size_t *bad) {
    const fe seven = {{7, 0, 0, 0}};
    fe rhs[DECODE_BLOCK], root[DECODE_BLOCK];
    unsigned char is_square[DECODE_BLOCK], flag[DECODE_BLOCK];
    for (size_t b0 = 0; b0 < n; b0 += DECODE_BLOCK) {
        const size_t m = n - b0 < DECODE_BLOCK ? n - b0 : DECODE_BLOCK;
        decode_status fail = DECODE_OK;
        size_t good = m; /* records parsed before a prefix / range failure */
        for (size_t j = 0; j < m; j++) {
            const size_t i = b0 + j;
            const unsigned char *rec = data + width * i, *xb = rec;
            if (flags) {
                flag[j] = (flags[i / 8] >> (i % 8)) & 1;
            } else if (kind == KIND_XONLY) {
                flag[j] = 0;
            } else {
                if ((rec[0] & ~1) != kind_prefix(kind)) {
                    fail = DECODE_PREFIX, good = j;
                    break;
                }
                flag[j] = rec[0] & 1;
                xb = rec + 1;
            }
            ge *r = &out[i];
            if (!fe_set_b32(&r->x, xb)) {
                fail = DECODE_FIELD_RANGE, good = j;
                break;
            }
            fe_sqr(&rhs[j], &r->x);
            fe_mul(&rhs[j], &rhs[j], &r->x);
            fe_add(&rhs[j], &rhs[j], &seven);
        }
        fe_sqrt_all_var(root, is_square, rhs, good);
        for (size_t j = 0; j < good; j++) {
            ge *r = &out[b0 + j];
            if (!is_square[j]) {
                *bad = b0 + j;
                return DECODE_OFF_CURVE;
            }
            r->y = root[j];
            fe_normalize(&r->y);
            const int parity = kind == KIND_COMPRESSED || kind == KIND_XONLY;
            /* the root found is the residue one; the other is its negation */
            if (parity ? (int)(r->y.n[0] & 1) != flag[j] : flag[j]) fe_neg(&r->y, &r->y);
            fe_normalize(&r->y);
            fe_normalize(&r->x);
            r->inf = 0;
        }
        if (fail != DECODE_OK) {
            *bad = b0 + good;
            return fail;
        }
    }
    return DECODE_OK;
}

#endif

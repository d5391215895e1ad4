/* Scalar recodings for the multiplication algorithms: width-w NAF (Straus) and signed c-bit
 * windows (Pippenger, fixed-base tables).  PUBLIC DATA ONLY (variable time).
 */
#ifndef CTPLUGIN_DIGITS_H
#define CTPLUGIN_DIGITS_H

#include <stdint.h>
#include <string.h>

#include "scalar.h"

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

/* Widest signed window: its digits, up to 2^(c-1) in magnitude, must fit int16_t. */
#define DIGITS_MAX_WINDOW 15

/* Signed c-bit digits of m into d[0..windows): digits in [-2^(c-1), 2^(c-1)], Σ d_j 2^(cj) = m.
 * Preconditions: 2 <= c <= DIGITS_MAX_WINDOW (a digit 2^(c-1) = 2^15 would wrap to -2^15 in
 * int16_t: the wrong-result bug window 16 had); windows·c >= bitlen(m) + 1 (so the last carry
 * is absorbed). */
static inline void signed_digits_var(int16_t *d, int windows, const sc *m, int c) {
    int carry = 0;
    const int half = 1 << (c - 1);
    for (int j = 0; j < windows; j++) {
        int v = (int)limbs_bits_(m->n, 4, j * c, c) + carry;
        carry = v > half;
        d[j] = (int16_t)(v - (carry << c));
    }
}

#endif

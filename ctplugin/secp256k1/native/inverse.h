/* Inversion mod p and mod N: single (safegcd, modinv.h) and batched (Montgomery's trick).
 *
 * PUBLIC DATA ONLY (variable time).
 *
 * THE batch inversion of the kernel: fe_inv_all_var and sc_inv_all_var are the only
 * implementations of Montgomery's trick; every caller that needs many inverses (affine
 * normalisation, batched affine additions, scalar vectors) goes through them.
 */
#ifndef CTPLUGIN_INVERSE_H
#define CTPLUGIN_INVERSE_H

#include <stddef.h>

#include "field.h"
#include "modinv.h"
#include "scalar.h"

/* r = a^-1 mod p (0 maps to 0), variable time (safegcd).  a may be weakly reduced. */
static inline void fe_inv_var(fe *r, const fe *a) {
    fe t = *a;
    fe_normalize(&t);
    modinv_var(r->n, t.n, &MODINV_P);
}

/* out[i] = in[i]^-1 for i < n with one field inversion and 3(n-1) multiplications.
 * Preconditions: every in[i] is non-zero mod p; prefix holds n elements (scratch for the
 * running products) and does not alias in.  out may alias in, or be prefix itself when it does
 * not alias in. */
static void fe_inv_all_var(fe *out, const fe *in, size_t n, fe *prefix) {
    if (n == 0) return;
    fe acc = FE_ONE;
    for (size_t i = 0; i < n; i++) {
        prefix[i] = acc;
        fe_mul(&acc, &acc, &in[i]);
    }
    fe inv;
    fe_inv_var(&inv, &acc);
    for (size_t i = n; i-- > 0;) {
        fe t;
        fe_mul(&t, &inv, &prefix[i]);
        fe_mul(&inv, &inv, &in[i]);
        out[i] = t;
    }
}

/* out[i] = in[i]^-1 mod N for i < n, one scalar inversion.  Same preconditions and aliasing
 * rules as fe_inv_all_var (every in[i] non-zero). */
static void sc_inv_all_var(sc *out, const sc *in, size_t n, sc *prefix) {
    if (n == 0) return;
    sc acc = SC_ONE;
    for (size_t i = 0; i < n; i++) {
        prefix[i] = acc;
        sc_mul(&acc, &acc, &in[i]);
    }
    sc inv;
    sc_inv_var(&inv, &acc);
    for (size_t i = n; i-- > 0;) {
        sc t;
        sc_mul(&t, &inv, &prefix[i]);
        sc_mul(&inv, &inv, &in[i]);
        out[i] = t;
    }
}

#endif

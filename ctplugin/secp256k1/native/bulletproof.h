/* Bulletproof verification setup (docs/bulletproofs-format.md §5, §6, §8): from proof bytes to the
 * compact per-proof records, and from records to weighted multi-scalar-multiplication inputs.
 * The executable specification is ctplugin/bulletproofs/_reference.py (record layout, checks and
 * their order, formulas); this file agrees with it bit for bit.
 *
 * PUBLIC DATA ONLY (variable time).  No Python here: callable without the GIL.
 *
 * Work per batch: every x coordinate of every proof is decoded in one pass (bp_decode_all_var),
 * the scalar inversions of all proofs (y and the x_r) share one field-of-scalars inversion
 * (sc_inv_all_var), and the transcript hashes at most two SHA-256 blocks per step from a stack
 * buffer.  Expanding a record (bp_expand_var) costs N/2 + N/2 + nbits + m scalar
 * multiplications (the doubling trees of the G and H coefficients, the (y/2)^i run), N + nbits
 * additions and 2N − nbits lazily reduced multiply-adds into the accumulator.
 */
#ifndef CTPLUGIN_BULLETPROOF_H
#define CTPLUGIN_BULLETPROOF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctplugin/native/sha256.h"
#include "field.h"
#include "field_batch.h"
#include "group.h"
#include "inverse.h"
#include "scalar.h"
#include "threads.h"

/* Failure codes (the same numbers as ctplugin/bulletproofs/_reference.py ERR_*). */
enum {
    BP_OK = 0,
    BP_ERR_LENGTH = 1,
    BP_ERR_COMMITMENT_LENGTH = 2,
    BP_ERR_COMMITMENT_PREFIX = 3,
    BP_ERR_FLAG_BITS = 4,
    BP_ERR_SCALAR = 5,
    BP_ERR_COMMITMENT_POINT = 6,
    BP_ERR_POINT_RANGE = 7,
    BP_ERR_POINT_CURVE = 8,
    BP_ERR_CHALLENGE = 9,
    BP_ERR_VALUE_GENERATOR = 10,
};

/* The defect of a value generator (the detail of BP_ERR_VALUE_GENERATOR). */
enum { BP_GEN_OK = 0, BP_GEN_PREFIX = 1, BP_GEN_RANGE = 2, BP_GEN_CURVE = 3 };

#define BP_OFF_FLAGS 64
#define BP_OFF_POINTS 65
#define BP_OFF_T 193
#define BP_OFF_LR_FLAGS 353
#define BP_HEAD 10 /* record scalars before vm: pg, rg, ph, rh, y/2, z, h, g, β0, γ */
#define BP_MAX_BITS 64
#define BP_MAX_M 64
#define BP_MAX_LG 12 /* N <= 4096 */

static const int BP_SCALAR_OFFSETS[7] = {0, 32, 193, 225, 257, 289, 321};

/* The shape of proofs over m values of nbits bits. */
typedef struct {
    int nbits, m, n, lg;
    size_t flag_bytes, length; /* L/R flag bytes; proof length */
    size_t nfree;              /* free points (and scalars) per proof: m + 4 + 2·lg */
    size_t rec;                /* scalars per record: BP_HEAD + lg + nfree */
} bp_shape;

/* 1 iff nbits and m are powers of two in [1, 64] with nbits·m >= 4 (then *s is filled). */
static int bp_shape_init(bp_shape *s, long nbits, long m) {
    if (nbits < 1 || nbits > BP_MAX_BITS || (nbits & (nbits - 1)) || m < 1 || m > BP_MAX_M ||
        (m & (m - 1)) || nbits * m < 4)
        return 0;
    s->nbits = (int)nbits;
    s->m = (int)m;
    s->n = (int)(nbits * m);
    int lg = 0;
    while ((2 << lg) < s->n) lg++;
    s->lg = lg;
    s->flag_bytes = (size_t)(2 * lg + 7) / 8;
    s->length = BP_OFF_LR_FLAGS + s->flag_bytes + 64 * (size_t)lg;
    s->nfree = (size_t)s->m + 4 + 2 * (size_t)lg;
    s->rec = BP_HEAD + (size_t)lg + s->nfree;
    return 1;
}

/* --- transcript ------------------------------------------------------------------------------ */

/* c = SHA256(c || a || b) (a, b may be NULL with length 0). */
static void bp_absorb2(uint8_t c[32], const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    size_t total = 32 + na + nb;
    if (total <= 119) { /* at most two blocks: pad on the stack, one compression call */
        uint8_t buf[128];
        memcpy(buf, c, 32);
        if (na) memcpy(buf + 32, a, na);
        if (nb) memcpy(buf + 32 + na, b, nb);
        size_t blocks = total <= 55 ? 1 : 2;
        memset(buf + total, 0, 64 * blocks - total);
        buf[total] = 0x80;
        uint64_t bits = (uint64_t)total * 8;
        for (int i = 0; i < 8; i++) buf[64 * blocks - 1 - i] = (uint8_t)(bits >> (8 * i));
        uint32_t s[8];
        memcpy(s, SHA256_IV, sizeof s);
        sha256_compress(s, buf, blocks);
        sha256_store_state_(c, s);
        return;
    }
    sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_write(&ctx, c, 32);
    sha256_write(&ctx, a, na);
    sha256_write(&ctx, b, nb);
    sha256_final(&ctx, c);
}

/* upd(c, P, Q): c = SHA256(c || byte(2·fp + fq) || xs[0..64)). */
static inline void bp_absorb_points(uint8_t c[32], int fp, int fq, const uint8_t *xs) {
    uint8_t flag = (uint8_t)(2 * fp + fq);
    bp_absorb2(c, &flag, 1, xs, 64);
}

/* The state after §6 steps 1–4 for one proof: [min], upd(V_j, g) for j < m, [extra].
 * commitments: 33·m bytes (prefix low bit = f(V_j)); gen: 33 bytes (0a/0b || x).
 * Preconditions: have_min only for m = 1; extra may be NULL iff have_extra is 0 or nextra 0. */
static void bp_statement_state(uint8_t c[32], int m, const uint8_t *commitments,
                               const uint8_t *gen, int have_min, uint64_t min_value,
                               int have_extra, const uint8_t *extra, size_t nextra) {
    memset(c, 0, 32);
    if (have_min) {
        uint8_t buf[12];
        buf[0] = 1, buf[1] = buf[2] = buf[3] = 0; /* LE32(m) with m = 1 */
        for (int i = 0; i < 8; i++) buf[4 + i] = (uint8_t)(min_value >> (8 * i));
        bp_absorb2(c, buf, 12, NULL, 0);
    }
    uint8_t xs[64];
    memcpy(xs + 32, gen + 1, 32);
    for (int j = 0; j < m; j++) {
        const uint8_t *cj = commitments + 33 * (size_t)j;
        memcpy(xs, cj + 1, 32);
        bp_absorb_points(c, cj[0] & 1, gen[0] & 1, xs);
    }
    if (have_extra) bp_absorb2(c, extra, nextra, NULL, 0);
}

/* --- decoding -------------------------------------------------------------------------------- */

/* Decode n (x, flag) pairs: x = xs[32i .. 32i+32), flag = flags[i] (0/1: y is the QR root, or
 * its negation); out[i] gets the point and err[i] BP_OK, BP_ERR_POINT_RANGE (x >= p) or
 * BP_ERR_POINT_CURVE (x³ + 7 not a square; out[i] is then meaningless).  The square roots go
 * through fe_sqrt_all_var (sixteen at a time where the CPU allows).  Returns 0 if scratch
 * memory cannot be allocated. */
static int bp_decode_all_var(ge *out, unsigned char *err, const uint8_t *xs,
                             const unsigned char *flags, size_t n) {
    if (n == 0) return 1;
    fe *rhs = malloc(n * sizeof *rhs), *root = malloc(n * sizeof *root);
    unsigned char *square = malloc(n);
    if (!rhs || !root || !square) {
        free(rhs);
        free(root);
        free(square);
        return 0;
    }
    const fe seven = {{7, 0, 0, 0}};
    for (size_t i = 0; i < n; i++) {
        fe *x = &out[i].x;
        err[i] = fe_set_b32(x, xs + 32 * i) ? BP_OK : BP_ERR_POINT_RANGE;
        fe_sqr(&rhs[i], x);
        fe_mul(&rhs[i], &rhs[i], x);
        fe_add(&rhs[i], &rhs[i], &seven);
    }
    fe_sqrt_all_var(root, square, rhs, n);
    for (size_t i = 0; i < n; i++) {
        if (err[i] == BP_OK && !square[i]) err[i] = BP_ERR_POINT_CURVE;
        out[i].y = root[i];
        if (flags[i]) fe_neg(&out[i].y, &out[i].y);
        fe_normalize(&out[i].y);
        out[i].inf = 0;
    }
    free(rhs);
    free(root);
    free(square);
    return 1;
}

/* --- records --------------------------------------------------------------------------------- */

/* The scalars a proof's record is made of, parsed (bp_check_proof) or derived (bp_transcript). */
typedef struct {
    sc taux, mu, t, a1, a2, b1, b2; /* as stored: −τx, −μ, t, a1, a2, b1, b2 */
    sc y, z, x, w, u, xr[BP_MAX_LG];
    sc inv[3 + BP_MAX_LG]; /* y^-1, x_r^-1, a1^-1, b2^-1 (filled by the batch inversion) */
} bp_proof_scalars;

/* Parse-time checks of one proof of the right length (all but decoding and challenges), in the
 * specification's order: commitment prefixes, flag bits, scalars.  Returns BP_OK or a code with
 * *detail set; fills the stored scalars. */
static int bp_check_proof(const bp_shape *s, const uint8_t *proof, const uint8_t *commitments,
                          bp_proof_scalars *ps, long *detail) {
    for (int j = 0; j < s->m; j++) {
        if ((commitments[33 * (size_t)j] & ~1) != 0x08) {
            *detail = j;
            return BP_ERR_COMMITMENT_PREFIX;
        }
    }
    if (proof[BP_OFF_FLAGS] & 0xF0) {
        *detail = BP_OFF_FLAGS;
        return BP_ERR_FLAG_BITS;
    }
    const uint8_t *lrf = proof + BP_OFF_LR_FLAGS;
    size_t used = 2 * (size_t)s->lg; /* L/R flag bits in use */
    if (used % 8 && (lrf[s->flag_bytes - 1] >> (used % 8))) {
        *detail = (long)(BP_OFF_LR_FLAGS + s->flag_bytes - 1);
        return BP_ERR_FLAG_BITS;
    }
    sc *dst[7] = {&ps->taux, &ps->mu, &ps->t, &ps->a1, &ps->a2, &ps->b1, &ps->b2};
    for (int i = 0; i < 7; i++) {
        if (!sc_set_b32(dst[i], proof + BP_SCALAR_OFFSETS[i]) || sc_is_zero(dst[i])) {
            *detail = BP_SCALAR_OFFSETS[i];
            return BP_ERR_SCALAR;
        }
    }
    return BP_OK;
}

/* A challenge: the state read big-endian, in [1, n). */
static inline int bp_challenge(sc *r, const uint8_t c[32]) {
    return sc_set_b32(r, c) && !sc_is_zero(r);
}

/* §6 steps 5–10 from the statement state c (modified): y, z, x, w, u, x_r into ps.  Returns
 * BP_OK or BP_ERR_CHALLENGE with *detail = 0 y, 1 z, 2 x, 3 w, 4 u, 5 + r (the first one out of
 * range, in that order). */
static int bp_transcript(const bp_shape *s, const uint8_t *proof, uint8_t c[32],
                         bp_proof_scalars *ps, long *detail) {
    uint8_t st[5 + BP_MAX_LG][32];
    int f = proof[BP_OFF_FLAGS];
    bp_absorb_points(c, f & 1, (f >> 1) & 1, proof + BP_OFF_POINTS);
    memcpy(st[0], c, 32);
    bp_absorb_points(c, f & 1, (f >> 1) & 1, proof + BP_OFF_POINTS);
    memcpy(st[1], c, 32);
    bp_absorb_points(c, (f >> 2) & 1, (f >> 3) & 1, proof + BP_OFF_POINTS + 64);
    memcpy(st[2], c, 32);
    bp_absorb2(c, proof, 64, NULL, 0);
    memcpy(st[3], c, 32);
    bp_absorb2(st[3], NULL, 0, NULL, 0); /* w = SHA256(c), c unchanged */
    bp_absorb2(c, proof + BP_OFF_T, 32, NULL, 0);
    memcpy(st[4], c, 32);
    const uint8_t *lrf = proof + BP_OFF_LR_FLAGS, *lrx = lrf + s->flag_bytes;
    for (int r = 0; r < s->lg; r++) {
        int fl = (lrf[(2 * r) >> 3] >> ((2 * r) & 7)) & 1;
        int fr = (lrf[(2 * r + 1) >> 3] >> ((2 * r + 1) & 7)) & 1;
        bp_absorb_points(c, fl, fr, lrx + 64 * (size_t)r);
        memcpy(st[5 + r], c, 32);
    }
    sc *dst[5] = {&ps->y, &ps->z, &ps->x, &ps->w, &ps->u};
    for (int i = 0; i < 5 + s->lg; i++) {
        if (!bp_challenge(i < 5 ? dst[i] : &ps->xr[i - 5], st[i])) {
            *detail = i;
            return BP_ERR_CHALLENGE;
        }
    }
    return BP_OK;
}

/* Scalar powers a^e for a small public exponent (square and multiply). */
static void bp_sc_pow(sc *r, const sc *a, unsigned long e) {
    sc acc = SC_ONE, b = *a;
    while (e) {
        if (e & 1) sc_mul(&acc, &acc, &b);
        e >>= 1;
        if (e) sc_mul(&b, &b, &b);
    }
    *r = acc;
}

/* 1/2 mod N */
static const sc SC_INV2 = {{0xdfe92f46681b20a1ULL, 0x5d576e7357a4501dULL, 0xffffffffffffffffULL,
                            0x7fffffffffffffffULL}};

/* The record of a proof whose challenges and inverses are in ps (rec: s->rec scalars; layout in
 * _reference.py), with min_value (0 when absent: the formula then has no min term). */
static void bp_record(const bp_shape *s, const bp_proof_scalars *ps, uint64_t min_value, sc *rec) {
    const int lg = s->lg, m = s->m, n = s->n, nbits = s->nbits;
    const sc *y = &ps->y, *z = &ps->z, *y_inv = &ps->inv[0];
    const sc *a1_inv = &ps->inv[1 + lg], *b2_inv = &ps->inv[2 + lg];
    sc t1, t2, zz, p0 = SC_ONE;
    for (int r = 0; r < lg; r++) sc_mul(&p0, &p0, &ps->inv[1 + r]);
    sc *head = rec, *vm = rec + BP_HEAD, *fr = vm + lg;
    /* vm_r = x_r²·y^{2^r}; afterwards ypow = y^{2^lg} = y^{N/2} */
    sc ypow = *y;
    for (int r = 0; r < lg; r++) {
        sc_mul(&t1, &ps->xr[r], &ps->xr[r]);
        sc_mul(&vm[r], &t1, &ypow);
        sc_mul(&ypow, &ypow, &ypow);
    }
    /* pg = −a1·p0, rg = a2/a1, ph = −b2·y^{1−N}·p0, rh = (b1/b2)·y^{N/2} */
    sc_mul(&t1, &ps->a1, &p0);
    sc_neg(&head[0], &t1);
    sc_mul(&head[1], &ps->a2, a1_inv);
    sc yi_n1;
    bp_sc_pow(&yi_n1, y_inv, (unsigned long)(n - 1));
    sc_mul(&t1, &ps->b2, &yi_n1);
    sc_mul(&t1, &t1, &p0);
    sc_neg(&head[2], &t1);
    sc_mul(&t1, &ps->b1, b2_inv);
    sc_mul(&head[3], &t1, &ypow);
    sc_mul(&head[4], y, &SC_INV2);
    head[5] = *z;
    /* h: u·(t − a1·b1 − a2·b2) + (−μ) + w·(−τx) */
    sc_mul(&t1, &ps->a1, &ps->b1);
    sc_mul(&t2, &ps->a2, &ps->b2);
    sc_add(&t1, &t1, &t2);
    sc_neg(&t1, &t1);
    sc_add(&t1, &t1, &ps->t);
    sc_mul(&t1, &t1, &ps->u);
    sc_add(&t1, &t1, &ps->mu);
    sc_mul(&t2, &ps->w, &ps->taux);
    sc_add(&head[6], &t1, &t2);
    /* z^{2+j} (free: V_j scalars w·z^{2+j}, and Σ z^{2+j}); β0 = z²·(2/y)^{nbits−1};
     * γ = z·y^{−nbits} */
    sc zj, two_y, top, yi_nbits, zsum = SC_ZERO;
    sc_mul(&zz, z, z);
    zj = zz;
    for (int j = 0; j < m; j++) {
        sc_mul(&fr[j], &ps->w, &zj);
        sc_add(&zsum, &zsum, &zj);
        sc_mul(&zj, &zj, z);
    }
    sc_add(&two_y, y_inv, y_inv);
    bp_sc_pow(&top, &two_y, (unsigned long)(nbits - 1));
    sc_mul(&head[8], &zz, &top);
    bp_sc_pow(&yi_nbits, y_inv, (unsigned long)nbits);
    sc_mul(&head[9], z, &yi_nbits);
    /* δ = (z − z²)·Σ_{k<N} y^k − z·Σ_j z^{2+j}·(2^nbits − 1) − z²·min; Σ_{k<N} y^k by doubling:
     * S(2k) = S(k)·(1 + y^k). */
    sc sum_y = SC_ONE, yk = *y;
    for (int k = 1; k < n; k <<= 1) {
        sc_add(&t1, &SC_ONE, &yk);
        sc_mul(&sum_y, &sum_y, &t1);
        sc_mul(&yk, &yk, &yk);
    }
    sc delta, two_n1 = {{nbits == 64 ? ~(u64)0 : (((u64)1 << nbits) - 1), 0, 0, 0}};
    sc_neg(&t1, &zz);
    sc_add(&t1, &t1, z);
    sc_mul(&delta, &t1, &sum_y);
    sc_mul(&t1, z, &zsum);
    sc_mul(&t1, &t1, &two_n1);
    sc_neg(&t1, &t1);
    sc_add(&delta, &delta, &t1);
    if (min_value) {
        sc mv = {{min_value, 0, 0, 0}};
        sc_mul(&t1, &zz, &mv);
        sc_neg(&t1, &t1);
        sc_add(&delta, &delta, &t1);
    }
    /* g: w·(δ − t) */
    sc_neg(&t1, &ps->t);
    sc_add(&t1, &t1, &delta);
    sc_mul(&head[7], &ps->w, &t1);
    /* free: A 1, S x, T1 w·x, T2 w·x², then L_r x_r², R_r x_r^{-2} */
    fr[m] = SC_ONE;
    fr[m + 1] = ps->x;
    sc_mul(&fr[m + 2], &ps->w, &ps->x);
    sc_mul(&fr[m + 3], &fr[m + 2], &ps->x);
    for (int r = 0; r < lg; r++) {
        sc_mul(&fr[m + 4 + 2 * r], &ps->xr[r], &ps->xr[r]);
        sc_mul(&fr[m + 5 + 2 * r], &ps->inv[1 + r], &ps->inv[1 + r]);
    }
}

/* --- a batch of proofs ----------------------------------------------------------------------- */

/* One call's proofs (arrays of n, the glue's private copies) and outputs.  status[i] enters as
 * BP_OK or the failure the glue already found (length, commitment length) and leaves as the
 * proof's verdict; records / points are filled for the proofs that stay BP_OK. */
typedef struct {
    const bp_shape *s;
    size_t n;
    const uint8_t *proofs;       /* n × length */
    const uint8_t *commitments;  /* n × 33·m */
    const uint8_t *states;       /* n × 32: bp_statement_state of each proof */
    const uint64_t *min_values;  /* n (0 where absent) */
    const unsigned char *given;  /* n: 1 the commitments come decoded, 2 given with a wrong length */
    const uint8_t *given_points; /* n × 64·m (read where given) */
    const uint8_t *gens;         /* ngens distinct value generator encodings, 33 bytes each */
    size_t ngens;
    const uint32_t *gen_index;   /* n: each proof's generator */
    ge *gen_points;              /* ngens: decoded (meaningless where gen_defect is set) */
    unsigned char *gen_defect;   /* ngens: BP_GEN_* */
    unsigned char *status;       /* n */
    long *detail;                /* n */
    sc *records;                 /* n × s->rec */
    ge *points;                  /* n × s->nfree */
} bp_batch;

/* A given commitment point: x, y < p, on the curve, x equal to the encoding's. */
static int bp_given_point(ge *r, const uint8_t *xy, const uint8_t *encoding) {
    if (memcmp(xy, encoding + 1, 32) || !fe_set_b32(&r->x, xy) || !fe_set_b32(&r->y, xy + 32))
        return 0;
    r->inf = 0;
    return ge_is_on_curve(r);
}

/* The shared state of one prepare call while its parts run (threads.h). */
typedef struct {
    bp_batch *b;
    size_t total;       /* x coordinates to decode: the generators, then the proofs' points */
    size_t *first;      /* n + 1: where each proof's points start in the decode arrays */
    uint8_t *xs;        /* total × 32 */
    unsigned char *flags, *err;
    ge *dec;
    bp_proof_scalars *ps;
    sc *inv_in, *inv_out, *prefix; /* n × (3 + lg): each proof's slice */
    int failed;         /* a part could not allocate its scratch */
} bp_prepare_job;

/* Phase 1, part p: decode the p-th contiguous share of all x coordinates. */
static void bp_decode_part_(void *ctx, size_t part, size_t nparts) {
    bp_prepare_job *j = ctx;
    size_t lo, hi;
    parallel_range(j->total, part, nparts, &lo, &hi);
    if (!bp_decode_all_var(j->dec + lo, j->err + lo, j->xs + 32 * lo, j->flags + lo, hi - lo))
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
}

/* Phase 2, part p: its share of the proofs — the value generator, the parse-time checks, given
 * commitment points, its decoded points (the first that fails names the failure), the
 * transcript, one inversion for every y, x_r, a1 and b2 of the share, and the records. */
static void bp_check_part_(void *ctx, size_t part, size_t nparts) {
    bp_prepare_job *j = ctx;
    bp_batch *b = j->b;
    const bp_shape *s = b->s;
    const size_t m = (size_t)s->m, nfree = s->nfree, lg = (size_t)s->lg, per = 3 + lg;
    size_t lo, hi;
    parallel_range(b->n, part, nparts, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        if (b->status[i] != BP_OK) continue;
        const uint8_t *proof = b->proofs + i * s->length, *cm = b->commitments + 33 * m * i;
        unsigned char defect = b->gen_defect[b->gen_index[i]];
        if (defect) {
            b->status[i] = BP_ERR_VALUE_GENERATOR;
            b->detail[i] = defect;
            continue;
        }
        int st = bp_check_proof(s, proof, cm, &j->ps[i], &b->detail[i]);
        if (st == BP_OK && b->given[i] == 2) { /* given, but not 64·m bytes */
            st = BP_ERR_COMMITMENT_POINT;
            b->detail[i] = 0;
        } else if (st == BP_OK && b->given[i]) {
            for (size_t k = 0; k < m; k++) {
                if (!bp_given_point(&b->points[i * nfree + k], b->given_points + 64 * (m * i + k),
                                    cm + 33 * k)) {
                    st = BP_ERR_COMMITMENT_POINT;
                    b->detail[i] = (long)k;
                    break;
                }
            }
        }
        size_t first = b->given[i] ? m : 0, at = j->first[i];
        for (size_t k = first; st == BP_OK && k < nfree; k++, at++) {
            if (j->err[at] != BP_OK) {
                st = j->err[at];
                b->detail[i] = (long)k;
            }
            b->points[i * nfree + k] = j->dec[at];
        }
        if (st == BP_OK) {
            uint8_t c[32];
            memcpy(c, b->states + 32 * i, 32);
            st = bp_transcript(s, proof, c, &j->ps[i], &b->detail[i]);
        }
        b->status[i] = (unsigned char)st;
    }
    sc *in = j->inv_in + lo * per, *out = j->inv_out + lo * per;
    size_t ninv = 0;
    for (size_t i = lo; i < hi; i++) {
        if (b->status[i] != BP_OK) continue;
        in[ninv++] = j->ps[i].y;
        for (size_t r = 0; r < lg; r++) in[ninv++] = j->ps[i].xr[r];
        in[ninv++] = j->ps[i].a1;
        in[ninv++] = j->ps[i].b2;
    }
    sc_inv_all_var(out, in, ninv, j->prefix + lo * per);
    ninv = 0;
    for (size_t i = lo; i < hi; i++) {
        if (b->status[i] != BP_OK) continue;
        memcpy(j->ps[i].inv, out + ninv, per * sizeof *out);
        ninv += per;
        bp_record(s, &j->ps[i], b->min_values[i], b->records + i * s->rec);
    }
}

/* Proofs per part below which another thread costs more than it saves. */
#define BP_MIN_PER_THREAD 16

/* Checks, decoding, transcripts and records of a batch (see bp_batch) on up to `threads`
 * threads.  Every proof's result depends on that proof (and its generator) alone — each share
 * inverts its own scalars, and inverses are unique — so the outputs are the same for any thread
 * count.  Returns 0 if scratch memory cannot be allocated (nothing is then meaningful). */
static int bp_prepare_batch_var(bp_batch *b, int threads) {
    const bp_shape *s = b->s;
    const size_t n = b->n, m = (size_t)s->m, nfree = s->nfree, lg = (size_t)s->lg, g = b->ngens;
    bp_prepare_job j = {b, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0};
    int ok = 0;
    size_t cap = g + n * nfree, k1 = n ? n : 1;
    j.first = malloc((n + 1) * sizeof *j.first);
    j.xs = malloc((cap ? cap : 1) * 32);
    j.flags = malloc(cap ? cap : 1);
    j.err = malloc(cap ? cap : 1);
    j.dec = malloc((cap ? cap : 1) * sizeof *j.dec);
    j.ps = malloc(k1 * sizeof *j.ps);
    j.inv_in = malloc(k1 * (3 + lg) * sizeof *j.inv_in);
    j.inv_out = malloc(k1 * (3 + lg) * sizeof *j.inv_out);
    j.prefix = malloc(k1 * (3 + lg) * sizeof *j.prefix);
    if (!j.first || !j.xs || !j.flags || !j.err || !j.dec || !j.ps || !j.inv_in || !j.inv_out ||
        !j.prefix)
        goto done;
    /* every x coordinate, in order: the distinct value generators, then per proof of the right
     * lengths V_j unless given, A, S, T1, T2, L_0, R_0, ...  The results count only for proofs
     * that pass the parse-time checks (the checks' order is the specification's). */
    size_t total = 0;
    for (size_t q = 0; q < g; q++, total++) {
        memcpy(j.xs + 32 * total, b->gens + 33 * q + 1, 32);
        j.flags[total] = b->gens[33 * q] & 1;
    }
    for (size_t i = 0; i < n; i++) {
        j.first[i] = total;
        if (b->status[i] != BP_OK) continue;
        const uint8_t *proof = b->proofs + i * s->length, *cm = b->commitments + 33 * m * i;
        if (!b->given[i]) {
            for (size_t q = 0; q < m; q++, total++) {
                memcpy(j.xs + 32 * total, cm + 33 * q + 1, 32);
                j.flags[total] = cm[33 * q] & 1;
            }
        }
        for (int k = 0; k < 4; k++, total++) {
            memcpy(j.xs + 32 * total, proof + BP_OFF_POINTS + 32 * k, 32);
            j.flags[total] = (proof[BP_OFF_FLAGS] >> k) & 1;
        }
        const uint8_t *lrf = proof + BP_OFF_LR_FLAGS, *lrx = lrf + s->flag_bytes;
        for (size_t k = 0; k < 2 * lg; k++, total++) {
            memcpy(j.xs + 32 * total, lrx + 32 * k, 32);
            j.flags[total] = (lrf[k >> 3] >> (k & 7)) & 1;
        }
    }
    j.first[n] = j.total = total;
    size_t parts = n / BP_MIN_PER_THREAD;
    if (parts > (size_t)threads) parts = (size_t)threads;
    if (parts < 1) parts = 1;
    parallel_run(bp_decode_part_, &j, parts);
    if (j.failed) goto done;
    for (size_t q = 0; q < g; q++) {
        b->gen_points[q] = j.dec[q];
        b->gen_defect[q] = (b->gens[33 * q] & ~1) != 0x0a ? BP_GEN_PREFIX
                         : j.err[q] == BP_ERR_POINT_RANGE  ? BP_GEN_RANGE
                         : j.err[q] == BP_ERR_POINT_CURVE  ? BP_GEN_CURVE : BP_GEN_OK;
    }
    parallel_run(bp_check_part_, &j, parts);
    ok = 1;
done:
    free(j.first);
    free(j.xs);
    free(j.flags);
    free(j.err);
    free(j.dec);
    free(j.ps);
    free(j.inv_in);
    free(j.inv_out);
    free(j.prefix);
    return ok;
}

/* --- expansion ------------------------------------------------------------------------------- */

/* Scratch for bp_expand_var: 2·(N/2) + nbits scalars. */
static inline size_t bp_expand_scratch(const bp_shape *s) { return (size_t)s->n + (size_t)s->nbits; }

/* Add ρ·(fixed coefficients of rec) to acc (indexed by the fixed base: G_k at g_start + k,
 * H_{N−1} … H_0 from h_start) except the constant runs and h, which the caller sums (ρ·z,
 * ρ·h scalar) and adds once per batch.  The trees ρ·pg·U and ρ·ph·Y and the ρ·β0·(y/2)^i run
 * are added as they are (a plain 256-bit addition), their rg, rh and γ^j multiples with a
 * lazily reduced multiply-add: N + nbits additions and 2N − nbits multiply-adds, after
 * N + nbits + m scalar multiplications.  scratch: bp_expand_scratch(s) scalars.
 * Preconditions: the runs lie inside acc; rec holds s->rec reduced scalars. */
static void bp_expand_var(const bp_shape *s, sc_wide *acc, size_t g_start, size_t h_start,
                          const sc *rec, const sc *rho, sc *scratch) {
    const int lg = s->lg, m = s->m, nbits = s->nbits;
    const size_t half = (size_t)s->n / 2;
    const sc *vm = rec + BP_HEAD, *fr = vm + lg;
    sc *P = scratch, *V = scratch + half, *Y = scratch + 2 * half;
    sc_mul(&P[0], rho, &rec[0]);
    sc_mul(&V[0], rho, &rec[2]);
    for (int r = 0; r < lg; r++) {
        const sc *sq = &fr[m + 4 + 2 * r];
        size_t step = (size_t)1 << r;
        for (size_t j = 0; j < step; j++) {
            sc_mul(&P[j + step], &P[j], sq);
            sc_mul(&V[j + step], &V[j], &vm[r]);
        }
    }
    sc_wide *g = acc + g_start, *h = acc + h_start;
    for (size_t k = 0; k < half; k++) {
        sc_wide_add(&g[k], &P[k]);
        sc_wide_add_mul(&g[half + k], &rec[1], &P[k]);
        sc_wide_add(&h[k], &V[k]);
        sc_wide_add_mul(&h[half + k], &rec[3], &V[k]);
    }
    sc_mul(&Y[0], rho, &rec[8]);
    for (int i = 1; i < nbits; i++) sc_mul(&Y[i], &Y[i - 1], &rec[4]);
    sc_wide *blk = h + (size_t)(m - 1) * (size_t)nbits; /* block j = 0 */
    for (int i = 0; i < nbits; i++) sc_wide_add(&blk[i], &Y[i]);
    sc c = SC_ONE;
    for (int j = 1; j < m; j++) {
        sc_mul(&c, &c, &rec[9]);
        blk = h + (size_t)(m - 1 - j) * (size_t)nbits;
        for (int i = 0; i < nbits; i++) sc_wide_add_mul(&blk[i], &c, &Y[i]);
    }
}

/* A check's members and what their expansion produces (arrays owned by the caller). */
typedef struct {
    const bp_shape *s;
    sc_wide *acc;                    /* the fixed-base coefficients, added to */
    size_t h_index, g_start, h_start;
    const sc *records;               /* count × s->rec */
    const uint32_t *gen_index;       /* count */
    const uint32_t *members;         /* nmem record indices */
    const sc *weights;               /* nmem */
    size_t nmem;
    sc *free_out;                    /* nmem × s->nfree: ρ·free scalars */
    sc *gen_sums;                    /* per generator Σ ρ·g scalar; zeroed by the caller */
} bp_accumulation;

/* r += a (two lazily reduced sums: exact, so sums of parts equal the sum of all terms) */
static inline void bp_wide_add_wide(sc_wide *r, const sc_wide *a) {
    u128 c = 0;
    for (int i = 0; i < 9; i++) {
        c += (u128)r->n[i] + a->n[i];
        r->n[i] = (u64)c;
        c >>= 64;
    }
}

/* One part of an accumulation: its members' expansions into its own G and H runs (or straight
 * into the accumulator when there is one part), and its sums of ρ·h, ρ·z and ρ·g. */
typedef struct {
    const bp_accumulation *a;
    sc_wide *runs;   /* parts × 2N (part p's G run, then its H run), NULL for one part */
    sc *sums;        /* parts × (2 + ngens): Σρ·h, Σρ·z, Σρ·g per generator */
    size_t ngens;
    int failed;
} bp_accumulate_job;

static void bp_accumulate_part_(void *ctx, size_t part, size_t nparts) {
    bp_accumulate_job *j = ctx;
    const bp_accumulation *a = j->a;
    const bp_shape *s = a->s;
    const size_t n = (size_t)s->n;
    sc *scratch = malloc(bp_expand_scratch(s) * sizeof *scratch);
    if (!scratch) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    sc_wide *base = a->acc;
    size_t g_start = a->g_start, h_start = a->h_start;
    if (j->runs) { /* private runs: G at 0, H at N */
        base = j->runs + part * 2 * n;
        g_start = 0;
        h_start = n;
    }
    sc *sums = j->sums + part * (2 + j->ngens), t;
    size_t lo, hi;
    parallel_range(a->nmem, part, nparts, &lo, &hi);
    for (size_t k = lo; k < hi; k++) {
        const sc *rec = a->records + (size_t)a->members[k] * s->rec, *rho = &a->weights[k];
        const sc *fr = rec + BP_HEAD + s->lg;
        bp_expand_var(s, base, g_start, h_start, rec, rho, scratch);
        sc_mul(&t, rho, &rec[6]);
        sc_add(&sums[0], &sums[0], &t);
        sc_mul(&t, rho, &rec[5]);
        sc_add(&sums[1], &sums[1], &t);
        sc_mul(&t, rho, &rec[7]);
        sc *gs = &sums[2 + a->gen_index[a->members[k]]];
        sc_add(gs, gs, &t);
        sc *out = a->free_out + k * s->nfree;
        for (size_t i = 0; i < s->nfree; i++) sc_mul(&out[i], rho, &fr[i]);
    }
    free(scratch);
}

/* Members per part below which another thread costs more than it saves. */
#define BP_MIN_MEMBERS_PER_THREAD 8

/* Expand every member into acc (bp_expand_var), then the constant runs once:
 * h += Σρ·h scalar, G_0 … G_{N−1} += −Σρ·z, H_{N−1} … H_0 += Σρ·z; gen_sums[q] = Σρ·g of the
 * members of generator q.  On up to `threads` threads, members split in contiguous shares, each
 * share summed in its own runs and the runs added together: every sum is exact (lazily reduced)
 * or a sum mod N, so the results are the same for any thread count.  Preconditions: indices
 * and runs valid (the glue checks them).  Returns 0 if scratch memory cannot be allocated (acc
 * unchanged). */
static int bp_accumulate_var(const bp_accumulation *a, size_t ngens, int threads) {
    const bp_shape *s = a->s;
    const size_t n = (size_t)s->n;
    size_t parts = a->nmem / BP_MIN_MEMBERS_PER_THREAD;
    if (parts > (size_t)threads) parts = (size_t)threads;
    if (parts < 1) parts = 1;
    bp_accumulate_job j = {a, NULL, NULL, ngens, 0};
    j.sums = calloc(parts * (2 + ngens), sizeof *j.sums);
    if (parts > 1) j.runs = calloc(parts * 2 * n, sizeof *j.runs);
    if (!j.sums || (parts > 1 && !j.runs)) {
        free(j.sums);
        free(j.runs);
        return 0;
    }
    parallel_run(bp_accumulate_part_, &j, parts);
    int ok = !j.failed;
    if (ok) {
        sc hsum = SC_ZERO, zsum = SC_ZERO;
        for (size_t p = 0; p < parts; p++) {
            const sc *sums = j.sums + p * (2 + ngens);
            sc_add(&hsum, &hsum, &sums[0]);
            sc_add(&zsum, &zsum, &sums[1]);
            for (size_t q = 0; q < ngens; q++) sc_add(&a->gen_sums[q], &a->gen_sums[q], &sums[2 + q]);
            if (j.runs) {
                const sc_wide *runs = j.runs + p * 2 * n;
                for (size_t k = 0; k < n; k++) {
                    bp_wide_add_wide(&a->acc[a->g_start + k], &runs[k]);
                    bp_wide_add_wide(&a->acc[a->h_start + k], &runs[n + k]);
                }
            }
        }
        sc_wide_add(&a->acc[a->h_index], &hsum);
        sc neg_z;
        sc_neg(&neg_z, &zsum);
        for (size_t k = 0; k < n; k++) {
            sc_wide_add(&a->acc[a->g_start + k], &neg_z);
            sc_wide_add(&a->acc[a->h_start + k], &zsum);
        }
    }
    free(j.sums);
    free(j.runs);
    return ok;
}

#endif

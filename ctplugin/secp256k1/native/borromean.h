/* Borromean ring signatures (secp256k1-zkp borromean_verify): many proofs at once, in waves.
 * PUBLIC DATA ONLY (variable time).
 *
 * A proof is rings of members (P_ij, s_ij) with a 32-byte message m and shared challenge e0.
 * Ring i: e = H(e0 ‖ m ‖ be32(i) ‖ be32(0)); for each member j: R = s_ij·G + e·P_ij and, except
 * after the last member, e = H(ser33(R) ‖ m ‖ be32(i) ‖ be32(j+1)).  The proof is valid iff every
 * e and s lies in [1, n), no P and no R is infinity, and H(ser33(R_0,last) ‖ … ‖ m) = e0.
 * (ser33: 02/03 by the parity of y, then x.)
 *
 * Every ring starts from the stored e0, so the rings of all proofs are independent chains
 * ("lanes"), each only ring-length steps deep.  A wave advances every live lane by one member:
 * one double multiplication each (borromean_mult_var), ONE batch inversion for the affine R of
 * the whole wave (fe_inv_all_var), one SHA-256 each.  Lanes of different lengths simply finish
 * in different waves.  Disjoint lane ranges can run on different threads: a lane writes only its
 * own state, its own closing slot and its own members' challenges.
 *
 * The double multiplication: GLV halves of e in width-5 NAF against the odd multiples of P on
 * the curve where they are affine without an inversion (straus_odd_table_iso_), and s split into
 * 128-bit halves in width-15 NAF against process-wide tables of odd multiples of G and 2^128·G
 * (borromean_g_tables, built once): one shared chain of ~129 doublings.
 */
#ifndef CTPLUGIN_BORROMEAN_H
#define CTPLUGIN_BORROMEAN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctplugin/native/sha256.h"
#include "digits.h"
#include "glv.h"
#include "group.h"
#include "straus.h"

#define BORRO_G_W 15                            /* NAF width of the G terms */
#define BORRO_G_T ((size_t)1 << (BORRO_G_W - 2)) /* odd multiples per table: 8192 */
#define BORRO_E_T STRAUS_TABLE                  /* odd multiples of P (width STRAUS_W) */
#define BORRO_DIGITS 131                        /* NAF length: GLV halves < 2^129 */

/* (2j+1)·G and (2j+1)·2^128·G for j < BORRO_G_T (1 MiB), built once by borromean_g_tables. */
static ge_xy *borro_g_tab = NULL;

/* Build the G tables (idempotent).  Call with the GIL held (no two builders at once) before any
 * thread uses them.  Returns 0 on allocation failure (nothing is kept). */
static int borromean_g_tables(void) {
    if (borro_g_tab) return 1;
    const size_t T = BORRO_G_T;
    ge_xy *tab = malloc(2 * T * sizeof *tab);
    gej *row = malloc(2 * T * sizeof *row);
    ge *aff = malloc(2 * T * sizeof *aff);
    fe *scratch = malloc(4 * T * sizeof *scratch);
    int ok = 0;
    if (tab && row && aff && scratch) {
        static const unsigned char gx[32] = {
            0x79, 0xBE, 0x66, 0x7E, 0xF9, 0xDC, 0xBB, 0xAC, 0x55, 0xA0, 0x62, 0x95, 0xCE, 0x87, 0x0B, 0x07,
            0x02, 0x9B, 0xFC, 0xDB, 0x2D, 0xCE, 0x28, 0xD9, 0x59, 0xF2, 0x81, 0x5B, 0x16, 0xF8, 0x17, 0x98};
        static const unsigned char gy[32] = {
            0x48, 0x3A, 0xDA, 0x77, 0x26, 0xA3, 0xC4, 0x65, 0x5D, 0xA4, 0xFB, 0xFC, 0x0E, 0x11, 0x08, 0xA8,
            0xFD, 0x17, 0xB4, 0x48, 0xA6, 0x85, 0x54, 0x19, 0x9C, 0x47, 0xD0, 0x8F, 0xFB, 0x10, 0xD4, 0xB8};
        ge base[2], dbl[2];
        gej t[2];
        base[0].inf = 0;
        fe_set_b32(&base[0].x, gx);
        fe_set_b32(&base[0].y, gy);
        gej_set_ge(&t[0], &base[0]);
        t[1] = t[0];
        for (int k = 0; k < 128; k++) gej_double_var(&t[1], &t[1]);
        ge_set_gej_var(&base[1], &t[1]);
        for (int h = 0; h < 2; h++) {
            gej_set_ge(&t[h], &base[h]);
            gej_double_var(&t[h], &t[h]);
            ge_set_gej_var(&dbl[h], &t[h]);
            gej_set_ge(&row[h * T], &base[h]);
            for (size_t j = 1; j < T; j++) gej_add_ge_var(&row[h * T + j], &row[h * T + j - 1], &dbl[h]);
        }
        ge_set_all_gej_var(aff, row, 2 * T, scratch);
        for (size_t k = 0; k < 2 * T; k++) {
            tab[k].x = aff[k].x;
            tab[k].y = aff[k].y;
        }
        borro_g_tab = tab;
        tab = NULL;
        ok = 1;
    }
    free(tab);
    free(row);
    free(aff);
    free(scratch);
    return ok;
}

/* The point added for NAF digit d of a term over odd multiples tab: ±tab[|d|/2] (y negated when
 * the digit's sign and the term's sign differ), optionally the λ image (x·β). */
static inline void borro_pick_(ge *q, const ge_xy *tab, int d, int neg, int lambda) {
    const ge_xy *e = &tab[(d < 0 ? -d : d) >> 1];
    q->inf = 0;
    if (lambda) fe_mul(&q->x, &e->x, &FE_BETA);
    else q->x = e->x;
    if ((d < 0) ^ neg) fe_neg(&q->y, &e->y);
    else q->y = e->y;
}

/* r = s·G + e·P (Jacobian).  Preconditions: borromean_g_tables() succeeded; P finite and on
 * the curve; s, e canonical (< n).  No allocation. */
static void borromean_mult_var(gej *r, const sc *s, const sc *e, const ge *p) {
    ge_xy ptab[2 * BORRO_E_T];
    fe iso;
    straus_odd_table_iso_(ptab, &iso, p, BORRO_E_T);
    sc e1, e2;
    int n1, n2;
    sc_split_lambda_var(&e1, &n1, &e2, &n2, e);
    const sc slo = {{s->n[0], s->n[1], 0, 0}}, shi = {{s->n[2], s->n[3], 0, 0}};
    int d1[BORRO_DIGITS], d2[BORRO_DIGITS], g1[BORRO_DIGITS], g2[BORRO_DIGITS];
    wnaf_var(d1, BORRO_DIGITS, &e1, STRAUS_W);
    wnaf_var(d2, BORRO_DIGITS, &e2, STRAUS_W);
    wnaf_var(g1, BORRO_DIGITS, &slo, BORRO_G_W);
    wnaf_var(g2, BORRO_DIGITS, &shi, BORRO_G_W);
    int top = BORRO_DIGITS - 1;
    while (top >= 0 && !(d1[top] | d2[top] | g1[top] | g2[top])) top--;
    gej_set_inf(r);
    const ge_xy *glo = borro_g_tab, *ghi = borro_g_tab + BORRO_G_T;
    ge q;
    for (int bit = top; bit >= 0; bit--) {
        gej_double_var(r, r);
        /* the P tables live on the accumulator's curve; the G tables are true affine points */
        if (d1[bit]) {
            borro_pick_(&q, ptab, d1[bit], n1, 0);
            gej_add_ge_iso_var(r, r, &q, NULL, NULL);
        }
        if (d2[bit]) {
            borro_pick_(&q, ptab + BORRO_E_T, d2[bit], n2, 0);
            gej_add_ge_iso_var(r, r, &q, NULL, NULL);
        }
        if (g1[bit]) {
            borro_pick_(&q, glo, g1[bit], 0, 0);
            gej_add_ge_iso_var(r, r, &q, &iso, NULL);
        }
        if (g2[bit]) {
            borro_pick_(&q, ghi, g2[bit], 0, 0);
            gej_add_ge_iso_var(r, r, &q, &iso, NULL);
        }
    }
    if (!r->inf) fe_mul(&r->z, &r->z, &iso);
}

/* One lane: ring `ring` of proof `proof`, members first .. first + size - 1. */
typedef struct {
    uint32_t proof;
    uint32_t ring;
    uint32_t first;
    uint32_t size;
} borro_lane;

/* The inputs and outputs shared by all threads of one verification. */
typedef struct {
    const unsigned char *e0m;  /* per proof: e0 (32 bytes) ‖ m (32 bytes) */
    const ge *pubs;            /* per member */
    const sc *s;               /* per member */
    const borro_lane *lanes;
    unsigned char *closing;    /* per lane: ser33 of its last R */
    unsigned char *failed;     /* per lane: set to 1 when the lane fails */
    unsigned char *evalues;    /* per member: its challenge e (32 bytes), or NULL */
} borro_job;

static inline void borro_be32_(unsigned char *b, uint32_t v) {
    b[0] = (unsigned char)(v >> 24);
    b[1] = (unsigned char)(v >> 16);
    b[2] = (unsigned char)(v >> 8);
    b[3] = (unsigned char)v;
}

/* H(data[0..len) ‖ m ‖ be32(ring) ‖ be32(member)) as a scalar; 0 if it is >= n or zero. */
static int borro_challenge_(sc *e, unsigned char out[32], const unsigned char *data, size_t len,
                            const unsigned char *m, uint32_t ring, uint32_t member) {
    unsigned char tail[8];
    borro_be32_(tail, ring);
    borro_be32_(tail + 4, member);
    sha256_ctx h;
    sha256_init(&h);
    sha256_write(&h, data, len);
    sha256_write(&h, m, 32);
    sha256_write(&h, tail, 8);
    sha256_final(&h, out);
    return sc_set_b32(e, out) && !sc_is_zero(e);
}

/* Run lanes [lo, hi) of job to completion in waves.  Returns 0 on allocation failure. */
static int borromean_lanes_var(const borro_job *job, size_t lo, size_t hi) {
    const size_t n = hi - lo;
    if (n == 0) return 1;
    sc *e = malloc(n * sizeof *e);
    unsigned char *ebytes = malloc(32 * n);
    uint32_t *next = malloc(n * sizeof *next);  /* member index within the lane */
    size_t *live = malloc(n * sizeof *live);    /* lanes still running */
    gej *r = malloc(n * sizeof *r);
    fe *z = malloc(2 * n * sizeof *z);
    int ok = 0;
    if (!e || !ebytes || !next || !live || !r || !z) goto done;
    size_t nlive = 0;
    for (size_t k = 0; k < n; k++) {
        const borro_lane *lane = &job->lanes[lo + k];
        const unsigned char *e0m = job->e0m + 64 * (size_t)lane->proof;
        next[k] = 0;
        if (borro_challenge_(&e[k], ebytes + 32 * k, e0m, 32, e0m + 32, lane->ring, 0))
            live[nlive++] = k;
        else
            job->failed[lo + k] = 1;
    }
    fe *prefix = z + n;
    while (nlive) {
        /* one double multiplication per live lane */
        size_t nz = 0;
        for (size_t a = 0; a < nlive; a++) {
            const size_t k = live[a];
            const borro_lane *lane = &job->lanes[lo + k];
            const size_t member = (size_t)lane->first + next[k];
            const ge *p = &job->pubs[member];
            if (job->evalues) memcpy(job->evalues + 32 * member, ebytes + 32 * k, 32);
            if (p->inf || sc_is_zero(&job->s[member])) {
                r[k].inf = 1;
                continue;
            }
            borromean_mult_var(&r[k], &job->s[member], &e[k], p);
            if (!r[k].inf) z[nz++] = r[k].z;
        }
        /* one inversion for the wave's affine R */
        fe_inv_all_var(z, z, nz, prefix);
        size_t iz = 0, still = 0;
        for (size_t a = 0; a < nlive; a++) {
            const size_t k = live[a];
            const borro_lane *lane = &job->lanes[lo + k];
            if (r[k].inf) {
                job->failed[lo + k] = 1;
                continue;
            }
            ge aff;
            ge_set_gej_zinv(&aff, &r[k], &z[iz++]);
            unsigned char ser[33];
            ser[0] = (unsigned char)(2 | fe_is_odd(&aff.y));
            fe_get_b32(ser + 1, &aff.x);
            if (next[k] + 1 == lane->size) {
                memcpy(job->closing + 33 * (lo + k), ser, 33);
                continue;
            }
            const unsigned char *m = job->e0m + 64 * (size_t)lane->proof + 32;
            next[k]++;
            if (!borro_challenge_(&e[k], ebytes + 32 * k, ser, 33, m, lane->ring, next[k])) {
                job->failed[lo + k] = 1;
                continue;
            }
            live[still++] = k;
        }
        nlive = still;
    }
    ok = 1;
done:
    free(e);
    free(ebytes);
    free(next);
    free(live);
    free(r);
    free(z);
    return ok;
}

/* The verdict of proof p over its lanes [lo, hi) once they all ran: 1 iff none failed and
 * H(closing slots ‖ m) = e0. */
static int borromean_close_var(const borro_job *job, size_t p, size_t lo, size_t hi) {
    sha256_ctx h;
    sha256_init(&h);
    for (size_t k = lo; k < hi; k++) {
        if (job->failed[k]) return 0;
        sha256_write(&h, job->closing + 33 * k, 33);
    }
    const unsigned char *e0m = job->e0m + 64 * p;
    unsigned char out[32];
    sha256_write(&h, e0m + 32, 32);
    sha256_final(&h, out);
    return memcmp(out, e0m, 32) == 0;
}

#endif

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
 * one double multiplication each (dmult_many_var), ONE batch inversion for the affine R of
 * the whole wave (fe_inv_all_var), one SHA-256 each.  Lanes of different lengths simply finish
 * in different waves.  Disjoint lane ranges can run on different threads: a lane writes only its
 * own state, its own closing slot and its own members' challenges.
 *
 * The double multiplications of a wave: dmult_many_var (dmult.h: sixteen at a time in AVX-512
 * IFMA lanes where the CPU has them, the rest with the scalar code; the same R either way).
 */
#ifndef CTPLUGIN_BORROMEAN_H
#define CTPLUGIN_BORROMEAN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctplugin/native/sha256.h"
#include "dmult.h"
#include "group.h"

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
    int lanes_ok;              /* dm_backend(): the double multiplications may use the lanes */
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
    /* the wave's double multiplications as arrays (the lanes' input), and their results */
    sc *ws = malloc(n * sizeof *ws), *we = malloc(n * sizeof *we);
    ge *wp = malloc(n * sizeof *wp);
    gej *wr = malloc(n * sizeof *wr);
    size_t *wk = malloc(n * sizeof *wk);
    unsigned char *redo = malloc(n);
    int ok = 0;
    if (!e || !ebytes || !next || !live || !r || !z || !ws || !we || !wp || !wr || !wk || !redo)
        goto done;
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
        /* one double multiplication per live lane: the lanes' batch (wk: which lane) first */
        size_t nb = 0;
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
            ws[nb] = job->s[member];
            we[nb] = e[k];
            wp[nb] = *p;
            wk[nb++] = k;
        }
        dmult_many_var(wr, redo, ws, we, wp, nb, job->lanes_ok);
        size_t nz = 0;
        for (size_t m = 0; m < nb; m++) {
            const size_t k = wk[m];
            r[k] = wr[m];
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
    free(ws);
    free(we);
    free(wp);
    free(wr);
    free(wk);
    free(redo);
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

/* --- verification with the signer's ring points ---------------------------------------------
 *
 * The signer computes every member's R on its way (k_i·G at the true member, s·G + e·P at the
 * forged ones), so it can hand them over.  Given those points R, every challenge follows from
 * hashes alone, and what is left of the ring kernel's work is the linear statement
 * R_ij = s_ij·G + e_ij·P_ij for each member.  With independent random weights z_ij < 2^128 one
 * multi-scalar multiplication checks them all:
 *
 *     (Σ z_ij·s_ij)·G + Σ (z_ij·e_ij)·P_ij − Σ z_ij·R_ij = O.
 *
 * If one statement is false, the sum is O for at most one residue of its z (the group has prime
 * order), so a weight drawn uniformly from [0, 2^128) and unknown to whoever chose the points
 * lets a false one through with probability at most 2^-128.  When the sum is O and every hash
 * check below passes, the ring kernel recomputes exactly these R along each ring (by induction
 * over the members: the same R give the same next challenge), so it finds every proof valid;
 * when it is not O, nothing is known about which proof is wrong and the caller runs the kernel.
 *
 * A range proof's ring members are evenly spaced, P_ij = P_i0 + j·(P_i1 − P_i0) (its members
 * are the digit commitment minus j·4^i·scale·gen), so a ring's terms fold into two points:
 * Σ_j c_j·P_ij = (Σ_j (1 − j)·c_j)·P_i0 + (Σ_j j·c_j)·P_i1.  And the steps of its rings are
 * powers of 4 times one step B = P_01 − P_00 (P_i1 − P_i0 = 4^i·B), so the second points fold
 * too: (Σ_j c_j)·P_i0 per ring and (Σ_i 4^i·Σ_j j·c_ij)·B once — one 256-bit term per ring
 * instead of four.  Both are checked, not assumed (P_ij + P_i,j−2 = 2·P_i,j−1 for j >= 2;
 * P_i0 + 4^i·B = P_i1): a proof without the steps keeps two terms per evenly spaced ring, a
 * ring without the spacing one per member. */

/* a = b for finite Jacobian points (X1·Z2² = X2·Z1², Y1·Z2³ = Y2·Z1³). */
static int borro_gej_equal_(const gej *a, const gej *b) {
    fe za2, zb2, za3, zb3, l, r;
    fe_sqr(&za2, &a->z);
    fe_sqr(&zb2, &b->z);
    fe_mul(&l, &a->x, &zb2);
    fe_mul(&r, &b->x, &za2);
    if (!fe_equal(&l, &r)) return 0;
    fe_mul(&za3, &za2, &a->z);
    fe_mul(&zb3, &zb2, &b->z);
    fe_mul(&l, &a->y, &zb3);
    fe_mul(&r, &b->y, &za3);
    return fe_equal(&l, &r);
}

/* 1 iff the finite members p[0 .. size) are evenly spaced (size >= 3). */
static int borro_evenly_spaced_(const ge *p, uint32_t size) {
    for (uint32_t j = 2; j < size; j++) {
        gej sum, twice;
        gej_set_ge(&sum, &p[j]);
        gej_add_ge_var(&sum, &sum, &p[j - 2]);
        gej_set_ge(&twice, &p[j - 1]);
        gej_double_var(&twice, &twice);
        if (sum.inf || !borro_gej_equal_(&sum, &twice)) return 0;
    }
    return 1;
}

/* The step B = P_01 − P_00 of the rings [lo, hi) (affine, into *b) if every ring of two members
 * or more has P_i1 = P_i0 + 4^i·B, else 0 (also when the first ring has one member). */
static int borro_common_step_(ge *b, const ge *pubs, const borro_lane *lanes, size_t lo,
                              size_t hi) {
    if (lanes[lo].size < 2) return 0;
    const ge *first = &pubs[lanes[lo].first];
    ge neg;
    gej b0, step;
    ge_neg(&neg, &first[0]);
    gej_set_ge(&b0, &first[1]);
    gej_add_ge_var(&b0, &b0, &neg);
    if (b0.inf) return 0;
    step = b0;
    for (size_t k = lo + 1; k < hi; k++) {
        gej_double_var(&step, &step);
        gej_double_var(&step, &step);
        if (lanes[k].size < 2) continue;
        const ge *p = &pubs[lanes[k].first];
        gej sum, want;
        gej_set_ge(&sum, &p[0]);
        gej_add_var(&sum, &sum, &step);
        gej_set_ge(&want, &p[1]);
        if (sum.inf || !borro_gej_equal_(&sum, &want)) return 0;
    }
    ge_set_gej_var(b, &b0);
    return 1;
}

/* borromean_point_terms_var: the hash checks of every proof (each e in [1, n), every P, R finite,
 * every s nonzero, H(ser33(last R of each ring) ‖ m) = e0) and the sum's terms, into pts and ks
 * (at most 1 + 2·members of them): G first, then per ring its P terms (folded as above) and its
 * R, and per proof with a common step that step.  Returns the number of terms, 0 as soon as a
 * check fails.  Preconditions: dmult_scalar_tables() succeeded (G is its first entry); points
 * on the curve or flagged infinity; scalars canonical; weights 16 bytes (big-endian) per
 * member.  No allocation. */
static size_t borromean_point_terms_var(ge *pts, sc *ks, const unsigned char *e0m, const ge *pubs,
                                        const sc *s, const ge *R, const unsigned char *weights,
                                        const borro_lane *lanes, const size_t *proof_lane,
                                        size_t nproofs) {
    sc gsum = SC_ZERO;
    size_t at = 1;
    for (size_t p = 0; p < nproofs; p++) {
        const unsigned char *e0 = e0m + 64 * p, *m = e0 + 32;
        sha256_ctx close;
        sha256_init(&close);
        for (size_t k = proof_lane[p]; k < proof_lane[p + 1]; k++) {
            const borro_lane *lane = &lanes[k];
            for (uint32_t j = 0; j < lane->size; j++) {
                const size_t member = (size_t)lane->first + j;
                if (pubs[member].inf || R[member].inf || sc_is_zero(&s[member])) return 0;
            }
        }
        int spaced = 1; /* every ring of the proof evenly spaced */
        for (size_t k = proof_lane[p]; spaced && k < proof_lane[p + 1]; k++)
            spaced = lanes[k].size < 3 ||
                     borro_evenly_spaced_(&pubs[lanes[k].first], lanes[k].size);
        ge step;
        const int common = spaced && borro_common_step_(&step, pubs, lanes, proof_lane[p],
                                                        proof_lane[p + 1]);
        sc bsum = SC_ZERO, pow4 = SC_ONE; /* the step's coefficient; 4^i */
        for (size_t k = proof_lane[p]; k < proof_lane[p + 1]; k++) {
            const borro_lane *lane = &lanes[k];
            const ge *members = &pubs[lane->first];
            /* (a proof found spaced is not checked again, ring by ring) */
            const int fold = common || (lane->size >= 3 &&
                                        (spaced || borro_evenly_spaced_(members, lane->size)));
            sc c0 = SC_ZERO, c1 = SC_ZERO; /* the folded coefficients of P_i0 and P_i1 */
            sc e;
            unsigned char eb[32];
            if (!borro_challenge_(&e, eb, e0, 32, m, lane->ring, 0)) return 0;
            for (uint32_t j = 0; j < lane->size; j++) {
                const size_t member = (size_t)lane->first + j;
                const ge *r = &R[member];
                unsigned char zb[32] = {0};
                memcpy(zb + 16, weights + 16 * member, 16);
                sc z, t, c;
                sc_set_b32(&z, zb); /* below 2^128: never overflows */
                sc_mul(&t, &z, &s[member]);
                sc_add(&gsum, &gsum, &t);
                sc_mul(&c, &z, &e);
                if (fold) { /* c·P_ij = (c − j·c)·P_i0 + (j·c)·P_i1 */
                    const sc jj = {{j, 0, 0, 0}};
                    sc jc, neg;
                    sc_mul(&jc, &c, &jj);
                    sc_add(&c1, &c1, &jc);
                    sc_neg(&neg, &jc);
                    sc_add(&c0, &c0, &c);
                    sc_add(&c0, &c0, &neg);
                } else {
                    ks[at] = c;
                    pts[at++] = members[j];
                }
                sc_neg(&ks[at], &z);
                pts[at++] = *r;
                unsigned char ser[33];
                ser[0] = (unsigned char)(2 | fe_is_odd(&r->y));
                fe_get_b32(ser + 1, &r->x);
                if (j + 1 == lane->size) sha256_write(&close, ser, 33);
                else if (!borro_challenge_(&e, eb, ser, 33, m, lane->ring, j + 1)) return 0;
            }
            if (common) { /* c0·P_i0 + c1·(P_i0 + 4^i·B) */
                sc t;
                sc_add(&ks[at], &c0, &c1);
                pts[at++] = members[0];
                sc_mul(&t, &c1, &pow4);
                sc_add(&bsum, &bsum, &t);
            } else if (fold) {
                ks[at] = c0;
                pts[at++] = members[0];
                ks[at] = c1;
                pts[at++] = members[1];
            }
            sc_add(&pow4, &pow4, &pow4);
            sc_add(&pow4, &pow4, &pow4);
        }
        if (common) {
            ks[at] = bsum;
            pts[at++] = step;
        }
        unsigned char out[32];
        sha256_write(&close, m, 32);
        sha256_final(&close, out);
        if (memcmp(out, e0, 32) != 0) return 0;
    }
    pts[0].inf = 0;
    pts[0].x = dms_g_tab[0].x;
    pts[0].y = dms_g_tab[0].y;
    ks[0] = gsum;
    return at;
}

/* --- the ring members of range proofs (rangeproof_pub_expand) -------------------------------
 *
 * A range proof of r rings stores r - 1 digit commitments D_i; the last one is derived,
 * D_{r-1} = C - (min·gen + Σ D_i), and ring i's members are P_{i,j} = D_i + j·B_i with
 * B_i = -4^i·scale·gen (scale = 10^exp): member j is the commitment minus j·4^i·scale·gen.
 */

static inline void gej_neg_(gej *r, const gej *a) {
    *r = *a;
    if (!a->inf) fe_neg(&r->y, &a->y);
}

static inline int sc_is_one_(const sc *a) {
    return a->n[0] == 1 && (a->n[1] | a->n[2] | a->n[3]) == 0;
}

/* r = k·a (k = 0, 1 without a multiplication).  Precondition: dmult_scalar_tables() succeeded. */
static void borro_mul_(gej *r, const sc *k, const ge *a) {
    if (a->inf || sc_is_zero(k)) gej_set_inf(r);
    else if (sc_is_one_(k)) gej_set_ge(r, a);
    else dmult_var(r, &SC_ZERO, k, a);
}

/* One proof's members (Jacobian) into out[0 .. Σ sizes): c its commitment C, gen its value
 * generator, digits its rings - 1 stored digit commitments, sizes[0 .. rings) its ring sizes
 * (rings >= 1), min_value and scale as scalars.  Returns 0, leaving out untouched, when the
 * derived D_{r-1} is infinity (the proof is invalid).  Points may be infinity (the group law
 * applies); every finite input is on the curve.  Preconditions: dmult_scalar_tables()
 * succeeded.  No allocation. */
static int borromean_members_var(gej *out, const ge *c, const ge *gen, const ge *digits,
                                 const uint32_t *sizes, size_t rings, const sc *min_value,
                                 const sc *scale) {
    gej acc, last, base;
    borro_mul_(&acc, min_value, gen);
    for (size_t i = 0; i + 1 < rings; i++) gej_add_ge_var(&acc, &acc, &digits[i]);
    gej_neg_(&acc, &acc);
    gej_add_ge_var(&last, &acc, c);
    if (last.inf) return 0;
    borro_mul_(&base, scale, gen);
    gej_neg_(&base, &base);
    for (size_t i = 0; i < rings; i++) {
        if (i + 1 < rings) gej_set_ge(&out[0], &digits[i]);
        else out[0] = last;
        for (uint32_t j = 1; j < sizes[i]; j++) gej_add_var(&out[j], &out[j - 1], &base);
        out += sizes[i];
        gej_double_var(&base, &base);
        gej_double_var(&base, &base);
    }
    return 1;
}

#endif

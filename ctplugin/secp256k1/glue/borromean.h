/* Python entry of the Borromean ring kernel (native/borromean.h): borromean_verify_var.
 *
 *   borromean_verify_var(sizes, pubs, scalars, e0m, threads=1, challenges=False)
 *       -> (verdicts, challenges)
 *
 *   borromean_verify_points_var(sizes, pubs, scalars, e0m, points, weights, threads=1) -> bool
 *
 * Per proof: e0m holds e0 ‖ m (64 bytes); sizes its layout (u16 LE ring count >= 1, then each
 * ring's size >= 1, u16 LE); pubs / scalars one packed point (64 zero bytes = infinity: the proof
 * fails) / one scalar (< N) per member, all proofs concatenated.  Returns one byte per proof
 * (1 valid, 0 not) and, with challenges=True, every member's challenge e (32 bytes; zeros where
 * a failed ring stopped early), else b"".  threads is clamped to [1, BORRO_MAX_THREADS]; lanes
 * (rings) are shared out among the threads in chunks, so even one proof uses them.  Errors
 * (EncodingError): `length` for e0m or a malformed layout, point and scalar errors as in
 * parse_points / parse_scalars, `count-mismatch` when the layouts' members differ from the
 * points or scalars given, `too-large` beyond 2^31 members.
 */
#ifndef CTPLUGIN_GLUE_BORROMEAN_H
#define CTPLUGIN_GLUE_BORROMEAN_H

#include "../native/threads.h"

#include "common.h"
#include "../native/borromean.h"

#define BORRO_MAX_THREADS KERNEL_MAX_THREADS
#define BORRO_RANGE_RING_MAX 4 /* a range proof's ring: one base-4 digit */

/* Lanes from the layouts: lanes[k] for every ring of every proof, proof_lane[p] = index of
 * proof p's first lane (proof_lane[nproofs] = the lane count).  Returns the member count, or
 * -1 with an exception. */
static Py_ssize_t borro_parse_layout_(const Py_buffer *sizes, size_t nproofs, borro_lane **lanes,
                                      size_t **proof_lane, size_t *nlanes) {
    const unsigned char *b = sizes->buf;
    const size_t len = (size_t)sizes->len;
    size_t off = 0, count = 0;
    /* pass 1: count lanes, validate */
    for (size_t p = 0; p < nproofs; p++) {
        if (off + 2 > len) goto bad;
        size_t rings = (size_t)b[off] | (size_t)b[off + 1] << 8;
        off += 2;
        if (rings == 0 || off + 2 * rings > len) goto bad;
        for (size_t i = 0; i < rings; i++) {
            if ((b[off + 2 * i] | b[off + 2 * i + 1]) == 0) goto bad;
        }
        off += 2 * rings;
        count += rings;
    }
    if (off != len) goto bad;
    *lanes = malloc((count + 1) * sizeof **lanes);
    *proof_lane = malloc((nproofs + 1) * sizeof **proof_lane);
    if (!*lanes || !*proof_lane) {
        free(*lanes);
        free(*proof_lane);
        PyErr_NoMemory();
        return -1;
    }
    /* pass 2: fill */
    off = 0;
    size_t k = 0, member = 0;
    for (size_t p = 0; p < nproofs; p++) {
        size_t rings = (size_t)b[off] | (size_t)b[off + 1] << 8;
        off += 2;
        (*proof_lane)[p] = k;
        for (size_t i = 0; i < rings; i++, k++) {
            size_t size = (size_t)b[off + 2 * i] | (size_t)b[off + 2 * i + 1] << 8;
            if (member + size > ((size_t)1 << 31)) {
                free(*lanes);
                free(*proof_lane);
                return kernel_error(KERR_TOO_LARGE, "borromean: more than 2^31 members");
            }
            (*lanes)[k] = (borro_lane){(uint32_t)p, (uint32_t)i, (uint32_t)member, (uint32_t)size};
            member += size;
        }
        off += 2 * rings;
    }
    (*proof_lane)[nproofs] = k;
    *nlanes = count;
    return (Py_ssize_t)member;
bad:
    return kernel_error(KERR_LENGTH, "borromean: ring sizes do not describe the proofs");
}

/* The lanes shared out among a call's threads: each takes the next `chunk` lanes not taken yet
 * until none are left, so a thread whose core is also busy with other work (the interpreter of
 * the calling process: a wallet writing while its transaction's proofs are verified, a block's
 * scripts beside its proofs) takes fewer chunks instead of finishing last.  A lane's result
 * does not depend on which chunk or thread ran it, so the verdicts are the same for any split. */
typedef struct {
    const borro_job *job;
    size_t nlanes, chunk;
    size_t next; /* the first lane not taken yet (atomic) */
    int ok[BORRO_MAX_THREADS];
} borro_share_;

static void borro_share_part_(void *ctx, size_t part, size_t nparts) {
    (void)nparts;
    borro_share_ *share = ctx;
    int ok = 1;
    for (;;) {
        const size_t lo = __atomic_fetch_add(&share->next, share->chunk, __ATOMIC_RELAXED);
        if (lo >= share->nlanes) break;
        const size_t hi = share->nlanes - lo < share->chunk ? share->nlanes : lo + share->chunk;
        ok &= borromean_lanes_var(share->job, lo, hi);
    }
    share->ok[part] = ok;
}

/* Fewer ring members than this per thread do not pay for starting one: a few double
 * multiplications take microseconds, while a new thread on a busy machine may wait milliseconds
 * for a core (a mempool transaction's two one-member surjection rings took 0.1-10 ms with two
 * threads on the loaded 2-core machine, 0.05 ms on one). */
#define BORRO_MIN_MEMBERS_PER_THREAD 64

/* Lanes per chunk at most: a wave's double multiplications run as one batch (16 lanes of the
 * IFMA backend), and its affine conversion shares one inversion. */
#define BORRO_CHUNK_MAX 16
/* Chunks per thread at least (when there are lanes enough): the granularity of the sharing. */
#define BORRO_CHUNKS_PER_THREAD 2

/* Run all lanes on up to `threads` threads (the caller's thread included), shared out in chunks
 * (borro_share_).  Returns 0 on allocation failure. */
static int borro_run_threads_(const borro_job *job, size_t nlanes, size_t members, int threads) {
    if ((size_t)threads > nlanes) threads = (int)(nlanes ? nlanes : 1);
    if ((size_t)threads > members / BORRO_MIN_MEMBERS_PER_THREAD)
        threads = (int)(members / BORRO_MIN_MEMBERS_PER_THREAD ? members / BORRO_MIN_MEMBERS_PER_THREAD : 1);
    if (threads == 1) return borromean_lanes_var(job, 0, nlanes);
    size_t chunk = (nlanes + (size_t)threads * BORRO_CHUNKS_PER_THREAD - 1)
                   / ((size_t)threads * BORRO_CHUNKS_PER_THREAD);
    if (chunk > BORRO_CHUNK_MAX) chunk = BORRO_CHUNK_MAX;
    if (chunk == 0) chunk = 1;
    borro_share_ share = {job, nlanes, chunk, 0, {0}};
    parallel_run(borro_share_part_, &share, (size_t)threads);
    int ok = 1;
    for (int t = 0; t < threads; t++) ok &= share.ok[t];
    return ok;
}

/* The inputs both verification entries take: e0m, the layouts, the members' points and scalars.
 * Returns the member count, or -1 with an exception; the outputs are the caller's to free
 * either way. */
static Py_ssize_t borro_parse_rings_(const Py_buffer *be0m, const Py_buffer *bsizes,
                                     const Py_buffer *bpubs, const Py_buffer *bscalars,
                                     size_t *nproofs, borro_lane **lanes, size_t **proof_lane,
                                     size_t *nlanes, ge **pubs, sc **s) {
    if (be0m->len % 64) {
        kernel_error(KERR_LENGTH, "borromean: e0m length is not a multiple of 64");
        return -1;
    }
    *nproofs = (size_t)be0m->len / 64;
    Py_ssize_t members = borro_parse_layout_(bsizes, *nproofs, lanes, proof_lane, nlanes);
    if (members < 0) return -1;
    size_t npubs = 0, nscalars = 0;
    if (parse_points(bpubs, pubs, &npubs) < 0 || parse_scalars(bscalars, s, &nscalars) < 0)
        return -1;
    if (npubs != (size_t)members || nscalars != (size_t)members) {
        kernel_error(KERR_COUNT_MISMATCH, "borromean: member counts differ from the ring sizes");
        return -1;
    }
    return members;
}

static PyObject *py_borromean_verify_var(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"sizes", "pubs", "scalars", "e0m", "threads", "challenges", NULL};
    Py_buffer bsizes, bpubs, bscalars, be0m;
    int threads = 1, want = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*y*y*|ip", kwlist, &bsizes, &bpubs,
                                     &bscalars, &be0m, &threads, &want))
        return NULL;
    PyObject *result = NULL;
    borro_lane *lanes = NULL;
    size_t *proof_lane = NULL;
    ge *pubs = NULL;
    sc *s = NULL;
    unsigned char *closing = NULL, *failed = NULL, *evalues = NULL, *verdicts = NULL;
    size_t nlanes = 0, nproofs = 0;
    const Py_ssize_t members = borro_parse_rings_(&be0m, &bsizes, &bpubs, &bscalars, &nproofs,
                                                  &lanes, &proof_lane, &nlanes, &pubs, &s);
    if (members < 0) goto done;
    if (threads < 1) threads = 1;
    if (threads > BORRO_MAX_THREADS) threads = BORRO_MAX_THREADS;
    closing = malloc(33 * nlanes + 1);
    failed = calloc(nlanes + 1, 1);
    verdicts = malloc(nproofs + 1);
    evalues = want ? calloc(32 * (size_t)members + 1, 1) : NULL;
    if (!closing || !failed || !verdicts || (want && !evalues) || !dmult_scalar_tables()) {
        PyErr_NoMemory();
        goto done;
    }
    borro_job job = {be0m.buf, pubs, s, lanes, closing, failed, evalues, dm_backend()};
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = borro_run_threads_(&job, nlanes, (size_t)members, threads);
    if (ok) {
        for (size_t p = 0; p < nproofs; p++)
            verdicts[p] = (unsigned char)borromean_close_var(&job, p, proof_lane[p],
                                                             proof_lane[p + 1]);
    }
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    result = Py_BuildValue("(y#y#)", (const char *)verdicts, (Py_ssize_t)nproofs,
                           want ? (const char *)evalues : "", want ? 32 * members : 0);
done:
    free(lanes);
    free(proof_lane);
    free(pubs);
    free(s);
    free(closing);
    free(failed);
    free(evalues);
    free(verdicts);
    PyBuffer_Release(&bsizes);
    PyBuffer_Release(&bpubs);
    PyBuffer_Release(&bscalars);
    PyBuffer_Release(&be0m);
    return result;
}

/* borromean_verify_points_var(sizes, pubs, scalars, e0m, points, weights, threads=1) -> bool:
 * True iff the signer's ring points show every proof valid (native/borromean.h, "verification
 * with the signer's ring points"): points holds one point per member (its R), weights 16 bytes
 * per member (uniformly random, drawn by the caller, unknown to whoever made the points).  False
 * says only that they do not: some proof may be invalid, or merely a point wrong.  The other
 * arguments and their errors are borromean_verify_var's; points and weights must have as many
 * members as the layouts (`count-mismatch`, `length` for weights). */
static PyObject *py_borromean_verify_points_var(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"sizes", "pubs", "scalars", "e0m", "points", "weights", "threads",
                             NULL};
    Py_buffer bsizes, bpubs, bscalars, be0m, bpoints, bweights;
    int threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*y*y*y*y*|i", kwlist, &bsizes, &bpubs,
                                     &bscalars, &be0m, &bpoints, &bweights, &threads))
        return NULL;
    PyObject *result = NULL;
    borro_lane *lanes = NULL;
    size_t *proof_lane = NULL;
    ge *pubs = NULL, *R = NULL, *pts = NULL;
    sc *s = NULL, *ks = NULL;
    size_t nlanes = 0, nproofs = 0, npoints = 0;
    const Py_ssize_t members = borro_parse_rings_(&be0m, &bsizes, &bpubs, &bscalars, &nproofs,
                                                  &lanes, &proof_lane, &nlanes, &pubs, &s);
    if (members < 0 || parse_points(&bpoints, &R, &npoints) < 0) goto done;
    if (npoints != (size_t)members) {
        kernel_error(KERR_COUNT_MISMATCH, "borromean: ring points differ from the ring sizes");
        goto done;
    }
    if ((size_t)bweights.len != 16 * (size_t)members) {
        kernel_error(KERR_LENGTH, "borromean: weights are not 16 bytes per member");
        goto done;
    }
    if (threads < 1) threads = 1;
    if (threads > BORRO_MAX_THREADS) threads = BORRO_MAX_THREADS;
    const size_t n = 1 + 2 * (size_t)members;
    pts = malloc(n * sizeof *pts);
    ks = malloc(n * sizeof *ks);
    if (!pts || !ks || !dmult_scalar_tables()) {
        PyErr_NoMemory();
        goto done;
    }
    const msm_config cfg = settings_snapshot_for(threads);
    int ok = 1, valid = 0;
    Py_BEGIN_ALLOW_THREADS
    const size_t terms = borromean_point_terms_var(pts, ks, be0m.buf, pubs, s, R, bweights.buf,
                                                   lanes, proof_lane, nproofs);
    if (terms) {
        gej sum;
        ok = msm_var(&sum, pts, ks, terms, &cfg);
        if (ok) { /* O as every MSM result is read (gej_bytes) */
            ge aff;
            ge_set_gej_var(&aff, &sum);
            valid = aff.inf;
        }
    }
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyBool_FromLong(valid);
done:
    free(lanes);
    free(proof_lane);
    free(pubs);
    free(s);
    free(R);
    free(pts);
    free(ks);
    PyBuffer_Release(&bsizes);
    PyBuffer_Release(&bpubs);
    PyBuffer_Release(&bscalars);
    PyBuffer_Release(&be0m);
    PyBuffer_Release(&bpoints);
    PyBuffer_Release(&bweights);
    return result;
}

static PyObject *py_borromean_members_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bsizes, bc, bg, bd, bmin, bscale;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*:borromean_members_var", &bsizes, &bc, &bg, &bd,
                          &bmin, &bscale))
        return NULL;
    PyObject *result = NULL;
    borro_lane *lanes = NULL;
    size_t *proof_lane = NULL;
    ge *c = NULL, *g = NULL, *d = NULL, *aff = NULL;
    sc *mins = NULL, *scales = NULL;
    gej *members = NULL;
    fe *scratch = NULL;
    uint32_t *ring_sizes = NULL;
    unsigned char *ok = NULL;
    size_t nc = 0, ng = 0, nd = 0, nmin = 0, nscale = 0, nlanes = 0;
    if (parse_points(&bc, &c, &nc) < 0 || parse_points(&bg, &g, &ng) < 0 ||
        parse_points(&bd, &d, &nd) < 0 || parse_scalars(&bmin, &mins, &nmin) < 0 ||
        parse_scalars(&bscale, &scales, &nscale) < 0)
        goto done;
    const size_t nproofs = nc;
    Py_ssize_t count = borro_parse_layout_(&bsizes, nproofs, &lanes, &proof_lane, &nlanes);
    if (count < 0) goto done;
    const size_t nmembers = (size_t)count;
    if (ng != nproofs || nmin != nproofs || nscale != nproofs || nd != nlanes - nproofs) {
        kernel_error(KERR_COUNT_MISMATCH,
                     "borromean_members_var: point or scalar counts differ from the layouts");
        goto done;
    }
    for (size_t k = 0; k < nlanes; k++) { /* also bounds the allocations by the input size */
        if (lanes[k].size > BORRO_RANGE_RING_MAX) {
            kernel_error(KERR_TOO_LARGE, "borromean_members_var: a ring of more than 4 members");
            goto done;
        }
    }
    members = malloc((nmembers + 1) * sizeof *members);
    aff = malloc((nmembers + 1) * sizeof *aff);
    scratch = malloc((2 * nmembers + 1) * sizeof *scratch);
    ring_sizes = malloc((nlanes + 1) * sizeof *ring_sizes);
    ok = malloc(nproofs + 1);
    if (!members || !aff || !scratch || !ring_sizes || !ok || !dmult_scalar_tables()) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t k = 0; k < nlanes; k++) ring_sizes[k] = lanes[k].size;
    Py_BEGIN_ALLOW_THREADS
    size_t digit = 0;
    for (size_t p = 0; p < nproofs; p++) {
        const size_t lo = proof_lane[p], rings = proof_lane[p + 1] - lo;
        const size_t first = lanes[lo].first;
        size_t n = 0;
        for (size_t k = lo; k < lo + rings; k++) n += lanes[k].size;
        ok[p] = (unsigned char)borromean_members_var(&members[first], &c[p], &g[p], &d[digit],
                                                     &ring_sizes[lo], rings, &mins[p],
                                                     &scales[p]);
        if (!ok[p]) {
            for (size_t m = 0; m < n; m++) gej_set_inf(&members[first + m]);
        }
        digit += rings - 1;
    }
    ge_set_all_gej_var(aff, members, nmembers, scratch);
    Py_END_ALLOW_THREADS
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * nmembers));
    if (!result) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    for (size_t m = 0; m < nmembers; m++) point_to_64(out + 64 * m, &aff[m]);
    PyObject *pubs = result;
    result = Py_BuildValue("(Oy#)", pubs, (const char *)ok, (Py_ssize_t)nproofs);
    Py_DECREF(pubs);
done:
    free(lanes);
    free(proof_lane);
    free(c);
    free(g);
    free(d);
    free(aff);
    free(mins);
    free(scales);
    free(members);
    free(scratch);
    free(ring_sizes);
    free(ok);
    PyBuffer_Release(&bsizes);
    PyBuffer_Release(&bc);
    PyBuffer_Release(&bg);
    PyBuffer_Release(&bd);
    PyBuffer_Release(&bmin);
    PyBuffer_Release(&bscale);
    return result;
}

#endif

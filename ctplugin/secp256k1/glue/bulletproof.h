/* Glue: the Bulletproof verification setup (bulletproof_prepare_var, bulletproof_accumulate_var;
 * API in ctplugin/bulletproofs/kernel.py, specification in ctplugin/bulletproofs/_reference.py,
 * algorithms in native/bulletproof.h).
 *
 * prepare: every argument is checked and the proofs, commitments and given points copied with
 * the GIL held; the statement part of each transcript (commitments, value generator, extra
 * commit, min value) is hashed then too, so the extra commits are never read without the GIL.
 * Decoding, the rest of the transcripts, the inversions and the records run without it.
 * accumulate: records and weights are validated (every scalar < N, every index in range) before
 * the accumulator changes; the expansion runs without the GIL (an accumulator must not be used by
 * another thread during the call).  Both take threads= (0: the kernel setting, set_threads);
 * the results do not depend on it.
 */
#ifndef CTPLUGIN_GLUE_BULLETPROOF_H
#define CTPLUGIN_GLUE_BULLETPROOF_H

#include "accumulator.h"
#include "common.h"
#include "../native/bulletproof.h"

static const char KERR_SHAPE[] = "shape"; /* nbits / m not a supported shape */

static inline uint32_t bp_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A bytes-like element of a sequence: bytes objects are read in place, anything else through
 * the buffer protocol (view released by bp_release).  -1 with TypeError otherwise. */
typedef struct {
    const uint8_t *p;
    size_t n;
    Py_buffer view;
    int have_view;
} bp_bytes;

static int bp_get_bytes(PyObject *obj, bp_bytes *b, const char *what, size_t i) {
    b->have_view = 0;
    b->p = NULL;
    b->n = 0;
    if (PyBytes_Check(obj)) {
        b->p = (const uint8_t *)PyBytes_AS_STRING(obj);
        b->n = (size_t)PyBytes_GET_SIZE(obj);
        return 0;
    }
    if (PyObject_GetBuffer(obj, &b->view, PyBUF_SIMPLE) < 0) {
        PyErr_Format(PyExc_TypeError, "%s[%zu] must be bytes-like, not %.100s", what, i,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    b->have_view = 1;
    b->p = b->view.buf;
    b->n = (size_t)b->view.len;
    return 0;
}

static void bp_release(bp_bytes *b) {
    if (b->have_view) PyBuffer_Release(&b->view);
    b->have_view = 0;
}

/* A sequence argument of exactly n elements (None allowed for `optional` ones: *out = NULL). */
static int bp_sequence(PyObject *obj, Py_ssize_t n, const char *what, int optional,
                       PyObject **out) {
    *out = NULL;
    if (optional && obj == Py_None) return 0;
    PyObject *seq = PySequence_Fast(obj, "expected a sequence");
    if (!seq) return -1;
    if (n >= 0 && PySequence_Fast_GET_SIZE(seq) != n) {
        Py_DECREF(seq);
        return kernel_error(KERR_COUNT_MISMATCH, "%s: one entry per proof", what);
    }
    *out = seq;
    return 0;
}

static int bp_parse_shape(bp_shape *s, Py_ssize_t nbits, Py_ssize_t m) {
    if (!bp_shape_init(s, (long)nbits, (long)m))
        return kernel_error(KERR_SHAPE,
                            "nbits and m must be powers of two in [1, 64] with nbits*m >= 4");
    return 0;
}

/* The per-proof inputs of prepare, copied. */
typedef struct {
    uint8_t *proofs, *commitments, *states, *given_points, *gens;
    uint64_t *mins;
    uint32_t *gen_index;
    unsigned char *given, *status, *gen_defect;
    long *detail;
    sc *records;
    ge *points, *gen_points;
} bp_prepare_buffers;

static void bp_prepare_free(bp_prepare_buffers *b) {
    free(b->proofs);
    free(b->commitments);
    free(b->states);
    free(b->given_points);
    free(b->mins);
    free(b->given);
    free(b->status);
    free(b->detail);
    free(b->records);
    free(b->points);
    free(b->gens);
    free(b->gen_index);
    free(b->gen_defect);
    free(b->gen_points);
}

static int bp_prepare_alloc(bp_prepare_buffers *b, const bp_shape *s, size_t n, size_t ngens) {
    size_t k = n ? n : 1, m = (size_t)s->m, g = ngens ? ngens : 1;
    b->gens = malloc(g * 33);
    b->gen_index = malloc(k * sizeof *b->gen_index);
    b->gen_defect = calloc(g, 1);
    b->gen_points = malloc(g * sizeof *b->gen_points);
    b->proofs = malloc(k * s->length);
    b->commitments = malloc(k * 33 * m);
    b->states = malloc(k * 32);
    b->given_points = malloc(k * 64 * m);
    b->mins = calloc(k, sizeof *b->mins);
    b->given = calloc(k, 1);
    b->status = calloc(k, 1);
    b->detail = calloc(k, sizeof *b->detail);
    b->records = malloc(k * s->rec * sizeof *b->records);
    b->points = malloc(k * s->nfree * sizeof *b->points);
    if (b->proofs && b->commitments && b->states && b->given_points && b->mins && b->given &&
        b->status && b->detail && b->records && b->points && b->gens && b->gen_index &&
        b->gen_defect && b->gen_points)
        return 0;
    PyErr_NoMemory();
    return -1;
}

/* min_values[i]: None or an int in [0, 2^64) (m = 1 only).  *have = 0 for None. */
static int bp_min_value(PyObject *item, const bp_shape *s, int *have, uint64_t *value) {
    *have = 0;
    if (item == Py_None) return 0;
    if (!PyLong_Check(item)) {
        PyErr_Format(PyExc_TypeError, "a min value must be an int or None, not %.100s",
                     Py_TYPE(item)->tp_name);
        return -1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(item);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return kernel_error(KERR_TOO_LARGE, "min values must be in [0, 2^64)");
    }
    if (s->m != 1) return kernel_error(KERR_SHAPE, "min values are supported for m = 1 only");
    *have = 1;
    *value = (uint64_t)v;
    return 0;
}

/* Copy proof i's inputs (GIL held) and hash its statement; status[i] records the length
 * failures found here.  Argument errors (types, min values) first, in this order: min value,
 * proof, commitments, commitment points, extra commit. */
static int bp_prepare_one_input(const bp_shape *s, bp_prepare_buffers *b, size_t i,
                                PyObject *proof, PyObject *commitment, PyObject *extra,
                                PyObject *min_item, PyObject *point_item, const uint8_t *gen) {
    const size_t m = (size_t)s->m;
    bp_bytes pb = {0}, cb = {0}, gb = {0}, eb = {0};
    int have_min = 0, have_point = point_item && point_item != Py_None, have_extra = extra != Py_None;
    uint64_t min_value = 0;
    int rc = -1;
    if (min_item && bp_min_value(min_item, s, &have_min, &min_value) < 0) return -1;
    if (bp_get_bytes(proof, &pb, "proofs", i) < 0) return -1;
    if (bp_get_bytes(commitment, &cb, "commitments", i) < 0) goto done;
    if (have_point && bp_get_bytes(point_item, &gb, "commitment_points", i) < 0) goto done;
    if (have_extra && bp_get_bytes(extra, &eb, "extra_commits", i) < 0) goto done;
    rc = 0;
    if (pb.n != s->length) {
        b->status[i] = BP_ERR_LENGTH;
        b->detail[i] = (long)pb.n;
    } else if (cb.n != 33 * m) {
        b->status[i] = BP_ERR_COMMITMENT_LENGTH;
        b->detail[i] = (long)cb.n;
    } else {
        memcpy(b->proofs + i * s->length, pb.p, s->length);
        memcpy(b->commitments + i * 33 * m, cb.p, 33 * m);
        b->mins[i] = have_min ? min_value : 0;
        if (have_point) {
            b->given[i] = gb.n == 64 * m ? 1 : 2; /* 2: wrong length, a failure in its turn */
            if (gb.n == 64 * m) memcpy(b->given_points + i * 64 * m, gb.p, 64 * m);
        }
        bp_statement_state(b->states + 32 * i, s->m, cb.p, gen, have_min, min_value,
                           have_extra, have_extra ? eb.p : NULL, have_extra ? eb.n : 0);
    }
done:
    bp_release(&pb);
    bp_release(&cb);
    bp_release(&gb);
    bp_release(&eb);
    return rc;
}

/* (records, points, generator points, failures) of the proofs that pass; failures
 * [(index, code, detail)]; a generator that does not decode comes out as 64 zero bytes. */
static PyObject *bp_prepare_result(const bp_shape *s, const bp_prepare_buffers *b, size_t n,
                                   size_t ngens) {
    size_t ok = 0;
    for (size_t i = 0; i < n; i++) ok += b->status[i] == BP_OK;
    PyObject *recs = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * s->rec * ok));
    PyObject *pts = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * s->nfree * ok));
    PyObject *gpts = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * ngens));
    PyObject *fails = PyList_New(0);
    PyObject *res = NULL;
    if (!recs || !pts || !gpts || !fails) goto done;
    unsigned char *gp = (unsigned char *)PyBytes_AS_STRING(gpts);
    for (size_t j = 0; j < ngens; j++) {
        if (b->gen_defect[j]) memset(gp + 64 * j, 0, 64);
        else point_to_64(gp + 64 * j, &b->gen_points[j]);
    }
    unsigned char *rp = (unsigned char *)PyBytes_AS_STRING(recs);
    unsigned char *pp = (unsigned char *)PyBytes_AS_STRING(pts);
    for (size_t i = 0; i < n; i++) {
        if (b->status[i] != BP_OK) {
            PyObject *f = Py_BuildValue("(nil)", (Py_ssize_t)i, (int)b->status[i], b->detail[i]);
            if (!f || PyList_Append(fails, f) < 0) {
                Py_XDECREF(f);
                goto done;
            }
            Py_DECREF(f);
            continue;
        }
        for (size_t k = 0; k < s->rec; k++, rp += 32) sc_get_b32(rp, &b->records[i * s->rec + k]);
        for (size_t k = 0; k < s->nfree; k++, pp += 64) point_to_64(pp, &b->points[i * s->nfree + k]);
    }
    res = PyTuple_Pack(4, recs, pts, gpts, fails);
done:
    Py_XDECREF(recs);
    Py_XDECREF(pts);
    Py_XDECREF(gpts);
    Py_XDECREF(fails);
    return res;
}

static PyObject *py_bulletproof_prepare_var(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"nbits", "m", "proofs", "commitments", "value_gens", "gen_index",
                             "extra_commits", "min_values", "commitment_points", "threads", NULL};
    Py_ssize_t nbits, m;
    PyObject *proofs_obj, *commitments_obj, *extras_obj, *mins_obj = Py_None, *points_obj = Py_None;
    Py_buffer bg, bi;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nnOOy*y*O|OOi:bulletproof_prepare_var", kwlist,
                                     &nbits, &m, &proofs_obj, &commitments_obj, &bg, &bi,
                                     &extras_obj, &mins_obj, &points_obj, &threads))
        return NULL;
    PyObject *res = NULL, *proofs = NULL, *commitments = NULL, *extras = NULL, *mins = NULL,
             *points = NULL;
    bp_prepare_buffers b = {0};
    bp_shape s;
    if (check_threads(threads) < 0 || bp_parse_shape(&s, nbits, m) < 0) goto done;
    const int nthreads = settings_snapshot_for(threads).threads;
    if (bp_sequence(proofs_obj, -1, "proofs", 0, &proofs) < 0) goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(proofs);
    if (bp_sequence(commitments_obj, n, "commitments", 0, &commitments) < 0 ||
        bp_sequence(extras_obj, n, "extra_commits", 0, &extras) < 0 ||
        bp_sequence(mins_obj, n, "min_values", 1, &mins) < 0 ||
        bp_sequence(points_obj, n, "commitment_points", 1, &points) < 0)
        goto done;
    if (bg.len % 33) {
        kernel_error(KERR_LENGTH, "value generators: 33 bytes each");
        goto done;
    }
    size_t ngens = (size_t)bg.len / 33;
    const uint8_t *gens = bg.buf;
    if (bi.len != 4 * n) {
        kernel_error(KERR_COUNT_MISMATCH, "gen_index: one u32 per proof");
        goto done;
    }
    const uint8_t *gi = bi.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (bp_u32(gi + 4 * i) >= ngens) {
            kernel_error(KERR_INDEX_RANGE, "gen_index %zd out of range", i);
            goto done;
        }
    }
    if (bp_prepare_alloc(&b, &s, (size_t)n, ngens) < 0) goto done;
    memcpy(b.gens, gens, 33 * ngens);
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t g = b.gen_index[i] = bp_u32(gi + 4 * i);
        if (bp_prepare_one_input(&s, &b, (size_t)i, PySequence_Fast_GET_ITEM(proofs, i),
                                 PySequence_Fast_GET_ITEM(commitments, i),
                                 PySequence_Fast_GET_ITEM(extras, i),
                                 mins ? PySequence_Fast_GET_ITEM(mins, i) : NULL,
                                 points ? PySequence_Fast_GET_ITEM(points, i) : NULL,
                                 gens + 33 * g) < 0)
            goto done;
    }
    bp_batch batch = {&s, (size_t)n, b.proofs, b.commitments, b.states, b.mins, b.given,
                      b.given_points, b.gens, ngens, b.gen_index, b.gen_points, b.gen_defect,
                      b.status, b.detail, b.records, b.points};
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = bp_prepare_batch_var(&batch, nthreads);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    res = bp_prepare_result(&s, &b, (size_t)n, ngens);
done:
    bp_prepare_free(&b);
    Py_XDECREF(proofs);
    Py_XDECREF(commitments);
    Py_XDECREF(extras);
    Py_XDECREF(mins);
    Py_XDECREF(points);
    PyBuffer_Release(&bg);
    PyBuffer_Release(&bi);
    return res;
}

/* --- accumulate ------------------------------------------------------------------------------ */

static PyObject *py_bulletproof_accumulate_var(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"acc", "nbits", "m", "h_index", "g_start", "h_start", "records",
                             "points", "gen_index", "n_gens", "members", "weights", "threads",
                             NULL};
    PyObject *acc_obj;
    Py_ssize_t nbits, m, h_index, g_start, h_start, n_gens;
    Py_buffer br, bpts, bgi, bmem, bw;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Onnnnny*y*y*ny*y*|i:bulletproof_accumulate_var",
                                     kwlist, &acc_obj, &nbits, &m, &h_index, &g_start, &h_start,
                                     &br, &bpts, &bgi, &n_gens, &bmem, &bw, &threads))
        return NULL;
    PyObject *res = NULL;
    sc *records = NULL, *weights = NULL, *free_out = NULL, *gen_sums = NULL;
    uint32_t *gidx = NULL, *members = NULL;
    bp_shape s;
    if (Py_TYPE(acc_obj)->tp_dealloc != (destructor)sacc_dealloc) {
        PyErr_SetString(PyExc_TypeError, "acc must be a ScalarAccumulator");
        goto done;
    }
    ScalarAccumulatorObject *acc = (ScalarAccumulatorObject *)acc_obj;
    if (check_threads(threads) < 0 || bp_parse_shape(&s, nbits, m) < 0) goto done;
    const int nthreads = settings_snapshot_for(threads).threads;
    size_t reclen = 32 * s.rec;
    if ((size_t)br.len % reclen) {
        kernel_error(KERR_LENGTH, "records: not a whole number of records");
        goto done;
    }
    size_t count = (size_t)br.len / reclen;
    if ((size_t)bpts.len != 64 * s.nfree * count || (size_t)bgi.len != 4 * count) {
        kernel_error(KERR_COUNT_MISMATCH, "points / gen_index do not match the records");
        goto done;
    }
    if (bmem.len % 4 || (size_t)bw.len != 8 * (size_t)bmem.len) {
        kernel_error(KERR_COUNT_MISMATCH,
                     "members: u32 each, weights: one 32-byte scalar per member");
        goto done;
    }
    size_t nmem = (size_t)bmem.len / 4, ngens = n_gens < 0 ? 0 : (size_t)n_gens;
    if (n_gens < 0) {
        kernel_error(KERR_INDEX_RANGE, "gen_index out of range");
        goto done;
    }
    gidx = malloc((count ? count : 1) * sizeof *gidx);
    members = malloc((nmem ? nmem : 1) * sizeof *members);
    if (!gidx || !members) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < count; i++) {
        gidx[i] = bp_u32((const uint8_t *)bgi.buf + 4 * i);
        if (gidx[i] >= ngens) {
            kernel_error(KERR_INDEX_RANGE, "gen_index out of range");
            goto done;
        }
    }
    Py_ssize_t runs[3][2] = {{h_index, 1}, {g_start, s.n}, {h_start, s.n}};
    for (int r = 0; r < 3; r++) {
        if (runs[r][0] < 0 || (size_t)runs[r][0] + (size_t)runs[r][1] > acc->n) {
            kernel_error(KERR_INDEX_RANGE, "fixed base offsets outside the accumulator");
            goto done;
        }
    }
    for (size_t k = 0; k < nmem; k++) {
        members[k] = bp_u32((const uint8_t *)bmem.buf + 4 * k);
        if (members[k] >= count) {
            kernel_error(KERR_INDEX_RANGE, "member index out of range");
            goto done;
        }
    }
    size_t nw, nr;
    if (parse_scalars(&bw, &weights, &nw) < 0 || parse_scalars(&br, &records, &nr) < 0) goto done;
    free_out = malloc((nmem ? nmem : 1) * s.nfree * sizeof *free_out);
    gen_sums = calloc(ngens ? ngens : 1, sizeof *gen_sums);
    if (!free_out || !gen_sums) {
        PyErr_NoMemory();
        goto done;
    }
    if (sacc_count_terms(acc, 2 * (u64)nmem + 1) < 0) goto done;
    bp_accumulation a = {&s, acc->v, (size_t)h_index, (size_t)g_start, (size_t)h_start, records,
                         gidx, members, weights, nmem, free_out, gen_sums};
    int ok;
    if (nmem >= 4) {
        Py_BEGIN_ALLOW_THREADS
        ok = bp_accumulate_var(&a, ngens, nthreads);
        Py_END_ALLOW_THREADS
    } else {
        ok = bp_accumulate_var(&a, ngens, 1);
    }
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *fs = scalars_bytes(free_out, nmem * s.nfree);
    PyObject *fp = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * s.nfree * nmem));
    PyObject *gs = scalars_bytes(gen_sums, ngens);
    if (fs && fp && gs) {
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(fp);
        const unsigned char *in = bpts.buf;
        for (size_t k = 0; k < nmem; k++)
            memcpy(out + 64 * s.nfree * k, in + 64 * s.nfree * members[k], 64 * s.nfree);
        res = PyTuple_Pack(3, fs, fp, gs);
    }
    Py_XDECREF(fs);
    Py_XDECREF(fp);
    Py_XDECREF(gs);
done:
    free(records);
    free(weights);
    free(free_out);
    free(gen_sums);
    free(gidx);
    free(members);
    PyBuffer_Release(&br);
    PyBuffer_Release(&bpts);
    PyBuffer_Release(&bgi);
    PyBuffer_Release(&bmem);
    PyBuffer_Release(&bw);
    return res;
}

/* Private: the batch square-root backend (native/field_batch.h), for tests that run both.
 * _sqrt_backend() -> the current one ("ifma" or "scalar"); _sqrt_backend(name) selects it and
 * returns the previous one; ValueError for an unknown name, RuntimeError when IFMA is not
 * available on this machine. */
static PyObject *py_sqrt_backend(PyObject *self, PyObject *args) {
    (void)self;
    const char *name = NULL;
    if (!PyArg_ParseTuple(args, "|s:_sqrt_backend", &name)) return NULL;
    const char *prev = fe_sqrt_backend_name();
    if (name) {
        int rc = fe_sqrt_set_backend(name);
        if (rc == -1) {
            PyErr_Format(PyExc_ValueError, "unknown square-root backend %s", name);
            return NULL;
        }
        if (rc == -2) {
            PyErr_SetString(PyExc_RuntimeError, "the IFMA square roots are not available here");
            return NULL;
        }
    }
    return PyUnicode_FromString(prev);
}

#endif

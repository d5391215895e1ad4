/* Python entries of the double multiplications (native/dmult.h): double_mult_many_var and the
 * tests' backend switch _dmult_backend.
 *
 *   double_mult_many_var(s, e, points, threads=0) -> points
 *       R_i = s_i·G + e_i·P_i for every i (64 bytes each, infinity as 64 zero bytes); s, e
 *       packed scalars (< N), points packed (infinity allowed: R_i = s_i·G).  Errors
 *       (EncodingError): the scalar and point errors of parse_scalars / parse_points,
 *       `count-mismatch` when the three counts differ, `index-range` for threads outside
 *       [0, 64] (0 = the kernel setting).  Results are identical for any thread count and
 *       either backend.
 */
#ifndef CTPLUGIN_GLUE_DMULT_H
#define CTPLUGIN_GLUE_DMULT_H

#include "common.h"
#include "../native/dmult.h"
#include "../native/threads.h"

typedef struct {
    gej *r;
    unsigned char *redo;
    const sc *s, *e;
    const ge *p;
    size_t n;
    int lanes;
} dmult_job_;

static void dmult_part_(void *ctx, size_t part, size_t nparts) {
    const dmult_job_ *j = ctx;
    size_t lo, hi;
    parallel_range(j->n, part, nparts, &lo, &hi);
    dmult_many_var(j->r + lo, j->redo + lo, j->s + lo, j->e + lo, j->p + lo, hi - lo, j->lanes);
}

static PyObject *py_double_mult_many_var(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"s", "e", "points", "threads", NULL};
    Py_buffer bs, be, bp;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*y*|i:double_mult_many_var", kwlist, &bs, &be,
                                     &bp, &threads))
        return NULL;
    PyObject *result = NULL;
    sc *s = NULL, *e = NULL;
    ge *p = NULL, *fin = NULL;
    gej *r = NULL;
    unsigned char *redo = NULL;
    size_t ns = 0, ne = 0, np = 0;
    if (check_threads(threads) < 0 || parse_scalars(&bs, &s, &ns) < 0 ||
        parse_scalars(&be, &e, &ne) < 0 || parse_points(&bp, &p, &np) < 0)
        goto done;
    if (ns != ne || ns != np) {
        kernel_error(KERR_COUNT_MISMATCH, "double_mult_many_var: scalar and point counts differ");
        goto done;
    }
    const size_t n = ns;
    r = malloc((n + 1) * sizeof *r);
    redo = malloc(n + 1);
    fin = malloc((n + 1) * sizeof *fin);
    if (!r || !redo || !fin || !dmult_scalar_tables()) {
        PyErr_NoMemory();
        goto done;
    }
    /* P = infinity: R = s·G, computed as s·G + 0·G (every input of the lanes is finite) */
    for (size_t i = 0; i < n; i++) {
        fin[i] = p[i];
        if (p[i].inf) {
            fin[i].inf = 0;
            fin[i].x = dms_g_tab[0].x;
            fin[i].y = dms_g_tab[0].y;
            e[i] = SC_ZERO;
        }
    }
    const int lanes = dm_backend();
    const msm_config cfg = settings_snapshot_for(threads);
    size_t parts = (size_t)cfg.threads;
    if (parts > n / DM_LANES) parts = n / DM_LANES ? n / DM_LANES : 1;
    dmult_job_ job = {r, redo, s, e, fin, n, lanes};
    /* Always without the GIL: one double multiplication (~10 µs) costs far more than a GIL
     * switch, and the Borromean signer's waves (one member per ring, about 26) are what two
     * wallet threads proving two outputs run side by side. */
    Py_BEGIN_ALLOW_THREADS
    parallel_run(dmult_part_, &job, parts);
    Py_END_ALLOW_THREADS
    /* affine with one shared inversion (fin and e are done with: fin holds the results) */
    fe *scratch = malloc((2 * n + 1) * sizeof *scratch);
    if (!scratch) {
        PyErr_NoMemory();
        goto done;
    }
    ge_set_all_gej_var(fin, r, n, scratch);
    free(scratch);
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * n));
    if (!result) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    for (size_t i = 0; i < n; i++) point_to_64(out + 64 * i, &fin[i]);
done:
    free(s);
    free(e);
    free(p);
    free(fin);
    free(r);
    free(redo);
    PyBuffer_Release(&bs);
    PyBuffer_Release(&be);
    PyBuffer_Release(&bp);
    return result;
}

/* _dmult_backend(name=None) -> the previous backend of the many double multiplications: "ifma"
 * (sixteen in AVX-512 IFMA lanes, native/dmult_ifma.h) or "scalar".  Testing only. */
static PyObject *py_dmult_backend(PyObject *self, PyObject *args) {
    (void)self;
    const char *name = NULL;
    if (!PyArg_ParseTuple(args, "|s:_dmult_backend", &name)) return NULL;
    const char *prev = dm_backend_name();
    if (name) {
        int rc = dm_set_backend(name);
        if (rc == -1) {
            PyErr_Format(PyExc_ValueError, "unknown double-multiplication backend %s", name);
            return NULL;
        }
        if (rc == -2) {
            PyErr_SetString(PyExc_RuntimeError, "the IFMA double multiplications are not available here");
            return NULL;
        }
    }
    return PyUnicode_FromString(prev);
}

#endif

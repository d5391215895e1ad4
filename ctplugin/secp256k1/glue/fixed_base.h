/* Glue: the FixedBaseTable type (precomputation for points reused across many MSMs). */
#ifndef CTPLUGIN_GLUE_FIXED_BASE_H
#define CTPLUGIN_GLUE_FIXED_BASE_H

#include "common.h"

typedef struct {
    PyObject_HEAD
    fixed_table tab;
    size_t few_calls; /* few-scalar calls served so far (tp_alloc zeroes it) */
} FixedBaseTableObject;

/* When to build the few-scalar Straus tables (~0.8 µs per entry: 13 ms for the 16384 of a
 * one-point table) -- a rent-or-buy choice: a table of one or two points (G, H) is a base point
 * its owner will reuse, so it buys at once; a larger one keeps using the generic path until it
 * has served about as many few-scalar calls as the build would cost (entries / 16 calls, saving
 * some 15 µs each), so a table used a handful of times never pays for it.  At most 1024 calls. */
static size_t fixed_straus_build_after_(size_t n) {
    if (n <= 2) return 0;
    return n * ((size_t)1 << (fixed_straus_window_(n) - 1)) / 16;
}

static void fbt_dealloc(FixedBaseTableObject *self) {
    fixed_table_free(&self->tab);
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *fbt_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"points", NULL};
    Py_buffer bp;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*:FixedBaseTable", kwlist, &bp)) return NULL;
    ge *pts = NULL;
    size_t n;
    int bad = parse_points(&bp, &pts, &n);
    PyBuffer_Release(&bp);
    if (bad) return NULL;
    FixedBaseTableObject *self = (FixedBaseTableObject *)type->tp_alloc(type, 0);
    if (!self) {
        free(pts);
        return NULL;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = fixed_table_build(&self->tab, pts, n);
    Py_END_ALLOW_THREADS
    free(pts);
    if (!ok) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static Py_ssize_t fbt_len(FixedBaseTableObject *self) { return (Py_ssize_t)self->tab.n; }

/* The path of a call with nk table scalars and ne extra points, building the Straus tables when
 * their time has come.  With the GIL held: a call running without it never sees a table being
 * built.  Returns -1 with MemoryError. */
static int fbt_choose_path(FixedBaseTableObject *self, size_t nk, size_t ne,
                           const msm_config *cfg, fixed_path *path) {
    /* (many extra points: their Pippenger is faster than Straus, and Straus digits would take
     * O(points x 130) memory) */
    int straus = nk < FIXED_MIN_SCALARS && self->tab.n <= FIXED_STRAUS_MAX_POINTS &&
                 ne <= msm_straus_max(cfg);
    if (straus && !self->tab.odd) {
        if (self->few_calls < fixed_straus_build_after_(self->tab.n)) {
            self->few_calls++;
            straus = 0;
        } else if (!fixed_straus_build(&self->tab)) {
            PyErr_NoMemory();
            return -1;
        }
    }
    *path = straus ? FIXED_PATH_STRAUS : FIXED_PATH_BUCKETS;
    return 0;
}

static PyObject *fbt_msm_var(FixedBaseTableObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"scalars", "extra_scalars", "extra_points", "threads", NULL};
    Py_buffer bs, bes = {0}, bep = {0};
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|y*y*i:msm_var", kwlist, &bs, &bes, &bep,
                                     &threads))
        return NULL;
    sc *ks = NULL, *eks = NULL;
    ge *eps = NULL;
    size_t nk = 0, ne = 0;
    PyObject *res = NULL;
    const msm_config cfg = settings_snapshot_for(threads);
    fixed_path path;
    if (check_threads(threads)) goto done;
    if (bs.len > (Py_ssize_t)(32 * self->tab.n)) {
        kernel_error(KERR_TOO_LARGE, "more scalars than table points");
        goto done;
    }
    if (parse_scalars(&bs, &ks, &nk)) goto done;
    if (bes.obj || bep.obj) {
        static const Py_buffer empty = {0};
        if (parse_msm_operands(bes.obj ? &bes : &empty, bep.obj ? &bep : &empty, &eks, &eps, &ne))
            goto done;
    }
    if (fbt_choose_path(self, nk, ne, &cfg, &path)) goto done;
    gej r;
    int ok;
    KERNEL_MAYBE_NOGIL(nk + ne >= GIL_RELEASE_MIN,
                       ok = fixed_msm_with_extra_var(&r, &self->tab, path, ks, nk, eks, eps, ne,
                                                     &cfg));
    res = ok ? gej_bytes(&r) : PyErr_NoMemory();
done:
    free(ks);
    free(eks);
    free(eps);
    PyBuffer_Release(&bs);
    if (bes.obj) PyBuffer_Release(&bes);
    if (bep.obj) PyBuffer_Release(&bep);
    return res;
}

static PyMethodDef fbt_methods[] = {
    {"msm_var", (PyCFunction)(void (*)(void))fbt_msm_var, METH_VARARGS | METH_KEYWORDS,
     "msm_var(scalars, extra_scalars=b'', extra_points=b'', threads=0) -> point: "
     "Σ scalars[i]·table[i] + Σ extra_scalars[j]·extra_points[j]."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot fbt_slots[] = {
    {Py_tp_dealloc, fbt_dealloc},
    {Py_tp_new, fbt_new},
    {Py_tp_methods, fbt_methods},
    {Py_sq_length, fbt_len},
    {Py_mp_length, fbt_len},
    {Py_tp_doc, "FixedBaseTable(points): precomputation for points reused across many MSMs."},
    {0, NULL},
};

static PyType_Spec fbt_spec = {
    KERNEL_TYPE_NAME("FixedBaseTable"),
    sizeof(FixedBaseTableObject),
    0,
    Py_TPFLAGS_DEFAULT,
    fbt_slots,
};

#endif

/* Glue: msm_var(scalars, points) and the private tuning entry _tune. */
#ifndef CTPLUGIN_GLUE_MSM_H
#define CTPLUGIN_GLUE_MSM_H

#include "common.h"

/* Σ k_i·P_i as 64 bytes; the GIL is released for n >= GIL_RELEASE_MIN. */
static PyObject *msm_result(const ge *pts, const sc *ks, size_t n, int threads) {
    const msm_config cfg = settings_snapshot_for(threads);
    gej r;
    int ok;
    if (n >= GIL_RELEASE_MIN) {
        Py_BEGIN_ALLOW_THREADS
        ok = msm_auto_var(&r, pts, ks, n, &cfg);
        Py_END_ALLOW_THREADS
    } else {
        ok = msm_auto_var(&r, pts, ks, n, &cfg);
    }
    if (!ok) return PyErr_NoMemory();
    return gej_bytes(&r);
}

static PyObject *py_msm_var(PyObject *self, PyObject *args, PyObject *kwds) {
    (void)self;
    static char *kwlist[] = {"scalars", "points", "threads", NULL};
    Py_buffer bs, bp;
    int threads = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*y*|i:msm_var", kwlist, &bs, &bp, &threads))
        return NULL;
    sc *ks;
    ge *pts;
    size_t n;
    PyObject *res = NULL;
    if (check_threads(threads) == 0 && parse_msm_operands(&bs, &bp, &ks, &pts, &n) == 0) {
        res = msm_result(pts, ks, n, threads);
        free(ks);
        free(pts);
    }
    PyBuffer_Release(&bs);
    PyBuffer_Release(&bp);
    return res;
}

/* set_threads(n): the threads kernel calls may use, 0 = the machine's cores (the default);
 * returns the previous setting.  Like Core's -par: results never depend on it. */
static PyObject *py_set_threads(PyObject *self, PyObject *arg) {
    (void)self;
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    if (v < 0 || v > KERNEL_MAX_THREADS) {
        kernel_error(KERR_INDEX_RANGE, "threads must be in [0, %d]", KERNEL_MAX_THREADS);
        return NULL;
    }
    int previous = g_settings.threads;
    g_settings.threads = (int)v;
    return PyLong_FromLong(previous);
}

/* threads() -> the number of threads a call uses by default (the setting, or the cores). */
static PyObject *py_threads(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyLong_FromLong(settings_snapshot().threads);
}

/* Private: _bucket_backend(name=None) -> the previous name: the bucket reduction rounds,
 * "ifma" (AVX-512 IFMA lanes, when the CPU has them) or "scalar"; tests run both. */
static PyObject *py_bucket_backend(PyObject *self, PyObject *args) {
    (void)self;
    const char *name = NULL;
    if (!PyArg_ParseTuple(args, "|s:_bucket_backend", &name)) return NULL;
    const char *prev = pip_backend_name();
    if (name) {
        int rc = pip_set_backend(name);
        if (rc == -1) {
            PyErr_Format(PyExc_ValueError, "unknown bucket backend %s", name);
            return NULL;
        }
        if (rc == -2) {
            PyErr_SetString(PyExc_RuntimeError, "the IFMA bucket rounds are not available here");
            return NULL;
        }
    }
    return PyUnicode_FromString(prev);
}

/* Private: force the Pippenger window (0 = by size, else 2..DIGITS_MAX_WINDOW) and the
 * Straus/Pippenger switch (the largest n for Straus; -1 = by the CPU, the default), for the
 * tuning runs behind bench/msm.py; returns the previous values.  Takes effect for calls that
 * start afterwards (running calls keep their snapshot). */
static PyObject *py_tune(PyObject *self, PyObject *args) {
    (void)self;
    int window;
    Py_ssize_t straus_max;
    if (!PyArg_ParseTuple(args, "in:_tune", &window, &straus_max)) return NULL;
    if (window < 0 || window > DIGITS_MAX_WINDOW || window == 1 || straus_max < -1) {
        kernel_error(KERR_INDEX_RANGE, "window must be 0 or 2..%d, straus_max >= -1",
                     DIGITS_MAX_WINDOW);
        return NULL;
    }
    const Py_ssize_t prev_straus =
        g_settings.straus_max == MSM_STRAUS_MAX_AUTO ? -1 : (Py_ssize_t)g_settings.straus_max;
    PyObject *prev = Py_BuildValue("(in)", g_settings.window, prev_straus);
    if (!prev) return NULL;
    g_settings.window = window;
    g_settings.straus_max = straus_max < 0 ? MSM_STRAUS_MAX_AUTO : (size_t)straus_max;
    return prev;
}

#endif

/* Glue: subset_sums_var(table, paths) (algorithm in native/subset.h). */
#ifndef CTPLUGIN_GLUE_SUBSET_SUMS_H
#define CTPLUGIN_GLUE_SUBSET_SUMS_H

#include "../native/subset.h"
#include "common.h"

/* The paths as one index array: path i is idx[off[i] .. off[i+1]). */
typedef struct {
    uint32_t *idx;
    size_t *off;
    size_t npaths, total, cap, maxlen;
} paths_buf_;

static void paths_buf_free_(paths_buf_ *pb) {
    free(pb->idx);
    free(pb->off);
}

/* Room for `more` indices (the total stays below SUBSET_NONE: node ids are 32-bit). */
static int paths_reserve_(paths_buf_ *pb, size_t more) {
    if (pb->total + more >= (size_t)SUBSET_NONE)
        return kernel_error(KERR_TOO_LARGE, "too many path indices in total");
    if (pb->total + more <= pb->cap) return 0;
    size_t cap = pb->cap;
    while (pb->total + more > cap) cap *= 2;
    uint32_t *grown = realloc(pb->idx, cap * sizeof *grown);
    if (!grown) {
        PyErr_NoMemory();
        return -1;
    }
    pb->idx = grown;
    pb->cap = cap;
    return 0;
}

/* One path index: an int in [0, ntable). */
static int path_index_(PyObject *item, size_t ntable, uint32_t *out) {
    if (!PyLong_Check(item))
        return kernel_error(KERR_TYPE, "path index must be an int, not %.100s",
                            Py_TYPE(item)->tp_name);
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (overflow || v < 0 || (unsigned long long)v >= ntable)
        return kernel_error(KERR_INDEX_RANGE, "path index %R out of range", item);
    *out = (uint32_t)v;
    return 0;
}

/* Append the items of `path` (a PySequence_Fast result the CALLER owns and keeps alive until
 * this returns: the items are borrowed from it, also while an error message is formatted).
 * An item that is the very object at the same position of the previous path (small ints are
 * shared) reuses its already validated index, which skips most conversions when consecutive
 * paths share prefixes. */
static int paths_append_(paths_buf_ *pb, PyObject *path, PyObject *prev, size_t prev_off,
                         size_t ntable) {
    const size_t len = (size_t)PySequence_Fast_GET_SIZE(path);
    if (paths_reserve_(pb, len)) return -1;
    PyObject **items = PySequence_Fast_ITEMS(path);
    PyObject **prev_items = prev ? PySequence_Fast_ITEMS(prev) : NULL;
    const size_t prev_len = prev ? (size_t)PySequence_Fast_GET_SIZE(prev) : 0;
    uint32_t *dst = pb->idx + pb->total;
    for (size_t j = 0; j < len; j++) {
        if (j < prev_len && items[j] == prev_items[j]) {
            dst[j] = pb->idx[prev_off + j];
        } else if (path_index_(items[j], ntable, &dst[j])) {
            return -1;
        }
    }
    pb->total += len;
    if (len > pb->maxlen) pb->maxlen = len;
    pb->off[++pb->npaths] = pb->total;
    return 0;
}

/* Parse a tuple of index sequences.  -1 with an exception (pb then still owns its arrays). */
static int parse_paths_(paths_buf_ *pb, PyObject *paths, size_t ntable) {
    const size_t n = (size_t)PySequence_Fast_GET_SIZE(paths);
    pb->off = malloc((n + 1) * sizeof *pb->off);
    pb->cap = 64;
    pb->idx = malloc(pb->cap * sizeof *pb->idx);
    if (!pb->off || !pb->idx) {
        PyErr_NoMemory();
        return -1;
    }
    pb->off[0] = 0;
    PyObject *prev = NULL; /* the previous path stays referenced for paths_append_ */
    size_t prev_off = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        PyObject *path = PySequence_Fast(PySequence_Fast_GET_ITEM(paths, i), "not a sequence");
        if (!path) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                kernel_error(KERR_TYPE, "path %zu: each path must be a sequence of indices", i);
            }
            rc = -1;
            break;
        }
        size_t start = pb->total;
        rc = paths_append_(pb, path, prev, prev_off, ntable);
        Py_XDECREF(prev); /* only now: nothing borrowed from the paths is used after this */
        prev = path;
        prev_off = start;
    }
    Py_XDECREF(prev);
    return rc;
}

static PyObject *py_subset_sums_var(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer bt;
    PyObject *paths_obj;
    if (!PyArg_ParseTuple(args, "y*O:subset_sums_var", &bt, &paths_obj)) return NULL;
    PyObject *res = NULL, *paths = NULL;
    ge *table = NULL, *out = NULL;
    paths_buf_ pb = {0};
    size_t nt;
    if (parse_points(&bt, &table, &nt)) goto done;
    /* a tuple: converting a path may run Python code (an iterator), which must not be able to
     * resize the outer sequence under the loop */
    paths = PySequence_Tuple(paths_obj);
    if (!paths || parse_paths_(&pb, paths, nt)) goto done;
    out = malloc((pb.npaths + 1) * sizeof *out);
    if (!out) {
        PyErr_NoMemory();
        goto done;
    }
    int ok;
    KERNEL_MAYBE_NOGIL(pb.npaths >= GIL_RELEASE_CHEAP,
                       ok = subset_sums_var(out, table, nt, pb.idx, pb.off, pb.npaths,
                                            pb.maxlen));
    if (!ok) {
        PyErr_NoMemory();
        goto done;
    }
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(64 * pb.npaths));
    if (!res) goto done;
    for (size_t i = 0; i < pb.npaths; i++)
        point_to_64((unsigned char *)PyBytes_AS_STRING(res) + 64 * i, &out[i]);
done:
    Py_XDECREF(paths);
    paths_buf_free_(&pb);
    free(table);
    free(out);
    PyBuffer_Release(&bt);
    return res;
}

#endif

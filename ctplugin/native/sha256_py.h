/* Python glue shared by the extensions that include ctplugin/native/sha256.h: the SHA-256
 * backend hooks tests use to run every implementation.  Include after <Python.h> and add
 * SHA256_BACKEND_METHODS to the module's method table.
 */
#ifndef CTPLUGIN_NATIVE_SHA256_PY_H
#define CTPLUGIN_NATIVE_SHA256_PY_H

#include "ctplugin/native/sha256.h"

static PyObject *py_sha_backend(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyUnicode_FromString(sha256_backend_name());
}

static PyObject *py_set_sha_backend(PyObject *self, PyObject *arg) {
    (void)self;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name) return NULL;
    switch (sha256_set_backend(name)) {
    case 0:
        Py_RETURN_NONE;
    case -2:
        PyErr_SetString(PyExc_ValueError, "CPU lacks the SHA extensions");
        return NULL;
    default:
        PyErr_SetString(PyExc_ValueError, "unknown SHA-256 backend");
        return NULL;
    }
}

#define SHA256_BACKEND_METHODS                                                                  \
    {"sha_backend", py_sha_backend, METH_NOARGS,                                                \
     "sha_backend() -> 'portable' or 'shani': the SHA-256 compression in use (testing)."},      \
    {"set_sha_backend", py_set_sha_backend, METH_O,                                             \
     "set_sha_backend(name): select 'portable' or 'shani' (testing)."},

#endif

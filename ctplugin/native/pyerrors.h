/* Raising ctplugin.errors types with a stable `reason` from C (every extension of ctplugin).
 * Include after <Python.h>.  With the GIL held.
 */
#ifndef CTPLUGIN_NATIVE_PYERRORS_H
#define CTPLUGIN_NATIVE_PYERRORS_H

#include <stdarg.h>

/* ctplugin.errors.<name> as a new reference (module init time), or NULL with an exception. */
static PyObject *ctp_error_type(const char *name) {
    PyObject *errors = PyImport_ImportModule("ctplugin.errors");
    if (!errors) return NULL;
    PyObject *type = PyObject_GetAttrString(errors, name);
    Py_DECREF(errors);
    return type;
}

/* Raise type(message, reason=reason) -- EncodingError, ProofError... -- with a printf-style
 * message (PyUnicode_FromFormat conversions).  Returns -1. */
static int ctp_raise_reasoned(PyObject *type, const char *reason, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (!msg) return -1;
    PyObject *args = PyTuple_Pack(1, msg);
    PyObject *kwargs = Py_BuildValue("{ss}", "reason", reason);
    PyObject *exc = args && kwargs ? PyObject_Call(type, args, kwargs) : NULL;
    if (exc) {
        PyErr_SetObject(type, exc);
        Py_DECREF(exc);
    }
    Py_DECREF(msg);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    return -1;
}

#endif

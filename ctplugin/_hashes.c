/* ctplugin._hashes: the hashing layer's native functions (API in ctplugin/hashes.py, which wraps
 * them and keeps the pure-Python definitions they are tested against).
 *
 * The SHA-256 code itself lives in ctplugin/native/sha256.h and the fast Merkle tree in
 * ctplugin/native/merkle.h, shared with the parser (txid, withash) and the secp256k1 kernel.
 * Importing this module runs nothing: the SHA-256 backend is chosen on first use.
 * rfc6979_hmac_sha256 handles secrets (constant time: ctplugin/native/hmac_drbg.h).
 * Bad input raises ctplugin.errors.EncodingError with a stable `reason` ("length", "too-large").
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ctplugin/native/hmac_drbg.h"
#include "ctplugin/native/merkle.h"
#include "ctplugin/native/pyerrors.h"
#include "ctplugin/native/sha256.h"
#include "ctplugin/native/sha256_py.h"

static PyObject *EncodingErrorType; /* ctplugin.errors.EncodingError, loaded by the module init */

/* sha256_midstate(block): the compression of one 64-byte block from the IV (Elements' Midstate). */
static PyObject *py_sha256_midstate(PyObject *self, PyObject *data) {
    (void)self;
    Py_buffer view;
    uint8_t out[32];
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len != 64) {
        PyBuffer_Release(&view);
        ctp_raise_reasoned(EncodingErrorType, "length",
                           "sha256_midstate takes exactly one 64-byte block");
        return NULL;
    }
    sha256_midstate_pair(view.buf, (const uint8_t *)view.buf + 32, out);
    PyBuffer_Release(&view);
    return PyBytes_FromStringAndSize((const char *)out, 32);
}

/* fast_merkle_root(leaves): Elements' fast Merkle root over concatenated 32-byte leaves. */
static PyObject *py_fast_merkle_root(PyObject *self, PyObject *data) {
    (void)self;
    Py_buffer view;
    uint8_t out[32];
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len % 32) {
        PyBuffer_Release(&view);
        ctp_raise_reasoned(EncodingErrorType, "length", "leaves must be concatenated 32-byte hashes");
        return NULL;
    }
    if ((uint64_t)view.len / 32 > FAST_MERKLE_MAX_LEAVES) {
        PyBuffer_Release(&view);
        ctp_raise_reasoned(EncodingErrorType, "too-large", "too many leaves for a fast Merkle root");
        return NULL;
    }
    size_t n = (size_t)view.len / 32;
    if (n > 64) {
        Py_BEGIN_ALLOW_THREADS /* the buffer stays exported (held) until released below */
        fast_merkle_root(view.buf, n, out);
        Py_END_ALLOW_THREADS
    } else {
        fast_merkle_root(view.buf, n, out);
    }
    PyBuffer_Release(&view);
    return PyBytes_FromStringAndSize((const char *)out, 32);
}

/* length_prefixed_sha256(prefix, fields): SHA256(prefix ‖ u32be(len f) ‖ f ‖ …) over the fields
 * in order (any iterable of bytes-like objects of at most 2^32 - 1 bytes each): the proof cache's key, one
 * call instead of a join and a hashlib state copy per key. */
static PyObject *py_length_prefixed_sha256(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer prefix;
    PyObject *fields;
    if (!PyArg_ParseTuple(args, "y*O:length_prefixed_sha256", &prefix, &fields)) return NULL;
    PyObject *fast = PySequence_Fast(fields, "length_prefixed_sha256: fields must be iterable");
    if (!fast) {
        PyBuffer_Release(&prefix);
        return NULL;
    }
    sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_write(&ctx, prefix.buf, (size_t)prefix.len);
    PyBuffer_Release(&prefix);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_buffer view;
        if (PyObject_GetBuffer(items[i], &view, PyBUF_SIMPLE) < 0) {
            Py_DECREF(fast);
            return NULL;
        }
        if ((uint64_t)view.len > 0xffffffffu) {
            PyBuffer_Release(&view);
            Py_DECREF(fast);
            ctp_raise_reasoned(EncodingErrorType, "too-large",
                               "length_prefixed_sha256: a field exceeds 2^32 - 1 bytes");
            return NULL;
        }
        uint32_t len = (uint32_t)view.len;
        uint8_t be[4] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                         (uint8_t)len};
        sha256_write(&ctx, be, 4);
        sha256_write(&ctx, view.buf, (size_t)view.len);
        PyBuffer_Release(&view);
    }
    Py_DECREF(fast);
    uint8_t out[32];
    sha256_final(&ctx, out);
    return PyBytes_FromStringAndSize((const char *)out, 32);
}

/* The most 32-byte outputs one rfc6979_hmac_sha256 call returns (32 MiB). */
#define RFC6979_MAX_BLOCKS ((Py_ssize_t)1 << 20)

/* rfc6979_hmac_sha256(seed, blocks): the generator's first `blocks` 32-byte outputs. */
static PyObject *py_rfc6979_hmac_sha256(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer seed;
    Py_ssize_t blocks;
    if (!PyArg_ParseTuple(args, "y*n:rfc6979_hmac_sha256", &seed, &blocks)) return NULL;
    PyObject *result = NULL;
    if (blocks < 0 || blocks > RFC6979_MAX_BLOCKS) {
        ctp_raise_reasoned(EncodingErrorType, blocks < 0 ? "length" : "too-large",
                           "rfc6979_hmac_sha256: blocks must be in [0, 2^20]");
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, 32 * blocks);
    if (!result) goto done;
    rfc6979_hmac_sha256_stream(seed.buf, (size_t)seed.len,
                               (uint8_t *)PyBytes_AS_STRING(result), (size_t)blocks);
done:
    PyBuffer_Release(&seed);
    return result;
}

static PyMethodDef methods[] = {
    {"rfc6979_hmac_sha256", py_rfc6979_hmac_sha256, METH_VARARGS,
     "rfc6979_hmac_sha256(seed, blocks) -> 32*blocks bytes: the RFC 6979 HMAC-SHA256 stream."},
    {"sha256_midstate", py_sha256_midstate, METH_O,
     "sha256_midstate(block) -> 32 bytes: SHA-256 compression of one 64-byte block from the IV."},
    {"length_prefixed_sha256", py_length_prefixed_sha256, METH_VARARGS,
     "length_prefixed_sha256(prefix, fields) -> SHA256(prefix || u32be(len f) || f ...)."},
    {"fast_merkle_root", py_fast_merkle_root, METH_O,
     "fast_merkle_root(leaves) -> 32 bytes: Elements' fast Merkle root of concatenated leaves."},
    SHA256_BACKEND_METHODS
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "ctplugin._hashes",
    "Native SHA-256 midstate and fast Merkle root (see ctplugin.hashes).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__hashes(void) {
    EncodingErrorType = ctp_error_type("EncodingError");
    if (!EncodingErrorType) return NULL;
    return PyModule_Create(&moduledef);
}

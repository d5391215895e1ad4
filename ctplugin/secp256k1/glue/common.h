/* Shared glue of the kernel module: typed errors, argument parsing into C arrays, results back
 * to bytes, and the kernel settings.  Every function here runs WITH the GIL held.
 *
 * Errors: bad input raises ctplugin.errors.EncodingError (a ValueError) with a stable `reason`
 * (the KERR_* strings below) and a message naming the element ("scalar 3: not below the group
 * order").  Wrong Python types of the arguments themselves stay TypeError (a caller bug, not
 * hostile data); allocation failure is MemoryError.
 */
#ifndef CTPLUGIN_GLUE_COMMON_H
#define CTPLUGIN_GLUE_COMMON_H

#include "ctplugin/native/pyerrors.h"

#include "../native/group.h"
#include "../native/msm.h"
#include "../native/scalar.h"

/* Reasons (EncodingError.reason), stable identifiers callers may switch on.  Arrays, so that
 * internal code may compare them by address. */
static const char KERR_LENGTH[] = "length";            /* wrong byte length of a value/vector */
static const char KERR_SCALAR_RANGE[] = "scalar-range"; /* a scalar >= N */
static const char KERR_FIELD_RANGE[] = "field-range";   /* a coordinate >= p */
static const char KERR_OFF_CURVE[] = "off-curve";       /* not on the curve / an x with no y */
static const char KERR_PREFIX[] = "prefix";             /* a bad encoding prefix byte */
static const char KERR_INFINITY[] = "infinity";         /* infinity where it has no encoding */
static const char KERR_COUNT_MISMATCH[] = "count-mismatch"; /* counts that must agree do not */
static const char KERR_ZERO[] = "zero";                 /* zero where an inverse is needed */
static const char KERR_TOO_LARGE[] = "too-large";       /* a size above the kernel's bound */
static const char KERR_INDEX_RANGE[] = "index-range";   /* an index/run outside its container */
static const char KERR_KIND[] = "kind";                 /* an unknown encoding kind */
static const char KERR_FLAGS[] = "flags";               /* unused flag bits set */
static const char KERR_TYPE[] = "type";                 /* a container element of a wrong type */

/* The qualified name of a type of this module (_native or _native_adx: see _native.c). */
#ifndef KERNEL_MODULE
#define KERNEL_MODULE _native
#endif
#define KERNEL_TYPE_NAME_(m, t) "ctplugin.secp256k1." #m "." t
#define KERNEL_TYPE_NAME_X_(m, t) KERNEL_TYPE_NAME_(m, t)
#define KERNEL_TYPE_NAME(t) KERNEL_TYPE_NAME_X_(KERNEL_MODULE, t)

/* Above this many elements a computation releases the GIL (below, the switch costs more). */
#define GIL_RELEASE_MIN 32

/* Above this many elements a cheap per-element computation (a point decoding or encoding, a
 * scalar product, a subset sum) releases the GIL.  Why a bound at all: a thread that releases
 * the GIL while another thread runs Python gets it back only when that thread yields it, after
 * up to the interpreter's switch interval (5 ms), so a helper thread making thousands of
 * one-point calls beside the main thread's Python crawls (measured: 2000 one-point decodings,
 * 1.4 s instead of a few ms).  256 elements are about a millisecond of work. */
#define GIL_RELEASE_CHEAP 256

/* The same bound for scalar arithmetic, about 50 ns an element: 8192 are under half a
 * millisecond. */
#define GIL_RELEASE_SCALARS 8192

/* Run `stmt` without the GIL when `release` holds, with it otherwise. */
#define KERNEL_MAYBE_NOGIL(release, ...)                                                    \
    do {                                                                                    \
        if (release) {                                                                      \
            Py_BEGIN_ALLOW_THREADS __VA_ARGS__;                                             \
            Py_END_ALLOW_THREADS                                                            \
        } else {                                                                            \
            __VA_ARGS__;                                                                    \
        }                                                                                   \
    } while (0)

/* ctplugin.errors.EncodingError, loaded once by the module init (module_init_errors). */
static PyObject *EncodingErrorType;

static int module_init_errors(void) {
    EncodingErrorType = ctp_error_type("EncodingError");
    return EncodingErrorType ? 0 : -1;
}

/* Raise EncodingError(message, reason=reason) with a printf-style message (PyUnicode_FromFormat
 * conversions).  Returns -1 so callers can `return kernel_error(...)`. */
#define kernel_error(reason, ...) ctp_raise_reasoned(EncodingErrorType, (reason), __VA_ARGS__)

/* --- kernel settings ------------------------------------------------------------------------
 * Mutable only with the GIL held (set_threads, _tune); an entry copies them into a local
 * msm_config before releasing the GIL (settings_snapshot), so running computations never read
 * them.  threads = 0 means the machine's cores (the default). */
static msm_config g_settings = {0, MSM_STRAUS_MAX_DEFAULT, 0};

/* The machine's cores, asked once (the answer is a sysfs read). */
static int machine_threads(void) {
    static int cached = 0;
    if (!cached) cached = kernel_cpu_count();
    return cached;
}

/* The settings for one call; threads: the call's own request (0 = the kernel setting). */
static inline msm_config settings_snapshot_for(int threads) {
    msm_config cfg = g_settings;
    if (threads > 0) cfg.threads = threads;
    if (cfg.threads <= 0) cfg.threads = machine_threads();
    return cfg;
}

static inline msm_config settings_snapshot(void) { return settings_snapshot_for(0); }

/* A `threads` argument: 0 (the kernel setting) or 1..KERNEL_MAX_THREADS. */
static int check_threads(int threads) {
    if (threads < 0 || threads > KERNEL_MAX_THREADS)
        return kernel_error(KERR_INDEX_RANGE, "threads must be in [0, %d]", KERNEL_MAX_THREADS);
    return 0;
}

/* --- scalars --------------------------------------------------------------------------------- */

/* Parse a packed scalar vector; *out is malloc'ed (NULL for n = 0).  -1 with an exception. */
static int parse_scalars(const Py_buffer *buf, sc **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (buf->len % 32) return kernel_error(KERR_LENGTH, "scalar vector length is not a multiple of 32");
    size_t count = (size_t)buf->len / 32;
    if (count == 0) return 0;
    sc *v = malloc(count * sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    const unsigned char *p = buf->buf;
    for (size_t i = 0; i < count; i++) {
        if (!sc_set_b32(&v[i], p + 32 * i)) {
            free(v);
            return kernel_error(KERR_SCALAR_RANGE, "scalar %zu: not below the group order", i);
        }
    }
    *out = v;
    *n = count;
    return 0;
}

/* One scalar argument of exactly 32 bytes; `what` names it in messages ("scalar 0", "weight"). */
static int parse_one_scalar_named(const Py_buffer *buf, sc *out, const char *what) {
    if (buf->len != 32) return kernel_error(KERR_LENGTH, "%s: a scalar is exactly 32 bytes", what);
    if (!sc_set_b32(out, buf->buf))
        return kernel_error(KERR_SCALAR_RANGE, "%s: not below the group order", what);
    return 0;
}

static int parse_one_scalar(const Py_buffer *buf, sc *out) {
    return parse_one_scalar_named(buf, out, "scalar 0");
}

static PyObject *scalars_bytes(const sc *v, size_t n) {
    PyObject *res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(32 * n));
    if (!res) return NULL;
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(res);
    for (size_t i = 0; i < n; i++) sc_get_b32(p + 32 * i, &v[i]);
    return res;
}

/* --- points ---------------------------------------------------------------------------------- */

/* Decode a 64-byte x||y point (64 zero bytes = infinity) and check it lies on the curve.
 * Returns NULL, or the KERR_* reason of the failure. */
static const char *point_from_64(ge *r, const unsigned char *b) {
    int zero = 1;
    for (int i = 0; i < 64; i++) {
        if (b[i]) {
            zero = 0;
            break;
        }
    }
    if (zero) {
        r->inf = 1;
        r->x = FE_ZERO;
        r->y = FE_ZERO;
        return NULL;
    }
    r->inf = 0;
    if (!fe_set_b32(&r->x, b) || !fe_set_b32(&r->y, b + 32)) return KERR_FIELD_RANGE;
    if (!ge_is_on_curve(r)) return KERR_OFF_CURVE;
    return NULL;
}

static int point_error(const char *reason, size_t i) {
    return kernel_error(reason, "point %zu: %s", i,
                        reason == KERR_FIELD_RANGE ? "coordinate not below the field size"
                                                   : "not on the curve");
}

static void point_to_64(unsigned char *b, const ge *a) {
    if (a->inf) {
        memset(b, 0, 64);
        return;
    }
    fe_get_b32(b, &a->x);
    fe_get_b32(b + 32, &a->y);
}

/* Parse a packed point vector; *out is malloc'ed (NULL for n = 0). */
static int parse_points(const Py_buffer *buf, ge **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (buf->len % 64) return kernel_error(KERR_LENGTH, "point vector length is not a multiple of 64");
    size_t count = (size_t)buf->len / 64;
    if (count == 0) return 0;
    ge *v = malloc(count * sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    const unsigned char *p = buf->buf;
    for (size_t i = 0; i < count; i++) {
        const char *reason = point_from_64(&v[i], p + 64 * i);
        if (reason) {
            free(v);
            return point_error(reason, i);
        }
    }
    *out = v;
    *n = count;
    return 0;
}

static int parse_one_point(const Py_buffer *buf, ge *out) {
    if (buf->len != 64) return kernel_error(KERR_LENGTH, "a point is exactly 64 bytes");
    const char *reason = point_from_64(out, buf->buf);
    return reason ? point_error(reason, 0) : 0;
}

static PyObject *point_bytes(const ge *a) {
    PyObject *res = PyBytes_FromStringAndSize(NULL, 64);
    if (res) point_to_64((unsigned char *)PyBytes_AS_STRING(res), a);
    return res;
}

static PyObject *gej_bytes(const gej *a) {
    ge g;
    ge_set_gej_var(&g, a);
    return point_bytes(&g);
}

/* Scalars and points of equal count (an MSM's operands).  On failure both are freed. */
static int parse_msm_operands(const Py_buffer *bs, const Py_buffer *bp, sc **ks, ge **pts,
                              size_t *n) {
    size_t nk = 0, np = 0;
    *ks = NULL;
    *pts = NULL;
    if (parse_scalars(bs, ks, &nk) == 0 && parse_points(bp, pts, &np) == 0) {
        if (nk == np) {
            *n = nk;
            return 0;
        }
        kernel_error(KERR_COUNT_MISMATCH, "msm_var: scalar and point counts differ");
    }
    free(*ks);
    free(*pts);
    *ks = NULL;
    *pts = NULL;
    return -1;
}

#endif

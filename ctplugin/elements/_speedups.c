/* Native kernel of ctplugin.elements: the one Elements transaction/block walker and the hashes
 * it needs (txid, wtxid, withash, Merkle roots; SHA-256 itself is ctplugin/native/sha256.h).
 *
 * The walker reads the consensus serialization (docs/elements-format.md §1) and builds the
 * Python model objects directly: the model classes are frozen, slotted dataclasses defined in
 * ctplugin/elements/model.py and registered here once (register_types), so a parsed transaction
 * costs one allocation per object instead of a Python-level __init__ call.
 *
 * Hostile input: every count and length is compared with the bytes left BEFORE anything is
 * allocated (a count of n items needs at least n * minimum-item-size bytes), compact sizes must
 * be canonical and at most MAX_SIZE (as Bitcoin's ReadCompactSize), there is no recursion, and
 * every failure becomes ParseError(offset, reason).  Preconditions of the internal functions are
 * stated where they are not checked.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#include "ctplugin/native/merkle.h"
#include "ctplugin/native/sha256.h"
#include "ctplugin/native/sha256_py.h"

/* Little-endian 32-bit load (serialized integers). */
static inline uint32_t le32(const uint8_t *p) {
    return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[1] << 8) | p[0];
}

/* ------------------------------------------------------------------------------------------ */
/* Model classes registered from Python                                                       */
/* ------------------------------------------------------------------------------------------ */

enum { K_TX, K_TXIN, K_ISSUANCE, K_TXOUT, K_HEADER, K_DYNA_PARAMS, K_DYNA_ENTRY, K_BLOCK, K_COUNT };
#define MAX_FIELDS 12

typedef struct {
    const char *name;
    const char *fields[MAX_FIELDS + 1];
    PyTypeObject *type;
    int nfields;
    Py_ssize_t offset[MAX_FIELDS];
} Kind;

/* Field order here is the order the walker fills them; model.py must declare these slots. */
static Kind KINDS[K_COUNT] = {
    {"Transaction", {"version", "inputs", "outputs", "locktime", "_raw", "_locktime_end",
                     "_txid", "_wtxid", "_withash", NULL}, NULL, 0, {0}},
    {"TxIn", {"prevout_hash", "prevout_index", "script_sig", "sequence", "is_pegin", "issuance",
              "issuance_amount_rangeproof", "inflation_keys_rangeproof", "script_witness",
              "pegin_witness", NULL}, NULL, 0, {0}},
    {"AssetIssuance", {"asset_blinding_nonce", "asset_entropy", "amount", "inflation_keys", NULL},
     NULL, 0, {0}},
    {"TxOut", {"asset", "value", "nonce", "script_pubkey", "surjection_proof", "range_proof",
               NULL}, NULL, 0, {0}},
    {"BlockHeader", {"version", "prev_hash", "merkle_root", "time", "height", "challenge",
                     "solution", "dynafed_params", "signblock_witness", "_raw", "_hash_end",
                     "_hash", NULL}, NULL, 0, {0}},
    {"DynafedParams", {"current", "proposed", NULL}, NULL, 0, {0}},
    {"DynafedParamEntry", {"type", "signblockscript", "signblock_witness_limit", "elided_root",
                           "fedpeg_program", "fedpegscript", "extension_space", NULL},
     NULL, 0, {0}},
    {"Block", {"header", "transactions", NULL}, NULL, 0, {0}},
};

/* Build an instance of kind k from vals (references stolen, also on failure).  A NULL in vals
 * means an allocation already failed (exception set); the other values are released. */
static PyObject *build(int k, PyObject **vals) {
    Kind *kind = &KINDS[k];
    PyObject *o = NULL;
    int ok = kind->type != NULL;
    for (int i = 0; i < kind->nfields; i++) ok &= vals[i] != NULL;
    if (ok) o = kind->type->tp_alloc(kind->type, 0);
    if (!o) {
        if (!kind->type && !PyErr_Occurred())
            PyErr_Format(PyExc_RuntimeError, "model class %s not registered", kind->name);
        for (int i = 0; i < kind->nfields; i++) Py_XDECREF(vals[i]);
        return NULL;
    }
    for (int i = 0; i < kind->nfields; i++)
        *(PyObject **)((char *)o + kind->offset[i]) = vals[i];
    return o;
}

/* Replace slot i of a freshly built, not yet shared object (steals v). */
static inline void set_slot(int k, PyObject *o, int i, PyObject *v) {
    PyObject **slot = (PyObject **)((char *)o + KINDS[k].offset[i]);
    PyObject *old = *slot;
    *slot = v;
    Py_XDECREF(old);
}

/* Check that cls is a plain slotted class whose slots are exactly the fields of `kind`, and
 * write their offsets to offset[] (a caller's scratch array, not the live table).  Returns the
 * number of fields, or -1 with TypeError. */
static int kind_offsets(const Kind *kind, PyObject *cls, Py_ssize_t offset[MAX_FIELDS]) {
    if (!cls || !PyType_Check(cls)) {
        PyErr_Format(PyExc_TypeError, "missing model class %s", kind->name);
        return -1;
    }
    PyTypeObject *t = (PyTypeObject *)cls;
    /* Only plain slotted classes: no __dict__, not variable-sized, so filling every slot after
     * tp_alloc yields a complete object. */
    if (t->tp_dictoffset != 0 || t->tp_itemsize != 0) {
        PyErr_Format(PyExc_TypeError, "%s must be a slotted class without __dict__", kind->name);
        return -1;
    }
    int n = 0;
    for (; kind->fields[n]; n++) {
        PyObject *d = PyObject_GetAttrString(cls, kind->fields[n]);
        if (!d) return -1;
        if (!PyObject_TypeCheck(d, &PyMemberDescr_Type) ||
            ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
            Py_DECREF(d);
            PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", kind->name, kind->fields[n]);
            return -1;
        }
        offset[n] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
    }
    /* every slot of the class must be one the walker fills */
    PyObject *slots = PyObject_GetAttrString(cls, "__slots__");
    if (!slots) return -1;
    Py_ssize_t nslots = PyObject_Length(slots);
    Py_DECREF(slots);
    if (nslots < 0) return -1;
    if (nslots != n) {
        PyErr_Format(PyExc_TypeError, "%s has %zd slots, walker fills %d", kind->name, nslots, n);
        return -1;
    }
    return n;
}

/* Register the model classes (dict name -> class).  All-or-nothing: every class is checked into
 * scratch offsets first, and the live table (types and slot offsets the walker writes through)
 * changes only once all of them passed, so a rejected call leaves the previous registration
 * intact. */
static PyObject *register_types(PyObject *self, PyObject *mapping) {
    (void)self;
    if (!PyDict_Check(mapping)) {
        PyErr_SetString(PyExc_TypeError, "register_types takes a dict name -> class");
        return NULL;
    }
    Py_ssize_t offsets[K_COUNT][MAX_FIELDS];
    int counts[K_COUNT];
    PyObject *classes[K_COUNT] = {NULL};
    int k = 0;
    for (; k < K_COUNT; k++) {
        /* owned: the attribute lookups below may run Python code that mutates the dict */
        classes[k] = PyDict_GetItemString(mapping, KINDS[k].name);
        Py_XINCREF(classes[k]);
        counts[k] = kind_offsets(&KINDS[k], classes[k], offsets[k]);
        if (counts[k] < 0) {
            for (; k >= 0; k--) Py_XDECREF(classes[k]);
            return NULL;
        }
    }
    for (k = 0; k < K_COUNT; k++) {
        Kind *kind = &KINDS[k];
        memcpy(kind->offset, offsets[k], sizeof offsets[k]);
        kind->nfields = counts[k];
        Py_XSETREF(kind->type, (PyTypeObject *)classes[k]); /* the reference moves to the table */
    }
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------ */
/* Reader                                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define MAX_SIZE 0x02000000u /* Bitcoin's MAX_SIZE: largest compact size a reader accepts */
#define MIN_TXIN_SIZE 41     /* 32 hash + 4 index + 1 script len + 4 sequence */
#define MIN_TXOUT_SIZE 44    /* 33 asset + 9 value + 1 null nonce + 1 script len */
#define MIN_TX_SIZE 11       /* version, flags, two empty counts, locktime */

typedef struct {
    const uint8_t *p;
    Py_ssize_t len, pos;
    const char *err; /* reason of a format error; NULL with an exception set = Python error */
    Py_ssize_t err_off;
} Rd;

static int fail_at(Rd *r, Py_ssize_t off, const char *why) {
    if (!r->err) { r->err = why; r->err_off = off; }
    return -1;
}
#define LEFT(r) ((r)->len - (r)->pos)
#define NEED(r, n, why) do { if (LEFT(r) < (Py_ssize_t)(n)) return fail_at(r, (r)->pos, why); } while (0)

static inline int rd_u8(Rd *r, uint8_t *v, const char *why) {
    NEED(r, 1, why);
    *v = r->p[r->pos++];
    return 0;
}
static inline int rd_u32(Rd *r, uint32_t *v, const char *why) {
    NEED(r, 4, why);
    *v = le32(r->p + r->pos);
    r->pos += 4;
    return 0;
}

/* CompactSize, canonical and <= MAX_SIZE (Bitcoin ReadCompactSize with range check). */
static int rd_compact(Rd *r, uint64_t *v) {
    Py_ssize_t at = r->pos;
    uint8_t b;
    if (rd_u8(r, &b, "truncated compact size") < 0) return -1;
    if (b < 253) { *v = b; return 0; }
    int n = b == 253 ? 2 : b == 254 ? 4 : 8;
    NEED(r, n, "truncated compact size");
    uint64_t x = 0;
    for (int i = n - 1; i >= 0; i--) x = (x << 8) | r->p[r->pos + i];
    r->pos += n;
    if ((n == 2 && x < 253) || (n == 4 && x < 0x10000) || (n == 8 && x < 0x100000000ULL))
        return fail_at(r, at, "non-canonical compact size");
    if (x > MAX_SIZE) return fail_at(r, at, "compact size exceeds MAX_SIZE");
    *v = x;
    return 0;
}

/* Length-prefixed bytes: returns start offset and length of the payload. */
static int rd_span(Rd *r, Py_ssize_t *start, Py_ssize_t *n, const char *why) {
    uint64_t len;
    if (rd_compact(r, &len) < 0) return -1;
    if ((uint64_t)LEFT(r) < len) return fail_at(r, r->pos, why);
    *start = r->pos;
    *n = (Py_ssize_t)len;
    r->pos += (Py_ssize_t)len;
    return 0;
}

static inline PyObject *bytes_at(Rd *r, Py_ssize_t start, Py_ssize_t n) {
    return PyBytes_FromStringAndSize((const char *)r->p + start, n);
}

static PyObject *rd_bytes(Rd *r, const char *why) {
    Py_ssize_t s, n;
    if (rd_span(r, &s, &n, why) < 0) return NULL;
    return bytes_at(r, s, n);
}

static PyObject *rd_fixed(Rd *r, Py_ssize_t n, const char *why) {
    if (LEFT(r) < n) { fail_at(r, r->pos, why); return NULL; }
    PyObject *o = bytes_at(r, r->pos, n);
    r->pos += n;
    return o;
}

/* varint n + n length-prefixed items -> tuple of bytes.  Each item needs >= 1 byte. */
static PyObject *rd_stack(Rd *r, const char *why) {
    uint64_t n;
    Py_ssize_t at = r->pos;
    if (rd_compact(r, &n) < 0) return NULL;
    if (n > (uint64_t)LEFT(r)) { fail_at(r, at, "stack item count exceeds remaining bytes"); return NULL; }
    PyObject *t = PyTuple_New((Py_ssize_t)n);
    if (!t) return NULL;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)n; i++) {
        PyObject *item = rd_bytes(r, why);
        if (!item) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, item);
    }
    return t;
}

/* Skip a stack without building objects (hash walks). */
static int skip_stack(Rd *r) {
    uint64_t n;
    Py_ssize_t s, len;
    if (rd_compact(r, &n) < 0) return -1;
    if (n > (uint64_t)LEFT(r)) return fail_at(r, r->pos, "stack item count exceeds remaining bytes");
    for (uint64_t i = 0; i < n; i++)
        if (rd_span(r, &s, &len, "truncated witness stack item") < 0) return -1;
    return 0;
}

/* Confidential value: 00 null (only where allowed) | 01 + 8-byte BE amount -> int |
 * 08/09 + 32 -> 33-byte commitment.  `*out` is None for null. */
static int rd_conf_value(Rd *r, PyObject **out, int allow_null) {
    Py_ssize_t at = r->pos;
    uint8_t pre;
    *out = NULL;
    if (rd_u8(r, &pre, "truncated confidential value") < 0) return -1;
    if (pre == 0) {
        if (!allow_null) return fail_at(r, at, "confidential value may not be null");
        Py_INCREF(Py_None);
        *out = Py_None;
        return 0;
    }
    if (pre == 1) {
        NEED(r, 8, "truncated explicit value");
        uint64_t v = 0;
        for (int i = 0; i < 8; i++) v = (v << 8) | r->p[r->pos + i];
        r->pos += 8;
        *out = PyLong_FromUnsignedLongLong(v);
        return *out ? 0 : -1;
    }
    if (pre == 8 || pre == 9) {
        r->pos = at;
        *out = rd_fixed(r, 33, "truncated value commitment");
        return *out ? 0 : -1;
    }
    return fail_at(r, at, "unrecognized confidential value prefix");
}

/* ------------------------------------------------------------------------------------------ */
/* Transaction walker                                                                         */
/* ------------------------------------------------------------------------------------------ */

enum { TX_VERSION, TX_INPUTS, TX_OUTPUTS, TX_LOCKTIME, TX_RAW, TX_LTEND, TX_TXID, TX_WTXID,
       TX_WITHASH };
enum { IN_HASH, IN_INDEX, IN_SCRIPT, IN_SEQ, IN_PEGIN, IN_ISSUANCE, IN_RP_AMOUNT, IN_RP_KEYS,
       IN_WITNESS, IN_PEGIN_WITNESS };
enum { OUT_ASSET, OUT_VALUE, OUT_NONCE, OUT_SPK, OUT_SURJ, OUT_RANGE };

static PyObject *EMPTY_BYTES, *EMPTY_TUPLE;

#define NEW_EMPTY_BYTES() (Py_INCREF(EMPTY_BYTES), EMPTY_BYTES)
#define NEW_EMPTY_TUPLE() (Py_INCREF(EMPTY_TUPLE), EMPTY_TUPLE)

static PyObject *walk_txin(Rd *r) {
    PyObject *v[10] = {0};
    uint32_t n, seq;
    v[IN_HASH] = rd_fixed(r, 32, "truncated prevout hash");
    if (!v[IN_HASH]) return NULL;
    if (rd_u32(r, &n, "truncated prevout index") < 0) goto err;
    int has_issuance = 0, is_pegin = 0;
    uint32_t index = n;
    if (n != 0xffffffffu) { /* flags are not interpreted on a null (coinbase) prevout */
        has_issuance = (n >> 31) & 1;
        is_pegin = (n >> 30) & 1;
        index = n & 0x3fffffffu;
    }
    v[IN_INDEX] = PyLong_FromUnsignedLong(index);
    v[IN_SCRIPT] = rd_bytes(r, "truncated scriptSig");
    if (!v[IN_INDEX] || !v[IN_SCRIPT]) goto err;
    if (rd_u32(r, &seq, "truncated sequence") < 0) goto err;
    v[IN_SEQ] = PyLong_FromUnsignedLong(seq);
    if (!v[IN_SEQ]) goto err;
    v[IN_PEGIN] = is_pegin ? Py_True : Py_False;
    Py_INCREF(v[IN_PEGIN]);
    if (has_issuance) {
        PyObject *iv[4] = {0};
        Py_ssize_t at = r->pos;
        iv[0] = rd_fixed(r, 32, "truncated issuance blinding nonce");
        iv[1] = iv[0] ? rd_fixed(r, 32, "truncated issuance entropy") : NULL;
        if (iv[1] && rd_conf_value(r, &iv[2], 1) == 0 && rd_conf_value(r, &iv[3], 1) == 0 &&
            iv[2] == Py_None && iv[3] == Py_None)
            fail_at(r, at, "superfluous issuance record");
        if (!iv[0] || !iv[1] || !iv[2] || !iv[3] || r->err) {
            for (int i = 0; i < 4; i++) Py_XDECREF(iv[i]);
            goto err;
        }
        v[IN_ISSUANCE] = build(K_ISSUANCE, iv);
        if (!v[IN_ISSUANCE]) goto err;
    } else {
        Py_INCREF(Py_None);
        v[IN_ISSUANCE] = Py_None;
    }
    v[IN_RP_AMOUNT] = NEW_EMPTY_BYTES();
    v[IN_RP_KEYS] = NEW_EMPTY_BYTES();
    v[IN_WITNESS] = NEW_EMPTY_TUPLE();
    v[IN_PEGIN_WITNESS] = NEW_EMPTY_TUPLE();
    return build(K_TXIN, v);
err:
    for (int i = 0; i < 10; i++) Py_XDECREF(v[i]);
    return NULL;
}

static PyObject *walk_txout(Rd *r) {
    PyObject *v[6] = {0};
    Py_ssize_t at = r->pos;
    uint8_t pre;
    if (rd_u8(r, &pre, "truncated asset") < 0) return NULL;
    if (pre == 1) {
        v[OUT_ASSET] = rd_fixed(r, 32, "truncated explicit asset");
    } else if (pre == 0x0a || pre == 0x0b) {
        r->pos = at;
        v[OUT_ASSET] = rd_fixed(r, 33, "truncated asset commitment");
    } else {
        fail_at(r, at, pre == 0 ? "confidential asset may not be null"
                                : "unrecognized confidential asset prefix");
        return NULL;
    }
    if (!v[OUT_ASSET]) return NULL;
    if (rd_conf_value(r, &v[OUT_VALUE], 0) < 0) goto err;
    at = r->pos;
    if (rd_u8(r, &pre, "truncated nonce") < 0) goto err;
    if (pre == 0) {
        v[OUT_NONCE] = NEW_EMPTY_BYTES();
    } else if (pre >= 1 && pre <= 3) {
        r->pos = at;
        v[OUT_NONCE] = rd_fixed(r, 33, "truncated nonce");
        if (!v[OUT_NONCE]) goto err;
    } else {
        fail_at(r, at, "unrecognized confidential nonce prefix");
        goto err;
    }
    v[OUT_SPK] = rd_bytes(r, "truncated scriptPubKey");
    if (!v[OUT_SPK]) goto err;
    v[OUT_SURJ] = NEW_EMPTY_BYTES();
    v[OUT_RANGE] = NEW_EMPTY_BYTES();
    return build(K_TXOUT, v);
err:
    for (int i = 0; i < 6; i++) Py_XDECREF(v[i]);
    return NULL;
}

/* Walk one transaction starting at r->pos; returns a Transaction (owns a copy of its bytes). */
static PyObject *walk_tx(Rd *r) {
    PyObject *v[9] = {0};
    Py_ssize_t start = r->pos;
    uint32_t version, locktime;
    uint8_t flags;
    uint64_t n_in, n_out;
    if (rd_u32(r, &version, "truncated version") < 0) return NULL;
    Py_ssize_t flag_at = r->pos;
    if (rd_u8(r, &flags, "truncated flags") < 0) return NULL;
    if (flags & ~1u) return fail_at(r, flag_at, "unknown transaction optional data"), NULL;

    Py_ssize_t at = r->pos;
    if (rd_compact(r, &n_in) < 0) return NULL;
    if (n_in > (uint64_t)(LEFT(r) / MIN_TXIN_SIZE))
        return fail_at(r, at, "input count exceeds remaining bytes"), NULL;
    v[TX_INPUTS] = PyTuple_New((Py_ssize_t)n_in);
    if (!v[TX_INPUTS]) return NULL;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)n_in; i++) {
        PyObject *in = walk_txin(r);
        if (!in) goto err;
        PyTuple_SET_ITEM(v[TX_INPUTS], i, in);
    }
    at = r->pos;
    if (rd_compact(r, &n_out) < 0) goto err;
    if (n_out > (uint64_t)(LEFT(r) / MIN_TXOUT_SIZE)) {
        fail_at(r, at, "output count exceeds remaining bytes");
        goto err;
    }
    v[TX_OUTPUTS] = PyTuple_New((Py_ssize_t)n_out);
    if (!v[TX_OUTPUTS]) goto err;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)n_out; i++) {
        PyObject *out = walk_txout(r);
        if (!out) goto err;
        PyTuple_SET_ITEM(v[TX_OUTPUTS], i, out);
    }
    if (rd_u32(r, &locktime, "truncated locktime") < 0) goto err;
    Py_ssize_t locktime_end = r->pos;
    if (flags & 1) {
        int any = 0;
        Py_ssize_t wit_at = r->pos;
        for (Py_ssize_t i = 0; i < (Py_ssize_t)n_in; i++) {
            PyObject *in = PyTuple_GET_ITEM(v[TX_INPUTS], i), *f;
            static const int order[4] = {IN_RP_AMOUNT, IN_RP_KEYS, IN_WITNESS, IN_PEGIN_WITNESS};
            for (int j = 0; j < 4; j++) {
                f = j < 2 ? rd_bytes(r, "truncated issuance rangeproof")
                          : rd_stack(r, "truncated witness stack item");
                if (!f) goto err;
                any |= j < 2 ? PyBytes_GET_SIZE(f) != 0 : PyTuple_GET_SIZE(f) != 0;
                set_slot(K_TXIN, in, order[j], f);
            }
        }
        for (Py_ssize_t i = 0; i < (Py_ssize_t)n_out; i++) {
            PyObject *out = PyTuple_GET_ITEM(v[TX_OUTPUTS], i), *f;
            for (int j = 0; j < 2; j++) {
                f = rd_bytes(r, j == 0 ? "truncated surjection proof" : "truncated rangeproof");
                if (!f) goto err;
                any |= PyBytes_GET_SIZE(f) != 0;
                set_slot(K_TXOUT, out, j == 0 ? OUT_SURJ : OUT_RANGE, f);
            }
        }
        if (!any) {
            fail_at(r, wit_at, "superfluous witness record");
            goto err;
        }
    }
    v[TX_VERSION] = PyLong_FromLong((long)(int32_t)version);
    v[TX_LOCKTIME] = PyLong_FromUnsignedLong(locktime);
    v[TX_RAW] = bytes_at(r, start, r->pos - start);
    v[TX_LTEND] = PyLong_FromSsize_t(locktime_end - start);
    Py_INCREF(Py_None); v[TX_TXID] = Py_None;
    Py_INCREF(Py_None); v[TX_WTXID] = Py_None;
    Py_INCREF(Py_None); v[TX_WITHASH] = Py_None;
    return build(K_TX, v);
err:
    for (int i = 0; i < 9; i++) Py_XDECREF(v[i]);
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Block walker                                                                               */
/* ------------------------------------------------------------------------------------------ */

enum { H_VERSION, H_PREV, H_MERKLE, H_TIME, H_HEIGHT, H_CHALLENGE, H_SOLUTION, H_DYNAFED,
       H_SIGNWIT, H_RAW, H_HASH_END, H_HASH };

static PyObject *walk_dynafed_entry(Rd *r) {
    PyObject *v[7] = {0};
    Py_ssize_t at = r->pos;
    uint8_t type;
    uint32_t limit = 0;
    if (rd_u8(r, &type, "truncated dynafed entry type") < 0) return NULL;
    if (type > 2) return fail_at(r, at, "invalid dynafed parameter entry type"), NULL;
    if (type == 0) {
        v[1] = NEW_EMPTY_BYTES();
    } else {
        v[1] = rd_bytes(r, "truncated signblockscript");
        if (!v[1]) goto err;
        if (rd_u32(r, &limit, "truncated signblock witness limit") < 0) goto err;
    }
    v[0] = PyLong_FromLong(type);
    v[2] = PyLong_FromUnsignedLong(limit);
    if (type == 1) {
        v[3] = rd_fixed(r, 32, "truncated elided root");
        if (!v[3]) goto err;
    } else {
        v[3] = NEW_EMPTY_BYTES();
    }
    if (type == 2) {
        v[4] = rd_bytes(r, "truncated fedpeg program");
        if (!v[4]) goto err;
        v[5] = rd_bytes(r, "truncated fedpegscript");
        if (!v[5]) goto err;
        v[6] = rd_stack(r, "truncated extension space item");
        if (!v[6]) goto err;
    } else {
        v[4] = NEW_EMPTY_BYTES();
        v[5] = NEW_EMPTY_BYTES();
        v[6] = NEW_EMPTY_TUPLE();
    }
    return build(K_DYNA_ENTRY, v);
err:
    for (int i = 0; i < 7; i++) Py_XDECREF(v[i]);
    return NULL;
}

static PyObject *walk_header(Rd *r) {
    PyObject *v[12] = {0};
    Py_ssize_t start = r->pos, hash_end;
    uint32_t version, time, height;
    if (rd_u32(r, &version, "truncated block version") < 0) return NULL;
    int dynafed = (version >> 31) & 1;
    v[H_PREV] = rd_fixed(r, 32, "truncated previous block hash");
    if (!v[H_PREV]) goto err;
    v[H_MERKLE] = rd_fixed(r, 32, "truncated merkle root");
    if (!v[H_MERKLE]) goto err;
    if (rd_u32(r, &time, "truncated block time") < 0) goto err;
    if (rd_u32(r, &height, "truncated block height") < 0) goto err;
    if (dynafed) {
        PyObject *pv[2] = {0};
        Py_ssize_t params_at = r->pos;
        /* Elements writes (and hashes) a header as dynafed only when its parameters are not
         * both null, so such a header would not round-trip; its validation rejects it anyway
         * (the current entry must be set).  Refuse it here. */
        if (LEFT(r) >= 2 && r->p[r->pos] == 0 && r->p[r->pos + 1] == 0) {
            fail_at(r, params_at, "dynafed header with null current and proposed parameters");
            goto err;
        }
        pv[0] = walk_dynafed_entry(r);
        pv[1] = pv[0] ? walk_dynafed_entry(r) : NULL;
        if (!pv[1]) { Py_XDECREF(pv[0]); goto err; }
        v[H_DYNAFED] = build(K_DYNA_PARAMS, pv);
        if (!v[H_DYNAFED]) goto err;
        hash_end = r->pos;
        v[H_SIGNWIT] = rd_stack(r, "truncated signblock witness item");
        if (!v[H_SIGNWIT]) goto err;
        Py_INCREF(Py_None); v[H_CHALLENGE] = Py_None;
        Py_INCREF(Py_None); v[H_SOLUTION] = Py_None;
    } else {
        v[H_CHALLENGE] = rd_bytes(r, "truncated block challenge");
        if (!v[H_CHALLENGE]) goto err;
        hash_end = r->pos;
        v[H_SOLUTION] = rd_bytes(r, "truncated block solution");
        if (!v[H_SOLUTION]) goto err;
        Py_INCREF(Py_None); v[H_DYNAFED] = Py_None;
        v[H_SIGNWIT] = NEW_EMPTY_TUPLE();
    }
    v[H_VERSION] = PyLong_FromUnsignedLong(version & 0x7fffffffu);
    v[H_TIME] = PyLong_FromUnsignedLong(time);
    v[H_HEIGHT] = PyLong_FromUnsignedLong(height);
    v[H_RAW] = bytes_at(r, start, r->pos - start);
    v[H_HASH_END] = PyLong_FromSsize_t(hash_end - start);
    Py_INCREF(Py_None); v[H_HASH] = Py_None;
    return build(K_HEADER, v);
err:
    for (int i = 0; i < 12; i++) Py_XDECREF(v[i]);
    return NULL;
}

static PyObject *walk_block(Rd *r) {
    PyObject *v[2] = {0};
    uint64_t n;
    v[0] = walk_header(r);
    if (!v[0]) return NULL;
    Py_ssize_t at = r->pos;
    if (rd_compact(r, &n) < 0) goto err;
    if (n > (uint64_t)(LEFT(r) / MIN_TX_SIZE)) {
        fail_at(r, at, "transaction count exceeds remaining bytes");
        goto err;
    }
    v[1] = PyTuple_New((Py_ssize_t)n);
    if (!v[1]) goto err;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)n; i++) {
        PyObject *tx = walk_tx(r);
        if (!tx) goto err;
        PyTuple_SET_ITEM(v[1], i, tx);
    }
    return build(K_BLOCK, v);
err:
    Py_XDECREF(v[0]);
    Py_XDECREF(v[1]);
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Python entry points                                                                        */
/* ------------------------------------------------------------------------------------------ */

static PyObject *ParseErrorType;

static PyObject *raise_parse_error(Rd *r) {
    if (r->err) {
        PyErr_Clear(); /* a format error wins over nothing; Python errors leave err NULL */
        PyObject *e = PyObject_CallFunction(ParseErrorType, "ns", r->err_off, r->err);
        if (e) {
            PyErr_SetObject(ParseErrorType, e);
            Py_DECREF(e);
        }
    }
    return NULL;
}

typedef PyObject *(*walker_fn)(Rd *);

static PyObject *run_walker(PyObject *data, walker_fn fn, const char *trailing_why) {
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    Rd r = {(const uint8_t *)view.buf, view.len, 0, NULL, 0};
    PyObject *o = fn(&r);
    if (o && r.pos != r.len) {
        Py_CLEAR(o);
        fail_at(&r, r.pos, trailing_why);
    }
    PyBuffer_Release(&view);
    if (!o) return raise_parse_error(&r);
    return o;
}

static PyObject *py_parse_transaction(PyObject *self, PyObject *data) {
    (void)self;
    return run_walker(data, walk_tx, "trailing bytes after transaction");
}
static PyObject *py_parse_block(PyObject *self, PyObject *data) {
    (void)self;
    return run_walker(data, walk_block, "trailing bytes after block");
}
/* One output in its non-witness serialization (asset, value, nonce, scriptPubKey). */
static PyObject *py_parse_txout(PyObject *self, PyObject *data) {
    (void)self;
    return run_walker(data, walk_txout, "trailing bytes after output");
}
static PyObject *py_parse_block_header(PyObject *self, PyObject *data) {
    (void)self;
    return run_walker(data, walk_header, "trailing bytes after block header");
}

/* txid = sha256d(version || 0x00 || raw[5:locktime_end]): the non-witness serialization keeps the
 * flag byte, forced to zero (docs/elements-format.md §1.2).  Preconditions checked: 5 <= end <= len. */
static PyObject *py_txid(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t end;
    uint8_t out[32], zero = 0;
    if (!PyArg_ParseTuple(args, "y*n", &view, &end)) return NULL;
    if (end < 5 || end > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "locktime end outside the transaction");
        return NULL;
    }
    const uint8_t *p = view.buf;
    sha256d3(p, 4, &zero, 1, p + 5, (size_t)(end - 5), out);
    PyBuffer_Release(&view);
    return PyBytes_FromStringAndSize((const char *)out, 32);
}

/* Set the txid slot of every parsed transaction of a sequence that has none yet, in one call:
 * a block's path asks for every txid (mempool lookups, Merkle root, duplicates), and the lazy
 * property's first call costs more in Python than the hash (same preimage as py_txid).  A
 * transaction not serialized yet (built in Python: no kept bytes) is left to the property. */
static PyObject *py_fill_txids(PyObject *self, PyObject *seq) {
    (void)self;
    Kind *kind = &KINDS[K_TX];
    if (!kind->type) return PyErr_Format(PyExc_RuntimeError, "model class %s not registered",
                                         kind->name);
    PyObject *fast = PySequence_Fast(seq, "fill_txids expects a sequence of transactions");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *tx = items[i];
        if (Py_TYPE(tx) != kind->type) {
            Py_DECREF(fast);
            return PyErr_Format(PyExc_TypeError, "fill_txids: item %zd is not a Transaction", i);
        }
        PyObject *txid = *(PyObject **)((char *)tx + kind->offset[TX_TXID]);
        PyObject *raw = *(PyObject **)((char *)tx + kind->offset[TX_RAW]);
        PyObject *end = *(PyObject **)((char *)tx + kind->offset[TX_LTEND]);
        if ((txid && txid != Py_None) || !raw || !PyBytes_Check(raw) || !end || !PyLong_Check(end))
            continue;
        Py_ssize_t e = PyLong_AsSsize_t(end);
        if (e < 5 || e > PyBytes_GET_SIZE(raw)) {
            Py_DECREF(fast);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "locktime end outside the transaction");
            return NULL;
        }
        const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(raw);
        uint8_t out[32], zero = 0;
        sha256d3(p, 4, &zero, 1, p + 5, (size_t)(e - 5), out);
        PyObject *id = PyBytes_FromStringAndSize((const char *)out, 32);
        if (!id) {
            Py_DECREF(fast);
            return NULL;
        }
        set_slot(K_TX, tx, TX_TXID, id);
    }
    Py_DECREF(fast);
    Py_RETURN_NONE;
}

static PyObject *py_sha256d(PyObject *self, PyObject *data) {
    (void)self;
    Py_buffer view;
    uint8_t out[32];
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    sha256d(view.buf, (size_t)view.len, out);
    PyBuffer_Release(&view);
    return PyBytes_FromStringAndSize((const char *)out, 32);
}

/* Bitcoin Merkle root over concatenated 32-byte hashes: pairs hashed with sha256d, an odd last
 * node paired with itself.  Also reports CVE-2012-2459 "mutation" (two equal siblings). */
static PyObject *py_merkle_root(PyObject *self, PyObject *data) {
    (void)self;
    Py_buffer view;
    uint8_t out[32];
    int mutated = 0;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (view.len % 32) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "hashes must be concatenated 32-byte hashes");
        return NULL;
    }
    size_t n = (size_t)view.len / 32;
    if (n == 0) {
        memset(out, 0, 32);
    } else {
        uint8_t *level = PyMem_Malloc(n * 32);
        if (!level) { PyBuffer_Release(&view); return PyErr_NoMemory(); }
        memcpy(level, view.buf, n * 32);
        while (n > 1) {
            for (size_t i = 0; i + 1 < n; i += 2)
                if (!memcmp(level + 32 * i, level + 32 * (i + 1), 32)) mutated = 1;
            size_t m = (n + 1) / 2;
            for (size_t i = 0; i < m; i++) {
                const uint8_t *left = level + 64 * i;
                const uint8_t *right = 2 * i + 1 < n ? left + 32 : left;
                sha256d3(left, 32, right, 32, NULL, 0, level + 32 * i);
            }
            n = m;
        }
        memcpy(out, level, 32);
        PyMem_Free(level);
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("y#O", (const char *)out, (Py_ssize_t)32, mutated ? Py_True : Py_False);
}

/* withash's walk over the inputs before the witness section: null_in[i] = input i spends the null
 * prevout (a coinbase input: its witness leaf is the empty one). */
static int withash_walk_inputs(Rd *r, uint64_t n_in, uint8_t *null_in) {
    static const uint8_t zeros[32] = {0};
    Py_ssize_t s, n;
    uint32_t u32;
    for (uint64_t i = 0; i < n_in; i++) {
        if (LEFT(r) < 36) return fail_at(r, r->pos, "truncated prevout");
        uint32_t idx = le32(r->p + r->pos + 32);
        null_in[i] = idx == 0xffffffffu && !memcmp(r->p + r->pos, zeros, 32);
        r->pos += 36;
        if (rd_span(r, &s, &n, "truncated scriptSig") < 0 || rd_u32(r, &u32, "seq") < 0) return -1;
        if (idx != 0xffffffffu && (idx >> 31)) {
            uint8_t pre;
            if (LEFT(r) < 64) return fail_at(r, r->pos, "truncated issuance");
            r->pos += 64;
            for (int j = 0; j < 2; j++) {
                if (rd_u8(r, &pre, "truncated issuance value") < 0) return -1;
                Py_ssize_t extra = pre == 0 ? 0 : pre == 1 ? 8 : 32;
                if (LEFT(r) < extra) return fail_at(r, r->pos, "truncated issuance value");
                r->pos += extra;
            }
        }
    }
    return 0;
}

/* withash's walk over the outputs before the witness section. */
static int withash_walk_outputs(Rd *r, uint64_t n_out) {
    Py_ssize_t s, n;
    for (uint64_t i = 0; i < n_out; i++) {
        uint8_t pre;
        if (rd_u8(r, &pre, "asset") < 0) return -1;
        if (LEFT(r) < 32) return fail_at(r, r->pos, "asset");
        r->pos += 32;
        if (rd_u8(r, &pre, "value") < 0) return -1;
        Py_ssize_t extra = pre == 1 ? 8 : 32;
        if (LEFT(r) < extra) return fail_at(r, r->pos, "value");
        r->pos += extra;
        if (rd_u8(r, &pre, "nonce") < 0) return -1;
        extra = pre == 0 ? 0 : 32;
        if (LEFT(r) < extra) return fail_at(r, r->pos, "nonce");
        r->pos += extra;
        if (rd_span(r, &s, &n, "scriptPubKey") < 0) return -1;
    }
    return 0;
}

/* Input witness leaves (32 bytes each into leaves): FMR of sha256d of the issuance amount
 * rangeproof, inflation keys rangeproof, script witness stack and peg-in witness stack;
 * empty_in for a coinbase input or a transaction without witnesses. */
static int withash_input_leaves(Rd *r, uint64_t n_in, int witness, const uint8_t *null_in,
                                const uint8_t *empty_in, uint8_t *leaves) {
    Py_ssize_t s, n;
    uint8_t leaf4[128];
    for (uint64_t i = 0; i < n_in; i++) {
        if (!witness) {
            memcpy(leaves + 32 * i, empty_in, 32);
            continue;
        }
        Py_ssize_t mark[5];
        mark[0] = r->pos;
        if (rd_span(r, &s, &n, "rp") < 0) return -1;
        mark[1] = r->pos;
        if (rd_span(r, &s, &n, "rp") < 0) return -1;
        mark[2] = r->pos;
        if (skip_stack(r) < 0) return -1;
        mark[3] = r->pos;
        if (skip_stack(r) < 0) return -1;
        mark[4] = r->pos;
        if (null_in[i]) {
            memcpy(leaves + 32 * i, empty_in, 32);
        } else {
            for (int j = 0; j < 4; j++)
                sha256d(r->p + mark[j], (size_t)(mark[j + 1] - mark[j]), leaf4 + 32 * j);
            fast_merkle_root(leaf4, 4, leaves + 32 * i);
        }
    }
    return 0;
}

/* Output witness leaves: FMR(sha256d(surjection proof), sha256d(rangeproof)); empty_out for a
 * transaction without witnesses. */
static int withash_output_leaves(Rd *r, uint64_t n_out, int witness, const uint8_t *empty_out,
                                 uint8_t *leaves) {
    Py_ssize_t s, n;
    uint8_t leaf2[64];
    for (uint64_t i = 0; i < n_out; i++) {
        if (!witness) {
            memcpy(leaves + 32 * i, empty_out, 32);
            continue;
        }
        Py_ssize_t mark[3];
        mark[0] = r->pos;
        if (rd_span(r, &s, &n, "surjection proof") < 0) return -1;
        mark[1] = r->pos;
        if (rd_span(r, &s, &n, "rangeproof") < 0) return -1;
        mark[2] = r->pos;
        for (int j = 0; j < 2; j++)
            sha256d(r->p + mark[j], (size_t)(mark[j + 1] - mark[j]), leaf2 + 32 * j);
        fast_merkle_root(leaf2, 2, leaves + 32 * i);
    }
    return 0;
}

/* withash (GetWitnessOnlyHash, docs/elements-format.md §1.2) = FMR(FMR(input leaves), FMR(output
 * leaves)). Walks a transaction the walker already accepted (bounds are still checked). */
static PyObject *py_withash(PyObject *self, PyObject *data) {
    (void)self;
    Py_buffer view;
    uint8_t *in_leaves = NULL, *out_leaves = NULL, *null_in = NULL, out[32];
    uint8_t empty_in[32], empty_out[32], roots[64], leaf4[128];
    uint32_t u32;
    uint8_t flags;
    uint64_t n_in = 0, n_out = 0;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    Rd r = {(const uint8_t *)view.buf, view.len, 0, NULL, 0};
    static const uint8_t zero = 0;
    sha256d(&zero, 1, leaf4);  /* the leaf of an empty field: sha256d of its 0x00 size */
    memcpy(leaf4 + 32, leaf4, 32);
    memcpy(leaf4 + 64, leaf4, 64);
    fast_merkle_root(leaf4, 4, empty_in);
    fast_merkle_root(leaf4, 2, empty_out);

    if (rd_u32(&r, &u32, "truncated version") < 0 || rd_u8(&r, &flags, "truncated flags") < 0 ||
        rd_compact(&r, &n_in) < 0)
        goto done;
    if (n_in > (uint64_t)(LEFT(&r) / MIN_TXIN_SIZE)) { fail_at(&r, r.pos, "bad input count"); goto done; }
    in_leaves = PyMem_Malloc(32 * (size_t)n_in + 1);
    null_in = PyMem_Malloc((size_t)n_in + 1);
    if (!in_leaves || !null_in) { PyErr_NoMemory(); goto done; }
    if (withash_walk_inputs(&r, n_in, null_in) < 0 || rd_compact(&r, &n_out) < 0) goto done;
    if (n_out > (uint64_t)(LEFT(&r) / MIN_TXOUT_SIZE)) { fail_at(&r, r.pos, "bad output count"); goto done; }
    out_leaves = PyMem_Malloc(32 * (size_t)n_out + 1);
    if (!out_leaves) { PyErr_NoMemory(); goto done; }
    if (withash_walk_outputs(&r, n_out) < 0 || rd_u32(&r, &u32, "locktime") < 0 ||
        withash_input_leaves(&r, n_in, flags & 1, null_in, empty_in, in_leaves) < 0 ||
        withash_output_leaves(&r, n_out, flags & 1, empty_out, out_leaves) < 0)
        goto done;
    if (r.pos != r.len) { fail_at(&r, r.pos, "trailing bytes after transaction"); goto done; }
    fast_merkle_root(in_leaves, (size_t)n_in, roots);
    fast_merkle_root(out_leaves, (size_t)n_out, roots + 32);
    fast_merkle_root(roots, 2, out);
    result = PyBytes_FromStringAndSize((const char *)out, 32);
done:
    PyMem_Free(in_leaves);
    PyMem_Free(out_leaves);
    PyMem_Free(null_in);
    PyBuffer_Release(&view);
    if (!result && !PyErr_Occurred()) raise_parse_error(&r);
    return result;
}

/* The transaction-level hash streams of Elements' signature digests (docs/sighash.md §1.1, §2.2),
 * in one walk of a full serialization (with its witness section when the flag says so):
 *   0 sha_prevouts            SHA256(prevout hash ‖ u32 index without its flag bits, per input)
 *   1 sha_sequences           SHA256(u32 nSequence, per input)
 *   2 sha_issuances           SHA256(the input's asset issuance as serialized, or 0x00, per input)
 *   3 sha_outputs             SHA256(the outputs' non-witness serialization: its span of the bytes)
 *   4 sha_outpoint_flags      SHA256(one byte per input: 0x80 issuance | 0x40 peg-in)
 *   5 sha_issuance_rangeproofs SHA256(var amount proof ‖ var inflation-keys proof, per input)
 *   6 sha_output_witnesses    SHA256(var surjection proof ‖ var range proof, per output)
 * Streams 3 and 6 are contiguous spans of the serialization (6: the witness section's tail), so
 * they are hashed in place.  (v0's hashRangeproofs, the same proofs in the other order, is left
 * to Python: only SIGHASH_RANGEPROOF signatures read it, and hashing every proof twice would
 * cost the common digests a third more.)  Without a witness section every proof is empty (0x00 0x00 each).
 * `taproot` false: streams 4..6 (taproot's own) are None, and no witness byte is hashed -- a
 * segwit v0 digest reads only 0..3, and the witnesses (range proofs) are most of the bytes.
 * Walks bytes the walker accepted before (bounds are still checked: ParseError otherwise). */
static PyObject *py_sighash_streams(PyObject *self, PyObject *args) {
    (void)self;
    static const uint8_t empty_pair[2] = {0, 0};
    Py_buffer view;
    int taproot = 1;
    uint8_t d[7][32], flag, pre;
    uint32_t u32;
    uint64_t n_in = 0, n_out = 0;
    Py_ssize_t s, n, outputs_at = 0, outputs_end = 0, wit_out_at = 0;
    sha256_ctx prevouts, sequences, issuances, flags_ctx, issuance_proofs;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "y*|p:sighash_streams", &view, &taproot)) return NULL;
    Rd r = {(const uint8_t *)view.buf, view.len, 0, NULL, 0};
    sha256_init(&prevouts);
    sha256_init(&sequences);
    sha256_init(&issuances);
    sha256_init(&flags_ctx);
    sha256_init(&issuance_proofs);
    if (rd_u32(&r, &u32, "truncated version") < 0 || rd_u8(&r, &flag, "truncated flags") < 0 ||
        rd_compact(&r, &n_in) < 0)
        goto done;
    if (n_in > (uint64_t)(LEFT(&r) / MIN_TXIN_SIZE)) { fail_at(&r, r.pos, "bad input count"); goto done; }
    for (uint64_t i = 0; i < n_in; i++) {
        uint8_t point[36], op_flag = 0;
        if (LEFT(&r) < 36) { fail_at(&r, r.pos, "truncated prevout"); goto done; }
        memcpy(point, r.p + r.pos, 36);
        uint32_t idx = le32(point + 32);
        if (idx != 0xffffffffu) { /* as the walker: no flags on a null (coinbase) prevout */
            op_flag = (uint8_t)(((idx >> 31) & 1) << 7 | ((idx >> 30) & 1) << 6);
            idx &= 0x3fffffffu;
            point[32] = (uint8_t)idx; point[33] = (uint8_t)(idx >> 8);
            point[34] = (uint8_t)(idx >> 16); point[35] = (uint8_t)(idx >> 24);
        }
        r.pos += 36;
        sha256_write(&prevouts, point, 36);
        sha256_write(&flags_ctx, &op_flag, 1);
        if (rd_span(&r, &s, &n, "truncated scriptSig") < 0) goto done;
        if (LEFT(&r) < 4) { fail_at(&r, r.pos, "truncated sequence"); goto done; }
        sha256_write(&sequences, r.p + r.pos, 4);
        r.pos += 4;
        if (op_flag & 0x80) {
            Py_ssize_t at = r.pos;
            if (LEFT(&r) < 64) { fail_at(&r, r.pos, "truncated issuance"); goto done; }
            r.pos += 64;
            for (int j = 0; j < 2; j++) {
                if (rd_u8(&r, &pre, "truncated issuance value") < 0) goto done;
                Py_ssize_t extra = pre == 0 ? 0 : pre == 1 ? 8 : 32;
                if (LEFT(&r) < extra) { fail_at(&r, r.pos, "truncated issuance value"); goto done; }
                r.pos += extra;
            }
            sha256_write(&issuances, r.p + at, (size_t)(r.pos - at));
        } else {
            sha256_write(&issuances, empty_pair, 1);
        }
    }
    if (rd_compact(&r, &n_out) < 0) goto done;
    if (n_out > (uint64_t)(LEFT(&r) / MIN_TXOUT_SIZE)) { fail_at(&r, r.pos, "bad output count"); goto done; }
    outputs_at = r.pos;
    if (withash_walk_outputs(&r, n_out) < 0) goto done;
    outputs_end = r.pos;
    if (rd_u32(&r, &u32, "locktime") < 0) goto done;
    if (flag & 1) {
        for (uint64_t i = 0; i < n_in; i++) {
            Py_ssize_t at = r.pos;
            if (rd_span(&r, &s, &n, "rp") < 0 || rd_span(&r, &s, &n, "rp") < 0) goto done;
            if (taproot) sha256_write(&issuance_proofs, r.p + at, (size_t)(r.pos - at));
            if (skip_stack(&r) < 0 || skip_stack(&r) < 0) goto done;
        }
        wit_out_at = r.pos;
        for (uint64_t i = 0; i < n_out; i++)
            if (rd_span(&r, &s, &n, "surjection proof") < 0 ||
                rd_span(&r, &s, &n, "rangeproof") < 0)
                goto done;
    } else {
        for (uint64_t i = 0; i < n_in; i++) sha256_write(&issuance_proofs, empty_pair, 2);
    }
    if (r.pos != r.len) { fail_at(&r, r.pos, "trailing bytes after transaction"); goto done; }
    sha256_final(&prevouts, d[0]);
    sha256_final(&sequences, d[1]);
    sha256_final(&issuances, d[2]);
    sha256_ctx one;
    sha256_init(&one);
    sha256_write(&one, r.p + outputs_at, (size_t)(outputs_end - outputs_at));
    sha256_final(&one, d[3]);
    if (taproot) {
        sha256_final(&flags_ctx, d[4]);
        sha256_final(&issuance_proofs, d[5]);
        sha256_init(&one);
        if (flag & 1) {
            sha256_write(&one, r.p + wit_out_at, (size_t)(r.len - wit_out_at));
        } else {
            for (uint64_t i = 0; i < n_out; i++) sha256_write(&one, empty_pair, 2);
        }
        sha256_final(&one, d[6]);
    }
    result = PyTuple_New(7);
    for (int i = 0; result && i < 7; i++) {
        PyObject *b = i >= 4 && !taproot ? (Py_INCREF(Py_None), Py_None)
                                         : PyBytes_FromStringAndSize((const char *)d[i], 32);
        if (!b) Py_CLEAR(result);
        else PyTuple_SET_ITEM(result, i, b);
    }
done:
    PyBuffer_Release(&view);
    if (!result && !PyErr_Occurred()) raise_parse_error(&r);
    return result;
}

/* Write one confidential asset (32 bytes explicit: 0x01 prefix; else as stored) and value
 * (int: 0x01 ‖ u64 BE; bytes: as stored; None: 0x00) as serialize_conf_asset /
 * serialize_conf_value do.  0, or -1 (no exception) for a field of another type or an int
 * outside [0, 2^64): the caller leaves that output to the Python serializers, which raise the
 * typed error. */
static int write_asset_value(sha256_ctx *c, PyObject *asset, PyObject *value) {
    static const uint8_t one = 1, zero = 0;
    if (!PyBytes_Check(asset)) return -1;
    if (PyBytes_GET_SIZE(asset) == 32) sha256_write(c, &one, 1);
    sha256_write(c, (const uint8_t *)PyBytes_AS_STRING(asset), (size_t)PyBytes_GET_SIZE(asset));
    if (value == Py_None) {
        sha256_write(c, &zero, 1);
    } else if (PyLong_CheckExact(value)) {
        unsigned long long v = PyLong_AsUnsignedLongLong(value);
        if (v == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        uint8_t b[9] = {1};
        for (int i = 0; i < 8; i++) b[1 + i] = (uint8_t)(v >> (56 - 8 * i));
        sha256_write(c, b, 9);
    } else if (PyBytes_Check(value)) {
        sha256_write(c, (const uint8_t *)PyBytes_AS_STRING(value), (size_t)PyBytes_GET_SIZE(value));
    } else {
        return -1;
    }
    return 0;
}

/* Bitcoin CompactSize of n into b (1, 3, 5 or 9 bytes); returns its length. */
static size_t put_compact(uint8_t b[9], uint64_t n) {
    if (n < 253) { b[0] = (uint8_t)n; return 1; }
    size_t k = n <= 0xffff ? 2 : n <= 0xffffffffu ? 4 : 8;
    b[0] = k == 2 ? 253 : k == 4 ? 254 : 255;
    for (size_t i = 0; i < k; i++) b[1 + i] = (uint8_t)(n >> (8 * i));
    return 1 + k;
}

/* The taproot streams of the spent outputs (one per input, in input order; any objects with
 * asset, value and script_pubkey): (sha_spent_asset_amounts, sha_spent_scripts), or None when
 * a field is of a type or range only the Python serializers handle (they raise its error). */
static PyObject *py_spent_streams(PyObject *self, PyObject *seq) {
    (void)self;
    static PyObject *s_asset, *s_value, *s_spk;
    if (!s_asset && !(s_asset = PyUnicode_InternFromString("asset"))) return NULL;
    if (!s_value && !(s_value = PyUnicode_InternFromString("value"))) return NULL;
    if (!s_spk && !(s_spk = PyUnicode_InternFromString("script_pubkey"))) return NULL;
    PyObject *fast = PySequence_Fast(seq, "spent_streams expects a sequence of outputs");
    if (!fast) return NULL;
    Kind *txout = &KINDS[K_TXOUT];
    sha256_ctx amounts, scripts;
    sha256_init(&amounts);
    sha256_init(&scripts);
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < count; i++) {
        PyObject *o = items[i], *f[3];
        int owned = !(txout->type && Py_TYPE(o) == txout->type);
        if (!owned) { /* the parsed class: its slots directly */
            f[0] = *(PyObject **)((char *)o + txout->offset[OUT_ASSET]);
            f[1] = *(PyObject **)((char *)o + txout->offset[OUT_VALUE]);
            f[2] = *(PyObject **)((char *)o + txout->offset[OUT_SPK]);
        } else {
            f[0] = PyObject_GetAttr(o, s_asset);
            f[1] = f[0] ? PyObject_GetAttr(o, s_value) : NULL;
            f[2] = f[1] ? PyObject_GetAttr(o, s_spk) : NULL;
        }
        if (!f[0] || !f[1] || !f[2]) {
            ok = -1;  /* an attribute error: raised as it is */
        } else if (write_asset_value(&amounts, f[0], f[1]) < 0 || !PyBytes_Check(f[2])) {
            ok = 0;
        } else {
            uint8_t b[9];
            sha256_write(&scripts, b, put_compact(b, (uint64_t)PyBytes_GET_SIZE(f[2])));
            sha256_write(&scripts, (const uint8_t *)PyBytes_AS_STRING(f[2]),
                         (size_t)PyBytes_GET_SIZE(f[2]));
        }
        if (owned) for (int j = 0; j < 3; j++) Py_XDECREF(f[j]);
    }
    Py_DECREF(fast);
    if (ok < 0) return NULL;
    if (!ok) Py_RETURN_NONE;
    uint8_t a[32], b[32];
    sha256_final(&amounts, a);
    sha256_final(&scripts, b);
    return Py_BuildValue("y#y#", (const char *)a, (Py_ssize_t)32, (const char *)b, (Py_ssize_t)32);
}

/* CScript::GetSigOpCount (ctplugin/script/sigops.py, whose _sigop_count_py is the definition):
 * CHECKSIG(VERIFY) 0xac/0xad and CHECKSIGFROMSTACK(VERIFY) 0xc1/0xc2 count 1, CHECKMULTISIG
 * (VERIFY) 0xae/0xaf the key count of a preceding OP_1..OP_16 when `accurate`, else 20; the walk
 * stops at a push that runs past the end (GetOp failing). */
static PyObject *py_sigop_count(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    int accurate;
    if (!PyArg_ParseTuple(args, "y*p:sigop_count", &view, &accurate)) return NULL;
    const uint8_t *p = view.buf;
    const size_t len = (size_t)view.len;
    size_t pos = 0;
    long n = 0;
    unsigned last = 0xff;
    while (pos < len) {
        unsigned op = p[pos++];
        if (op <= 0x4e) {
            size_t size = op, width = op == 0x4c ? 1 : op == 0x4d ? 2 : op == 0x4e ? 4 : 0;
            if (width) {
                if (len - pos < width) break;
                size = 0;
                for (size_t i = width; i-- > 0;) size = (size << 8) | p[pos + i];
                pos += width;
            }
            if (len - pos < size) break;
            pos += size;
        } else if (op == 0xac || op == 0xad || op == 0xc1 || op == 0xc2) {
            n += 1;
        } else if (op == 0xae || op == 0xaf) {
            n += accurate && last >= 0x51 && last <= 0x60 ? (long)(last - 0x50) : 20;
        }
        last = op;
    }
    PyBuffer_Release(&view);
    return PyLong_FromLong(n);
}

/* Public header of a Borromean (secp256k1-zkp "rangeproof") proof, as secp256k1_rangeproof_info:
 * byte 0 = flags (bit 7 must be 0; bit 6: exponent/mantissa present; bit 5: min value present),
 * exponent = flags & 31 (<= 18), mantissa = byte 1 + 1 (<= 64), then 8-byte BE min value.
 * Returns (exponent, mantissa, min_value, max_value) or None when the header is not one. */
static PyObject *py_rangeproof_info(PyObject *self, PyObject *data) {
    (void)self;
    Py_buffer view;
    PyObject *res = NULL;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    const uint8_t *p = view.buf;
    Py_ssize_t len = view.len, off = 0;
    int exp = -1, mantissa = 0;
    uint64_t max_value = 0, min_value = 0;
    if (len < 65 || (p[0] & 128)) goto none;
    int has_nz_range = p[0] & 64, has_min = p[0] & 32;
    if (has_nz_range) {
        exp = p[0] & 31;
        off++;
        if (exp > 18) goto none;
        mantissa = p[off] + 1;
        if (mantissa > 64) goto none;
        max_value = UINT64_MAX >> (64 - mantissa);
    }
    off++;
    for (int i = 0; i < exp; i++) {
        if (max_value > UINT64_MAX / 10) goto none;
        max_value *= 10;
    }
    if (has_min) {
        if (len - off < 8) goto none;
        for (int i = 0; i < 8; i++) min_value = (min_value << 8) | p[off + i];
        off += 8;
    }
    if (max_value > UINT64_MAX - min_value) goto none;
    max_value += min_value;
    res = Py_BuildValue("iiKK", exp, mantissa, (unsigned long long)min_value,
                        (unsigned long long)max_value);
    PyBuffer_Release(&view);
    return res;
none:
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"register_types", register_types, METH_O, "Register the model classes (dict name -> class)."},
    {"parse_transaction", py_parse_transaction, METH_O, "Walk one whole transaction."},
    {"parse_block", py_parse_block, METH_O, "Walk one whole block."},
    {"parse_block_header", py_parse_block_header, METH_O, "Walk one whole block header."},
    {"parse_txout", py_parse_txout, METH_O, "Walk one output (non-witness serialization)."},
    {"txid", py_txid, METH_VARARGS, "txid(raw, locktime_end) -> 32 bytes."},
    {"fill_txids", py_fill_txids, METH_O, "Set the missing txids of parsed transactions."},
    {"withash", py_withash, METH_O, "withash(raw transaction) -> 32 bytes."},
    {"sha256d", py_sha256d, METH_O, "Double SHA-256."},
    {"merkle_root", py_merkle_root, METH_O, "Bitcoin Merkle root -> (root, mutated)."},
    {"sighash_streams", py_sighash_streams, METH_VARARGS,
     "sighash_streams(raw, taproot=True): the 7 transaction-level digest streams (one walk)."},
    {"spent_streams", py_spent_streams, METH_O,
     "(sha_spent_asset_amounts, sha_spent_scripts) of the spent outputs."},
    {"sigop_count", py_sigop_count, METH_VARARGS,
     "sigop_count(script, accurate) -> CScript::GetSigOpCount."},
    {"rangeproof_info", py_rangeproof_info, METH_O, "Borromean rangeproof header or None."},
    SHA256_BACKEND_METHODS
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ctplugin.elements._speedups",
                                    "Native Elements walker (txid, withash, Merkle roots).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *errors = PyImport_ImportModule("ctplugin.errors");
    if (!errors) return NULL;
    ParseErrorType = PyObject_GetAttrString(errors, "ParseError");
    Py_DECREF(errors);
    if (!ParseErrorType) return NULL;
    EMPTY_BYTES = PyBytes_FromStringAndSize(NULL, 0);
    EMPTY_TUPLE = PyTuple_New(0);
    if (!EMPTY_BYTES || !EMPTY_TUPLE) return NULL;
    return PyModule_Create(&module);
}

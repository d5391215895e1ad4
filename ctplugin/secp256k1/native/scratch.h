/* Per-thread scratch memory reused across kernel calls.  No Python.
 *
 * A large MSM needs megabytes of scratch (bucket entries, digits, lanes); fresh mappings of that
 * size page-fault on first touch on every call (measured: 25% of a 4096-point MSM).  So the
 * biggest buffers are taken from per-thread blocks, one per purpose (slot), kept between calls
 * and grown as needed.  A block above SCRATCH_KEEP_MAX is a one-off instead (allocated and freed
 * by the call: its page faults are small against the work on that much memory), so what a thread
 * keeps is bounded.  The blocks of a thread are freed when it exits (the parallel parts' threads
 * end with their call; the caller's thread keeps its blocks).
 *
 * Rules: a slot is used by one function at a time per thread (the functions using them do not
 * nest through the same slot); contents are uninitialised, as from malloc.
 */
#ifndef CTPLUGIN_SCRATCH_H
#define CTPLUGIN_SCRATCH_H

#include <pthread.h>
#include <stdlib.h>

/* The most a thread keeps per slot (64 MiB). */
#define SCRATCH_KEEP_MAX ((size_t)64 << 20)

enum {
    SCRATCH_TERMS,   /* msm_pippenger_var: the GLV terms */
    SCRATCH_DIGITS,  /* msm_pippenger_terms_var: signed digits */
    SCRATCH_GROUP,   /* pip_windows_: bucket counts and sums of a window group */
    SCRATCH_BUCKETS, /* pip_bucket_sums_: entries, pair scratch, lanes */
    SCRATCH_FIXED,   /* fixed_msm_range_var: digits, signs, counts, sums */
    SCRATCH_SLOTS
};

typedef struct {
    void *block[SCRATCH_SLOTS];
    size_t cap[SCRATCH_SLOTS];
} scratch_thread_;

static pthread_key_t scratch_key_;
static pthread_once_t scratch_once_ = PTHREAD_ONCE_INIT;
static int scratch_key_ok_ = 0;

static void scratch_thread_free_(void *arg) {
    scratch_thread_ *t = arg;
    for (int s = 0; s < SCRATCH_SLOTS; s++) free(t->block[s]);
    free(t);
}

static void scratch_key_init_(void) {
    scratch_key_ok_ = pthread_key_create(&scratch_key_, scratch_thread_free_) == 0;
}

/* This thread's blocks (created on first use), or NULL if that fails. */
static scratch_thread_ *scratch_thread_get_(void) {
    pthread_once(&scratch_once_, scratch_key_init_);
    if (!scratch_key_ok_) return NULL;
    scratch_thread_ *t = pthread_getspecific(scratch_key_);
    if (!t) {
        t = calloc(1, sizeof *t);
        if (t && pthread_setspecific(scratch_key_, t) != 0) {
            free(t);
            t = NULL;
        }
    }
    return t;
}

/* At least `bytes` (64-byte aligned) for `slot`: this thread's kept block, or a one-off when it
 * is too large to keep (then *owned = 1: pass it to scratch_release).  NULL if out of memory. */
static void *scratch_take(int slot, size_t bytes, int *owned) {
    *owned = 0;
    if (bytes == 0) bytes = 64;
    bytes = (bytes + 63) & ~(size_t)63;
    scratch_thread_ *t = bytes <= SCRATCH_KEEP_MAX ? scratch_thread_get_() : NULL;
    if (!t) {
        *owned = 1;
        return aligned_alloc(64, bytes);
    }
    if (t->cap[slot] < bytes) {
        size_t grow = bytes + bytes / 4;
        if (grow > SCRATCH_KEEP_MAX) grow = bytes;
        grow = (grow + 63) & ~(size_t)63;
        free(t->block[slot]);
        t->block[slot] = aligned_alloc(64, grow);
        t->cap[slot] = t->block[slot] ? grow : 0;
    }
    return t->block[slot];
}

static inline void scratch_release(void *p, int owned) {
    if (owned) free(p);
}

/* Carving one block into arrays: the next `bytes` (64-byte aligned) after *used. */
static inline void *scratch_carve(void *block, size_t *used, size_t bytes) {
    void *p = (unsigned char *)block + *used;
    *used += (bytes + 63) & ~(size_t)63;
    return p;
}

static inline size_t scratch_round(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

#endif

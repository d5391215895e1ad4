/* Splitting kernel work across threads (POSIX threads).  The Python glue releases the GIL before
 * calling into code that uses this; the parts only touch memory the caller gave them.
 *
 * Determinism: callers split work so that the result never depends on the number of parts
 * (each part computes a disjoint piece -- windows of a Pippenger MSM, a range of points -- and
 * the pieces are combined in a fixed order), so results are bit-identical for any thread count.
 */
#ifndef CTPLUGIN_THREADS_H
#define CTPLUGIN_THREADS_H

#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

/* The most threads one call uses (a bound on what a setting may ask for). */
#define KERNEL_MAX_THREADS 64

/* The machine's online CPUs (at least 1, at most KERNEL_MAX_THREADS). */
static int kernel_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) return 1;
    return n > KERNEL_MAX_THREADS ? KERNEL_MAX_THREADS : (int)n;
}

/* One part of a parallel run: fn(ctx, part, nparts). */
typedef void (*parallel_fn)(void *ctx, size_t part, size_t nparts);

typedef struct {
    parallel_fn fn;
    void *ctx;
    size_t part, nparts;
} parallel_job_;

static void *parallel_trampoline_(void *arg) {
    parallel_job_ *job = arg;
    job->fn(job->ctx, job->part, job->nparts);
    return NULL;
}

/* Run fn for parts 0 .. nparts-1 (nparts <= KERNEL_MAX_THREADS), parts 1.. on new threads and
 * part 0 on the caller's, and return when all are done.  A thread that cannot be created has
 * its part run on the caller's thread instead: the run always completes. */
static void parallel_run(parallel_fn fn, void *ctx, size_t nparts) {
    if (nparts <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    if (nparts > KERNEL_MAX_THREADS) nparts = KERNEL_MAX_THREADS;
    pthread_t tid[KERNEL_MAX_THREADS];
    parallel_job_ jobs[KERNEL_MAX_THREADS];
    int started[KERNEL_MAX_THREADS] = {0};
    for (size_t p = 1; p < nparts; p++) {
        jobs[p] = (parallel_job_){fn, ctx, p, nparts};
        started[p] = pthread_create(&tid[p], NULL, parallel_trampoline_, &jobs[p]) == 0;
    }
    fn(ctx, 0, nparts);
    for (size_t p = 1; p < nparts; p++) {
        if (started[p]) pthread_join(tid[p], NULL);
        else fn(ctx, p, nparts);
    }
}

/* [lo, hi) of part `part` when n items are cut into nparts contiguous ranges. */
static inline void parallel_range(size_t n, size_t part, size_t nparts, size_t *lo, size_t *hi) {
    *lo = n * part / nparts;
    *hi = n * (part + 1) / nparts;
}

#endif

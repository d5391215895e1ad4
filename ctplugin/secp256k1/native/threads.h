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
#if defined(__linux__)
#include <sched.h>
#endif

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
#if defined(__linux__) && defined(CPU_SET)
    const cpu_set_t *widen; /* the process's CPUs, given back once the part runs; or NULL */
#endif
} parallel_job_;

static void *parallel_trampoline_(void *arg) {
    parallel_job_ *job = arg;
#if defined(__linux__) && defined(CPU_SET)
    if (job->widen) (void)pthread_setaffinity_np(pthread_self(), sizeof *job->widen, job->widen);
#endif
    job->fn(job->ctx, job->part, job->nparts);
    return NULL;
}

/* Thread attributes that start a new part off the caller's CPU (Linux; elsewhere the defaults);
 * `all` receives the process's CPUs, which the part takes back as it starts.
 *
 * Why: in a KVM guest a vCPU that has been idle long enough is descheduled by the host and
 * reported as preempted, so the scheduler does not count it as idle and starts the new thread
 * on the caller's CPU.  The two halves of the work then run one after the other (measured on a
 * 2-vCPU EPYC guest: a 2-thread ring verification took 6.3 ms instead of 3.5 ms in about half
 * the calls after a pause).  Only the start is placed: a part kept off the caller's CPU for its
 * whole run could not move to it when the process's other threads take its own CPU, or once
 * the caller's part is done.  Returns 1 when attr was set.
 *
 * The process's CPUs are the caller's together with the main thread's: a caller kept to one CPU
 * (a worker of ctplugin.parallel's pool is) would otherwise start every part on its own CPU, and
 * the parts would take turns there. */
#if defined(__linux__) && defined(CPU_SET)
static int parallel_attr_(pthread_attr_t *attr, cpu_set_t *all) {
    cpu_set_t others, main_cpus;
    const int here = sched_getcpu();
    if (here < 0 || here >= CPU_SETSIZE || sched_getaffinity(0, sizeof *all, all) != 0) return 0;
    if (sched_getaffinity(getpid(), sizeof main_cpus, &main_cpus) == 0) CPU_OR(all, all, &main_cpus);
    others = *all;
    CPU_CLR(here, &others);
    if (CPU_COUNT(&others) == 0 || pthread_attr_init(attr) != 0) return 0;
    if (pthread_attr_setaffinity_np(attr, sizeof others, &others) != 0) {
        pthread_attr_destroy(attr);
        return 0;
    }
    return 1;
}
#endif

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
    pthread_attr_t attr;
#if defined(__linux__) && defined(CPU_SET)
    cpu_set_t all;
    const int placed = parallel_attr_(&attr, &all);
#else
    const int placed = 0;
#endif
    for (size_t p = 1; p < nparts; p++) {
        jobs[p] = (parallel_job_){fn, ctx, p, nparts
#if defined(__linux__) && defined(CPU_SET)
                                  , placed ? &all : NULL
#endif
        };
        started[p] = pthread_create(&tid[p], placed ? &attr : NULL, parallel_trampoline_,
                                    &jobs[p]) == 0;
    }
    if (placed) pthread_attr_destroy(&attr);
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

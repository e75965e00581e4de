/* Calls with no time limit of their own (cuCtxSynchronize, NVSHMEM's free
 * and finalize, each of which holds a barrier) made on a helper thread while
 * the caller watches the clock and the peers, so that SYMMEM_TIMEOUT and a
 * dead peer end the wait with an error instead of a hang. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gpu.h"

enum { JOB_RUNNING, JOB_DONE, JOB_ABANDONED };

typedef struct {
    cu_context_t ctx;
    int (*func)(void *arg);
    void *arg;
    int rc;
    _Atomic int state; /* JOB_*: whoever moves it off RUNNING second frees it */
} job_t;

static void *run_job(void *arg)
{
    job_t *job = arg;
    libs.cuCtxSetCurrent(job->ctx);
    job->rc = job->func(job->arg);
    int expected = JOB_RUNNING;
    /* release: pairs with the caller's acquire load of state, so it sees rc */
    if (!atomic_compare_exchange_strong_explicit(&job->state, &expected, JOB_DONE,
                                                 memory_order_acq_rel, memory_order_acquire))
        free(job); /* the caller gave up on it */
    return NULL;
}

symmem_status_t symmem__gpu_run_watched(gpu_t *g, const char *call, const char *what,
                                        int (*func)(void *arg), void *arg, int *rc_p)
{
    job_t *job = calloc(1, sizeof(*job));
    if (job == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    *job = (job_t){.ctx = g->ctx, .func = func, .arg = arg};
    pthread_t thread;
    if (pthread_create(&thread, NULL, run_job, job) != 0) {
        free(job);
        return ERROR(SYMMEM_ERR_SYSTEM, "%s: cannot start a thread to wait on", call);
    }
    double started = symmem__gpu_now(), next_check = started + 0.1;
    symmem_status_t status = SYMMEM_OK;
    /* acquire: pairs with run_job's release of JOB_DONE */
    while (atomic_load_explicit(&job->state, memory_order_acquire) == JOB_RUNNING) {
        status = symmem__gpu_still_waiting(g, call, what, started, &next_check);
        if (status != SYMMEM_OK) break;
        usleep(symmem__gpu_now() - started > 1e-3 ? 100 : 5);
    }
    int expected = JOB_RUNNING;
    if (status != SYMMEM_OK &&
        atomic_compare_exchange_strong_explicit(&job->state, &expected, JOB_ABANDONED,
                                                memory_order_acq_rel, memory_order_acquire)) {
        pthread_detach(thread); /* it stays blocked, and frees job if it ever returns */
        return status;
    }
    pthread_join(thread, NULL);
    *rc_p = job->rc;
    free(job);
    return SYMMEM_OK;
}

static int synchronize_context(void *arg)
{
    (void)arg;
    return libs.cuCtxSynchronize();
}

symmem_status_t symmem__gpu_wait_device_idle(gpu_t *g, const char *call)
{
    char what[600], graphs[200];
    symmem__gpu_graphs_describe(graphs, sizeof(graphs), 0);
    snprintf(what, sizeof(what),
             "the work this PE launched on cuda:%d to finish (kernels, or CUDA graph "
             "replays on the program's streams: a replayed barrier, signal_wait or "
             "collective waits for peers that do not run theirs; %s); finish that work "
             "(torch.cuda.synchronize(), say) on every PE and call %s again",
             g->device, graphs, call);
    int rc = 0;
    SYMMEM_CHECK(symmem__gpu_run_watched(g, call, what, synchronize_context, NULL, &rc));
    if (rc != 0) return symmem__gpu_cuda_error(call, "cuCtxSynchronize", rc);
    return SYMMEM_OK;
}

/* Set once an NVSHMEM call was abandoned on its thread: NVSHMEM can no longer
 * be trusted in this process. */
static _Atomic int nvshmem_wedged;

symmem_status_t symmem__gpu_nvshmem_watched(gpu_t *g, const char *call, const char *nvshmem_call,
                                            int (*func)(void *arg), void *arg)
{
    char what[600], graphs[200];
    symmem__gpu_graphs_describe(graphs, sizeof(graphs), 0);
    snprintf(what, sizeof(what),
             "the barrier inside NVSHMEM's %s, which every PE must reach (%s); NVSHMEM "
             "cannot be used again in this process",
             nvshmem_call, graphs);
    int rc = 0;
    symmem_status_t status = symmem__gpu_run_watched(g, call, what, func, arg, &rc);
    if (status != SYMMEM_OK) atomic_store(&nvshmem_wedged, 1);
    return status;
}

int symmem__gpu_nvshmem_wedged(void)
{
    return atomic_load(&nvshmem_wedged);
}

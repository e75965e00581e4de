/* Collectives that wait for each other on the GPU, where no host call of
 * symmem is left to notice: PE 0 enqueued a reduce on a split team and PE 1
 * one on TEAM_WORLD, each on a stream, and both programs now wait in their
 * stream's synchronize. Blocking calls see such a crossing on the host
 * (call_check.c: meet), and a later call of this PE compares its stream
 * calls; here nothing would, and NVSHMEM's collectives never give up.
 *
 * The call pages show it: each PE of the cycle has published more
 * collectives than the next on a team both are in (symmem__gpu_calls_cycle).
 * That alone is no proof, as a PE may still make the missing call on another
 * stream; so only a cycle through this PE that has stood still for
 * STUCK_AFTER seconds (SYMMEM_TIMEOUT where shorter), with no PE of the host
 * publishing or taking back any collective meanwhile, counts. This PE then
 * says so on stderr and stops its GPU work with a kernel that traps: the
 * program's synchronize raises a CUDA error instead of hanging, and the
 * context is unusable from then on, as after a device call's trap.
 *
 * The device watch thread (device_state.c) calls symmem__gpu_stuck_watch. */
#include <stdio.h>

#include "gpu.h"

#define STUCK_AFTER 10.0 /* seconds */
#define CHECK_EVERY 0.1

#define CU_STREAM_NON_BLOCKING 0x1

/* One thread that traps: the driver then ends every kernel of the context,
 * NVSHMEM's waiting collectives included. */
static const char STOP_PTX[] = ".version 6.0\n.target sm_60\n.address_size 64\n"
                               ".visible .entry symmem_stop_gpu()\n{\ntrap;\n}\n";

symmem_status_t symmem__gpu_stuck_start(gpu_t *g)
{
    g->stuck = (gpu_stuck_t){0};
    cu_result_t rc = libs.cuModuleLoadData(&g->stuck.module, STOP_PTX);
    if (rc == 0)
        rc = libs.cuModuleGetFunction(&g->stuck.kernel, g->stuck.module, "symmem_stop_gpu");
    /* not ordered after the program's streams, whose work it must end */
    if (rc == 0) rc = libs.cuStreamCreate(&g->stuck.stream, CU_STREAM_NON_BLOCKING);
    if (rc != 0) {
        symmem__gpu_stuck_stop(g);
        return symmem__gpu_cuda_error("init", "loading the kernel that ends stuck GPU work", rc);
    }
    return SYMMEM_OK;
}

void symmem__gpu_stuck_stop(gpu_t *g)
{
    if (g->stuck.stream != NULL) libs.cuStreamDestroy(g->stuck.stream);
    if (g->stuck.module != NULL) libs.cuModuleUnload(g->stuck.module);
    g->stuck.stream = NULL;
    g->stuck.module = g->stuck.kernel = NULL;
}

void symmem__gpu_stuck_mismatch_seen(gpu_t *g)
{
    __atomic_store_n(&g->stuck.mismatch_seen, 1, __ATOMIC_RELAXED);
}

static void stop_gpu(gpu_t *g, const int *pes, const symmem_call_t *calls, int n, double for_s)
{
    char text[1024];
    int used = 0;
    for (int i = 0; i < n && used < (int)sizeof(text) - 1; i++) {
        char what[160];
        if (calls[i].what & 0xff)
            symmem__gpu_core->call_describe(calls[i], what, sizeof(what));
        else
            snprintf(what, sizeof(what), "a collective");
        used += snprintf(text + used, sizeof(text) - (size_t)used,
                         "%sPE %d is in %s, waiting for PE %d", i ? "; " : "", pes[i], what,
                         pes[(i + 1) % n]);
    }
    fprintf(stderr,
            "[pe %d] symmem: collectives made on streams wait for each other on the GPU: %s; "
            "no PE of this host has made a collective call for %.1f s. NVSHMEM's collectives "
            "cannot be left, so this PE stopped its GPU work (a kernel that traps): its CUDA "
            "context is unusable, and the program's synchronize raises a CUDA error. Every "
            "PE must make the same collective calls, in the same order, on each team\n",
            g->boot.rank, text, for_s);
    fflush(stderr);
    libs.cuLaunchKernel(g->stuck.kernel, 1, 1, 1, 1, 1, 1, 0, g->stuck.stream, NULL, NULL);
}

void symmem__gpu_stuck_watch(gpu_t *g)
{
    gpu_stuck_t *s = &g->stuck;
    double now = symmem__gpu_now();
    /* after a mismatch was raised the job must end anyway (call_check.c) */
    if (s->stopped || s->kernel == NULL || now < s->next_check ||
        __atomic_load_n(&s->mismatch_seen, __ATOMIC_RELAXED))
        return;
    s->next_check = now + CHECK_EVERY;
    int pes[GPU_CALL_MAX_PEERS];
    symmem_call_t calls[GPU_CALL_MAX_PEERS];
    int n = symmem__gpu_calls_cycle(&g->calls, pes, calls, GPU_CALL_MAX_PEERS);
    uint64_t progress = symmem__gpu_calls_progress(&g->calls);
    if (n == 0 || s->since == 0 || progress != s->progress) {
        s->since = n ? now : 0;
        s->progress = progress;
        return;
    }
    double limit = STUCK_AFTER;
    if (g->boot.timeout > 0 && g->boot.timeout < limit) limit = g->boot.timeout;
    if (now - s->since < limit) return;
    s->stopped = 1;
    stop_gpu(g, pes, calls, n, now - s->since);
}

/* What every call does around its work: it enters the backend's CUDA context
 * and leaves it (the caller's context is put back after every call), picks
 * the stream to enqueue on, and, where it blocks, waits on the backend's
 * stream while watching for dead peers and SYMMEM_TIMEOUT. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "gpu.h"

double symmem__gpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

symmem_status_t symmem__gpu_cuda_error(const char *call, const char *what, cu_result_t rc)
{
    const char *text = "unknown error";
    libs.cuGetErrorString(rc, &text);
    return ERROR(SYMMEM_ERR_BACKEND, "%s: %s failed: CUDA error %d (%s)", call, what, rc, text);
}

scope_t symmem__gpu_enter(gpu_t *g)
{
    scope_t scope = {NULL};
    libs.cuCtxGetCurrent(&scope.saved);
    if (scope.saved != g->ctx) libs.cuCtxSetCurrent(g->ctx);
    return scope;
}

symmem_status_t symmem__gpu_leave(gpu_t *g, scope_t scope, symmem_status_t status)
{
    if (scope.saved != g->ctx && scope.saved != NULL) libs.cuCtxSetCurrent(scope.saved);
    return status;
}

static symmem_status_t pick(gpu_t *g, const char *call, symmem_call_kind_t kind,
                            symmem_stream_t stream, nv_stream_t *s_p, int *blocking_p)
{
    *blocking_p = stream == SYMMEM_STREAM_NONE;
    *s_p = *blocking_p ? g->stream : (nv_stream_t)stream;
    if (*blocking_p) return SYMMEM_OK;
    /* Work on another GPU's stream would run where the heap is not mapped
     * (a barrier there faulted with CUDA error 700 and poisoned the context). */
    cu_context_t ctx = NULL;
    CU(call, libs.cuStreamGetCtx(*s_p, &ctx));
    if (ctx != g->ctx) { /* another context: of our GPU (fine), or another one's */
        cu_device_t device = -1;
        libs.cuCtxSetCurrent(ctx);
        cu_result_t rc = libs.cuCtxGetDevice(&device);
        libs.cuCtxSetCurrent(g->ctx);
        if (rc != 0) return symmem__gpu_cuda_error(call, "cuCtxGetDevice", rc);
        if (device != g->device)
            return ERROR(SYMMEM_ERR_INVALID,
                         "%s: stream=%p belongs to cuda:%d, but this PE's symmetric heap is on "
                         "cuda:%d; pass a stream of cuda:%d",
                         call, (void *)stream, device, g->device, g->device);
    }
    symmem__gpu_graphs_note(*s_p, call, symmem__call_moves_data(kind));
    return SYMMEM_OK;
}

symmem_status_t symmem__gpu_begin(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                  symmem_stream_t stream, scope_t *scope_p, nv_stream_t *s_p,
                                  int *blocking_p)
{
    *scope_p = symmem__gpu_enter(g);
    symmem_status_t status = pick(g, call, kind, stream, s_p, blocking_p);
    if (status != SYMMEM_OK) symmem__gpu_leave(g, *scope_p, status);
    return status;
}

symmem_status_t symmem__gpu_still_waiting(gpu_t *g, const char *call, const char *what,
                                          double started, double *next_check_p)
{
    double t = symmem__gpu_now();
    if (t < *next_check_p) return SYMMEM_OK;
    symmem_status_t interrupted = symmem__gpu_core->interrupted(call); /* Ctrl-C in Python */
    if (interrupted != SYMMEM_OK) return interrupted;
    char how[256];
    int dead = symmem__gpu_peer_watch_find_dead(&g->watch, symmem__gpu_core, how, sizeof(how));
    if (dead >= 0)
        return ERROR(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s while this PE waited for %s", call, dead,
                     how, what);
    if (g->boot.timeout > 0 && t - started > g->boot.timeout)
        return ERROR(SYMMEM_ERR_TIMEOUT,
                     "%s: timed out after %.1f s (SYMMEM_TIMEOUT) waiting for %s", call,
                     t - started, what);
    *next_check_p = symmem__gpu_now() + 0.1;
    return SYMMEM_OK;
}

symmem_status_t symmem__gpu_wait_failed(gpu_t *g, const char *call, const char *what,
                                        cu_result_t rc)
{
    /* A kernel that waited for a dead peer traps (the device watch set the
     * abort word): the peer is the cause, not the launch failure. */
    char how[256];
    int dead = symmem__gpu_peer_watch_find_dead(&g->watch, symmem__gpu_core, how, sizeof(how));
    if (dead >= 0)
        return ERROR(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s while this PE waited for %s", call, dead,
                     how, what);
    return symmem__gpu_cuda_error(call, "cuStreamQuery", rc);
}

symmem_status_t symmem__gpu_drain(gpu_t *g, const char *call)
{
    /* Polled, never cuStreamSynchronize: Ctrl-C, a dead peer and
     * SYMMEM_TIMEOUT must each be able to end the wait. */
    double started = symmem__gpu_now(), next_check = started + 0.1;
    for (;;) {
        cu_result_t rc = libs.cuStreamQuery(g->stream);
        if (rc == 0) return SYMMEM_OK;
        if (rc != CU_ERROR_NOT_READY)
            return symmem__gpu_wait_failed(
                g, call, "the call to complete on the GPU (every PE taking part)", rc);
        symmem_status_t status = symmem__gpu_still_waiting(
            g, call, "the call to complete on the GPU (every PE taking part)", started,
            &next_check);
        if (status != SYMMEM_OK) return status;
        if (symmem__gpu_now() - started > 1e-3) usleep(20);
    }
}

cu_result_t symmem__gpu_launch(void *kernel, size_t blocks, size_t threads, nv_stream_t s,
                               void **params)
{
    return libs.cuLaunchKernel(kernel, (unsigned)blocks, 1, 1, (unsigned)threads, 1, 1, 0, s,
                               params, NULL);
}

int symmem__gpu_device(gpu_t *g)
{
    return g->device;
}

#define COMPUTE_CAPABILITY_MAJOR 75
#define COMPUTE_CAPABILITY_MINOR 76

void symmem__gpu_arch_option(gpu_t *g, char *out, size_t size)
{
    int major = 0, minor = 0;
    libs.cuDeviceGetAttribute(&major, COMPUTE_CAPABILITY_MAJOR, g->cu_device);
    libs.cuDeviceGetAttribute(&minor, COMPUTE_CAPABILITY_MINOR, g->cu_device);
    snprintf(out, size, "-arch=compute_%d%d", major, minor);
}

/* Start-up and shut-down: init and finalize, whichever engine starts the
 * job (engine_choice.c picks it, its start is a step here). init takes its
 * steps in a fixed order; when one fails, that step has undone its own
 * partial work and init undoes the steps before it, last first. finalize
 * releases the same things. SYMMEM_GPU_FAIL_AT makes a chosen step fail,
 * to test that. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

/* ---- the steps of init, each of which undoes its own partial work ---- */

/* The device's primary context (the one CUDA's runtime, CuPy and torch
 * use), retained and made current. */
static symmem_status_t take_context(gpu_t *g)
{
    cu_result_t rc = libs.cuDeviceGet(&g->cu_device, g->device);
    if (rc == 0) rc = libs.cuDevicePrimaryCtxRetain(&g->ctx, g->cu_device);
    if (rc != 0) return symmem__gpu_cuda_error("init", "selecting the device", rc);
    rc = libs.cuCtxSetCurrent(g->ctx);
    if (rc != 0) {
        symmem_status_t status = symmem__gpu_cuda_error("init", "selecting the device", rc);
        libs.cuDevicePrimaryCtxRelease(g->cu_device);
        return status;
    }
    return SYMMEM_OK;
}

static symmem_status_t create_stream(gpu_t *g)
{
    /* flags 0: ordered after the legacy default stream */
    cu_result_t rc = libs.cuStreamCreate(&g->stream, 0);
    return rc == 0 ? SYMMEM_OK
                   : symmem__gpu_cuda_error("init", "creating the backend's stream", rc);
}

static symmem_status_t alloc_scratch(gpu_t *g)
{
    cu_result_t rc = libs.cuMemAlloc(&g->scratch, GPU_SCRATCH_BYTES);
    return rc == 0 ? SYMMEM_OK
                   : symmem__gpu_cuda_error("init", "allocating the backend's buffers", rc);
}

/* The two symmetric buffers of the nvshmem engine's exchange (exchange.c). */
static symmem_status_t alloc_agree_buffers(gpu_t *g)
{
    symmem_status_t status =
        symmem__gpu_heap_take(g, "init", sizeof(int64_t), 0, (void **)&g->agree_in);
    if (status == SYMMEM_OK)
        status = symmem__gpu_heap_take(g, "init", sizeof(int64_t) * (size_t)g->boot.nranks, 0,
                                       (void **)&g->agree_all);
    if (status != SYMMEM_OK) {
        symmem__gpu_heap_give_back(g, g->agree_in);
        g->agree_in = NULL;
    }
    return status;
}

static symmem_status_t start_engine(gpu_t *g)
{
    return g->engine->start(g);
}

/* init's steps in order. SYMMEM_GPU_FAIL_AT=<name> makes init fail where
 * that step would begin: a test hook, with which tests/gpu/startup_failures.py
 * checks that every step before it is undone. */
enum {
    STEP_CONTEXT,
    STEP_ENGINE,
    STEP_STREAM,
    STEP_SCRATCH,
    STEP_AGREE_BUFFERS,
    STEP_WATCH_PEERS,
    STEP_HEARTBEAT,
    STEP_TEAMS,
    STEP_CALL_PAGES,
    STEP_COUNT
};
static const struct {
    const char *name;
    symmem_status_t (*take)(gpu_t *g);
} steps[STEP_COUNT] = {
    [STEP_CONTEXT] = {"context", take_context},
    [STEP_ENGINE] = {"engine", start_engine},
    [STEP_STREAM] = {"stream", create_stream},
    [STEP_SCRATCH] = {"scratch", alloc_scratch},
    [STEP_AGREE_BUFFERS] = {"agree_buffers", alloc_agree_buffers},
    [STEP_WATCH_PEERS] = {"watch_peers", symmem__gpu_watch_peers}, /* liveness.c */
    [STEP_HEARTBEAT] = {"heartbeat", symmem__gpu_heartbeat_start}, /* liveness.c */
    [STEP_TEAMS] = {"teams", symmem__gpu_predefined_teams_read},   /* teams.c */
    [STEP_CALL_PAGES] = {"call_pages", symmem__gpu_calls_start},   /* call_check.c */
};

/* The step SYMMEM_GPU_FAIL_AT names; STEP_COUNT where it is unset. */
static symmem_status_t read_fail_at(int *step_p)
{
    const char *name = symmem__gpu_core->env_string("SYMMEM_GPU_FAIL_AT");
    char listed[256] = "";
    int used = 0;
    for (int step = 0; step < STEP_COUNT; step++) {
        if (strcmp(name, steps[step].name) == 0) {
            *step_p = step;
            return SYMMEM_OK;
        }
        used += snprintf(listed + used, sizeof(listed) - (size_t)used, "%s'%s'", step ? ", " : "",
                         steps[step].name);
    }
    if (name[0] != '\0')
        return ERROR(SYMMEM_ERR_INVALID, "init: SYMMEM_GPU_FAIL_AT='%s' is not one of %s", name,
                     listed);
    *step_p = STEP_COUNT;
    return SYMMEM_OK;
}

/* Takes the step and notes its time in took_ms[step]. */
static symmem_status_t take_step(gpu_t *g, int step, int fail_at, double *took_ms)
{
    if (step == fail_at)
        return ERROR(SYMMEM_ERR_BACKEND, "init: failing at %s (SYMMEM_GPU_FAIL_AT)",
                     steps[step].name);
    double begun = symmem__gpu_now();
    symmem_status_t status = steps[step].take(g);
    took_ms[step] = (symmem__gpu_now() - begun) * 1e3;
    return status;
}

/* SYMMEM_DEBUG=1: where a start-up's time went, one line per PE. */
static void say_step_times(const gpu_t *g, const double *took_ms)
{
    if (!symmem__gpu_core->env_flag("SYMMEM_DEBUG")) return;
    char line[512];
    int used = 0;
    for (int step = 0; step < STEP_COUNT && used < (int)sizeof(line); step++)
        used += snprintf(line + used, sizeof(line) - (size_t)used, "%s%s %.1f ms", step ? ", " : "",
                         steps[step].name, took_ms[step]);
    fprintf(stderr, "symmem: [pe %d] init: the %s engine's steps took %s\n", g->boot.rank,
            g->engine->name, line);
}

/* ---- init and finalize ---- */

symmem_status_t symmem__gpu_init(const symmem_bootstrap_t *boot, symmem_backend_t **backend_p)
{
    char why[1024];
    const gpu_engine_t *engine = symmem__gpu_engine_choose(boot, why, sizeof(why));
    if (engine == NULL)
        return ERROR(SYMMEM_ERR_BACKEND, "init: the gpu backend cannot run here: %s", why);
    int count = 0;
    libs.cuDeviceGetCount(&count);
    int ordinal = boot->device >= 0 ? boot->device : boot->local_rank % count;
    if (ordinal >= count)
        return ERROR(SYMMEM_ERR_INVALID, "init: device=%d but this host has %d CUDA devices",
                     ordinal, count);
    int kernels; /* the index in SYMMEM_GPU_KERNELS's choices: symmem|nvshmem */
    SYMMEM_CHECK(symmem__gpu_core->env_choice("init", "SYMMEM_GPU_KERNELS", &kernels));
    int collectives; /* SYMMEM_GPU_COLLECTIVES: SYMMEM_GPU_COLLECTIVES_*'s order */
    SYMMEM_CHECK(symmem__gpu_core->env_choice("init", "SYMMEM_GPU_COLLECTIVES", &collectives));
    int fail_at = STEP_COUNT;
    SYMMEM_CHECK(read_fail_at(&fail_at));
    gpu_t *g = calloc(1, sizeof(*g));
    if (g == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    g->nvshmem_kernels = kernels == 1;
    g->collectives_mode = collectives; /* the choices in SYMMEM_GPU_COLLECTIVES_* order */
    g->boot = *boot;
    g->engine = engine;
    g->device = ordinal;
    cu_context_t saved = NULL; /* the caller's */
    cu_device_t caller_device = -1;
    if (libs.cuCtxGetCurrent(&saved) == 0 && saved != NULL) libs.cuCtxGetDevice(&caller_device);
    symmem_status_t status;
    double took_ms[STEP_COUNT] = {0};
    SYMMEM_CHECK_GOTO(take_step(g, STEP_CONTEXT, fail_at, took_ms), status, err_free);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_ENGINE, fail_at, took_ms), status, err_release_context);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_STREAM, fail_at, took_ms), status, err_stop_engine);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_SCRATCH, fail_at, took_ms), status, err_destroy_stream);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_AGREE_BUFFERS, fail_at, took_ms), status, err_free_scratch);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_WATCH_PEERS, fail_at, took_ms), status,
                      err_free_agree_buffers);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_HEARTBEAT, fail_at, took_ms), status, err_free_watch);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_TEAMS, fail_at, took_ms), status, err_stop_heartbeat);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_CALL_PAGES, fail_at, took_ms), status, err_free_teams);
    /* The heap's device stays current, so that the program's allocations and
     * streams land where the heap is; a caller that had made another device
     * current is told (NVSHMEM4Py binds the current device: device= chooses). */
    if (caller_device >= 0 && caller_device != g->device)
        fprintf(stderr,
                "symmem: [pe %d] init: this thread had cuda:%d current, but this PE's "
                "symmetric heap is on cuda:%d (%s), which is current now; pass device= to "
                "init to choose\n",
                boot->rank, caller_device, g->device,
                boot->device >= 0 ? "device= asked for it" : "LOCAL_RANK % device count");
    say_step_times(g, took_ms);
    *backend_p = g;
    return SYMMEM_OK;

err_free_teams:
    symmem__gpu_predefined_teams_free(g);
err_stop_heartbeat:
    symmem__gpu_heartbeat_stop(g, 0);
err_free_watch:
    symmem__gpu_peer_watch_free(&g->watch);
err_free_agree_buffers:
    symmem__gpu_heap_give_back(g, g->agree_all);
    symmem__gpu_heap_give_back(g, g->agree_in);
err_free_scratch:
    libs.cuMemFree(g->scratch);
err_destroy_stream:
    libs.cuStreamDestroy(g->stream);
err_stop_engine:
    g->engine->stop(g, 0);
err_release_context:
    libs.cuCtxSetCurrent(saved); /* the caller's, or none */
    libs.cuDevicePrimaryCtxRelease(g->cu_device);
err_free:
    free(g);
    return status;
}

/* NVSHMEM's finalize holds a barrier with no time limit: it starts only once
 * this PE's device is idle (a graph replaying a barrier of ours would mix
 * counts with it and hang: issue 17), no live graph holds a collective (NCCL
 * would wait for it forever), and every PE has come this far. Only then is
 * this PE marked FINALIZING (a refused finalize leaves it RUNNING): the
 * same-host peers then meet in symmem__gpu_calls_leave, which no collective
 * can match, so the barrier below pairs only with theirs; a peer waiting in
 * a collective for this PE raises (PEER_DEAD), and this PE raises MISMATCH
 * naming that collective instead of waiting. */
symmem_status_t symmem__gpu_prepare_finalize(gpu_t *g)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem_status_t status = symmem__gpu_wait_device_idle(g, "finalize");
    char graphs[200];
    /* CUDA calls a destroyed graph's user-object destructors a little later,
     * from a thread of its own: a graph reset just now may still be listed. */
    for (int tries = 0; status == SYMMEM_OK && tries < 200 &&
                        symmem__gpu_graphs_describe(graphs, sizeof(graphs), 1) > 0;
         tries++)
        usleep(10000);
    if (status == SYMMEM_OK && symmem__gpu_graphs_describe(graphs, sizeof(graphs), 1) > 0)
        status = ERROR(SYMMEM_ERR_INVALID,
                       "finalize: %s; NVSHMEM runs collectives on NCCL, whose finalize waits "
                       "until every graph that captured one is destroyed. Destroy them (del "
                       "the graph; torch: graph.reset()) and call finalize again",
                       graphs);
    if (status == SYMMEM_OK) status = symmem__gpu_calls_leave(g);
    if (status == SYMMEM_OK) status = g->engine->final_barrier(g);
    return symmem__gpu_leave(g, scope, status);
}

/* Releases what init made, last first, as init's failure path does. */
symmem_status_t symmem__gpu_finalize(gpu_t *g)
{
    scope_t scope = symmem__gpu_enter(g);
    libs.cuStreamSynchronize(g->stream);
    if (g->put_signal != NULL) libs.cuModuleUnload(g->put_signal);
    if (g->atomics != NULL) libs.cuModuleUnload(g->atomics);
    symmem__gpu_nvshmem_atomics_unload(g);
    symmem__gpu_own_unload(g);
    void *sync_area = g->sync_area;
    symmem__gpu_device_state_release(g); /* its thread watches the peers */
    symmem__gpu_heap_give_back(g, sync_area);
    symmem__gpu_heap_give_back(g, g->stage_area);
    g->stage_area = NULL;
    symmem__gpu_calls_stop(g);
    symmem__gpu_predefined_teams_free(g);
    symmem__gpu_heartbeat_stop(g, 1); /* every PE came through prepare_finalize's barrier */
    symmem__gpu_peer_watch_free(&g->watch);
    symmem__gpu_heap_give_back(g, g->agree_all);
    symmem__gpu_heap_give_back(g, g->agree_in);
    libs.cuMemFree(g->scratch);
    libs.cuStreamDestroy(g->stream);
    symmem_status_t status = g->engine->stop(g, 1);
    symmem__gpu_leave(g, scope, status);
    if (status != SYMMEM_OK) return status; /* the engine still holds the context */
    libs.cuDevicePrimaryCtxRelease(g->cu_device);
    free(g);
    return SYMMEM_OK;
}

/* The engine's library's version: NVSHMEM's, or "" for symmem's own. */
void symmem__gpu_library_version(gpu_t *g, char *text, size_t size)
{
    g->engine->version(g, text, size);
}

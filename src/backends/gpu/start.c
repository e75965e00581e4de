/* Start-up and shut-down: the unique id and its exchange between the PEs of
 * a launcher's job, NVSHMEM's start, whether the backend can run at all,
 * and init and finalize. init takes its steps in a fixed order; when one
 * fails, that step has undone its own partial work and init undoes the
 * steps before it, last first. finalize releases the same things.
 * SYMMEM_GPU_FAIL_AT makes a chosen step fail, to test that. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

#define INIT_TIMEOUT_SECONDS 120.0

/* ---- the unique id ---- */

symmem_status_t symmem__gpu_unique_id(symmem_unique_id_t *uid_p)
{
    nv_uniqueid_t uid;
    memset(&uid, 0, sizeof(uid));
    uid.version = NV_UNIQUEID_VERSION;
    int rc = libs.get_uniqueid(&uid);
    if (rc != 0)
        return ERROR(SYMMEM_ERR_BACKEND, "get_unique_id: nvshmemx_get_uniqueid failed (%d)", rc);
    memcpy(uid_p->bytes, &uid, sizeof(uid));
    return SYMMEM_OK;
}

static void uid_path(const gpu_t *g, char *path, size_t size)
{
    snprintf(path, size, "/dev/shm/symmem-%s-nvshmem-uid", g->boot.job);
}

/* Hands PE 0's NVSHMEM unique id to the PEs of a launcher's job through a
 * file in /dev/shm (the launcher starts every PE on this host). */
static symmem_status_t exchange_uid(gpu_t *g, nv_uniqueid_t *uid)
{
    char path[256], tmp[300];
    uid_path(g, path, sizeof(path));
    if (g->boot.rank == 0) {
        symmem_unique_id_t bytes;
        SYMMEM_CHECK(symmem__gpu_unique_id(&bytes));
        memcpy(uid, bytes.bytes, sizeof(*uid));
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, uid, sizeof(*uid)) != (ssize_t)sizeof(*uid) || close(fd) != 0 ||
            rename(tmp, path) != 0)
            return ERROR(SYMMEM_ERR_BOOTSTRAP, "init: cannot publish the unique id in %s: %s", path,
                         strerror(errno));
        return SYMMEM_OK;
    }
    double deadline =
        symmem__gpu_now() + (g->boot.timeout > 0 ? g->boot.timeout : INIT_TIMEOUT_SECONDS);
    for (;;) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            ssize_t n = read(fd, uid, sizeof(*uid));
            close(fd);
            if (n == (ssize_t)sizeof(*uid)) return SYMMEM_OK;
        }
        if (symmem__gpu_now() > deadline)
            return ERROR(SYMMEM_ERR_BOOTSTRAP,
                         "init: PE 0 never published the unique id (%s); the gpu backend's "
                         "launcher rendezvous works for PEs on one host",
                         path);
        usleep(1000);
    }
}

static symmem_status_t start_nvshmem(gpu_t *g)
{
    nv_uniqueid_t uid;
    int exchanged = 0;
    if (g->boot.have_uid) {
        memcpy(&uid, g->boot.uid.bytes, sizeof(uid));
        if (uid.version != NV_UNIQUEID_VERSION)
            return ERROR(SYMMEM_ERR_INVALID,
                         "init: uid was not made by get_unique_id() for the gpu backend "
                         "(make it with SYMMEM_BACKEND=gpu, or on a machine with a GPU)");
    } else if (g->boot.nranks == 1) {
        symmem_unique_id_t bytes;
        SYMMEM_CHECK(symmem__gpu_unique_id(&bytes));
        memcpy(&uid, bytes.bytes, sizeof(uid));
    } else if (g->boot.spans_hosts[0] != '\0') {
        /* /dev/shm reaches this host only: Python's init hands the id over
         * the launcher's rendezvous (symmem/_rendezvous.py) and passes it */
        return ERROR(SYMMEM_ERR_BOOTSTRAP,
                     "init: the launcher starts this job's %d PEs on several hosts (%s), and "
                     "the gpu backend's own rendezvous reaches one host; symmem's Python init "
                     "hands NVSHMEM's unique id over the launcher's rendezvous, and a C "
                     "program passes one (SYMMEM_INIT_WITH_UID)",
                     g->boot.nranks, g->boot.spans_hosts);
    } else {
        SYMMEM_CHECK(exchange_uid(g, &uid));
        exchanged = 1;
    }
    /* Version 1 identifiers: every NVSHMEM 3.x accepts them. */
    nv_init_attr_t attr;
    memset(&attr, 0, sizeof(attr));
    attr.version = (1 << 16) + (int)sizeof(nv_init_attr_t);
    attr.args.version = (1 << 16) + (int)sizeof(nv_init_args_t);
    attr.args.uid_args.version = NV_UNIQUEID_ARGS_VERSION;
    attr.args.uid_args.myrank = -1;
    attr.args.uid_args.nranks = -1;
    int rc = libs.set_attr_uniqueid_args(g->boot.rank, g->boot.nranks, &uid, &attr);
    if (rc != 0)
        return ERROR(SYMMEM_ERR_BOOTSTRAP, "init: nvshmemx_set_attr_uniqueid_args failed (%d)", rc);
    rc = libs.hostlib_init_attr(NV_INIT_WITH_UNIQUEID, &attr);
    if (rc != 0)
        return ERROR(SYMMEM_ERR_BOOTSTRAP,
                     "init: NVSHMEM failed to start (nvshmemx_hostlib_init_attr returned %d; "
                     "NVSHMEM_DEBUG=INFO tells more)",
                     rc);
    /* Every PE has read the id once NVSHMEM runs: a later init of this job
     * (after finalize, in the same processes) must not find this one. */
    if (exchanged && g->boot.rank == 0) {
        char path[256];
        uid_path(g, path, sizeof(path));
        unlink(path);
    }
    if (libs.my_pe() != g->boot.rank || libs.n_pes() != g->boot.nranks) {
        symmem_status_t status = ERROR(SYMMEM_ERR_BOOTSTRAP,
                                       "init: NVSHMEM numbered this PE %d of %d, expected %d of %d",
                                       libs.my_pe(), libs.n_pes(), g->boot.rank, g->boot.nranks);
        libs.hostlib_finalize();
        return status;
    }
    return SYMMEM_OK;
}

/* NVSHMEM wants a GPU of its own for every PE of a host (several PEs on one
 * GPU hang in its start-up here), so that is checked before it starts. */
int symmem__gpu_can_run(const symmem_bootstrap_t *boot, char *why, size_t why_size)
{
    int count = 0;
    libs.cuDeviceGetCount(&count);
    if (boot->device >= count) {
        snprintf(why, why_size, "device=%d but this host has %d CUDA devices", boot->device, count);
        return 0;
    }
    if (boot->device < 0 && boot->local_size > count) {
        snprintf(why, why_size, "%d PEs on this host but only %d GPUs (one PE per GPU)",
                 boot->local_size, count);
        return 0;
    }
    return 1;
}

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

/* The two symmetric buffers of the exchange (exchange.c). */
static symmem_status_t alloc_agree_buffers(gpu_t *g)
{
    g->agree_in = libs.malloc(sizeof(int64_t));
    g->agree_all = libs.malloc(sizeof(int64_t) * (size_t)g->boot.nranks);
    if (g->agree_in == NULL || g->agree_all == NULL) {
        libs.free(g->agree_all); /* nvshmem_free(NULL) does nothing */
        libs.free(g->agree_in);
        return ERROR(SYMMEM_ERR_NO_MEMORY, "init: nvshmem_malloc of 8 bytes failed");
    }
    uintptr_t a = (uintptr_t)g->agree_in, b = (uintptr_t)g->agree_all;
    g->heap_lo = a < b ? a : b;
    g->heap_hi = (a > b ? a : b) + sizeof(int64_t) * (size_t)g->boot.nranks;
    return SYMMEM_OK;
}

/* kernels/atomics.ptx and put_signal.ptx, compiled by the driver. */
static symmem_status_t load_atomics(gpu_t *g)
{
    cu_result_t rc = libs.cuModuleLoadData(&g->atomics, symmem__gpu_kernel_atomics_ptx);
    if (rc != 0) return symmem__gpu_cuda_error("init", "compiling the atomics' PTX", rc);
    return SYMMEM_OK;
}

static symmem_status_t load_put_signal(gpu_t *g)
{
    int sms = 0;
    cu_result_t rc =
        libs.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->cu_device);
    g->max_blocks = rc == 0 && sms > 0 ? 2 * (unsigned)sms : 64;
    if ((rc = libs.cuModuleLoadData(&g->put_signal, symmem__gpu_kernel_put_signal_ptx)) != 0)
        return symmem__gpu_cuda_error("init", "compiling put_signal's PTX", rc);
    static const int widths[] = {1, 4, 8, 16};
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "put_signal_%d", widths[i]);
        rc = libs.cuModuleGetFunction(&g->put_signal_kernels[widths[i]], g->put_signal, name);
        if (rc != 0) {
            symmem_status_t status = symmem__gpu_cuda_error("init", name, rc);
            libs.cuModuleUnload(g->put_signal);
            return status;
        }
    }
    return SYMMEM_OK;
}

/* init's steps in order. SYMMEM_GPU_FAIL_AT=<name> makes init fail where
 * that step would begin: a test hook, with which tests/gpu/startup_failures.py
 * checks that every step before it is undone. */
enum {
    STEP_CONTEXT,
    STEP_NVSHMEM,
    STEP_STREAM,
    STEP_SCRATCH,
    STEP_AGREE_BUFFERS,
    STEP_WATCH_PEERS,
    STEP_HEARTBEAT,
    STEP_TEAMS,
    STEP_CALL_PAGES,
    STEP_ATOMICS_MODULE,
    STEP_PUT_SIGNAL_MODULE,
    STEP_COUNT
};
static const struct {
    const char *name;
    symmem_status_t (*take)(gpu_t *g);
} steps[STEP_COUNT] = {
    [STEP_CONTEXT] = {"context", take_context},
    [STEP_NVSHMEM] = {"nvshmem", start_nvshmem},
    [STEP_STREAM] = {"stream", create_stream},
    [STEP_SCRATCH] = {"scratch", alloc_scratch},
    [STEP_AGREE_BUFFERS] = {"agree_buffers", alloc_agree_buffers},
    [STEP_WATCH_PEERS] = {"watch_peers", symmem__gpu_watch_peers}, /* liveness.c */
    [STEP_HEARTBEAT] = {"heartbeat", symmem__gpu_heartbeat_start}, /* liveness.c */
    [STEP_TEAMS] = {"teams", symmem__gpu_predefined_teams_read},   /* teams.c */
    [STEP_CALL_PAGES] = {"call_pages", symmem__gpu_calls_start},   /* call_check.c */
    [STEP_ATOMICS_MODULE] = {"atomics_module", load_atomics},
    [STEP_PUT_SIGNAL_MODULE] = {"put_signal_module", load_put_signal},
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

static symmem_status_t take_step(gpu_t *g, int step, int fail_at)
{
    if (step == fail_at)
        return ERROR(SYMMEM_ERR_BACKEND, "init: failing at %s (SYMMEM_GPU_FAIL_AT)",
                     steps[step].name);
    return steps[step].take(g);
}

/* ---- init and finalize ---- */

symmem_status_t symmem__gpu_init(const symmem_bootstrap_t *boot, symmem_backend_t **backend_p)
{
    if (symmem__gpu_nvshmem_wedged())
        return ERROR(SYMMEM_ERR_BACKEND,
                     "init: an earlier free or finalize in this process never got through "
                     "NVSHMEM's barrier, so NVSHMEM cannot start again here; start a new "
                     "process");
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
    g->device = ordinal;
    cu_context_t saved = NULL; /* the caller's */
    cu_device_t caller_device = -1;
    if (libs.cuCtxGetCurrent(&saved) == 0 && saved != NULL) libs.cuCtxGetDevice(&caller_device);
    symmem_status_t status;
    SYMMEM_CHECK_GOTO(take_step(g, STEP_CONTEXT, fail_at), status, err_free);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_NVSHMEM, fail_at), status, err_release_context);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_STREAM, fail_at), status, err_finalize_nvshmem);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_SCRATCH, fail_at), status, err_destroy_stream);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_AGREE_BUFFERS, fail_at), status, err_free_scratch);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_WATCH_PEERS, fail_at), status, err_free_agree_buffers);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_HEARTBEAT, fail_at), status, err_free_watch);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_TEAMS, fail_at), status, err_stop_heartbeat);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_CALL_PAGES, fail_at), status, err_free_teams);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_ATOMICS_MODULE, fail_at), status, err_free_call_pages);
    SYMMEM_CHECK_GOTO(take_step(g, STEP_PUT_SIGNAL_MODULE, fail_at), status, err_unload_atomics);
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
    *backend_p = g;
    return SYMMEM_OK;

err_unload_atomics:
    libs.cuModuleUnload(g->atomics);
err_free_call_pages:
    symmem__gpu_calls_stop(g);
err_free_teams:
    symmem__gpu_predefined_teams_free(g);
err_stop_heartbeat:
    symmem__gpu_heartbeat_stop(g, 0);
err_free_watch:
    symmem__gpu_peer_watch_free(&g->watch);
err_free_agree_buffers:
    libs.free(g->agree_all);
    libs.free(g->agree_in);
err_free_scratch:
    libs.cuMemFree(g->scratch);
err_destroy_stream:
    libs.cuStreamDestroy(g->stream);
err_finalize_nvshmem:
    libs.hostlib_finalize();
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
    if (status == SYMMEM_OK) {
        libs.barrier_all_on_stream(g->stream);
        status = symmem__gpu_drain(g, "finalize");
    }
    return symmem__gpu_leave(g, scope, status);
}

static int nvshmem_finalize_job(void *arg)
{
    (void)arg;
    libs.hostlib_finalize();
    return 0;
}

/* Releases what init made, last first, as init's failure path does. */
symmem_status_t symmem__gpu_finalize(gpu_t *g)
{
    scope_t scope = symmem__gpu_enter(g);
    libs.cuStreamSynchronize(g->stream);
    libs.cuModuleUnload(g->put_signal);
    libs.cuModuleUnload(g->atomics);
    symmem__gpu_nvshmem_atomics_unload(g);
    symmem__gpu_own_unload(g);
    void *sync_area = g->sync_area;
    symmem__gpu_device_state_release(g); /* its thread watches the peers */
    libs.free(sync_area);                /* nvshmem_free(NULL) does nothing */
    libs.free(g->stage_area);
    g->stage_area = NULL;
    symmem__gpu_calls_stop(g);
    symmem__gpu_predefined_teams_free(g);
    symmem__gpu_heartbeat_stop(g, 1); /* every PE came through prepare_finalize's barrier */
    symmem__gpu_peer_watch_free(&g->watch);
    libs.free(g->agree_all);
    libs.free(g->agree_in);
    libs.cuMemFree(g->scratch);
    libs.cuStreamDestroy(g->stream);
    symmem_status_t status =
        symmem__gpu_nvshmem_watched(g, "finalize", "nvshmem_finalize", nvshmem_finalize_job, NULL);
    symmem__gpu_leave(g, scope, status);
    if (status != SYMMEM_OK) return status; /* NVSHMEM still holds the context */
    libs.cuDevicePrimaryCtxRelease(g->cu_device);
    free(g);
    return SYMMEM_OK;
}

/* NVSHMEM's version, as nvshmemx_vendor_get_version_info gives it. */
void symmem__gpu_library_version(gpu_t *g, char *text, size_t size)
{
    (void)g;
    int major = 0, minor = 0, patch = 0;
    libs.vendor_get_version_info(&major, &minor, &patch);
    snprintf(text, size, "%d.%d.%d", major, minor, patch);
}

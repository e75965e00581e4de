/*
 * The gpu backend: the ops table over NVIDIA's NVSHMEM host library. Every
 * data-moving slot enqueues on the caller's CUDA stream; with no stream it
 * uses the backend's own stream and completes before returning. Host memory
 * on the private side of a put or get is staged through a device buffer.
 * The calling thread's CUDA context is switched to the backend's device for
 * each call and switched back after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../core/backend.h"
#include "gpu_atomics.h"
#include "gpu_libs.h"
#include "gpu_put_signal.h"
#include "peer_watch.h"

#define SCRATCH_BYTES (1 << 20)
#define INIT_TIMEOUT_SECONDS 120.0

static const symmem_core_services_t *core;
static gpu_libs_t libs;

#define ERROR(status, ...) core->error((status), __VA_ARGS__)

struct symmem_backend {
    symmem_bootstrap_t boot;
    int device;
    cu_context_t ctx;
    nv_stream_t stream;       /* for calls made without a stream */
    cu_deviceptr_t scratch;   /* stages host memory */
    int64_t *agree_in;        /* symmetric: this PE's value for an agreement */
    int64_t *agree_all;       /* symmetric: every PE's value */
    void *atomics;            /* CUmodule of the PTX atomics */
    void *put_signal;         /* CUmodule of the PTX put_signal */
    void *put_signal_kernels[17]; /* by element width in bytes: 1, 4, 8, 16 */
    unsigned max_blocks;      /* a put_signal grid: two blocks per multiprocessor */
    int nvshmem_kernels;      /* SYMMEM_GPU_KERNELS=nvshmem: never our kernels */
    uintptr_t heap_lo;        /* the span of every nvshmem_malloc so far: NVSHMEM */
    uintptr_t heap_hi;        /* reserves its heap once, so all of it is device memory */
    peer_watch_t watch;       /* which peers still run */
};

typedef symmem_backend_t gpu_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static symmem_status_t cuda_error(const char *call, const char *what, cu_result_t rc)
{
    const char *text = "unknown error";
    libs.cuGetErrorString(rc, &text);
    return ERROR(SYMMEM_ERR_BACKEND, "%s: %s failed: CUDA error %d (%s)", call, what, rc, text);
}

#define CU(call_name, expr)                                                               \
    do {                                                                                  \
        cu_result_t _rc = (expr);                                                         \
        if (_rc != 0) return cuda_error(call_name, #expr, _rc);                           \
    } while (0)

/* ---- the caller's context is put back after every call ---- */

typedef struct {
    cu_context_t saved;
} scope_t;

static scope_t enter(gpu_t *g)
{
    scope_t scope = {NULL};
    libs.cuCtxGetCurrent(&scope.saved);
    if (scope.saved != g->ctx) libs.cuCtxSetCurrent(g->ctx);
    return scope;
}

static symmem_status_t leave(gpu_t *g, scope_t scope, symmem_status_t status)
{
    if (scope.saved != g->ctx && scope.saved != NULL) libs.cuCtxSetCurrent(scope.saved);
    return status;
}

/* Asked by a waiting PE, acting a few times a second: an error once a peer
 * has died or SYMMEM_TIMEOUT has passed (the awaited work may never end). */
static symmem_status_t still_waiting(gpu_t *g, const char *call, double started,
                                     double *next_check_p)
{
    double t = now();
    if (t < *next_check_p) return SYMMEM_OK;
    char how[256];
    int dead = peer_watch_find_dead(&g->watch, core, how, sizeof(how));
    if (dead >= 0)
        return ERROR(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s while this PE waited for it", call,
                     dead, how);
    if (g->boot.timeout > 0 && t - started > g->boot.timeout)
        return ERROR(SYMMEM_ERR_TIMEOUT, "%s: timed out after %.1f s (SYMMEM_TIMEOUT)", call,
                     t - started);
    *next_check_p = now() + 0.1;
    return SYMMEM_OK;
}

/* Waits for the backend's stream, spinning for the first millisecond. */
static symmem_status_t drain(gpu_t *g, const char *call)
{
    if (g->boot.timeout <= 0 && !peer_watch_active(&g->watch)) {
        CU(call, libs.cuStreamSynchronize(g->stream));
        return SYMMEM_OK;
    }
    double started = now(), next_check = started + 0.1;
    for (;;) {
        cu_result_t rc = libs.cuStreamQuery(g->stream);
        if (rc == 0) return SYMMEM_OK;
        if (rc != CU_ERROR_NOT_READY) return cuda_error(call, "cuStreamQuery", rc);
        symmem_status_t status = still_waiting(g, call, started, &next_check);
        if (status != SYMMEM_OK) return status;
        if (now() - started > 1e-3) usleep(20);
    }
}

/* The stream to enqueue on; *blocking_p says whether to drain it after. */
static nv_stream_t pick(gpu_t *g, symmem_stream_t stream, int *blocking_p)
{
    *blocking_p = stream == SYMMEM_STREAM_NONE;
    return *blocking_p ? g->stream : (nv_stream_t)stream;
}

static int in_heap(gpu_t *g, const void *ptr)
{
    return (uintptr_t)ptr >= g->heap_lo && (uintptr_t)ptr < g->heap_hi;
}

static int is_device_memory(gpu_t *g, const void *ptr)
{
    if (in_heap(g, ptr)) return 1; /* no driver call */
    unsigned int type = 0;
    if (libs.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                   (cu_deviceptr_t)ptr) != 0)
        return 0; /* unregistered host memory */
    return type == CU_MEMORYTYPE_DEVICE;
}

/* Whether device memory (is_device_memory says so) is on this PE's GPU,
 * where its kernels can read it. */
static int is_on_this_gpu(gpu_t *g, const void *device_ptr)
{
    if (in_heap(g, device_ptr)) return 1;
    int ordinal = -1;
    return libs.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                      (cu_deviceptr_t)device_ptr) == 0 &&
           ordinal == g->device;
}

/* ---- lifecycle ---- */

static symmem_status_t gpu_unique_id(symmem_unique_id_t *uid_p)
{
    nv_uniqueid_t uid;
    memset(&uid, 0, sizeof(uid));
    uid.version = NV_UNIQUEID_VERSION;
    int rc = libs.get_uniqueid(&uid);
    if (rc != 0) return ERROR(SYMMEM_ERR_BACKEND, "get_unique_id: nvshmemx_get_uniqueid failed (%d)", rc);
    memcpy(uid_p->bytes, &uid, sizeof(uid));
    return SYMMEM_OK;
}

/* Hands PE 0's NVSHMEM unique id to the PEs of a launcher's job through a
 * file in /dev/shm (the launcher starts every PE on this host). */
static symmem_status_t exchange_uid(gpu_t *g, nv_uniqueid_t *uid)
{
    char path[256], tmp[300];
    snprintf(path, sizeof(path), "/dev/shm/symmem-%s-nvshmem-uid", g->boot.job);
    if (g->boot.rank == 0) {
        symmem_unique_id_t bytes;
        symmem_status_t status = gpu_unique_id(&bytes);
        if (status != SYMMEM_OK) return status;
        memcpy(uid, bytes.bytes, sizeof(*uid));
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, uid, sizeof(*uid)) != (ssize_t)sizeof(*uid) || close(fd) != 0 ||
            rename(tmp, path) != 0)
            return ERROR(SYMMEM_ERR_BOOTSTRAP, "init: cannot publish the unique id in %s: %s",
                         path, strerror(errno));
        return SYMMEM_OK;
    }
    double deadline = now() + (g->boot.timeout > 0 ? g->boot.timeout : INIT_TIMEOUT_SECONDS);
    for (;;) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            ssize_t n = read(fd, uid, sizeof(*uid));
            close(fd);
            if (n == (ssize_t)sizeof(*uid)) return SYMMEM_OK;
        }
        if (now() > deadline)
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
    if (g->boot.have_uid) {
        memcpy(&uid, g->boot.uid.bytes, sizeof(uid));
        if (uid.version != NV_UNIQUEID_VERSION)
            return ERROR(SYMMEM_ERR_INVALID,
                         "init: uid was not made by get_unique_id() for the gpu backend "
                         "(make it with SYMMEM_BACKEND=gpu, or on a machine with a GPU)");
    } else if (g->boot.nranks == 1) {
        symmem_unique_id_t bytes;
        symmem_status_t status = gpu_unique_id(&bytes);
        if (status != SYMMEM_OK) return status;
        memcpy(&uid, bytes.bytes, sizeof(uid));
    } else {
        symmem_status_t status = exchange_uid(g, &uid);
        if (status != SYMMEM_OK) return status;
    }
    /* SYMMEM_SYMMETRIC_SIZE sizes NVSHMEM's heap unless NVSHMEM's own variable does. */
    if (g->boot.heap_size_from_user && !core->env_is_set("NVSHMEM_SYMMETRIC_SIZE")) {
        char bytes[32];
        snprintf(bytes, sizeof(bytes), "%zu", g->boot.heap_size);
        setenv("NVSHMEM_SYMMETRIC_SIZE", bytes, 1);
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
    if (libs.my_pe() != g->boot.rank || libs.n_pes() != g->boot.nranks)
        return ERROR(SYMMEM_ERR_BOOTSTRAP,
                     "init: NVSHMEM numbered this PE %d of %d, expected %d of %d", libs.my_pe(),
                     libs.n_pes(), g->boot.rank, g->boot.nranks);
    return SYMMEM_OK;
}

/* NVSHMEM wants a GPU of its own for every PE of a host (several PEs on one
 * GPU hang in its start-up here), so that is checked before it starts. */
static int gpu_can_run(const symmem_bootstrap_t *boot, char *why, size_t why_size)
{
    int count = 0;
    libs.cuDeviceGetCount(&count);
    if (boot->device >= count) {
        snprintf(why, why_size, "device=%d but this host has %d CUDA devices", boot->device,
                 count);
        return 0;
    }
    if (boot->device < 0 && boot->local_size > count) {
        snprintf(why, why_size, "%d PEs on this host but only %d GPUs (one PE per GPU)",
                 boot->local_size, count);
        return 0;
    }
    return 1;
}

static symmem_status_t agree(gpu_t *g, const char *call, int64_t value, int64_t *values);

/* Every PE learns where the others run, to notice one that dies. */
static symmem_status_t watch_peers(gpu_t *g)
{
    int n = g->boot.nranks;
    int64_t *host_pids = calloc((size_t)n, sizeof(int64_t));
    int64_t *starts = calloc((size_t)n, sizeof(int64_t));
    symmem_status_t status = host_pids && starts ? SYMMEM_OK
                                                 : ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    if (status == SYMMEM_OK) status = agree(g, "init", peer_watch_host_pid(), host_pids);
    if (status == SYMMEM_OK) status = agree(g, "init", peer_watch_start_time(core), starts);
    if (status == SYMMEM_OK &&
        peer_watch_init(&g->watch, n, g->boot.rank, host_pids, starts, g->boot.status_dir) != 0)
        status = ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    free(host_pids);
    free(starts);
    return status;
}

static symmem_status_t load_put_signal(gpu_t *g, cu_device_t dev, char *ptx, size_t size)
{
    int sms = 0;
    cu_result_t rc = libs.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    g->max_blocks = rc == 0 && sms > 0 ? 2 * (unsigned)sms : 64;
    if (gpu_put_signal_ptx(ptx, size) != 0 ||
        (rc = libs.cuModuleLoadData(&g->put_signal, ptx)) != 0)
        return cuda_error("init", "compiling put_signal's PTX", rc);
    static const int widths[] = {1, 4, 8, 16};
    for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "put_signal_%d", widths[i]);
        rc = libs.cuModuleGetFunction(&g->put_signal_kernels[widths[i]], g->put_signal, name);
        if (rc != 0) return cuda_error("init", name, rc);
    }
    return SYMMEM_OK;
}

static symmem_status_t gpu_init(const symmem_bootstrap_t *boot, symmem_backend_t **backend_p)
{
    int count = 0;
    libs.cuDeviceGetCount(&count);
    int ordinal = boot->device >= 0 ? boot->device : boot->local_rank % count;
    if (ordinal >= count)
        return ERROR(SYMMEM_ERR_INVALID, "init: device=%d but this host has %d CUDA devices",
                     ordinal, count);
    int kernels; /* the index in SYMMEM_GPU_KERNELS's choices: symmem|nvshmem */
    symmem_status_t status = core->env_choice("init", "SYMMEM_GPU_KERNELS", &kernels);
    if (status != SYMMEM_OK) return status;
    gpu_t *g = calloc(1, sizeof(*g));
    if (g == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    g->nvshmem_kernels = kernels == 1;
    g->boot = *boot;
    g->device = ordinal;
    cu_device_t dev;
    cu_context_t saved = NULL;
    libs.cuCtxGetCurrent(&saved);
    cu_result_t rc = libs.cuDeviceGet(&dev, ordinal);
    if (rc == 0) rc = libs.cuDevicePrimaryCtxRetain(&g->ctx, dev);
    if (rc == 0) rc = libs.cuCtxSetCurrent(g->ctx);
    if (rc != 0) {
        status = cuda_error("init", "selecting the device", rc);
        goto err_free;
    }
    status = start_nvshmem(g);
    if (status != SYMMEM_OK) goto err_free;
    rc = libs.cuStreamCreate(&g->stream, 0); /* ordered after the legacy default stream */
    if (rc == 0) rc = libs.cuMemAlloc(&g->scratch, SCRATCH_BYTES);
    g->agree_in = libs.malloc(sizeof(int64_t));
    g->agree_all = libs.malloc(sizeof(int64_t) * (size_t)boot->nranks);
    if (rc != 0 || g->agree_in == NULL || g->agree_all == NULL) {
        status = rc ? cuda_error("init", "allocating the backend's buffers", rc)
                    : ERROR(SYMMEM_ERR_NO_MEMORY, "init: nvshmem_malloc of 8 bytes failed");
        goto err_free;
    }
    status = watch_peers(g);
    if (status != SYMMEM_OK) goto err_free;
    uintptr_t a = (uintptr_t)g->agree_in, b = (uintptr_t)g->agree_all;
    g->heap_lo = a < b ? a : b;
    g->heap_hi = (a > b ? a : b) + sizeof(int64_t) * (size_t)boot->nranks;
    static char ptx[32768];
    if (gpu_atomics_ptx(ptx, sizeof(ptx)) != 0 ||
        (rc = libs.cuModuleLoadData(&g->atomics, ptx)) != 0) {
        status = cuda_error("init", "compiling the atomics' PTX", rc);
        goto err_free;
    }
    status = load_put_signal(g, dev, ptx, sizeof(ptx));
    if (status != SYMMEM_OK) goto err_free;
    /* A caller with its own device current keeps it; one with none gets ours. */
    if (saved != NULL && saved != g->ctx) libs.cuCtxSetCurrent(saved);
    *backend_p = g;
    return SYMMEM_OK;
err_free:
    if (saved != NULL) libs.cuCtxSetCurrent(saved);
    free(g);
    return status;
}

static symmem_status_t gpu_finalize(gpu_t *g)
{
    scope_t scope = enter(g);
    libs.cuStreamSynchronize(g->stream);
    libs.free(g->agree_all);
    libs.free(g->agree_in);
    libs.hostlib_finalize();
    libs.cuModuleUnload(g->atomics);
    libs.cuModuleUnload(g->put_signal);
    libs.cuMemFree(g->scratch);
    libs.cuStreamDestroy(g->stream);
    leave(g, scope, SYMMEM_OK);
    peer_watch_free(&g->watch);
    free(g);
    return SYMMEM_OK;
}

static int gpu_device(gpu_t *g) { return g->device; }

static void gpu_heap_range(gpu_t *g, uintptr_t *start_p, size_t *size_p)
{
    *start_p = g->heap_lo;
    *size_p = g->heap_hi - g->heap_lo;
}

/* ---- memory ---- */

/* Every PE's value, so collective arguments can be checked before NVSHMEM
 * sees them (it would hang or corrupt the heap on a mismatch). */
static symmem_status_t agree(gpu_t *g, const char *call, int64_t value, int64_t *values)
{
    CU(call, libs.cuMemcpy((cu_deviceptr_t)g->agree_in, (cu_deviceptr_t)&value, sizeof(value)));
    int (*fcollect)(nv_team_t, int64_t *, const int64_t *, size_t, nv_stream_t) =
        (int (*)(nv_team_t, int64_t *, const int64_t *, size_t, nv_stream_t))gpu_libs_symbol(
            &libs, "nvshmemx_int64_fcollect_on_stream");
    if (fcollect == NULL)
        return ERROR(SYMMEM_ERR_BACKEND, "%s: NVSHMEM has no nvshmemx_int64_fcollect_on_stream", call);
    fcollect(0, g->agree_all, g->agree_in, 1, g->stream);
    symmem_status_t status = drain(g, call);
    if (status != SYMMEM_OK) return status;
    CU(call, libs.cuMemcpy((cu_deviceptr_t)values, (cu_deviceptr_t)g->agree_all,
                           sizeof(int64_t) * (size_t)g->boot.nranks));
    return SYMMEM_OK;
}

/* Collective: SYMMEM_ERR_MISMATCH on every PE unless all passed this size. */
static symmem_status_t agree_on_size(gpu_t *g, const char *call, size_t size)
{
    int64_t values[g->boot.nranks];
    symmem_status_t status = agree(g, call, (int64_t)size, values);
    for (int pe = 0; status == SYMMEM_OK && pe < g->boot.nranks; pe++)
        if (values[pe] != (int64_t)size)
            status = ERROR(SYMMEM_ERR_MISMATCH,
                           "%s: size must be the same on every PE, but PE %d asked for %lld "
                           "bytes and this PE for %zu",
                           call, pe, (long long)values[pe], size);
    return status;
}

static symmem_status_t gpu_malloc(gpu_t *g, size_t size, void **ptr_p)
{
    scope_t scope = enter(g);
    symmem_status_t status = agree_on_size(g, "malloc", size);
    if (status == SYMMEM_OK && size > 0) {
        *ptr_p = libs.malloc(size);
        uintptr_t start = (uintptr_t)*ptr_p;
        if (start != 0 && (g->heap_lo == 0 || start < g->heap_lo)) g->heap_lo = start;
        if (start != 0 && start + size > g->heap_hi) g->heap_hi = start + size;
        if (*ptr_p == NULL)
            status = ERROR(SYMMEM_ERR_NO_MEMORY,
                           "malloc: nvshmem_malloc(%zu) failed: the symmetric heap is full "
                           "(NVSHMEM_SYMMETRIC_SIZE sets its size)",
                           size);
    } else if (status == SYMMEM_OK) {
        *ptr_p = NULL;
    }
    return leave(g, scope, status);
}

static symmem_status_t gpu_free(gpu_t *g, void *ptr)
{
    scope_t scope = enter(g);
    libs.cuStreamSynchronize(g->stream);
    libs.free(ptr);
    return leave(g, scope, SYMMEM_OK);
}

static void *gpu_ptr(gpu_t *g, const void *ptr, int pe)
{
    scope_t scope = enter(g);
    void *peer = libs.ptr(ptr, pe);
    leave(g, scope, SYMMEM_OK);
    return peer;
}

/* ---- one-sided copies ---- */

typedef void (*nv_copy_func_t)(void *, const void *, size_t, int, nv_stream_t);

/* put (is_put) or get; host memory on the private side goes through scratch. */
static symmem_status_t copy(gpu_t *g, const char *call, int is_put, nv_copy_func_t func,
                            void *dst, const void *src, size_t nbytes, int pe,
                            symmem_stream_t stream)
{
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    const void *private_side = is_put ? src : dst;
    symmem_status_t status = SYMMEM_OK;
    if (is_device_memory(g, private_side)) {
        func(dst, src, nbytes, pe, s);
        if (blocking) {
            libs.quiet_on_stream(s);
            status = drain(g, call);
        }
        return leave(g, scope, status);
    }
    /* Host memory: one staged chunk at a time, each completed before the next. */
    for (size_t done = 0; done < nbytes && status == SYMMEM_OK; done += SCRATCH_BYTES) {
        size_t n = nbytes - done < SCRATCH_BYTES ? nbytes - done : SCRATCH_BYTES;
        void *scratch = (void *)g->scratch;
        cu_result_t rc = 0;
        if (is_put) {
            rc = libs.cuMemcpy(g->scratch, (cu_deviceptr_t)((const char *)src + done), n);
            if (rc == 0) rc = libs.cuStreamSynchronize((nv_stream_t)0);
            if (rc == 0) func((char *)dst + done, scratch, n, pe, s);
        } else {
            func(scratch, (const char *)src + done, n, pe, s);
        }
        if (rc != 0) {
            status = cuda_error(call, "staging host memory", rc);
            break;
        }
        libs.quiet_on_stream(s);
        if (s == g->stream) {
            status = drain(g, call);
        } else if ((rc = libs.cuStreamSynchronize(s)) != 0) {
            status = cuda_error(call, "cuStreamSynchronize", rc);
        }
        if (status == SYMMEM_OK && !is_put &&
            (rc = libs.cuMemcpy((cu_deviceptr_t)((char *)dst + done), g->scratch, n)) != 0)
            status = cuda_error(call, "copying to host memory", rc);
    }
    return leave(g, scope, status);
}

static symmem_status_t gpu_put(gpu_t *g, void *dst, const void *src, size_t n, int pe,
                               symmem_stream_t stream)
{
    return copy(g, "put", 1, libs.putmem_on_stream, dst, src, n, pe, stream);
}

static symmem_status_t gpu_get(gpu_t *g, void *dst, const void *src, size_t n, int pe,
                               symmem_stream_t stream)
{
    return copy(g, "get", 0, libs.getmem_on_stream, dst, src, n, pe, stream);
}

static symmem_status_t gpu_put_nbi(gpu_t *g, void *dst, const void *src, size_t n, int pe,
                                   symmem_stream_t stream)
{
    return copy(g, "put_nbi", 1, libs.putmem_nbi_on_stream, dst, src, n, pe, stream);
}

static symmem_status_t gpu_get_nbi(gpu_t *g, void *dst, const void *src, size_t n, int pe,
                                   symmem_stream_t stream)
{
    return copy(g, "get_nbi", 0, libs.getmem_nbi_on_stream, dst, src, n, pe, stream);
}

static symmem_status_t gpu_quiet(gpu_t *g, symmem_stream_t stream)
{
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    libs.quiet_on_stream(s);
    symmem_status_t status = blocking ? drain(g, "quiet") : SYMMEM_OK;
    return leave(g, scope, status);
}

static symmem_status_t gpu_fence(gpu_t *g)
{
    scope_t scope = enter(g);
    libs.fence();
    return leave(g, scope, SYMMEM_OK);
}

/* ---- signals and waits ---- */

static cu_result_t launch(void *kernel, size_t blocks, size_t threads, nv_stream_t s,
                          void **params)
{
    return libs.cuLaunchKernel(kernel, (unsigned)blocks, 1, 1, (unsigned)threads, 1, 1, 0, s,
                               params, NULL);
}

/* put_signal (or, with nbytes 0, signal_op) by symmem's kernels, to the
 * peer addresses of dst and sig: one block that copies and signals, or for
 * large messages a grid that copies and then one block that signals. */
static symmem_status_t kernel_put_signal(gpu_t *g, const char *call, void *peer_dst,
                                         const void *src, size_t nbytes, uint64_t *peer_sig,
                                         uint64_t value, symmem_signal_op_t op, nv_stream_t s)
{
    int width = gpu_put_signal_width(peer_dst, src, nbytes);
    size_t elements = nbytes / (size_t)width;
    uint64_t from = (uintptr_t)src, to = (uintptr_t)peer_dst, n = nbytes;
    uint64_t sig = (uintptr_t)peer_sig, none = 0;
    unsigned add = op == SYMMEM_SIGNAL_ADD;
    void *copy_and_signal[] = {&from, &to, &n, &sig, &value, &add};
    cu_result_t rc;
    if (nbytes <= GPU_PUT_SIGNAL_ONE_BLOCK_BYTES) {
        size_t threads = elements >= 1024 ? 1024 : elements <= 32 ? 32 : (elements + 31) / 32 * 32;
        rc = launch(g->put_signal_kernels[width], 1, threads, s, copy_and_signal);
    } else {
        /* 256 threads a block, about 4 elements a thread */
        size_t blocks = (elements + 1023) / 1024;
        if (blocks > g->max_blocks) blocks = g->max_blocks;
        void *copy[] = {&from, &to, &n, &none, &value, &add};
        void *signal[] = {&from, &to, &none, &sig, &value, &add};
        rc = launch(g->put_signal_kernels[width], blocks, 256, s, copy);
        if (rc == 0) rc = launch(g->put_signal_kernels[1], 1, 32, s, signal);
    }
    return rc == 0 ? SYMMEM_OK : cuda_error(call, "launching put_signal's kernel", rc);
}

static symmem_status_t gpu_put_signal(gpu_t *g, void *dst, const void *src, size_t nbytes,
                                      uint64_t *sig, uint64_t value, symmem_signal_op_t op,
                                      int pe, int nbi, symmem_stream_t stream)
{
    const char *call = nbytes ? "put_signal" : "signal_op";
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    if (nbytes > 0 && !is_device_memory(g, src))
        return leave(g, scope,
                     ERROR(SYMMEM_ERR_INVALID,
                           "%s: src %p is host memory; the gpu backend needs device memory "
                           "(a CuPy array or a torch CUDA tensor) for put_signal",
                           call, src));
    /* Within the NVLink domain our kernel beats NVSHMEM's (put_signal_ptx.c). */
    uint64_t *peer_sig = libs.ptr(sig, pe);
    void *peer_dst = nbytes ? libs.ptr(dst, pe) : NULL;
    symmem_status_t status = SYMMEM_OK;
    if (!g->nvshmem_kernels && peer_sig != NULL &&
        (nbytes == 0 || (peer_dst != NULL && is_on_this_gpu(g, src)))) {
        status = kernel_put_signal(g, call, peer_dst, src, nbytes, peer_sig, value, op, s);
    } else {
        if (nbytes == 0) libs.signal_op_on_stream(sig, value, (int)op, pe, s);
        else if (nbi)
            libs.putmem_signal_nbi_on_stream(dst, src, nbytes, sig, value, (int)op, pe, s);
        else libs.putmem_signal_on_stream(dst, src, nbytes, sig, value, (int)op, pe, s);
        if (blocking) libs.quiet_on_stream(s);
    }
    if (blocking && status == SYMMEM_OK) status = drain(g, call);
    return leave(g, scope, status);
}

static symmem_status_t gpu_signal_wait_until(gpu_t *g, uint64_t *sig, symmem_cmp_t cmp,
                                             uint64_t value, symmem_stream_t stream,
                                             uint64_t *value_p)
{
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    libs.signal_wait_until_on_stream(sig, (int)cmp, value, s);
    symmem_status_t status = SYMMEM_OK;
    if (blocking) {
        status = drain(g, "signal_wait");
        if (status == SYMMEM_OK && value_p) *value_p = libs.signal_fetch(sig);
    }
    return leave(g, scope, status);
}

static symmem_status_t gpu_signal_fetch(gpu_t *g, const uint64_t *sig, uint64_t *value_p)
{
    scope_t scope = enter(g);
    *value_p = libs.signal_fetch(sig);
    return leave(g, scope, SYMMEM_OK);
}

static const char *const type_names[SYMMEM_DTYPE_COUNT] = {
    [SYMMEM_DTYPE_BOOL] = "uint8",     [SYMMEM_DTYPE_INT8] = "int8",
    [SYMMEM_DTYPE_INT16] = "int16",    [SYMMEM_DTYPE_INT32] = "int32",
    [SYMMEM_DTYPE_INT64] = "int64",    [SYMMEM_DTYPE_UINT8] = "uint8",
    [SYMMEM_DTYPE_UINT16] = "uint16",  [SYMMEM_DTYPE_UINT32] = "uint32",
    [SYMMEM_DTYPE_UINT64] = "uint64",  [SYMMEM_DTYPE_FLOAT16] = "half",
    [SYMMEM_DTYPE_BFLOAT16] = "bfloat16", [SYMMEM_DTYPE_FLOAT32] = "float",
    [SYMMEM_DTYPE_FLOAT64] = "double",
};

/* An NVSHMEM function by name, or an UNSUPPORTED error naming it. *slot
 * remembers it: looking a name up costs more than many a collective's launch. */
static symmem_status_t lookup(const char *call, void **slot, void **func_p, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static symmem_status_t lookup(const char *call, void **slot, void **func_p, const char *fmt, ...)
{
    if ((*func_p = *slot) != NULL) return SYMMEM_OK;
    char name[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof(name), fmt, ap);
    va_end(ap);
    *slot = *func_p = gpu_libs_symbol(&libs, name);
    if (*func_p != NULL) return SYMMEM_OK;
    return ERROR(SYMMEM_ERR_UNSUPPORTED, "%s: the gpu backend's NVSHMEM has no %s", call, name);
}

/* Reads one element of device memory into a host int64/uint64 comparison. */
static symmem_status_t element_holds(gpu_t *g, const void *ivar, symmem_dtype_t dtype,
                                     symmem_cmp_t cmp, int64_t value, int *holds_p)
{
    (void)g;
    union { int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16;
            uint32_t u32; uint64_t u64; } v;
    size_t size = dtype == SYMMEM_DTYPE_INT8 || dtype == SYMMEM_DTYPE_UINT8 ? 1
                : dtype == SYMMEM_DTYPE_INT16 || dtype == SYMMEM_DTYPE_UINT16 ? 2
                : dtype == SYMMEM_DTYPE_INT32 || dtype == SYMMEM_DTYPE_UINT32 ? 4 : 8;
    CU("test", libs.cuMemcpy((cu_deviceptr_t)&v, (cu_deviceptr_t)ivar, size));
    int is_signed = dtype <= SYMMEM_DTYPE_INT64;
    long double a = 0, b = is_signed ? (long double)value : (long double)(uint64_t)value;
    switch (dtype) {
    case SYMMEM_DTYPE_INT8: a = v.i8; break;
    case SYMMEM_DTYPE_INT16: a = v.i16; break;
    case SYMMEM_DTYPE_INT32: a = v.i32; break;
    case SYMMEM_DTYPE_INT64: a = v.i64; break;
    case SYMMEM_DTYPE_UINT8: a = v.u8; break;
    case SYMMEM_DTYPE_UINT16: a = v.u16; break;
    case SYMMEM_DTYPE_UINT32: a = v.u32; break;
    default: a = v.u64; break;
    }
    switch (cmp) {
    case SYMMEM_CMP_EQ: *holds_p = a == b; break;
    case SYMMEM_CMP_NE: *holds_p = a != b; break;
    case SYMMEM_CMP_GT: *holds_p = a > b; break;
    case SYMMEM_CMP_LE: *holds_p = a <= b; break;
    case SYMMEM_CMP_LT: *holds_p = a < b; break;
    default: *holds_p = a >= b; break;
    }
    return SYMMEM_OK;
}

static symmem_status_t gpu_test(gpu_t *g, void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp,
                                int64_t value, int *result_p)
{
    scope_t scope = enter(g);
    return leave(g, scope, element_holds(g, ivar, dtype, cmp, value, result_p));
}

static symmem_status_t gpu_wait_until(gpu_t *g, void *ivar, symmem_dtype_t dtype,
                                      symmem_cmp_t cmp, int64_t value)
{
    /* Polls from the host: NVSHMEM's typed waits exist only on a stream. */
    scope_t scope = enter(g);
    double started = now(), next_check = started + 0.1;
    int holds = 0;
    symmem_status_t status;
    unsigned pause = 1;
    while ((status = element_holds(g, ivar, dtype, cmp, value, &holds)) == SYMMEM_OK && !holds) {
        if ((status = still_waiting(g, "wait_until", started, &next_check)) != SYMMEM_OK) break;
        usleep(pause);
        if (pause < 1000) pause *= 2;
    }
    return leave(g, scope, status);
}

/* ---- synchronisation and collectives ---- */

static symmem_status_t finish(gpu_t *g, scope_t scope, const char *call, int rc, int blocking)
{
    symmem_status_t status = SYMMEM_OK;
    if (rc != 0) status = ERROR(SYMMEM_ERR_BACKEND, "%s: NVSHMEM returned %d", call, rc);
    else if (blocking) status = drain(g, call);
    return leave(g, scope, status);
}

static symmem_status_t gpu_barrier_all(gpu_t *g, symmem_stream_t stream)
{
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    libs.barrier_all_on_stream(s);
    return finish(g, scope, "barrier_all", 0, blocking);
}

static symmem_status_t gpu_sync_all(gpu_t *g, symmem_stream_t stream)
{
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    libs.sync_all_on_stream(s);
    return finish(g, scope, "sync_all", 0, blocking);
}

static symmem_status_t gpu_barrier(gpu_t *g, const symmem_team_view_t *team,
                                   symmem_stream_t stream)
{
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    return finish(g, scope, "barrier", libs.barrier_on_stream(team->channel, s), blocking);
}

static symmem_status_t gpu_sync(gpu_t *g, const symmem_team_view_t *team, symmem_stream_t stream)
{
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    return finish(g, scope, "sync", libs.team_sync_on_stream(team->channel, s), blocking);
}

/* bool reduces as uint8: sum/max/or are "or", prod/min/and are "and". */
static const char *reduce_op_name(symmem_dtype_t dtype, symmem_reduce_op_t op)
{
    static const char *const names[] = {"sum", "min", "max", "prod", "and", "or", "xor"};
    if (dtype != SYMMEM_DTYPE_BOOL) return names[op];
    switch (op) {
    case SYMMEM_OP_SUM: case SYMMEM_OP_MAX: case SYMMEM_OP_OR: return "max";
    case SYMMEM_OP_PROD: case SYMMEM_OP_MIN: case SYMMEM_OP_AND: return "min";
    default: return "xor";
    }
}

typedef int (*nv_reduce_func_t)(nv_team_t, void *, const void *, size_t, nv_stream_t);
typedef int (*nv_broadcast_func_t)(nv_team_t, void *, const void *, size_t, int, nv_stream_t);

static symmem_status_t reduction(gpu_t *g, const char *call, const char *kind,
                                 const symmem_team_view_t *team, void *dst, const void *src,
                                 size_t nelems, symmem_dtype_t dtype, symmem_reduce_op_t op,
                                 symmem_stream_t stream)
{
    static void *found[2][SYMMEM_DTYPE_COUNT][SYMMEM_OP_COUNT]; /* reduce, reducescatter */
    void *func;
    void **slot = &found[strcmp(kind, "reduce") != 0][dtype][op];
    if (lookup(call, slot, &func, "nvshmemx_%s_%s_%s_on_stream", type_names[dtype],
               reduce_op_name(dtype, op), kind) != SYMMEM_OK)
        return SYMMEM_ERR_UNSUPPORTED;
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    int rc = ((nv_reduce_func_t)func)(team->channel, dst, src, nelems, s);
    return finish(g, scope, call, rc, blocking);
}

static symmem_status_t gpu_reduce(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                  const void *src, size_t nelems, symmem_dtype_t dtype,
                                  symmem_reduce_op_t op, symmem_stream_t stream)
{
    return reduction(g, "reduce", "reduce", team, dst, src, nelems, dtype, op, stream);
}

static symmem_status_t gpu_reducescatter(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                         const void *src, size_t nelems, symmem_dtype_t dtype,
                                         symmem_reduce_op_t op, symmem_stream_t stream)
{
    return reduction(g, "reducescatter", "reducescatter", team, dst, src, nelems, dtype, op,
                     stream);
}

/* Byte-moving collectives use NVSHMEM's forms for the widest unsigned
 * integer that the size and both addresses allow: its kernels copy one
 * element per thread step, so uint8 would move bytes four or eight times
 * slower than uint32 or uint64. kind: 0 alltoall, 1 fcollect, 2 broadcast. */
static symmem_status_t move_bytes(gpu_t *g, const char *call, int kind,
                                  const symmem_team_view_t *team, void *dst, const void *src,
                                  size_t nbytes, int root, symmem_stream_t stream)
{
    static void *found[3][4];
    uintptr_t bits = nbytes | (uintptr_t)dst | (uintptr_t)src;
    int width = bits % 8 == 0 ? 3 : bits % 4 == 0 ? 2 : bits % 2 == 0 ? 1 : 0;
    void *func;
    if (lookup(call, &found[kind][width], &func, "nvshmemx_uint%d_%s_on_stream", 8 << width,
               call) != SYMMEM_OK)
        return SYMMEM_ERR_UNSUPPORTED;
    size_t nelems = nbytes >> width;
    scope_t scope = enter(g);
    int blocking;
    nv_stream_t s = pick(g, stream, &blocking);
    int rc = root < 0 ? ((nv_reduce_func_t)func)(team->channel, dst, src, nelems, s)
                      : ((nv_broadcast_func_t)func)(team->channel, dst, src, nelems, root, s);
    return finish(g, scope, call, rc, blocking);
}

static symmem_status_t gpu_alltoall(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                    const void *src, size_t nbytes, symmem_stream_t stream)
{
    return move_bytes(g, "alltoall", 0, team, dst, src, nbytes, -1, stream);
}

static symmem_status_t gpu_fcollect(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                    const void *src, size_t nbytes, symmem_stream_t stream)
{
    return move_bytes(g, "fcollect", 1, team, dst, src, nbytes, -1, stream);
}

static symmem_status_t gpu_broadcast(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                     const void *src, size_t nbytes, int root,
                                     symmem_stream_t stream)
{
    return move_bytes(g, "broadcast", 2, team, dst, src, nbytes, root, stream);
}

/* ---- teams ---- */

static symmem_status_t team_error(const char *call, int rc)
{
    return ERROR(SYMMEM_ERR_NO_MEMORY,
                 "%s: NVSHMEM could not make the team (it returned %d); it keeps at most "
                 "NVSHMEM_MAX_TEAMS teams (32 by default): destroy teams with team_destroy",
                 call, rc);
}

static symmem_status_t gpu_team_split_strided(gpu_t *g, const symmem_team_view_t *parent,
                                              int start, int stride, int size, int in_team,
                                              int *handle_p)
{
    scope_t scope = enter(g);
    nv_team_t team = -1;
    int rc = libs.team_split_strided(parent->channel, start, stride, size, NULL, 0, &team);
    *handle_p = in_team ? team : SYMMEM_TEAM_INVALID;
    if (rc != 0)
        return leave(g, scope, team_error("team_split_strided", rc));
    return leave(g, scope, SYMMEM_OK);
}

static symmem_status_t gpu_team_split_2d(gpu_t *g, const symmem_team_view_t *parent, int xrange,
                                         int *xhandle_p, int *yhandle_p)
{
    scope_t scope = enter(g);
    nv_team_t x = -1, y = -1;
    int rc = libs.team_split_2d(parent->channel, xrange, NULL, 0, &x, NULL, 0, &y);
    *xhandle_p = x;
    *yhandle_p = y;
    if (rc != 0) return leave(g, scope, team_error("team_split_2d", rc));
    return leave(g, scope, SYMMEM_OK);
}

static symmem_status_t gpu_team_destroy(gpu_t *g, const symmem_team_view_t *team)
{
    scope_t scope = enter(g);
    libs.team_destroy(team->channel);
    return leave(g, scope, SYMMEM_OK);
}

/* ---- atomics: one-thread PTX kernels on the peer mapping ---- */

static symmem_status_t gpu_atomic(gpu_t *g, symmem_atomic_op_t op, void *target,
                                  symmem_dtype_t dtype, uint64_t value, uint64_t cond, int pe,
                                  uint64_t *fetched_p)
{
    const char *call = "atomic";
    scope_t scope = enter(g);
    void *remote = libs.ptr(target, pe);
    if (remote == NULL)
        return leave(g, scope,
                     ERROR(SYMMEM_ERR_UNSUPPORTED,
                           "atomic: PE %d cannot be reached by load/store from this PE (it "
                           "is outside this PE's NVLink domain); the gpu backend's atomics "
                           "work within one",
                           pe));
    char name[32];
    void *kernel = NULL;
    gpu_atomic_kernel(op, dtype, name, sizeof(name), &value);
    cu_result_t rc = libs.cuModuleGetFunction(&kernel, g->atomics, name);
    uint64_t address = (uint64_t)(uintptr_t)remote, result = (uint64_t)g->scratch;
    void *params[] = {&address, &value, &cond, &result};
    if (rc == 0) rc = launch(kernel, 1, 1, g->stream, params);
    if (rc != 0) return leave(g, scope, cuda_error(call, name, rc));
    symmem_status_t status = drain(g, call);
    uint64_t old = 0;
    size_t size = dtype == SYMMEM_DTYPE_INT64 || dtype == SYMMEM_DTYPE_UINT64 ||
                          dtype == SYMMEM_DTYPE_FLOAT64 ? 8 : 4;
    if (status == SYMMEM_OK && (rc = libs.cuMemcpy((cu_deviceptr_t)&old, g->scratch, size)) != 0)
        status = cuda_error(call, "reading the old value", rc);
    if (status == SYMMEM_OK && fetched_p) *fetched_p = old;
    return leave(g, scope, status);
}

/* nvshmemx_team_init: the members find each other by the key (NVSHMEM's
 * team unique id), and each learns the others' world numbers afterwards. */
static symmem_status_t gpu_team_init(gpu_t *g, uint64_t key, int npes, int index, int *members,
                                     int *handle_p)
{
    int (*team_init)(nv_team_t *, nv_team_config_t *, long, int, int) =
        (int (*)(nv_team_t *, nv_team_config_t *, long, int, int))gpu_libs_symbol(
            &libs, "nvshmemx_team_init");
    int (*translate)(nv_team_t, int, nv_team_t) =
        (int (*)(nv_team_t, int, nv_team_t))gpu_libs_symbol(&libs, "nvshmem_team_translate_pe");
    if (team_init == NULL || translate == NULL)
        return ERROR(SYMMEM_ERR_UNSUPPORTED,
                     "team_init: this NVSHMEM has no nvshmemx_team_init (it came in NVSHMEM "
                     "3.3); use team_split_strided or team_split_2d");
    scope_t scope = enter(g);
    nv_team_config_t config;
    memset(&config, 0, sizeof(config));
    config.version = NV_TEAM_CONFIG_VERSION;
    config.uniqueid = key & ~(1ULL << 63); /* never NVSHMEM's "no id" (~0) */
    nv_team_t team = -1;
    int rc = team_init(&team, &config, NV_TEAM_CONFIG_MASK_UNIQUEID, npes, index);
    if (rc != 0 || team < 0) return leave(g, scope, team_error("team_init", rc));
    for (int i = 0; i < npes; i++) members[i] = translate(team, i, NV_TEAM_WORLD);
    *handle_p = team;
    return leave(g, scope, SYMMEM_OK);
}

/* ---- external memory ---- */

/* NVSHMEM_CUMEM_GRANULARITY: the unit NVSHMEM maps external memory in. */
static size_t external_granule(void)
{
    size_t value = core->env_size("NVSHMEM_CUMEM_GRANULARITY");
    return value > 0 ? value : (size_t)512 << 20; /* NVSHMEM's default */
}

static symmem_status_t gpu_register_external(gpu_t *g, void *ptr, size_t size, void **sym_p)
{
    const char *call = "register_external";
    void *(*register_symmetric)(void *, size_t, int) =
        (void *(*)(void *, size_t, int))gpu_libs_symbol(&libs,
                                                        "nvshmemx_buffer_register_symmetric");
    if (register_symmetric == NULL)
        return ERROR(SYMMEM_ERR_UNSUPPORTED,
                     "%s: this NVSHMEM has no nvshmemx_buffer_register_symmetric (it came in "
                     "NVSHMEM 3.3)",
                     call);
    scope_t scope = enter(g);
    symmem_status_t status = agree_on_size(g, call, size);
    /* NVSHMEM maps the memory by its VMM handle, in its own granules, and
     * fails hard on anything else: it is asked only when every PE can. */
    size_t granule = external_granule();
    int64_t why = 0, whys[g->boot.nranks];
    uint64_t handle = 0;
    if (libs.cuMemRetainAllocationHandle(&handle, ptr) != 0) why = 1;
    else libs.cuMemRelease(handle);
    if (why == 0 && size % granule != 0) why = 2;
    if (status == SYMMEM_OK) status = agree(g, call, why, whys);
    for (int pe = 0; status == SYMMEM_OK && pe < g->boot.nranks; pe++)
        if (whys[pe] != 0)
            status = ERROR(SYMMEM_ERR_INVALID,
                           whys[pe] == 1 ? "%s: PE %d%s passed memory that is not CUDA VMM "
                                           "memory (make it with cuMemCreate and cuMemMap)"
                                         : "%s: PE %d%s passed a size that is not a multiple of "
                                           "NVSHMEM's granule, NVSHMEM_CUMEM_GRANULARITY = %zu "
                                           "bytes",
                           call, pe, pe == g->boot.rank ? " (this PE)" : "", granule);
    if (status == SYMMEM_OK && (*sym_p = register_symmetric(ptr, size, 0)) == NULL)
        status = ERROR(SYMMEM_ERR_BACKEND,
                       "%s: nvshmemx_buffer_register_symmetric refused %p (%zu bytes); "
                       "NVSHMEM_DEBUG=INFO tells why",
                       call, ptr, size);
    return leave(g, scope, status);
}

static symmem_status_t gpu_unregister_external(gpu_t *g, void *sym, size_t size)
{
    int (*unregister_symmetric)(void *, size_t) = (int (*)(void *, size_t))gpu_libs_symbol(
        &libs, "nvshmemx_buffer_unregister_symmetric");
    scope_t scope = enter(g);
    libs.cuStreamSynchronize(g->stream);
    int rc = unregister_symmetric ? unregister_symmetric(sym, size) : -1;
    if (rc != 0)
        return leave(g, scope,
                     ERROR(SYMMEM_ERR_BACKEND,
                           "unregister_external: nvshmemx_buffer_unregister_symmetric(%p) "
                           "returned %d",
                           sym, rc));
    return leave(g, scope, SYMMEM_OK);
}

/* NVSHMEM's version, as nvshmemx_vendor_get_version_info gives it. */
static void gpu_library_version(gpu_t *g, char *text, size_t size)
{
    (void)g;
    int major = 0, minor = 0, patch = 0;
    libs.vendor_get_version_info(&major, &minor, &patch);
    snprintf(text, size, "%d.%d.%d", major, minor, patch);
}

static const symmem_backend_ops_t gpu_ops = {
    .version = SYMMEM_BACKEND_OPS_VERSION,
    .name = "gpu",
    .init = gpu_init,
    .finalize = gpu_finalize,
    .malloc = gpu_malloc,
    .free = gpu_free,
    .ptr = gpu_ptr,
    .put = gpu_put,
    .get = gpu_get,
    .put_nbi = gpu_put_nbi,
    .get_nbi = gpu_get_nbi,
    .quiet = gpu_quiet,
    .fence = gpu_fence,
    .put_signal = gpu_put_signal,
    .signal_wait_until = gpu_signal_wait_until,
    .signal_fetch = gpu_signal_fetch,
    .wait_until = gpu_wait_until,
    .test = gpu_test,
    .barrier_all = gpu_barrier_all,
    .sync_all = gpu_sync_all,
    .team_split_strided = gpu_team_split_strided,
    .team_split_2d = gpu_team_split_2d,
    .team_destroy = gpu_team_destroy,
    .barrier = gpu_barrier,
    .sync = gpu_sync,
    .reduce = gpu_reduce,
    .reducescatter = gpu_reducescatter,
    .alltoall = gpu_alltoall,
    .fcollect = gpu_fcollect,
    .broadcast = gpu_broadcast,
    .atomic = gpu_atomic,
    .device = gpu_device,
    .get_unique_id = gpu_unique_id,
    .heap_range = gpu_heap_range,
    .team_init = gpu_team_init,
    .can_run = gpu_can_run,
    .register_external = gpu_register_external,
    .unregister_external = gpu_unregister_external,
    .library_version = gpu_library_version,
};

__attribute__((visibility("default"))) int symmem_gpu_backend_open(
    const symmem_core_services_t *services, const symmem_backend_ops_t **ops_p, char *why,
    size_t why_size)
{
    if (services == NULL || services->version != SYMMEM_CORE_SERVICES_VERSION) {
        snprintf(why, why_size, "the gpu backend was built for another symmem core");
        return -1;
    }
    core = services;
    static int loaded;
    if (!loaded) {
        if (gpu_libs_load(&libs, core, why, why_size) != 0) return -1;
        loaded = 1;
    }
    *ops_p = &gpu_ops;
    return 0;
}

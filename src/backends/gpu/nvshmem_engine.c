/* The nvshmem engine (engine.h): the backend's calls where NVSHMEM's host
 * library makes them. Its heap is nvshmem_malloc's, its peers nvshmem_ptr's,
 * its one-sided calls and the collectives symmem's kernels do not take are
 * NVSHMEM's on-stream forms; start and end are in nvshmem_start.c, teams in
 * nvshmem_teams.c, external memory in nvshmem_external.c. NVSHMEM's typed
 * collectives (each dtype and op, each width) are looked up by name on
 * first use and remembered. */
#include <stdarg.h>
#include <stdio.h>

#include "gpu.h"
#include "nvshmem_engine.h"

/* ---- the heap ---- */

static symmem_status_t nv_alloc(gpu_t *g, const char *call, size_t size, size_t alignment,
                                void **ptr_p)
{
    (void)g;
    *ptr_p = alignment ? libs.align(alignment, size) : libs.malloc(size);
    if (*ptr_p == NULL)
        return ERROR(SYMMEM_ERR_NO_MEMORY,
                     "%s: nvshmem_%s(%zu) failed: the symmetric heap is full "
                     "(NVSHMEM_SYMMETRIC_SIZE sets its size)",
                     call, alignment ? "align" : "malloc", size);
    return SYMMEM_OK;
}

static int nvshmem_free_job(void *ptr)
{
    libs.free(ptr);
    return 0;
}

/* nvshmem_free holds a barrier with no time limit: watched. */
static symmem_status_t nv_release(gpu_t *g, const char *call, void *ptr)
{
    return symmem__gpu_nvshmem_watched(g, call, "nvshmem_free", nvshmem_free_job, ptr);
}

static void *nv_ptr(gpu_t *g, const void *ptr, int pe)
{
    (void)g;
    return libs.ptr(ptr, pe);
}

/* The exchange: NVSHMEM's int64 fcollect over TEAM_WORLD on the backend's
 * stream, through two symmetric buffers made at init. */
static symmem_status_t nv_exchange_start(gpu_t *g, const char *call, int64_t value)
{
    CU(call, libs.cuMemcpy((cu_deviceptr_t)g->agree_in, (cu_deviceptr_t)&value, sizeof(value)));
    int (*fcollect)(nv_team_t, int64_t *, const int64_t *, size_t, nv_stream_t) =
        (int (*)(nv_team_t, int64_t *, const int64_t *, size_t,
                 nv_stream_t))symmem__gpu_libs_symbol(&libs, "nvshmemx_int64_fcollect_on_stream");
    if (fcollect == NULL)
        return ERROR(SYMMEM_ERR_BACKEND, "%s: NVSHMEM has no nvshmemx_int64_fcollect_on_stream",
                     call);
    fcollect(0, g->agree_all, g->agree_in, 1, g->stream);
    return SYMMEM_OK;
}

static symmem_status_t nv_exchange_finish(gpu_t *g, const char *call, int64_t *values)
{
    CU(call, libs.cuMemcpy((cu_deviceptr_t)values, (cu_deviceptr_t)g->agree_all,
                           sizeof(int64_t) * (size_t)g->boot.nranks));
    return SYMMEM_OK;
}

/* ---- one-sided calls ---- */

#define NV_COPY(name, func)                                                                        \
    static int name(gpu_t *g, void *dst, const void *src, size_t n, int pe, nv_stream_t s)         \
    {                                                                                              \
        (void)g;                                                                                   \
        libs.func(dst, src, n, pe, s);                                                             \
        return 0;                                                                                  \
    }
NV_COPY(nv_put, putmem_on_stream)
NV_COPY(nv_get, getmem_on_stream)
NV_COPY(nv_put_nbi, putmem_nbi_on_stream)
NV_COPY(nv_get_nbi, getmem_nbi_on_stream)

static void nv_quiet(gpu_t *g, nv_stream_t s)
{
    (void)g;
    libs.quiet_on_stream(s);
}

static void nv_fence(gpu_t *g)
{
    (void)g;
    libs.fence();
}

static symmem_status_t nv_put_signal(gpu_t *g, const char *call, void *dst, const void *src,
                                     size_t nbytes, uint64_t *sig, uint64_t value,
                                     symmem_signal_op_t op, int pe, int nbi, nv_stream_t s)
{
    (void)g, (void)call;
    if (nbytes == 0)
        libs.signal_op_on_stream(sig, value, (int)op, pe, s);
    else if (nbi)
        libs.putmem_signal_nbi_on_stream(dst, src, nbytes, sig, value, (int)op, pe, s);
    else
        libs.putmem_signal_on_stream(dst, src, nbytes, sig, value, (int)op, pe, s);
    return SYMMEM_OK;
}

static symmem_status_t nv_signal_wait(gpu_t *g, uint64_t *sig, symmem_cmp_t cmp, uint64_t value,
                                      nv_stream_t s)
{
    (void)g;
    libs.signal_wait_until_on_stream(sig, (int)cmp, value, s);
    return SYMMEM_OK;
}

static symmem_status_t nv_signal_fetch(gpu_t *g, const uint64_t *sig, uint64_t *value_p)
{
    (void)g;
    *value_p = libs.signal_fetch(sig);
    return SYMMEM_OK;
}

/* ---- collectives ---- */

typedef int (*nv_reduce_func_t)(nv_team_t, void *, const void *, size_t, nv_stream_t);
typedef int (*nv_broadcast_func_t)(nv_team_t, void *, const void *, size_t, int, nv_stream_t);

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
    *slot = *func_p = symmem__gpu_libs_symbol(&libs, name);
    if (*func_p != NULL) return SYMMEM_OK;
    return ERROR(SYMMEM_ERR_UNSUPPORTED, "%s: the gpu backend's NVSHMEM has no %s", call, name);
}

static symmem_status_t nv_result(const char *call, int rc)
{
    return rc == 0 ? SYMMEM_OK : ERROR(SYMMEM_ERR_BACKEND, "%s: NVSHMEM returned %d", call, rc);
}

/* barrier_all, sync_all, barrier and sync: NVSHMEM's world forms return nothing. */
static symmem_status_t nv_sync(gpu_t *g, const char *call, symmem_call_kind_t kind,
                               const symmem_team_view_t *team, nv_stream_t s)
{
    (void)g;
    switch (kind) {
    case SYMMEM_CALL_BARRIER_ALL: libs.barrier_all_on_stream(s); return SYMMEM_OK;
    case SYMMEM_CALL_SYNC_ALL: libs.sync_all_on_stream(s); return SYMMEM_OK;
    case SYMMEM_CALL_BARRIER: return nv_result(call, libs.barrier_on_stream(team->channel, s));
    default: return nv_result(call, libs.team_sync_on_stream(team->channel, s));
    }
}

/* dtype and op as NVSHMEM names them (bool reduces as uint8, op already
 * turned into one that works on 0 and 1 by collectives.c). */
static symmem_status_t nv_reduce(gpu_t *g, int scatter, const symmem_team_view_t *team, void *dst,
                                 const void *src, size_t nelems, symmem_dtype_t dtype,
                                 symmem_reduce_op_t op, nv_stream_t s)
{
    (void)g;
    static void *found[2][SYMMEM_DTYPE_COUNT][SYMMEM_OP_COUNT]; /* reduce, reducescatter */
    const char *call = scatter ? "reducescatter" : "reduce";
    void *func;
    SYMMEM_CHECK(lookup(call, &found[scatter][dtype][op], &func, "nvshmemx_%s_%s_%s_on_stream",
                        symmem__dtype_info[dtype].nvshmem, symmem__reduce_op_word(op), call));
    return nv_result(call, ((nv_reduce_func_t)func)(team->channel, dst, src, nelems, s));
}

/* Byte-moving collectives use NVSHMEM's forms for the widest unsigned
 * integer that the size and both addresses allow: its kernels copy one
 * element per thread step, so uint8 would move bytes four or eight times
 * slower than uint32 or uint64. kind: SYMMEM_CALL_ALLTOALL, _FCOLLECT or
 * _BROADCAST (each its own function, found once). */
static symmem_status_t nv_move(gpu_t *g, const char *call, symmem_call_kind_t kind,
                               const symmem_team_view_t *team, void *dst, const void *src,
                               size_t nbytes, int root, nv_stream_t s)
{
    (void)g;
    static void *found[SYMMEM_CALL_COUNT][4];
    uintptr_t bits = nbytes | (uintptr_t)dst | (uintptr_t)src;
    int width = bits % 8 == 0 ? 3 : bits % 4 == 0 ? 2 : bits % 2 == 0 ? 1 : 0;
    void *func;
    SYMMEM_CHECK(
        lookup(call, &found[kind][width], &func, "nvshmemx_uint%d_%s_on_stream", 8 << width, call));
    size_t nelems = nbytes >> width;
    int rc = root < 0 ? ((nv_reduce_func_t)func)(team->channel, dst, src, nelems, s)
                      : ((nv_broadcast_func_t)func)(team->channel, dst, src, nelems, root, s);
    return nv_result(call, rc);
}

const gpu_engine_t symmem__gpu_nvshmem_engine = {
    .name = "nvshmem",
    .nvshmem_device_state = 1,
    .start = symmem__nv_start,
    .stop = symmem__nv_stop,
    .final_barrier = symmem__nv_final_barrier,
    .version = symmem__nv_version,
    .alloc = nv_alloc,
    .release = nv_release,
    .ptr = nv_ptr,
    .exchange_start = nv_exchange_start,
    .exchange_finish = nv_exchange_finish,
    .put = nv_put,
    .get = nv_get,
    .put_nbi = nv_put_nbi,
    .get_nbi = nv_get_nbi,
    .quiet = nv_quiet,
    .fence = nv_fence,
    .put_signal = nv_put_signal,
    .signal_wait = nv_signal_wait,
    .signal_fetch = nv_signal_fetch,
    .sync = nv_sync,
    .reduce = nv_reduce,
    .move = nv_move,
    .predefined_teams = symmem__nv_predefined_teams,
    .split_strided = symmem__nv_split_strided,
    .split_2d = symmem__nv_split_2d,
    .team_init = symmem__nv_team_init,
    .team_destroy = symmem__nv_team_destroy,
    .team_meet = symmem__nv_team_meet,
    .register_external = symmem__nv_register_external,
    .unregister_external = symmem__nv_unregister_external,
};

/* Barriers, syncs and collectives on a stream: symmem's own kernels where
 * they serve the team and buffers (own_collectives.c), else NVSHMEM's
 * on-stream forms. NVSHMEM's typed ones (reduce for each dtype and op, the
 * byte movers for each width) are looked up by name on first use and
 * remembered. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpu.h"

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

/* The start of every call here, once the function is known: the context
 * and the stream (symmem__gpu_begin), then the collective's fingerprint
 * published and compared (call_check.c); on failure nothing is launched
 * and the caller's context is back. */
static symmem_status_t start(gpu_t *g, const char *call, symmem_call_kind_t kind,
                             const symmem_team_view_t *team, uint64_t count, int dtype, int op,
                             int root, symmem_stream_t stream, scope_t *scope_p, nv_stream_t *s_p,
                             int *blocking_p, gpu_call_ref_t *ref)
{
    SYMMEM_CHECK(symmem__gpu_begin(g, call, kind, stream, scope_p, s_p, blocking_p));
    symmem_status_t status =
        symmem__gpu_collective_enter(g, call, kind, team, count, dtype, op, root, *blocking_p, ref);
    if (status != SYMMEM_OK) return symmem__gpu_leave(g, *scope_p, status);
    return SYMMEM_OK;
}

/* The end of every call here: NVSHMEM's return code, then the drain of a
 * blocking call, then the caller's context back. */
static symmem_status_t finish(gpu_t *g, scope_t scope, const char *call, int rc, int blocking)
{
    symmem_status_t status = SYMMEM_OK;
    if (rc != 0)
        status = ERROR(SYMMEM_ERR_BACKEND, "%s: NVSHMEM returned %d", call, rc);
    else if (blocking)
        status = symmem__gpu_collective_drain(g, call);
    return symmem__gpu_leave(g, scope, status);
}

/* The same for a call that launched symmem's own kernel (status: how the
 * launch went), which a graph being captured holds without NCCL. */
static symmem_status_t finish_own(gpu_t *g, scope_t scope, nv_stream_t s, const char *call,
                                  symmem_status_t status, int blocking)
{
    if (status != SYMMEM_OK) return symmem__gpu_leave(g, scope, status);
    symmem__gpu_graphs_not_nccl(s);
    return finish(g, scope, call, 0, blocking);
}

/* barrier_all and sync_all: NVSHMEM's world forms, which return nothing. */
static symmem_status_t world(gpu_t *g, const char *call, symmem_call_kind_t kind,
                             void (*func)(nv_stream_t), symmem_stream_t stream)
{
    scope_t scope;
    nv_stream_t s;
    int blocking;
    gpu_call_ref_t ref;
    symmem_team_view_t team = {g->world, g->boot.nranks, g->boot.rank, 0};
    SYMMEM_CHECK(start(g, call, kind, &team, 0, 0, 0, 0, stream, &scope, &s, &blocking, &ref));
    if (symmem__gpu_own_takes(g, &team, NULL, NULL))
        return finish_own(g, scope, s, call, symmem__gpu_own_sync(g, call, &team, s), blocking);
    func(s);
    return finish(g, scope, call, 0, blocking);
}

symmem_status_t symmem__gpu_barrier_all(gpu_t *g, symmem_stream_t stream)
{
    return world(g, "barrier_all", SYMMEM_CALL_BARRIER_ALL, libs.barrier_all_on_stream, stream);
}

symmem_status_t symmem__gpu_sync_all(gpu_t *g, symmem_stream_t stream)
{
    return world(g, "sync_all", SYMMEM_CALL_SYNC_ALL, libs.sync_all_on_stream, stream);
}

/* barrier and sync on a team. */
static symmem_status_t on_team(gpu_t *g, const char *call, symmem_call_kind_t kind,
                               int (*func)(nv_team_t, nv_stream_t), const symmem_team_view_t *team,
                               symmem_stream_t stream)
{
    scope_t scope;
    nv_stream_t s;
    int blocking;
    gpu_call_ref_t ref;
    SYMMEM_CHECK(start(g, call, kind, team, 0, 0, 0, 0, stream, &scope, &s, &blocking, &ref));
    if (symmem__gpu_own_takes(g, team, NULL, NULL))
        return finish_own(g, scope, s, call, symmem__gpu_own_sync(g, call, team, s), blocking);
    return finish(g, scope, call, func(team->channel, s), blocking);
}

symmem_status_t symmem__gpu_barrier(gpu_t *g, const symmem_team_view_t *team,
                                    symmem_stream_t stream)
{
    return on_team(g, "barrier", SYMMEM_CALL_BARRIER, libs.barrier_on_stream, team, stream);
}

symmem_status_t symmem__gpu_sync(gpu_t *g, const symmem_team_view_t *team, symmem_stream_t stream)
{
    return on_team(g, "sync", SYMMEM_CALL_SYNC, libs.team_sync_on_stream, team, stream);
}

/* bool reduces as uint8: sum/max/or are max, prod/min/and are min. */
static symmem_reduce_op_t bool_op(symmem_dtype_t dtype, symmem_reduce_op_t op)
{
    if (dtype != SYMMEM_DTYPE_BOOL) return op;
    switch (op) {
    case SYMMEM_OP_SUM:
    case SYMMEM_OP_MAX:
    case SYMMEM_OP_OR: return SYMMEM_OP_MAX;
    case SYMMEM_OP_PROD:
    case SYMMEM_OP_MIN:
    case SYMMEM_OP_AND: return SYMMEM_OP_MIN;
    default: return SYMMEM_OP_XOR;
    }
}

static const char *reduce_op_name(symmem_dtype_t dtype, symmem_reduce_op_t op)
{
    return symmem__reduce_op_word(bool_op(dtype, op));
}

/* scatter: reducescatter (NVSHMEM's name and ours), else reduce */
static symmem_status_t reduction(gpu_t *g, int scatter, const symmem_team_view_t *team, void *dst,
                                 const void *src, size_t nelems, symmem_dtype_t dtype,
                                 symmem_reduce_op_t op, symmem_stream_t stream)
{
    static void *found[2][SYMMEM_DTYPE_COUNT][SYMMEM_OP_COUNT]; /* reduce, reducescatter */
    const char *call = scatter ? "reducescatter" : "reduce";
    void *func;
    if (lookup(call, &found[scatter][dtype][op], &func, "nvshmemx_%s_%s_%s_on_stream",
               symmem__dtype_info[dtype].nvshmem, reduce_op_name(dtype, op), call) != SYMMEM_OK)
        return SYMMEM_ERR_UNSUPPORTED;
    scope_t scope;
    nv_stream_t s;
    int blocking;
    gpu_call_ref_t ref;
    symmem_call_kind_t which = scatter ? SYMMEM_CALL_REDUCESCATTER : SYMMEM_CALL_REDUCE;
    SYMMEM_CHECK(start(g, call, which, team, nelems, (int)dtype, (int)op, 0, stream, &scope, &s,
                       &blocking, &ref));
    if (nelems > 0 && symmem__gpu_own_reduce_takes(g, scatter, team, dst, src, nelems, dtype)) {
        symmem_dtype_t as = dtype == SYMMEM_DTYPE_BOOL ? SYMMEM_DTYPE_UINT8 : dtype;
        return finish_own(
            g, scope, s, call,
            symmem__gpu_own_reduce(g, scatter, team, dst, src, nelems, as, bool_op(dtype, op), s),
            blocking);
    }
    int rc = ((nv_reduce_func_t)func)(team->channel, dst, src, nelems, s);
    return finish(g, scope, call, rc, blocking);
}

symmem_status_t symmem__gpu_reduce(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                   const void *src, size_t nelems, symmem_dtype_t dtype,
                                   symmem_reduce_op_t op, symmem_stream_t stream)
{
    return reduction(g, 0, team, dst, src, nelems, dtype, op, stream);
}

symmem_status_t symmem__gpu_reducescatter(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                          const void *src, size_t nelems, symmem_dtype_t dtype,
                                          symmem_reduce_op_t op, symmem_stream_t stream)
{
    return reduction(g, 1, team, dst, src, nelems, dtype, op, stream);
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
    scope_t scope;
    nv_stream_t s;
    int blocking;
    gpu_call_ref_t ref;
    static const symmem_call_kind_t kinds[3] = {SYMMEM_CALL_ALLTOALL, SYMMEM_CALL_FCOLLECT,
                                                SYMMEM_CALL_BROADCAST};
    SYMMEM_CHECK(start(g, call, kinds[kind], team, nbytes, 0, 0, root < 0 ? 0 : root, stream,
                       &scope, &s, &blocking, &ref));
    if (nbytes > 0 && symmem__gpu_own_takes(g, team, dst, src))
        return finish_own(g, scope, s, call,
                          symmem__gpu_own_move(g, call, kind, team, dst, src, nbytes, root, s),
                          blocking);
    int rc = root < 0 ? ((nv_reduce_func_t)func)(team->channel, dst, src, nelems, s)
                      : ((nv_broadcast_func_t)func)(team->channel, dst, src, nelems, root, s);
    return finish(g, scope, call, rc, blocking);
}

symmem_status_t symmem__gpu_alltoall(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                     const void *src, size_t nbytes, symmem_stream_t stream)
{
    return move_bytes(g, "alltoall", 0, team, dst, src, nbytes, -1, stream);
}

symmem_status_t symmem__gpu_fcollect(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                     const void *src, size_t nbytes, symmem_stream_t stream)
{
    return move_bytes(g, "fcollect", 1, team, dst, src, nbytes, -1, stream);
}

symmem_status_t symmem__gpu_broadcast(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                      const void *src, size_t nbytes, int root,
                                      symmem_stream_t stream)
{
    return move_bytes(g, "broadcast", 2, team, dst, src, nbytes, root, stream);
}

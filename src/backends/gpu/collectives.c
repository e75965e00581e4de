/* Barriers, syncs and collectives on a stream: symmem's own kernels where
 * they serve the team and buffers (own_collectives.c), else the engine's
 * (NVSHMEM's on-stream forms). */
#include <stdio.h>
#include <string.h>

#include "gpu.h"

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

/* The end of every call here: how the launch went, then the drain of a
 * blocking call, then the caller's context back. */
static symmem_status_t finish(gpu_t *g, scope_t scope, const char *call, symmem_status_t status,
                              int blocking)
{
    if (status == SYMMEM_OK && blocking) status = symmem__gpu_collective_drain(g, call);
    return symmem__gpu_leave(g, scope, status);
}

/* The same for a call that launched symmem's own kernel, which a graph
 * being captured holds without NCCL. */
static symmem_status_t finish_own(gpu_t *g, scope_t scope, nv_stream_t s, const char *call,
                                  symmem_status_t status, int blocking)
{
    if (status == SYMMEM_OK) symmem__gpu_graphs_not_nccl(s);
    return finish(g, scope, call, status, blocking);
}

/* barrier_all, sync_all (team NULL: the world), barrier and sync. */
static symmem_status_t sync_call(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                 const symmem_team_view_t *team, symmem_stream_t stream)
{
    scope_t scope;
    nv_stream_t s;
    int blocking;
    gpu_call_ref_t ref;
    symmem_team_view_t world = {g->world, g->boot.nranks, g->boot.rank, 0};
    if (team == NULL) team = &world;
    SYMMEM_CHECK(start(g, call, kind, team, 0, 0, 0, 0, stream, &scope, &s, &blocking, &ref));
    if (symmem__gpu_own_takes(g, team, NULL, NULL))
        return finish_own(g, scope, s, call, symmem__gpu_own_sync(g, call, team, s), blocking);
    return finish(g, scope, call, g->engine->sync(g, call, kind, team, s), blocking);
}

symmem_status_t symmem__gpu_barrier_all(gpu_t *g, symmem_stream_t stream)
{
    return sync_call(g, "barrier_all", SYMMEM_CALL_BARRIER_ALL, NULL, stream);
}

symmem_status_t symmem__gpu_sync_all(gpu_t *g, symmem_stream_t stream)
{
    return sync_call(g, "sync_all", SYMMEM_CALL_SYNC_ALL, NULL, stream);
}

symmem_status_t symmem__gpu_barrier(gpu_t *g, const symmem_team_view_t *team,
                                    symmem_stream_t stream)
{
    return sync_call(g, "barrier", SYMMEM_CALL_BARRIER, team, stream);
}

symmem_status_t symmem__gpu_sync(gpu_t *g, const symmem_team_view_t *team, symmem_stream_t stream)
{
    return sync_call(g, "sync", SYMMEM_CALL_SYNC, team, stream);
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

/* scatter: reducescatter (NVSHMEM's name and ours), else reduce */
static symmem_status_t reduction(gpu_t *g, int scatter, const symmem_team_view_t *team, void *dst,
                                 const void *src, size_t nelems, symmem_dtype_t dtype,
                                 symmem_reduce_op_t op, symmem_stream_t stream)
{
    const char *call = scatter ? "reducescatter" : "reduce";
    scope_t scope;
    nv_stream_t s;
    int blocking;
    gpu_call_ref_t ref;
    symmem_call_kind_t which = scatter ? SYMMEM_CALL_REDUCESCATTER : SYMMEM_CALL_REDUCE;
    SYMMEM_CHECK(start(g, call, which, team, nelems, (int)dtype, (int)op, 0, stream, &scope, &s,
                       &blocking, &ref));
    symmem_dtype_t as = dtype == SYMMEM_DTYPE_BOOL ? SYMMEM_DTYPE_UINT8 : dtype;
    if (nelems > 0 && symmem__gpu_own_reduce_takes(g, scatter, team, dst, src, nelems, dtype))
        return finish_own(
            g, scope, s, call,
            symmem__gpu_own_reduce(g, scatter, team, dst, src, nelems, as, bool_op(dtype, op), s),
            blocking);
    /* in place without 16-byte packs: symmem's kernel through a private
     * buffer, so that the sum keeps its one order (docs/reproducibility.md) */
    if (nelems > 0 && symmem__gpu_own_takes(g, team, dst, src))
        return finish_own(g, scope, s, call,
                          symmem__gpu_own_reduce_staged(g, scatter, team, dst, src, nelems, as,
                                                        bool_op(dtype, op), s),
                          blocking);
    symmem_status_t status =
        g->engine->reduce(g, scatter, team, dst, src, nelems, as, bool_op(dtype, op), s);
    return finish(g, scope, call, status, blocking);
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

/* kind: SYMMEM_CALL_ALLTOALL, _FCOLLECT or _BROADCAST (root -1 for the
 * first two). */
static symmem_status_t move_bytes(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                  const symmem_team_view_t *team, void *dst, const void *src,
                                  size_t nbytes, int root, symmem_stream_t stream)
{
    scope_t scope;
    nv_stream_t s;
    int blocking;
    gpu_call_ref_t ref;
    SYMMEM_CHECK(start(g, call, kind, team, nbytes, 0, 0, root < 0 ? 0 : root, stream, &scope, &s,
                       &blocking, &ref));
    if (nbytes > 0 && symmem__gpu_own_takes(g, team, dst, src))
        return finish_own(g, scope, s, call,
                          symmem__gpu_own_move(g, call, kind, team, dst, src, nbytes, root, s),
                          blocking);
    symmem_status_t status = g->engine->move(g, call, kind, team, dst, src, nbytes, root, s);
    return finish(g, scope, call, status, blocking);
}

symmem_status_t symmem__gpu_alltoall(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                     const void *src, size_t nbytes, symmem_stream_t stream)
{
    return move_bytes(g, "alltoall", SYMMEM_CALL_ALLTOALL, team, dst, src, nbytes, -1, stream);
}

symmem_status_t symmem__gpu_fcollect(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                     const void *src, size_t nbytes, symmem_stream_t stream)
{
    return move_bytes(g, "fcollect", SYMMEM_CALL_FCOLLECT, team, dst, src, nbytes, -1, stream);
}

symmem_status_t symmem__gpu_broadcast(gpu_t *g, const symmem_team_view_t *team, void *dst,
                                      const void *src, size_t nbytes, int root,
                                      symmem_stream_t stream)
{
    return move_bytes(g, "broadcast", SYMMEM_CALL_BROADCAST, team, dst, src, nbytes, root, stream);
}

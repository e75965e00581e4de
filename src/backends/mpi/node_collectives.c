/* Collectives among PEs of one node (the node path), as the cpu engine
 * makes them: after a node barrier (node.c) every member reads its peers'
 * sources straight from their mappings and writes its own part of the
 * result, so the work is spread over all members; a second barrier says
 * every part is written. The barriers carry the fingerprint: PEs in
 * different collectives raise before any data moves. Elements are reduced
 * by the cpu engine's loops (core/reduce_kernels.c, compiled into this
 * library too): the same results as the cpu backend's, and no MPI call per
 * peer and chunk (MPI_Reduce_local was 1.2-1.3x the cpu backend's time). */
#include <string.h>

#include "../../core/reduce_kernels.h"
#include "../../core/vocab.h"
#include "mpi_backend.h"

/* Reduced through a cache-sized buffer (m->node_tmp). */
#define CHUNK_BYTES MPI_NODE_TMP_BYTES

static const char *at(const mpi_t *m, const void *sym, int pe)
{
    return mpi_ptr(m, sym, pe);
}

/* Reduces elements [first, first + count) of every member's src (at
 * src_offset elements into it), in the members' order
 * (symmem__reduce_members), and writes them to dst (at the same elements,
 * less src_offset) on every member (all) or on this PE. */
static void reduce_range(mpi_t *m, const symmem_team_view_t *team, void *dst, const void *src,
                         size_t first, size_t count, size_t src_offset, symmem_dtype_t dtype,
                         symmem_reduce_op_t op, int all)
{
    size_t size = symmem__dtype_bytes(dtype), per_chunk = CHUNK_BYTES / size;
    const void *srcs[team->n];
    for (size_t done = 0; done < count; done += per_chunk) {
        size_t n = count - done < per_chunk ? count - done : per_chunk;
        size_t from = (src_offset + first + done) * size, to = (first + done) * size;
        for (int j = 0; j < team->n; j++) srcs[j] = at(m, src, mpi_member(team, j)) + from;
        symmem__reduce_members(m->node_tmp, srcs, team->n, n, dtype, op);
        if (!all) {
            memcpy((char *)dst + to, m->node_tmp, n * size);
            continue;
        }
        for (int j = 0; j < team->n; j++)
            memcpy((char *)at(m, dst, mpi_member(team, j)) + to, m->node_tmp, n * size);
    }
}

symmem_status_t symmem__mpi_node_reduce(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                        const void *src, size_t nelems, symmem_dtype_t dtype,
                                        symmem_reduce_op_t op)
{
    symmem_call_t call = mpi_call(SYMMEM_CALL_REDUCE, team, nelems, (int)dtype, (int)op, 0);
    SYMMEM_CHECK(symmem__mpi_node_barrier(m, team, call));
    /* Our slice of the result, written into every member's dst (in place
     * too: each slice is read whole, chunk by chunk, before it is written). */
    size_t first = nelems * (size_t)team->me / (size_t)team->n;
    size_t last = nelems * (size_t)(team->me + 1) / (size_t)team->n;
    reduce_range(m, team, dst, src, first, last - first, 0, dtype, op, 1);
    return symmem__mpi_node_barrier(m, team, call);
}

symmem_status_t symmem__mpi_node_reducescatter(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                               const void *src, size_t nelems, symmem_dtype_t dtype,
                                               symmem_reduce_op_t op)
{
    symmem_call_t call = mpi_call(SYMMEM_CALL_REDUCESCATTER, team, nelems, (int)dtype, (int)op, 0);
    SYMMEM_CHECK(symmem__mpi_node_barrier(m, team, call));
    reduce_range(m, team, dst, src, 0, nelems, (size_t)team->me * nelems, dtype, op, 0);
    return symmem__mpi_node_barrier(m, team, call);
}

/* alltoall and fcollect: nbytes from each member. */
symmem_status_t symmem__mpi_node_move(mpi_t *m, const symmem_team_view_t *team,
                                      symmem_call_kind_t kind, void *dst, const void *src,
                                      size_t nbytes)
{
    symmem_call_t call = mpi_call(kind, team, nbytes, 0, 0, 0);
    SYMMEM_CHECK(symmem__mpi_node_barrier(m, team, call));
    size_t from = kind == SYMMEM_CALL_ALLTOALL ? (size_t)team->me * nbytes : 0;
    for (int j = 0; j < team->n; j++)
        memcpy((char *)dst + (size_t)j * nbytes, at(m, src, mpi_member(team, j)) + from, nbytes);
    return symmem__mpi_node_barrier(m, team, call);
}

symmem_status_t symmem__mpi_node_broadcast(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                           const void *src, size_t nbytes, int root)
{
    symmem_call_t call = mpi_call(SYMMEM_CALL_BROADCAST, team, nbytes, 0, 0, root);
    SYMMEM_CHECK(symmem__mpi_node_barrier(m, team, call));
    if (dst != src || team->me != root) memmove(dst, at(m, src, mpi_member(team, root)), nbytes);
    return symmem__mpi_node_barrier(m, team, call);
}

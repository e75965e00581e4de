/* Collectives for shared memory: after a barrier every member reads its
 * peers' sources straight from their mappings and produces its own part of
 * the result, so the work is spread over all members (and their cores). */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/reduce_kernels.h"
#include "cpu.h"

/* Elements are reduced through a cache-sized buffer. */
#define CHUNK_BYTES (64 * 1024)

symmem_status_t symmem__cpu_team_barrier(cpu_t *cpu, const symmem_team_view_t *team,
                                         symmem_stream_t stream)
{
    (void)stream;
    atomic_thread_fence(memory_order_seq_cst); /* copies are complete: quiet */
    return symmem__cpu_barrier(cpu, team, cpu_call(SYMMEM_CALL_BARRIER, team, 0, 0, 0, 0));
}

symmem_status_t symmem__cpu_team_sync(cpu_t *cpu, const symmem_team_view_t *team,
                                      symmem_stream_t stream)
{
    (void)stream;
    return symmem__cpu_barrier(cpu, team, cpu_call(SYMMEM_CALL_SYNC, team, 0, 0, 0, 0));
}

/* Reduces elements [first, first+count) of every member's src (each at
 * src_offset elements into its src) into tmp, in the members' order
 * (symmem__reduce_members), then copies tmp to each destination in dsts
 * (ndst of them, at dst_offset elements). srcs: room for a pointer a
 * member. */
static void reduce_range(cpu_t *cpu, const symmem_team_view_t *team, char *const *dsts, int ndst,
                         const void *src, size_t first, size_t count, size_t src_offset,
                         size_t dst_offset, symmem_dtype_t dtype, symmem_reduce_op_t op, char *tmp,
                         const void **srcs)
{
    size_t size = symmem_dtype_size(dtype);
    size_t per_chunk = CHUNK_BYTES / size;
    for (size_t done = 0; done < count; done += per_chunk) {
        size_t n = count - done < per_chunk ? count - done : per_chunk;
        size_t at = (first + done) * size;
        for (int j = 0; j < team->n; j++)
            srcs[j] = cpu_peer(cpu, src, team->members[j]) + src_offset * size + at;
        symmem__reduce_members(tmp, srcs, team->n, n, dtype, op);
        for (int d = 0; d < ndst; d++)
            symmem__cpu_copy(dsts[d] + dst_offset * size + at, tmp, n * size,
                             count * size * (size_t)ndst);
    }
}

symmem_status_t symmem__cpu_reduce(cpu_t *cpu, const symmem_team_view_t *team, void *dst,
                                   const void *src, size_t nelems, symmem_dtype_t dtype,
                                   symmem_reduce_op_t op, symmem_stream_t stream)
{
    (void)stream;
    char *tmp = aligned_alloc(64, CHUNK_BYTES);
    char **dsts = malloc((size_t)team->n * sizeof(char *));
    const void **srcs = malloc((size_t)team->n * sizeof(void *));
    if (tmp == NULL || dsts == NULL || srcs == NULL) {
        free(tmp);
        free(dsts);
        free(srcs);
        return symmem__error(SYMMEM_ERR_NO_MEMORY, "reduce: out of host memory");
    }
    for (int j = 0; j < team->n; j++) dsts[j] = cpu_peer(cpu, dst, team->members[j]);
    symmem_call_t call = cpu_call(SYMMEM_CALL_REDUCE, team, nelems, (int)dtype, (int)op, 0);
    symmem_status_t status = symmem__cpu_barrier(cpu, team, call);
    if (status == SYMMEM_OK) {
        /* Our slice of the result, written into every member's dst. */
        size_t first = nelems * (size_t)team->me / (size_t)team->n;
        size_t last = nelems * (size_t)(team->me + 1) / (size_t)team->n;
        reduce_range(cpu, team, dsts, team->n, src, first, last - first, 0, 0, dtype, op, tmp,
                     srcs);
        status = symmem__cpu_barrier(cpu, team, call);
    }
    free(srcs);
    free(dsts);
    free(tmp);
    return status;
}

symmem_status_t symmem__cpu_reducescatter(cpu_t *cpu, const symmem_team_view_t *team, void *dst,
                                          const void *src, size_t nelems, symmem_dtype_t dtype,
                                          symmem_reduce_op_t op, symmem_stream_t stream)
{
    (void)stream;
    char *tmp = aligned_alloc(64, CHUNK_BYTES);
    const void **srcs = malloc((size_t)team->n * sizeof(void *));
    if (tmp == NULL || srcs == NULL) {
        free(tmp);
        free(srcs);
        return symmem__error(SYMMEM_ERR_NO_MEMORY, "reducescatter: out of host memory");
    }
    symmem_call_t call = cpu_call(SYMMEM_CALL_REDUCESCATTER, team, nelems, (int)dtype, (int)op, 0);
    symmem_status_t status = symmem__cpu_barrier(cpu, team, call);
    if (status == SYMMEM_OK) {
        char *mine = dst;
        reduce_range(cpu, team, &mine, 1, src, 0, nelems, (size_t)team->me * nelems, 0, dtype, op,
                     tmp, srcs);
        status = symmem__cpu_barrier(cpu, team, call);
    }
    free(srcs);
    free(tmp);
    return status;
}

symmem_status_t symmem__cpu_alltoall(cpu_t *cpu, const symmem_team_view_t *team, void *dst,
                                     const void *src, size_t nbytes, symmem_stream_t stream)
{
    (void)stream;
    symmem_call_t call = cpu_call(SYMMEM_CALL_ALLTOALL, team, nbytes, 0, 0, 0);
    SYMMEM_CHECK(symmem__cpu_barrier(cpu, team, call));
    for (int j = 0; j < team->n; j++)
        symmem__cpu_copy((char *)dst + (size_t)j * nbytes,
                         cpu_peer(cpu, src, team->members[j]) + (size_t)team->me * nbytes, nbytes,
                         nbytes * (size_t)team->n);
    return symmem__cpu_barrier(cpu, team, call);
}

symmem_status_t symmem__cpu_fcollect(cpu_t *cpu, const symmem_team_view_t *team, void *dst,
                                     const void *src, size_t nbytes, symmem_stream_t stream)
{
    (void)stream;
    symmem_call_t call = cpu_call(SYMMEM_CALL_FCOLLECT, team, nbytes, 0, 0, 0);
    SYMMEM_CHECK(symmem__cpu_barrier(cpu, team, call));
    for (int j = 0; j < team->n; j++)
        memmove((char *)dst + (size_t)j * nbytes, cpu_peer(cpu, src, team->members[j]), nbytes);
    return symmem__cpu_barrier(cpu, team, call);
}

symmem_status_t symmem__cpu_broadcast(cpu_t *cpu, const symmem_team_view_t *team, void *dst,
                                      const void *src, size_t nbytes, int root,
                                      symmem_stream_t stream)
{
    (void)stream;
    symmem_call_t call = cpu_call(SYMMEM_CALL_BROADCAST, team, nbytes, 0, 0, root);
    SYMMEM_CHECK(symmem__cpu_barrier(cpu, team, call));
    const char *from = cpu_peer(cpu, src, team->members[root]);
    if (from != dst) memmove(dst, from, nbytes);
    return symmem__cpu_barrier(cpu, team, call);
}

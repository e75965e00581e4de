/* Barriers and collectives: among PEs of one node over the shared window
 * (node.c, node_collectives.c); else on the team's communicator, small
 * reductions by one exchange (exchange.c), the others over RMA
 * (rma_reduce.c), the rest MPI's non-blocking collectives, polled
 * (progress.c), each after its members compared their fingerprints
 * (calls.c), which for a barrier is the barrier itself. Where
 * a destination overlaps its source (MPI forbids it) the source is copied
 * first; a reduction in place is MPI_IN_PLACE. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/vocab.h"
#include "mpi_backend.h"

/* Every member of team makes the collective fp (SYMMEM_CHECK on), before
 * any of MPI's: by one exchange where the team is small, else MPI's. */
static symmem_status_t check(mpi_t *m, const symmem_team_view_t *team, symmem_call_t fp)
{
    if (!m->check_calls) return SYMMEM_OK;
    if (symmem__mpi_exchange_fits(team)) return symmem__mpi_exchange(m, team, fp, NULL, 0, NULL);
    return symmem__mpi_check_call(m, team, fp, 0);
}

/* Meets every member of team; quiet first for a barrier. */
static symmem_status_t meet(mpi_t *m, const symmem_team_view_t *team, symmem_call_kind_t kind,
                            int quiet)
{
    if (quiet) SYMMEM_CHECK(symmem__mpi_quiet(m, SYMMEM_STREAM_NONE));
    SYMMEM_CHECK(symmem__mpi_meet(m, team, mpi_call(kind, team, 0, 0, 0, 0), m->check_calls));
    MPI_Win_sync(m->win); /* what the others stored before the barrier, into our view */
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_barrier_all(symmem_backend_t *be, symmem_stream_t stream)
{
    (void)stream;
    symmem_team_view_t view;
    return meet(be, symmem__mpi_world_view(be, &view), SYMMEM_CALL_BARRIER_ALL, 1);
}

symmem_status_t symmem__mpi_sync_all(symmem_backend_t *be, symmem_stream_t stream)
{
    (void)stream;
    symmem_team_view_t view;
    return meet(be, symmem__mpi_world_view(be, &view), SYMMEM_CALL_SYNC_ALL, 0);
}

symmem_status_t symmem__mpi_barrier(symmem_backend_t *be, const symmem_team_view_t *team,
                                    symmem_stream_t stream)
{
    (void)stream;
    return meet(be, team, SYMMEM_CALL_BARRIER, 1);
}

symmem_status_t symmem__mpi_sync(symmem_backend_t *be, const symmem_team_view_t *team,
                                 symmem_stream_t stream)
{
    (void)stream;
    return meet(be, team, SYMMEM_CALL_SYNC, 0);
}

/* Whether [a, a + an) and [b, b + bn) share a byte. */
static int overlap(const void *a, size_t an, const void *b, size_t bn)
{
    return (const char *)a < (const char *)b + bn && (const char *)b < (const char *)a + an;
}

/* src, or a private copy of it where it overlaps dst; *copy_p: free it. */
static symmem_status_t apart(const char *call, const void *src, size_t src_bytes, const void *dst,
                             size_t dst_bytes, const void **src_p, void **copy_p)
{
    *copy_p = NULL;
    *src_p = src;
    if (!overlap(src, src_bytes, dst, dst_bytes)) return SYMMEM_OK;
    *copy_p = malloc(src_bytes ? src_bytes : 1);
    if (*copy_p == NULL)
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    memcpy(*copy_p, src, src_bytes);
    *src_p = *copy_p;
    return SYMMEM_OK;
}

static symmem_status_t too_many(const char *call, size_t count)
{
    return MPI_CORE->error(SYMMEM_ERR_INVALID,
                           "%s: %zu elements or bytes is more than the mpi backend moves in "
                           "one collective (%d, MPI's int count)",
                           call, count, INT_MAX);
}

/* The collective's start (one of MPI's I-collectives, on team's
 * communicator, for fingerprint fp), then its wait, a meeting. */
static symmem_status_t finish(mpi_t *m, const symmem_team_view_t *team, symmem_call_t fp, int rc,
                              MPI_Request *req, void *copy)
{
    const char *call = symmem__mpi_call_name(fp);
    symmem_status_t status = symmem__mpi_failed(rc, call, "the collective");
    /* begin fails only on a PE that has left, which the check before
     * found already where SYMMEM_CHECK is on */
    if (rc == MPI_SUCCESS && (status = symmem__mpi_meeting_begin(m, team, fp)) == SYMMEM_OK) {
        status = symmem__mpi_wait(m, call, req);
        symmem__mpi_meeting_end(m, status);
    }
    if (status == SYMMEM_OK || rc != MPI_SUCCESS) free(copy); /* else MPI may still read it */
    MPI_Win_sync(m->win);
    return status;
}

/* Reductions are symmem's own on every path, never MPI's: MPI promises no
 * order (docs/reproducibility.md wants one), and Open MPI 5's MPI_SUM of
 * 8- and 16-bit integers saturates where NumPy and symmem wrap. */
symmem_status_t symmem__mpi_reduce(symmem_backend_t *be, const symmem_team_view_t *team, void *dst,
                                   const void *src, size_t nelems, symmem_dtype_t dtype,
                                   symmem_reduce_op_t op, symmem_stream_t stream)
{
    (void)stream;
    mpi_t *m = be;
    if (symmem__mpi_on_node(m, team))
        return symmem__mpi_node_reduce(m, team, dst, src, nelems, dtype, op);
    size_t size = symmem__dtype_bytes((int)dtype);
    if (symmem__mpi_exchange_fits(team) && nelems <= MPI_EXCHANGE_DATA / size)
        return symmem__mpi_exchange_reduce(m, team, dst, src, nelems, nelems * size, dtype, op);
    return symmem__mpi_rma_reduce(m, team, dst, src, nelems, dtype, op, 0);
}

symmem_status_t symmem__mpi_reducescatter(symmem_backend_t *be, const symmem_team_view_t *team,
                                          void *dst, const void *src, size_t nelems,
                                          symmem_dtype_t dtype, symmem_reduce_op_t op,
                                          symmem_stream_t stream)
{
    (void)stream;
    mpi_t *m = be;
    if (symmem__mpi_on_node(m, team))
        return symmem__mpi_node_reducescatter(m, team, dst, src, nelems, dtype, op);
    return symmem__mpi_rma_reduce(m, team, dst, src, nelems, dtype, op, 1);
}

/* alltoall and fcollect: nbytes to or from each member. */
static symmem_status_t move(mpi_t *m, const symmem_team_view_t *team, symmem_call_kind_t kind,
                            void *dst, const void *src, size_t nbytes)
{
    if (symmem__mpi_on_node(m, team)) return symmem__mpi_node_move(m, team, kind, dst, src, nbytes);
    symmem_call_t fp = mpi_call(kind, team, nbytes, 0, 0, 0);
    const char *call = symmem__mpi_call_name(fp);
    MPI_Comm comm = m->teams[team->channel];
    SYMMEM_CHECK(check(m, team, fp));
    if (nbytes > INT_MAX) return too_many(call, nbytes);
    size_t all = nbytes * (size_t)team->n;
    int count = (int)nbytes;
    const void *from;
    void *copy;
    SYMMEM_CHECK(
        apart(call, src, kind == SYMMEM_CALL_ALLTOALL ? all : nbytes, dst, all, &from, &copy));
    MPI_Request req;
    int rc = kind == SYMMEM_CALL_ALLTOALL
                 ? MPI_Ialltoall(from, count, MPI_BYTE, dst, count, MPI_BYTE, comm, &req)
                 : MPI_Iallgather(from, count, MPI_BYTE, dst, count, MPI_BYTE, comm, &req);
    return finish(m, team, fp, rc, &req, copy);
}

symmem_status_t symmem__mpi_alltoall(symmem_backend_t *be, const symmem_team_view_t *team,
                                     void *dst, const void *src, size_t nbytes,
                                     symmem_stream_t stream)
{
    (void)stream;
    return move(be, team, SYMMEM_CALL_ALLTOALL, dst, src, nbytes);
}

symmem_status_t symmem__mpi_fcollect(symmem_backend_t *be, const symmem_team_view_t *team,
                                     void *dst, const void *src, size_t nbytes,
                                     symmem_stream_t stream)
{
    (void)stream;
    return move(be, team, SYMMEM_CALL_FCOLLECT, dst, src, nbytes);
}

symmem_status_t symmem__mpi_broadcast(symmem_backend_t *be, const symmem_team_view_t *team,
                                      void *dst, const void *src, size_t nbytes, int root,
                                      symmem_stream_t stream)
{
    (void)stream;
    mpi_t *m = be;
    const char *call = "broadcast";
    if (symmem__mpi_on_node(m, team))
        return symmem__mpi_node_broadcast(m, team, dst, src, nbytes, root);
    symmem_call_t fp = mpi_call(SYMMEM_CALL_BROADCAST, team, nbytes, 0, 0, root);
    MPI_Comm comm = m->teams[team->channel];
    SYMMEM_CHECK(check(m, team, fp));
    if (nbytes > INT_MAX) return too_many(call, nbytes);
    if (team->me == root && src != dst) memmove(dst, src, nbytes);
    MPI_Request req;
    int rc = MPI_Ibcast(dst, (int)nbytes, MPI_BYTE, root, comm, &req);
    return finish(m, team, fp, rc, &req, NULL);
}

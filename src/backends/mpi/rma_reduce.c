/* Reductions across hosts (but a small team's small ones: exchange.c) over
 * RMA: a reduce-scatter, then (reduce) an all-gather, both by MPI_Rget from
 * the other members' copies of src and dst. The core's checks put both on
 * the symmetric heap, in place or apart.
 *
 *   meet;  each member gets its slice of every other member's src (for
 *          reducescatter: its part), chunk by chunk, two chunks in flight,
 *          and reduces them in the members' order into its dst;
 *   meet;  (reduce) each member gets every other member's slice of dst;
 *          meet (reduce only): nobody still reads this PE's dst.
 *
 * A slice is reduced by one member, in the members' order (the one order of
 * docs/reproducibility.md), so all members get the same bits. In
 * place (dst == src) a member writes only its own slice before the second
 * meeting, and the others read only their own slices of its src. Each get
 * reads (n - 1) / n of the data each way, what a reduce-scatter/all-gather
 * all-reduce sends; on one host (Open MPI's osc/sm) a get is a copy, and
 * this beat MPI_Allreduce (docs/benchmarks.md). Every wait is polled
 * (progress.c), so a dead PE or SYMMEM_TIMEOUT ends it. */
#include <stdlib.h>
#include <string.h>

#include "../../core/reduce_kernels.h"
#include "../../core/vocab.h"
#include "mpi_backend.h"

/* A member's chunk in one of the two buffers: 256 KiB, less where the team
 * is large enough that the buffers would pass 16 MiB. */
#define CHUNK_BYTES ((size_t)256 * 1024)
#define SCRATCH_MAX ((size_t)16 << 20)
#define CHUNK_MIN ((size_t)4096)

/* Every member of team is here: their stores before, into everyone's view. */
static symmem_status_t meet(mpi_t *m, const symmem_team_view_t *team, symmem_call_t fp, int first)
{
    MPI_Win_sync(m->win);
    SYMMEM_CHECK(symmem__mpi_meet(m, team, fp, first && m->check_calls));
    MPI_Win_sync(m->win);
    return SYMMEM_OK;
}

static symmem_status_t wait_gets(mpi_t *m, const char *call, MPI_Request *reqs, int count)
{
    int rc;
    SYMMEM_CHECK(symmem__mpi_wait_all(m, call, reqs, count, &rc));
    if (rc != MPI_SUCCESS) {
        SYMMEM_CHECK(symmem__mpi_peers_check(m, call)); /* a dead PE says more than MPI */
        return symmem__mpi_failed(rc, call, "MPI_Rget");
    }
    return SYMMEM_OK;
}

/* nbytes (at most INT_MAX) from symmetric sym on pe into local. */
static int rget(mpi_t *m, void *local, const void *sym, size_t nbytes, int pe, MPI_Request *req)
{
    return MPI_Rget(local, (int)nbytes, MPI_BYTE, pe, mpi_disp(m, sym, pe), (int)nbytes, MPI_BYTE,
                    m->win, req);
}

/* Two buffers of n chunks: member i's chunk in buffer b at (b * n + i) * chunk. */
static symmem_status_t scratch(mpi_t *m, const char *call, int n, size_t chunk, char **tmp_p)
{
    size_t need = 2 * (size_t)n * chunk;
    if (m->rma_tmp_bytes < need) {
        free(m->rma_tmp);
        m->rma_tmp_bytes = 0;
        if ((m->rma_tmp = aligned_alloc(64, need)) == NULL)
            return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
        m->rma_tmp_bytes = need;
    }
    *tmp_p = m->rma_tmp;
    return SYMMEM_OK;
}

typedef struct {
    const symmem_team_view_t *team;
    char *dst;       /* this PE's dst: where its slice goes */
    const char *src; /* every member's src from which this PE's slice comes (symmetric) */
    size_t size;     /* bytes of an element */
    size_t chunk;    /* bytes of a member's chunk: a multiple of size */
    symmem_dtype_t dtype;
    symmem_reduce_op_t op;
} slice_job_t;

/* Gets chunk [at, at + bytes) of every other member's src into buffer b. */
static int start_chunk(mpi_t *m, const slice_job_t *job, char *tmp, int b, size_t at, size_t bytes,
                       MPI_Request *reqs)
{
    const symmem_team_view_t *team = job->team;
    int count = 0;
    for (int i = 0; i < team->n; i++) {
        if (i == team->me) continue;
        char *to = tmp + ((size_t)b * (size_t)team->n + (size_t)i) * job->chunk;
        int rc = rget(m, to, job->src + at, bytes, mpi_member(team, i), &reqs[count]);
        if (rc != MPI_SUCCESS) return rc;
        count++;
    }
    return MPI_SUCCESS;
}

/* dst[at, at + bytes) = member 0's op member 1's op ..., in the members'
 * order (symmem__reduce_members: dst may be this PE's src, as in place),
 * this PE's own from src, the others' from buffer b. */
static void reduce_chunk(const slice_job_t *job, char *tmp, int b, size_t at, size_t bytes)
{
    const symmem_team_view_t *team = job->team;
    char *slots = tmp + (size_t)b * (size_t)team->n * job->chunk;
    const void *srcs[team->n];
    for (int i = 0; i < team->n; i++)
        srcs[i] = i == team->me ? job->src + at : slots + (size_t)i * job->chunk;
    symmem__reduce_members(job->dst + at, srcs, team->n, bytes / job->size, job->dtype, job->op);
}

/* This PE's slice: chunk k + 1's gets in flight while chunk k is reduced. */
static symmem_status_t reduce_slice(mpi_t *m, const char *call, slice_job_t *job, size_t bytes)
{
    int n = job->team->n;
    size_t chunk = SCRATCH_MAX / (2 * (size_t)n);
    chunk = chunk > CHUNK_BYTES ? CHUNK_BYTES : chunk < CHUNK_MIN ? CHUNK_MIN : chunk;
    chunk = chunk / 64 * 64 / job->size * job->size; /* elements of at most 8 bytes */
    job->chunk = chunk;
    char *tmp = NULL;
    SYMMEM_CHECK(scratch(m, call, n, chunk, &tmp));
    MPI_Request reqs[2][n > 1 ? n - 1 : 1];
    int pending = bytes > 0, rc = MPI_SUCCESS;
    if (pending) rc = start_chunk(m, job, tmp, 0, 0, bytes < chunk ? bytes : chunk, reqs[0]);
    symmem_status_t status = SYMMEM_OK;
    for (size_t at = 0, k = 0; at < bytes && rc == MPI_SUCCESS; at += chunk, k++) {
        size_t len = bytes - at < chunk ? bytes - at : chunk, next = at + len;
        status = wait_gets(m, call, reqs[k % 2], n - 1);
        if (status != SYMMEM_OK) break;
        if (next < bytes) {
            size_t next_len = bytes - next < chunk ? bytes - next : chunk;
            rc = start_chunk(m, job, tmp, (int)((k + 1) % 2), next, next_len, reqs[(k + 1) % 2]);
        }
        reduce_chunk(job, tmp, (int)(k % 2), at, len);
    }
    if (status == SYMMEM_OK && rc != MPI_SUCCESS) status = symmem__mpi_failed(rc, call, "MPI_Rget");
    if (status != SYMMEM_OK) { /* gets may still land there: the buffer stays MPI's */
        m->rma_tmp = NULL;
        m->rma_tmp_bytes = 0;
    }
    return status;
}

/* [*lo, *hi) in elements: slice i of nelems among n, the first nelems % n one longer. */
static void slice_of(size_t nelems, int n, int i, size_t *lo, size_t *hi)
{
    size_t q = nelems / (size_t)n, r = nelems % (size_t)n, at = (size_t)i;
    *lo = at * q + (at < r ? at : r);
    *hi = *lo + q + (at < r ? 1 : 0);
}

#define GATHER_PIECE ((size_t)1 << 30) /* MPI counts are ints */
#define GATHER_IN_FLIGHT 32

/* Every other member's slice of dst, from its dst into this PE's. */
static symmem_status_t gather(mpi_t *m, const char *call, const symmem_team_view_t *team, char *dst,
                              size_t nelems, size_t size)
{
    MPI_Request reqs[GATHER_IN_FLIGHT];
    int count = 0;
    for (int i = 0; i < team->n; i++) {
        size_t lo, hi;
        slice_of(nelems, team->n, i, &lo, &hi);
        for (size_t at = lo * size; i != team->me && at < hi * size; at += GATHER_PIECE) {
            if (count == GATHER_IN_FLIGHT) {
                SYMMEM_CHECK(wait_gets(m, call, reqs, count));
                count = 0;
            }
            size_t len = hi * size - at < GATHER_PIECE ? hi * size - at : GATHER_PIECE;
            int rc = rget(m, dst + at, dst + at, len, mpi_member(team, i), &reqs[count]);
            if (rc != MPI_SUCCESS) {
                if (count > 0) SYMMEM_CHECK(wait_gets(m, call, reqs, count));
                return symmem__mpi_failed(rc, call, "MPI_Rget");
            }
            count++;
        }
    }
    return wait_gets(m, call, reqs, count);
}

symmem_status_t symmem__mpi_rma_reduce(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                       const void *src, size_t nelems, symmem_dtype_t dtype,
                                       symmem_reduce_op_t op, int scatter)
{
    symmem_call_kind_t kind = scatter ? SYMMEM_CALL_REDUCESCATTER : SYMMEM_CALL_REDUCE;
    symmem_call_t fp = mpi_call(kind, team, nelems, (int)dtype, (int)op, 0);
    const char *call = symmem__mpi_call_name(fp);
    size_t size = symmem__dtype_bytes((int)dtype), lo = 0, hi = nelems;
    SYMMEM_CHECK(meet(m, team, fp, 1));
    if (!scatter) slice_of(nelems, team->n, team->me, &lo, &hi);
    /* reduce: slice me of every src into dst's; reducescatter: part me of every src into dst */
    size_t from = scatter ? (size_t)team->me * nelems * size : lo * size;
    slice_job_t job = {
        team, (char *)dst + (scatter ? 0 : from), (const char *)src + from, size, 0, dtype, op};
    SYMMEM_CHECK(reduce_slice(m, call, &job, (hi - lo) * size));
    SYMMEM_CHECK(meet(m, team, fp, 0));
    if (scatter) return SYMMEM_OK; /* the others have read this PE's src */
    SYMMEM_CHECK(gather(m, call, team, dst, nelems, size));
    return meet(m, team, fp, 0); /* the others have read this PE's dst */
}

/* The symmetric heap: one MPI window, locked for every PE once at init
 * (a passive-target epoch that lasts the job), and on a node the PEs'
 * shared window, so that their heaps are loads and stores for each other.
 * malloc and free are collective; every PE computes the same offsets
 * (core/heap_alloc.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_backend.h"

/* The window calls, for the helper thread (helper.c): each is collective
 * and has no non-blocking form. */
enum { WIN_ALLOCATE_SHARED, WIN_ALLOCATE, WIN_CREATE, WIN_FREE };
typedef struct {
    int kind;
    MPI_Aint bytes;
    MPI_Info info;
    MPI_Comm comm;
    void *base; /* in for WIN_CREATE, else out */
    MPI_Win win;
} window_job_t;

static const char *const window_calls[] = {"MPI_Win_allocate_shared", "MPI_Win_allocate",
                                           "MPI_Win_create", "MPI_Win_free"};

static int window_run(void *arg)
{
    window_job_t *job = arg;
    switch (job->kind) {
    case WIN_ALLOCATE_SHARED:
        return MPI_Win_allocate_shared(job->bytes, 1, job->info, job->comm, &job->base, &job->win);
    case WIN_ALLOCATE:
        return MPI_Win_allocate(job->bytes, 1, job->info, job->comm, &job->base, &job->win);
    case WIN_CREATE:
        return MPI_Win_create(job->base, job->bytes, 1, job->info, job->comm, &job->win);
    default: return MPI_Win_free(&job->win);
    }
}

static symmem_status_t window(mpi_t *m, const char *call, window_job_t *job)
{
    return symmem__mpi_blocking(m, call, window_calls[job->kind], -1, window_run, job, sizeof(*job),
                                1);
}

/* Makes the shared window over comm: our part, and where each member's part
 * is in this process (world PEs pes[i]). */
static symmem_status_t allocate_shared(mpi_t *m, MPI_Comm comm, const int *pes, int n,
                                       char **mine_p, MPI_Win *win_p)
{
    window_job_t job = {
        WIN_ALLOCATE_SHARED, (MPI_Aint)m->heap_size + MPI_WINDOW_EXTRA, MPI_INFO_NULL, comm, NULL,
        MPI_WIN_NULL};
    MPI_Info_create(&job.info);
    MPI_Info_set(job.info, "alloc_shared_noncontig", "true");
    SYMMEM_CHECK(window(m, "init", &job)); /* the info stays: the helper may still read it */
    MPI_Info_free(&job.info);
    for (int i = 0; i < n; i++) {
        MPI_Aint size;
        int unit;
        char *part = NULL;
        MPI_Win_shared_query(job.win, i, &size, &unit, &part);
        m->peer[pes[i]] = part; /* the skew is added once every PE has told its own */
    }
    *mine_p = job.base;
    *win_p = job.win;
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_heap_create(mpi_t *m)
{
    const char *call = "init";
    m->peer = calloc((size_t)m->n, sizeof(char *));
    m->skew = calloc((size_t)m->n, sizeof(MPI_Aint));
    m->alloc = symmem__heap_allocator_create(m->heap_size);
    if (m->peer == NULL || m->skew == NULL || m->alloc == NULL)
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    char *part = NULL; /* this PE's part of the window */
    MPI_Aint bytes = (MPI_Aint)m->heap_size + MPI_WINDOW_EXTRA;
    if (m->node_n == m->n && m->n > 1) { /* one node: the shared window is the window */
        SYMMEM_CHECK(allocate_shared(m, m->world, m->node_pes, m->n, &part, &m->win));
    } else if (m->node_n > 1) { /* some nodes: a shared window, and RMA over it to all */
        SYMMEM_CHECK(allocate_shared(m, m->node, m->node_pes, m->node_n, &part, &m->shared_win));
        window_job_t job = {WIN_CREATE, bytes, MPI_INFO_NULL, m->world, part, MPI_WIN_NULL};
        SYMMEM_CHECK(window(m, call, &job));
        m->win = job.win;
    } else { /* a host of its own: nothing shared, everything through RMA */
        window_job_t job = {WIN_ALLOCATE, bytes, MPI_INFO_NULL, m->world, NULL, MPI_WIN_NULL};
        SYMMEM_CHECK(window(m, call, &job));
        m->win = job.win;
        part = job.base;
        m->peer[m->me] = part;
    }
    MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN);
    uintptr_t at = (uintptr_t)part;
    MPI_Aint skew = (MPI_Aint)(((at + MPI_HEAP_ALIGN - 1) & ~(MPI_HEAP_ALIGN - 1)) - at);
    MPI_Request req;
    MPI_TRY(call, "MPI_Iallgather",
            MPI_Iallgather(&skew, 1, MPI_AINT, m->skew, 1, MPI_AINT, m->world, &req));
    SYMMEM_CHECK(symmem__mpi_wait(m, call, &req));
    for (int pe = 0; pe < m->n; pe++)
        if (m->peer[pe] != NULL) m->peer[pe] += m->skew[pe];
    m->base = part + skew;
    memset(m->base + m->heap_size, 0, MPI_RENDEZVOUS_BYTES);         /* team_init's table */
    memset(m->base + mpi_node_ctl_offset(m), 0, MPI_NODE_CTL_BYTES); /* node.c's channels */
    MPI_TRY(call, "MPI_Win_lock_all", MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win));
    /* the cleared table and channels, before any PE's RMA or load (init's
     * later collectives stand between) */
    MPI_Win_sync(m->win);
    return SYMMEM_OK;
}

/* Collective; each MPI_Win_free bounded, and none after one that failed. */
void symmem__mpi_heap_destroy(mpi_t *m)
{
    symmem_status_t status = SYMMEM_OK;
    if (m->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(m->win);
        window_job_t job = {WIN_FREE, 0, MPI_INFO_NULL, MPI_COMM_NULL, NULL, m->win};
        status = window(m, "finalize", &job);
        m->win = MPI_WIN_NULL;
    }
    if (status == SYMMEM_OK && m->shared_win != MPI_WIN_NULL) {
        window_job_t job = {WIN_FREE, 0, MPI_INFO_NULL, MPI_COMM_NULL, NULL, m->shared_win};
        window(m, "finalize", &job);
        m->shared_win = MPI_WIN_NULL;
    }
    free(m->skew);
    m->skew = NULL;
}

/* Every PE passed the same value (named what) to call, or an error on every
 * PE listing what each passed, as the cpu engine says it. */
static symmem_status_t agree_on(mpi_t *m, const char *call, const char *what, uint64_t value)
{
    uint64_t *values = malloc((size_t)m->n * sizeof(uint64_t));
    if (values == NULL)
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    MPI_Request req;
    int rc = MPI_Iallgather(&value, 1, MPI_UINT64_T, values, 1, MPI_UINT64_T, m->world, &req);
    symmem_status_t status = rc == MPI_SUCCESS ? symmem__mpi_wait(m, call, &req)
                                               : symmem__mpi_failed(rc, call, "MPI_Iallgather");
    int same = 1;
    for (int pe = 0; status == SYMMEM_OK && pe < m->n; pe++) same &= values[pe] == value;
    if (status == SYMMEM_OK && !same) {
        char list[512];
        int len = 0;
        for (int pe = 0; pe < m->n && len < (int)sizeof(list); pe++)
            len += snprintf(list + len, sizeof(list) - (size_t)len, "%sPE %d: %llu", pe ? ", " : "",
                            pe, (unsigned long long)values[pe]);
        status =
            MPI_CORE->error(SYMMEM_ERR_MISMATCH, "%s: %s must be the same on every PE, but got %s",
                            call, what, list);
    }
    free(values);
    return status;
}

symmem_status_t symmem__mpi_malloc(symmem_backend_t *be, size_t size, size_t alignment,
                                   void **ptr_p)
{
    mpi_t *m = be;
    symmem_team_view_t world;
    SYMMEM_CHECK(symmem__mpi_meet(m, symmem__mpi_world_view(m, &world),
                                  symmem__call(SYMMEM_CALL_MALLOC, 0, 0, 0, 0, 0), 1));
    SYMMEM_CHECK(agree_on(m, "malloc", "size", size));
    SYMMEM_CHECK(agree_on(m, "malloc", "alignment", alignment));
    if (alignment > MPI_HEAP_ALIGN)
        return MPI_CORE->error(SYMMEM_ERR_INVALID,
                               "malloc: alignment=%zu is more than the mpi backend's largest, "
                               "%zu",
                               alignment, MPI_HEAP_ALIGN);
    if (size == 0) {
        *ptr_p = NULL;
        return SYMMEM_OK;
    }
    size_t offset;
    if (symmem__heap_allocator_alloc(m->alloc, size, alignment, &offset) != SYMMEM_OK)
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY,
                               "malloc: size=%zu does not fit in the symmetric heap (largest "
                               "free block %zu of SYMMEM_SYMMETRIC_SIZE=%zu bytes)",
                               size, symmem__heap_allocator_largest_free(m->alloc), m->heap_size);
    memset(m->base + offset, 0, size);
    /* Nobody writes into the block before its owner has cleared it. */
    symmem_status_t status = symmem__mpi_comm_barrier(m, "malloc", m->world);
    if (status != SYMMEM_OK) {
        symmem__heap_allocator_free(m->alloc, offset);
        return status;
    }
    *ptr_p = m->base + offset;
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_free(symmem_backend_t *be, void *ptr)
{
    mpi_t *m = be;
    uint64_t offset = (uint64_t)((char *)ptr - m->base);
    symmem_team_view_t world;
    SYMMEM_CHECK(symmem__mpi_meet(m, symmem__mpi_world_view(m, &world),
                                  symmem__call(SYMMEM_CALL_FREE, 0, 0, 0, 0, 0), 1));
    SYMMEM_CHECK(agree_on(m, "free", "the allocation (its offset in the heap)", offset));
    symmem__heap_allocator_free(m->alloc, offset);
    return SYMMEM_OK;
}

void symmem__mpi_heap_range(symmem_backend_t *be, uintptr_t *start_p, size_t *size_p)
{
    mpi_t *m = be;
    *start_p = (uintptr_t)m->base;
    *size_p = m->heap_size;
}

/* Remote completion (MPI_Win_flush, MPI_Win_flush_all) and local
 * (MPI_Win_flush_local), bounded. MPI has no
 * request-based flush, and a flush to a process that died or stopped on
 * another host can block for ever inside MPI, so a flush that goes over the
 * network is made by the helper thread (helper.c) while the caller polls.
 *
 * Flushes whose targets all run on this host are made directly (MPI's
 * shared-memory RMA completes without the target, and the hand-over costs
 * 1 to 70 us on a busy machine), and so is every flush where MPI gives less
 * than MPI_THREAD_MULTIPLE (no helper). SYMMEM_MPI_FLUSH_THREAD=always
 * sends every flush that leaves the node through the helper (a test hook:
 * one machine with SYMMEM_ONE_HOST_PER_PE=1 takes that path), never none. */
#include "mpi_backend.h"

enum { MODE_AUTO, MODE_ALWAYS, MODE_NEVER }; /* SYMMEM_MPI_FLUSH_THREAD's choices */

symmem_status_t symmem__mpi_flush_init(mpi_t *m)
{
    m->flush_mode = MODE_AUTO;
    return MPI_CORE->env_choice("init", "SYMMEM_MPI_FLUSH_THREAD", &m->flush_mode);
}

/* Whether a flush of pe (-1: all) goes through the helper: it leaves the
 * node, and (unless always) reaches a PE on another host (no pid here). */
static int watched(const mpi_t *m, int pe)
{
    if (pe >= 0) {
        if (pe == m->me || m->peer[pe] != NULL) return 0;
        return m->flush_mode == MODE_ALWAYS || m->peers.pids[pe] == 0;
    }
    if (m->node_n == m->n) return 0;
    for (int p = 0; p < m->n; p++)
        if (watched(m, p)) return 1;
    return 0;
}

typedef struct {
    MPI_Win win;
    int pe;    /* -1: every PE */
    int local; /* MPI_Win_flush_local: the origin's buffers reusable */
} flush_job_t;

static int flush_run(void *arg)
{
    const flush_job_t *job = arg;
    if (job->local) return MPI_Win_flush_local(job->pe, job->win);
    return job->pe < 0 ? MPI_Win_flush_all(job->win) : MPI_Win_flush(job->pe, job->win);
}

static symmem_status_t flush(mpi_t *m, const char *call, flush_job_t job)
{
    const char *what = job.local    ? "MPI_Win_flush_local"
                       : job.pe < 0 ? "MPI_Win_flush_all"
                                    : "MPI_Win_flush";
    SYMMEM_CHECK(symmem__mpi_helper_check(m, call)); /* the window's state is unknown */
    if (m->flush_mode != MODE_NEVER && watched(m, job.pe))
        return symmem__mpi_blocking(m, call, what, job.pe, flush_run, &job, sizeof(job), 0);
    int rc = flush_run(&job);
    return rc == MPI_SUCCESS ? SYMMEM_OK : symmem__mpi_failed(rc, call, what);
}

symmem_status_t symmem__mpi_flush(mpi_t *m, const char *call, int pe)
{
    return flush(m, call, (flush_job_t){m->win, pe, 0});
}

symmem_status_t symmem__mpi_flush_local(mpi_t *m, const char *call, int pe)
{
    return flush(m, call, (flush_job_t){m->win, pe, 1});
}

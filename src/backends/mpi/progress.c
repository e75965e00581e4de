/* Every blocking wait of the mpi backend: polls its condition, drives MPI's
 * progress where the condition is memory other PEs' RMA writes (a passive
 * target makes none of its own in some MPIs; a wait on requests drives it
 * by testing them, one on the helper thread leaves it to the helper), and every
 * few milliseconds checks Ctrl-C, the peers' liveness and SYMMEM_TIMEOUT,
 * so that no wait outlives a dead PE or the time limit. */
#include <sched.h>
#include <time.h>

#include "mpi_backend.h"

/* The spin before a wait starts yielding its core at every poll: as MPI's
 * own blocking calls, a wait keeps its core while the PE it waits for runs
 * on another (a shorter spin lost the core to other processes of a busy
 * machine at every wait longer than it). But where that PE shares our core
 * (more PEs than cores, or the scheduler put both on one), each handover
 * would cost the whole spin, so a wait whose condition came true during a
 * yield that gave the core away (one that took long: another thread ran)
 * takes it for such a PE, and for a while every wait yields almost at
 * once. (The spin used to double on that sign instead, up to 2 ms a
 * handover: 1.4 ms a barrier of 2 PEs on a busy 2-core machine.) */
#define SPIN_SECONDS 1e-3
#define SPIN_SHARED_SECONDS 1e-6 /* while the core seems shared */
#define SHARED_SECONDS 0.1       /* how long one such sign counts */
#define YIELD_AWAY_SECONDS 5e-6  /* a yield this long ran another thread */

/* Until when waits yield almost at once (waits are made by one thread at a
 * time). */
static double shared_until;

double symmem__mpi_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(mpi_t *m)
{
    /* Every PE on this node: the window is shared memory, whose RMA needs
     * no target's progress, and whatever else a wait waits for (requests)
     * it tests itself; a probe would only delay noticing a store. */
    if (m->node_n == m->n) return;
    int flag;
    /* Before init has its own communicator (its MPI_Comm_idup), MPI_COMM_SELF:
     * any call drives the progress engine, which is the process's. */
    MPI_Comm comm = m->world != MPI_COMM_NULL ? m->world : MPI_COMM_SELF;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
}

symmem_status_t symmem__mpi_poll(mpi_t *m, const char *call, mpi_ready_func_t *ready, void *arg,
                                 int drive)
{
    if (ready(m, arg)) return SYMMEM_OK;
    double started = symmem__mpi_now(), next_check = started + MPI_CHECK_SECONDS;
    for (;;) {
        if (ready(m, arg)) return SYMMEM_OK;
        if (drive) progress(m);
        double now = symmem__mpi_now();
        double spin = now < shared_until ? SPIN_SHARED_SECONDS : SPIN_SECONDS;
        if (now - started > spin) {
            sched_yield();
            double after = symmem__mpi_now();
            if (after - now > YIELD_AWAY_SECONDS && ready(m, arg)) {
                shared_until = after + SHARED_SECONDS; /* the yield let it run */
                return SYMMEM_OK;
            }
        }
        if (now < next_check) continue;
        next_check = now + MPI_CHECK_SECONDS;
        SYMMEM_CHECK(symmem__mpi_still_waiting(m, call, started));
    }
}

symmem_status_t symmem__mpi_still_waiting(mpi_t *m, const char *call, double started)
{
    SYMMEM_CHECK(MPI_CORE->interrupted(call));
    SYMMEM_CHECK(symmem__mpi_peers_check(m, call));
    SYMMEM_CHECK(symmem__mpi_departures_check(m, call)); /* a member in finalize() */
    double now = symmem__mpi_now();
    if (m->boot.timeout > 0 && now > started + m->boot.timeout)
        return MPI_CORE->error(SYMMEM_ERR_TIMEOUT, "%s: timed out after %.1f s (SYMMEM_TIMEOUT=%g)",
                               call, now - started, m->boot.timeout);
    return SYMMEM_OK;
}

typedef struct {
    MPI_Request *req;
    int rc;
} request_wait_t;

static int request_done(mpi_t *m, void *arg)
{
    (void)m;
    request_wait_t *w = arg;
    int done = 0;
    w->rc = MPI_Test(w->req, &done, MPI_STATUS_IGNORE);
    return done || w->rc != MPI_SUCCESS;
}

typedef struct {
    MPI_Request *reqs;
    int count, rc;
} requests_wait_t;

static int requests_done(mpi_t *m, void *arg)
{
    (void)m;
    requests_wait_t *w = arg;
    int done = 0;
    w->rc = MPI_Testall(w->count, w->reqs, &done, MPI_STATUSES_IGNORE);
    return done || w->rc != MPI_SUCCESS;
}

symmem_status_t symmem__mpi_wait_all(mpi_t *m, const char *call, MPI_Request *reqs, int count,
                                     int *rc_p)
{
    requests_wait_t w = {reqs, count, MPI_SUCCESS};
    symmem_status_t status = symmem__mpi_poll(m, call, requests_done, &w, 0); /* tests drive */
    *rc_p = w.rc;
    return status;
}

symmem_status_t symmem__mpi_wait(mpi_t *m, const char *call, MPI_Request *req)
{
    request_wait_t w = {req, MPI_SUCCESS};
    SYMMEM_CHECK(symmem__mpi_poll(m, call, request_done, &w, 0)); /* MPI_Test drives */
    if (w.rc != MPI_SUCCESS) {
        SYMMEM_CHECK(symmem__mpi_peers_check(m, call)); /* a dead PE says more than MPI */
        return symmem__mpi_failed(w.rc, call, "an MPI operation");
    }
    return SYMMEM_OK;
}

/* Remote completion (MPI_Win_flush, MPI_Win_flush_all), bounded. MPI has no
 * request-based flush, and a flush to a process that died or stopped on
 * another host can block for ever inside MPI. So a flush that goes over the
 * network is made by a helper thread (the flusher) while the caller polls
 * it as every other wait (progress.c: Ctrl-C, the peers' liveness,
 * SYMMEM_TIMEOUT). A caller that gives up leaves the flusher inside MPI;
 * the job counts as lost (finalize then skips MPI's teardown) and every
 * later flush fails at once, naming the flush that never ended.
 *
 * Flushes whose targets all run on this host are made directly (MPI's
 * shared-memory RMA completes without the target, and the hand-over costs
 * 1 to 70 us on a busy machine), and so is every flush where MPI gives less
 * than MPI_THREAD_MULTIPLE. SYMMEM_MPI_FLUSH_THREAD=always sends every
 * flush that leaves the node through the thread (a test hook: one machine
 * with SYMMEM_ONE_HOST_PER_PE=1 takes that path), never none. The flusher
 * spins a little after each job before it sleeps (a futex), so a loop of
 * put + quiet hands over without a system call when it has a core. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mpi_backend.h"

enum { FLUSH_IDLE, FLUSH_ASKED, FLUSH_DONE, FLUSH_STOP };

#define FLUSHER_SPIN_SECONDS 200e-6 /* after a job, before the flusher sleeps */

struct mpi_flusher {
    _Atomic int state;    /* FLUSH_*: the caller moves IDLE->ASKED, the flusher ASKED->DONE */
    _Atomic int sleeping; /* the flusher waits on state in the kernel */
    int pe;               /* the target; -1: every PE */
    int rc;               /* MPI's answer: written before DONE is released */
    MPI_Win win;
    pthread_t thread;
    int stuck_pe; /* a flush the caller gave up on (-2: none) */
    int always;   /* SYMMEM_MPI_FLUSH_THREAD=always */
    const char *stuck_call;
};

static void futex_wait(_Atomic int *word, int value)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake(_Atomic int *word)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *flusher_main(void *arg)
{
    mpi_flusher_t *f = arg;
    for (;;) {
        double idle_since = symmem__mpi_now();
        int state;
        /* acquire: pairs with the caller's release of ASKED (pe, win) */
        while ((state = atomic_load_explicit(&f->state, memory_order_acquire)) == FLUSH_IDLE ||
               state == FLUSH_DONE) {
            if (symmem__mpi_now() - idle_since < FLUSHER_SPIN_SECONDS) continue;
            atomic_store(&f->sleeping, 1); /* seq_cst: against the caller's load of sleeping */
            if (atomic_load(&f->state) == state) futex_wait(&f->state, state);
            atomic_store(&f->sleeping, 0);
            idle_since = symmem__mpi_now();
        }
        if (state == FLUSH_STOP) return NULL;
        f->rc = f->pe < 0 ? MPI_Win_flush_all(f->win) : MPI_Win_flush(f->pe, f->win);
        /* release: the caller's acquire of DONE sees rc */
        atomic_store_explicit(&f->state, FLUSH_DONE, memory_order_release);
    }
}

enum { MODE_AUTO, MODE_ALWAYS, MODE_NEVER }; /* SYMMEM_MPI_FLUSH_THREAD's choices */

symmem_status_t symmem__mpi_flusher_start(mpi_t *m)
{
    int level = MPI_THREAD_SINGLE, mode = MODE_AUTO;
    SYMMEM_CHECK(MPI_CORE->env_choice("init", "SYMMEM_MPI_FLUSH_THREAD", &mode));
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE || mode == MODE_NEVER) return SYMMEM_OK; /* direct */
    mpi_flusher_t *f = calloc(1, sizeof(*f));
    if (f == NULL) return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    f->stuck_pe = -2;
    atomic_init(&f->state, FLUSH_IDLE);
    if (pthread_create(&f->thread, NULL, flusher_main, f) != 0) {
        free(f);
        return MPI_CORE->error(SYMMEM_ERR_SYSTEM, "init: cannot start the mpi backend's "
                                                  "flush thread");
    }
    f->always = mode == MODE_ALWAYS;
    m->flusher = f;
    return SYMMEM_OK;
}

void symmem__mpi_flusher_stop(mpi_t *m)
{
    mpi_flusher_t *f = m->flusher;
    if (f == NULL) return;
    m->flusher = NULL;
    if (f->stuck_pe != -2) { /* still inside MPI: it and its block stay */
        pthread_detach(f->thread);
        return;
    }
    atomic_store(&f->state, FLUSH_STOP);
    futex_wake(&f->state);
    pthread_join(f->thread, NULL);
    free(f);
}

static int flush_done(mpi_t *m, void *arg)
{
    (void)arg;
    /* acquire: pairs with the flusher's release of DONE (rc) */
    return atomic_load_explicit(&m->flusher->state, memory_order_acquire) == FLUSH_DONE;
}

/* Whether a flush of pe (-1: all) goes through the flusher: it leaves the
 * node, and (unless always) reaches a PE on another host (no pid here). */
static int watched(const mpi_t *m, int pe)
{
    if (pe >= 0) {
        if (pe == m->me || m->peer[pe] != NULL) return 0;
        return m->flusher->always || m->peers.pids[pe] == 0;
    }
    if (m->node_n == m->n) return 0;
    for (int p = 0; p < m->n; p++)
        if (watched(m, p)) return 1;
    return 0;
}

symmem_status_t symmem__mpi_flush(mpi_t *m, const char *call, int pe)
{
    mpi_flusher_t *f = m->flusher;
    if (f != NULL && f->stuck_pe != -2) {
        if (f->stuck_pe < 0)
            return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD,
                                   "%s: an earlier flush of every PE (in %s) never completed; "
                                   "the job cannot go on",
                                   call, f->stuck_call);
        return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD,
                               "%s: an earlier flush to PE %d (in %s) never completed; the job "
                               "cannot go on",
                               call, f->stuck_pe, f->stuck_call);
    }
    if (f == NULL || !watched(m, pe)) {
        int rc = pe < 0 ? MPI_Win_flush_all(m->win) : MPI_Win_flush(pe, m->win);
        if (rc != MPI_SUCCESS)
            return symmem__mpi_failed(rc, call, pe < 0 ? "MPI_Win_flush_all" : "MPI_Win_flush");
        return SYMMEM_OK;
    }
    f->pe = pe;
    f->win = m->win;
    /* release: pairs with the flusher's acquire of ASKED */
    atomic_store_explicit(&f->state, FLUSH_ASKED, memory_order_release);
    if (atomic_load(&f->sleeping)) futex_wake(&f->state); /* seq_cst: see flusher_main */
    symmem_status_t status = symmem__mpi_poll(m, call, flush_done, NULL);
    if (status != SYMMEM_OK) {
        f->stuck_pe = pe;
        f->stuck_call = call;
        symmem__mpi_lost(m);
        return status;
    }
    atomic_store_explicit(&f->state, FLUSH_IDLE, memory_order_relaxed);
    if (f->rc != MPI_SUCCESS) {
        SYMMEM_CHECK(symmem__mpi_peers_check(m, call)); /* a dead PE says more than MPI */
        return symmem__mpi_failed(f->rc, call, pe < 0 ? "MPI_Win_flush_all" : "MPI_Win_flush");
    }
    return SYMMEM_OK;
}

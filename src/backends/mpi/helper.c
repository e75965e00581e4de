/* Blocking MPI calls, bounded. Some of MPI's calls have no non-blocking
 * form (MPI_Win_flush, MPI_Comm_split, MPI_Comm_create_group, the window
 * allocations, MPI_Win_free), and each can block for ever inside MPI on a
 * PE that died, or stopped on another host. Such a call is made by a helper
 * thread while the caller polls it as every other wait (progress.c: Ctrl-C,
 * the peers' liveness, SYMMEM_TIMEOUT). A caller that gives up leaves the
 * helper inside MPI: the job counts as lost (finalize then skips MPI's
 * teardown) and every later call through the helper fails at once, naming
 * the call that never ended.
 *
 * The helper works on its own copy of the call's arguments: a caller that
 * gave up returns (its stack goes) while MPI may still write them. Without
 * MPI_THREAD_MULTIPLE there is no helper and each call is made directly.
 * The helper spins a little after a short job before it sleeps (a futex),
 * so a loop of put + quiet hands over without a system call when it has a
 * core; after a long one (a caller that sleeps meanwhile: a window made
 * or a communicator split) it sleeps at once, as the next job is a while
 * away and its spin takes a core from the PEs' own work between the calls
 * (it made 4 MiB all-reduces, when they were MPI_Allreduce on the helper,
 * 1.2x mpi4py's time on 2 cores). */
#include <linux/futex.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mpi_backend.h"

enum { JOB_IDLE, JOB_ASKED, JOB_DONE, JOB_STOP };

#define HELPER_SPIN_SECONDS 200e-6 /* after a job, before the helper sleeps */

struct mpi_helper {
    _Atomic int state;    /* JOB_*: the caller moves IDLE->ASKED, the helper ASKED->DONE */
    _Atomic int sleeping; /* the helper waits on state in the kernel */
    _Atomic int waiting;  /* the caller waits on state in the kernel */
    mpi_job_func_t *run;  /* the job: written before ASKED is released */
    int rc;               /* its answer: written before DONE is released */
    int spin_after;       /* spin after this job before sleeping: written before ASKED */
    alignas(max_align_t) unsigned char job[MPI_JOB_BYTES]; /* the helper's copy */
    pthread_t thread;
    /* A call the caller gave up on; what == NULL: none. */
    const char *stuck_call, *stuck_what;
    int stuck_pe;
};

static void futex_wait(_Atomic int *word, int value)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake(_Atomic int *word)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void futex_wait_for(_Atomic int *word, int value, double seconds)
{
    struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, value, &t, NULL, 0);
}

static void *helper_main(void *arg)
{
    mpi_helper_t *h = arg;
    int spin = 1; /* spin before sleeping: the last job was a short one */
    for (;;) {
        double idle_since = spin ? symmem__mpi_now() : -HELPER_SPIN_SECONDS;
        int state;
        /* acquire: pairs with the caller's release of ASKED (run, job) */
        while ((state = atomic_load_explicit(&h->state, memory_order_acquire)) == JOB_IDLE ||
               state == JOB_DONE) {
            if (symmem__mpi_now() - idle_since < HELPER_SPIN_SECONDS) continue;
            atomic_store(&h->sleeping, 1); /* seq_cst: against the caller's load of sleeping */
            if (atomic_load(&h->state) == state) futex_wait(&h->state, state);
            atomic_store(&h->sleeping, 0);
            idle_since = symmem__mpi_now();
        }
        if (state == JOB_STOP) return NULL;
        h->rc = h->run(h->job);
        spin = h->spin_after; /* read before DONE: the caller may ask again */
        /* seq_cst (a release too: the caller's acquire of DONE sees rc and
         * the job's outputs), against the caller's store of waiting */
        atomic_store(&h->state, JOB_DONE);
        if (atomic_load(&h->waiting)) futex_wake(&h->state);
    }
}

symmem_status_t symmem__mpi_helper_start(mpi_t *m)
{
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) return SYMMEM_OK; /* every call direct */
    mpi_helper_t *h = calloc(1, sizeof(*h));
    if (h == NULL) return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    atomic_init(&h->state, JOB_IDLE);
    if (pthread_create(&h->thread, NULL, helper_main, h) != 0) {
        free(h);
        return MPI_CORE->error(SYMMEM_ERR_SYSTEM, "init: cannot start the mpi backend's "
                                                  "helper thread");
    }
    m->helper = h;
    return SYMMEM_OK;
}

void symmem__mpi_helper_stop(mpi_t *m)
{
    mpi_helper_t *h = m->helper;
    if (h == NULL) return;
    m->helper = NULL;
    if (h->stuck_what != NULL) { /* still inside MPI: it and its block stay */
        pthread_detach(h->thread);
        return;
    }
    atomic_store(&h->state, JOB_STOP);
    futex_wake(&h->state);
    pthread_join(h->thread, NULL);
    free(h);
}

symmem_status_t symmem__mpi_helper_check(const mpi_t *m, const char *call)
{
    const mpi_helper_t *h = m->helper;
    if (h == NULL || h->stuck_what == NULL) return SYMMEM_OK;
    if (h->stuck_pe >= 0)
        return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD,
                               "%s: an earlier %s to PE %d (in %s) never completed; the job "
                               "cannot go on",
                               call, h->stuck_what, h->stuck_pe, h->stuck_call);
    return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD,
                           "%s: an earlier %s (in %s) never completed; the job cannot go on", call,
                           h->stuck_what, h->stuck_call);
}

static int job_done(mpi_t *m, void *arg)
{
    (void)arg;
    /* acquire: pairs with the helper's release of DONE (rc, the outputs) */
    return atomic_load_explicit(&m->helper->state, memory_order_acquire) == JOB_DONE;
}

/* Sleeps until the helper is done, waking every MPI_CHECK_SECONDS for
 * the checks of every wait (progress.c). */
static symmem_status_t sleep_until_done(mpi_t *m, const char *call)
{
    mpi_helper_t *h = m->helper;
    double started = symmem__mpi_now();
    for (;;) {
        atomic_store(&h->waiting, 1); /* seq_cst: against the helper's store of DONE */
        if (atomic_load(&h->state) == JOB_ASKED)
            futex_wait_for(&h->state, JOB_ASKED, MPI_CHECK_SECONDS);
        atomic_store(&h->waiting, 0);
        if (job_done(m, NULL)) return SYMMEM_OK;
        SYMMEM_CHECK(symmem__mpi_still_waiting(m, call, started));
    }
}

symmem_status_t symmem__mpi_blocking(mpi_t *m, const char *call, const char *what, int pe,
                                     mpi_job_func_t *run, void *job, size_t size, int sleep)
{
    mpi_helper_t *h = m->helper;
    int rc;
    if (size > MPI_JOB_BYTES)
        return MPI_CORE->error(SYMMEM_ERR_BACKEND,
                               "%s: %s's arguments (%zu bytes) do not fit the "
                               "helper thread's %d",
                               call, what, size, MPI_JOB_BYTES);
    if (h == NULL) {
        rc = run(job);
    } else {
        SYMMEM_CHECK(symmem__mpi_helper_check(m, call));
        h->run = run;
        h->spin_after = !sleep;
        memcpy(h->job, job, size);
        /* release: pairs with the helper's acquire of ASKED */
        atomic_store_explicit(&h->state, JOB_ASKED, memory_order_release);
        if (atomic_load(&h->sleeping)) futex_wake(&h->state); /* seq_cst: see helper_main */
        symmem_status_t status =
            sleep ? sleep_until_done(m, call) : symmem__mpi_poll(m, call, job_done, NULL, 0);
        if (status != SYMMEM_OK) {
            h->stuck_call = call;
            h->stuck_what = what;
            h->stuck_pe = pe;
            symmem__mpi_lost(m);
            char why[768]; /* says where: MPI's call, still running, cannot be ended */
            snprintf(why, sizeof(why), "%s", MPI_CORE->last_error());
            return MPI_CORE->error(status, "%s; this PE was in %s", why, what);
        }
        atomic_store_explicit(&h->state, JOB_IDLE, memory_order_relaxed);
        memcpy(job, h->job, size);
        rc = h->rc;
    }
    if (rc == MPI_SUCCESS) return SYMMEM_OK;
    SYMMEM_CHECK(symmem__mpi_peers_check(m, call)); /* a dead PE says more than MPI */
    return symmem__mpi_failed(rc, call, what);
}

/* The mpi backend's start and end: MPI itself (initialised here unless the
 * program or mpi4py did), the PEs' communicator, the node's, the heap, the
 * teams; finalize undoes them, and never waits for a PE that died. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_backend.h"

/* Runtimes initialised and not finalized: a program that exits so (an
 * exception) leaves its peers waiting, and MPI_Finalize would wait for them. */
static int live_runtimes;
static pid_t mpi_pid; /* the process that started MPI (not a child forked from it) */

static void finalize_mpi_at_exit(void)
{
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (!finalized && !symmem__mpi_job_lost() && live_runtimes == 0 && getpid() == mpi_pid)
        MPI_Finalize();
}

static int flag_on(const char *name)
{
    const char *v = MPI_CORE->env_string(name);
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0 && strcmp(v, "false") != 0 &&
           strcmp(v, "no") != 0 && strcmp(v, "off") != 0;
}

/* The communicator the PEs are: the program's (init(initializer_method="mpi",
 * mpi_comm=...)), else MPI_COMM_WORLD. */
static MPI_Comm given_comm(const symmem_bootstrap_t *boot)
{
    if (!boot->have_mpi_comm || boot->mpi_comm == 0) return MPI_COMM_WORLD;
    MPI_Comm comm;
    if (sizeof(comm) == sizeof(uint64_t)) {
        memcpy(&comm, &boot->mpi_comm, sizeof(comm)); /* a pointer (Open MPI) */
    } else {
        int32_t handle = (int32_t)boot->mpi_comm; /* an int (MPICH and its kin) */
        memcpy(&comm, &handle, sizeof(comm));
    }
    return comm;
}

/* MPI_Init_thread, bounded by SYMMEM_TIMEOUT. The call has no bound of
 * its own (it meets every process of the job, through the launcher's
 * runtime), and no error can reach the program while it runs: where a
 * timeout is set, a watchdog thread ends the process (status 1, the reason
 * on stderr) if the call has not returned by then, with INIT_ALLOWANCE_S
 * more for MPI's own start-up (about 1 s on one host, more on a large
 * job): SYMMEM_TIMEOUT bounds waiting for other PEs, and a timeout of a
 * fraction of a second meant for waits would otherwise end every PE in
 * init. mpirun and srun end a job whose process died, so what this
 * catches is a launcher's runtime that stopped answering. */
#define INIT_ALLOWANCE_S 10.0
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t returned_cond;
    int returned;
    double seconds; /* SYMMEM_TIMEOUT; the watchdog waits INIT_ALLOWANCE_S more */
    int rank;
} init_watch_t;

static void *watch_init(void *arg)
{
    init_watch_t *w = arg;
    struct timespec until;
    double bound = w->seconds + INIT_ALLOWANCE_S;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)bound;
    until.tv_nsec += (long)((bound - (double)(time_t)bound) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->lock);
    int rc = 0;
    while (!w->returned && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->returned_cond, &w->lock, &until);
    if (!w->returned) {
        fprintf(stderr,
                "symmem: init: MPI_Init_thread on PE %d did not return within %g s "
                "(SYMMEM_TIMEOUT=%g s, and %g s for MPI's own start-up; it meets every "
                "process of the job through the launcher's runtime); ending the process\n",
                w->rank, bound, w->seconds, INIT_ALLOWANCE_S);
        _exit(1);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static int init_mpi_bounded(const mpi_t *m, int *provided)
{
    init_watch_t w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, m->boot.timeout,
                      m->boot.rank};
    pthread_t watchdog;
    int watched = m->boot.timeout > 0 && pthread_create(&watchdog, NULL, watch_init, &w) == 0;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, provided);
    if (watched) {
        pthread_mutex_lock(&w.lock);
        w.returned = 1;
        pthread_cond_signal(&w.returned_cond);
        pthread_mutex_unlock(&w.lock);
        pthread_join(watchdog, NULL);
    }
    return rc;
}

static symmem_status_t start_mpi(mpi_t *m)
{
    int initialized = 0, finalized = 0, provided;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized)
        return MPI_CORE->error(SYMMEM_ERR_BACKEND, "init: MPI was finalized already in this "
                                                   "process (MPI cannot start twice)");
    if (initialized) return SYMMEM_OK;
    MPI_TRY("init", "MPI_Init_thread", init_mpi_bounded(m, &provided));
    static int registered;
    if (!registered && atexit(finalize_mpi_at_exit) == 0) registered = 1;
    mpi_pid = getpid();
    m->started_mpi = 1;
    return SYMMEM_OK;
}

static symmem_status_t make_comms(mpi_t *m)
{
    const char *call = "init";
    int rank, size;
    SYMMEM_CHECK(symmem__mpi_comm_dup(m, call, given_comm(&m->boot), &m->world));
    MPI_Comm_set_errhandler(m->world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->world, &rank);
    MPI_Comm_size(m->world, &size);
    if (rank != m->boot.rank || size != m->boot.nranks)
        return MPI_CORE->error(SYMMEM_ERR_BOOTSTRAP,
                               "init: MPI numbers this process %d of %d, but the launcher "
                               "says PE %d of %d: start the mpi backend's PEs with mpirun or "
                               "srun (python -m symmem.run starts them through mpirun)",
                               rank, size, m->boot.rank, m->boot.nranks);
    if (flag_on("SYMMEM_ONE_HOST_PER_PE")) /* every PE a host of its own */
        SYMMEM_CHECK(symmem__mpi_comm_split(m, call, m->world, rank, 0, &m->node));
    else
        SYMMEM_CHECK(symmem__mpi_comm_split_shared(m, call, m->world, rank, &m->node));
    MPI_Comm_set_errhandler(m->node, MPI_ERRORS_RETURN);
    MPI_Comm_size(m->node, &m->node_n);
    m->node_pes = calloc((size_t)m->node_n, sizeof(int));
    m->local_rank = calloc((size_t)m->n, sizeof(int));
    int *ranks = calloc((size_t)m->node_n, sizeof(int));
    if (m->node_pes == NULL || m->local_rank == NULL || ranks == NULL) {
        free(ranks);
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    }
    MPI_Group node_group, world_group;
    MPI_Comm_group(m->node, &node_group);
    MPI_Comm_group(m->world, &world_group);
    for (int i = 0; i < m->node_n; i++) ranks[i] = i;
    MPI_Group_translate_ranks(node_group, m->node_n, ranks, world_group, m->node_pes);
    MPI_Group_free(&node_group);
    MPI_Group_free(&world_group);
    free(ranks);
    int node_me;
    MPI_Comm_rank(m->node, &node_me);
    MPI_Request req;
    MPI_TRY(call, "MPI_Iallgather",
            MPI_Iallgather(&node_me, 1, MPI_INT, m->local_rank, 1, MPI_INT, m->world, &req));
    return symmem__mpi_wait(m, call, &req);
}

static void release(mpi_t *m)
{
    if (m == NULL) return;
    int finalized = 1;
    MPI_Finalized(&finalized);
    symmem__mpi_heartbeat_stop(m, !m->lost && m->finished);
    if (!finalized) symmem__mpi_departures_stop(m);
    if (!finalized && !m->lost) { /* MPI's teardown is collective: not with a dead PE */
        symmem__mpi_teams_free(m);
        symmem__mpi_heap_destroy(m); /* MPI_Win_free, bounded (helper.c) */
        if (m->node != MPI_COMM_NULL) MPI_Comm_free(&m->node);
        if (m->world != MPI_COMM_NULL) MPI_Comm_free(&m->world);
    }
    symmem__mpi_helper_stop(m);
    symmem__mpi_peers_free(m);
    free(m->node_tmp);
    free(m->exchange);
    free(m->rma_tmp);
    symmem__heap_allocator_destroy(m->alloc);
    free(m->team_keys);
    free(m->node_pes);
    free(m->local_rank);
    free(m->peer);
    free(m);
}

symmem_status_t symmem__mpi_init(const symmem_bootstrap_t *boot, symmem_backend_t **be_p)
{
    mpi_t *m = calloc(1, sizeof(*m));
    if (m == NULL) return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    m->boot = *boot;
    m->me = boot->rank; /* MPI's numbers, checked in make_comms */
    m->n = boot->nranks;
    m->world = m->node = MPI_COMM_NULL;
    m->win = m->shared_win = MPI_WIN_NULL;
    m->departures.in_req = MPI_REQUEST_NULL;
    m->departures.stuck_pe = -1;
    for (int t = 0; t < SYMMEM_TEAM_MAX; t++) m->teams[t] = MPI_COMM_NULL;
    m->heap_size = boot->heap_size;
    m->dirty = -1; /* no PE written yet */
    m->check_calls = flag_on("SYMMEM_CHECK");
    m->node_tmp = aligned_alloc(64, MPI_NODE_TMP_BYTES);
    if (m->node_tmp == NULL) {
        free(m);
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    }
    symmem_status_t status = start_mpi(m);
    if (status == SYMMEM_OK) status = symmem__mpi_flush_init(m);
    if (status == SYMMEM_OK) status = symmem__mpi_helper_start(m);
    if (status == SYMMEM_OK) status = make_comms(m);
    if (status == SYMMEM_OK) status = symmem__mpi_departures_start(m);
    if (status == SYMMEM_OK) status = symmem__mpi_peers_init(m);
    if (status == SYMMEM_OK) status = symmem__mpi_heartbeat_start(m);
    if (status == SYMMEM_OK) status = symmem__mpi_heap_create(m);
    if (status == SYMMEM_OK) status = symmem__mpi_teams_init(m);
    if (status != SYMMEM_OK) {
        /* The PEs are out of step (one failed where the others wait, or all
         * gave up on a dead PE): MPI's collective teardown could hang. */
        if (m->world != MPI_COMM_NULL) symmem__mpi_lost(m);
        release(m);
        return status;
    }
    live_runtimes++;
    *be_p = m;
    return SYMMEM_OK;
}

static int everyone_left(mpi_t *m, void *arg)
{
    (void)arg;
    return symmem__mpi_all_left(m);
}

/* Every PE arrives before any window goes (a peer may still be putting),
 * and not through a barrier, which a peer's collective could meet: each
 * PE tells the others it left (departures.c) and waits until all did. A
 * peer that raised, waiting in a collective for this PE, makes this fail
 * naming it; the runtime stays, and finalize() can be called again. Any
 * other failure (a dead PE, the time limit) is finalize's, after it let
 * go of what it can. */
symmem_status_t symmem__mpi_prepare_finalize(symmem_backend_t *be)
{
    mpi_t *m = be;
    symmem_status_t status = symmem__mpi_quiet(m, SYMMEM_STREAM_NONE);
    if (status == SYMMEM_OK) status = symmem__mpi_leave(m);
    if (status == SYMMEM_OK) status = symmem__mpi_poll(m, "finalize", everyone_left, NULL, 0);
    if (status == SYMMEM_OK) SYMMEM_CHECK(symmem__mpi_left_error(m, "finalize"));
    m->finished = status == SYMMEM_OK; /* the heartbeat's goodbye: no PE counts this a death */
    m->finish_status = status;
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_finalize(symmem_backend_t *be)
{
    mpi_t *m = be;
    symmem_status_t status = m->finish_status; /* its message is the last error still */
    if (status != SYMMEM_OK || m->lost) symmem__mpi_lost(m);
    live_runtimes--;
    release(m);
    return status;
}

int symmem__mpi_can_run(const symmem_bootstrap_t *boot, char *why, size_t why_size)
{
    (void)boot, (void)why, (void)why_size;
    return 1; /* init says what MPI thinks of the job */
}

void symmem__mpi_library_version(symmem_backend_t *be, char *text, size_t size)
{
    (void)be;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(version, &len) != MPI_SUCCESS) len = 0;
    version[len] = '\0';
    char *end = strpbrk(version, ",\n"); /* "Open MPI v5.0.3, package: ..." */
    if (end) *end = '\0';
    snprintf(text, size, "%s", version);
}

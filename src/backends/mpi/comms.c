/* Communicators, made so that a dead or stopped PE cannot hold the caller
 * for ever: MPI_Comm_idup polled as every wait (progress.c); the splits
 * and MPI_Comm_create_group, which have no non-blocking form, on the
 * helper thread (helper.c). */
#include <stdlib.h>

#include "mpi_backend.h"

symmem_status_t symmem__mpi_comm_dup(mpi_t *m, const char *call, MPI_Comm comm, MPI_Comm *out_p)
{
    /* MPI may write the new handle until the request completes: a slot of
     * its own, left to MPI where the wait gives up, and no handle of the
     * caller's (progress.c probes m->world) holds a communicator unmade. */
    MPI_Comm *slot = malloc(sizeof(*slot));
    if (slot == NULL) return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    MPI_Request req;
    int rc = MPI_Comm_idup(comm, slot, &req);
    if (rc != MPI_SUCCESS) {
        free(slot);
        return symmem__mpi_failed(rc, call, "MPI_Comm_idup");
    }
    SYMMEM_CHECK(symmem__mpi_wait(m, call, &req));
    *out_p = *slot;
    free(slot);
    return SYMMEM_OK;
}

typedef struct {
    MPI_Comm comm, out;
    int shared; /* MPI_Comm_split_type SHARED, else MPI_Comm_split */
    int color, key;
} split_job_t;

static int split_run(void *arg)
{
    split_job_t *job = arg;
    if (job->shared)
        return MPI_Comm_split_type(job->comm, MPI_COMM_TYPE_SHARED, job->key, MPI_INFO_NULL,
                                   &job->out);
    return MPI_Comm_split(job->comm, job->color, job->key, &job->out);
}

static symmem_status_t split(mpi_t *m, const char *call, split_job_t job, MPI_Comm *out_p)
{
    const char *what = job.shared ? "MPI_Comm_split_type" : "MPI_Comm_split";
    SYMMEM_CHECK(symmem__mpi_blocking(m, call, what, -1, split_run, &job, sizeof(job), 1));
    *out_p = job.out;
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_comm_split(mpi_t *m, const char *call, MPI_Comm comm, int color,
                                       int key, MPI_Comm *out_p)
{
    return split(m, call, (split_job_t){comm, MPI_COMM_NULL, 0, color, key}, out_p);
}

symmem_status_t symmem__mpi_comm_split_shared(mpi_t *m, const char *call, MPI_Comm comm, int key,
                                              MPI_Comm *out_p)
{
    return split(m, call, (split_job_t){comm, MPI_COMM_NULL, 1, 0, key}, out_p);
}

typedef struct {
    MPI_Comm comm, out;
    MPI_Group group;
    int tag;
} create_job_t;

static int create_run(void *arg)
{
    create_job_t *job = arg;
    return MPI_Comm_create_group(job->comm, job->group, job->tag, &job->out);
}

symmem_status_t symmem__mpi_comm_create_group(mpi_t *m, const char *call, MPI_Comm comm,
                                              MPI_Group group, int tag, MPI_Comm *out_p)
{
    create_job_t job = {comm, MPI_COMM_NULL, group, tag};
    SYMMEM_CHECK(symmem__mpi_blocking(m, call, "MPI_Comm_create_group", -1, create_run, &job,
                                      sizeof(job), 1));
    *out_p = job.out;
    return SYMMEM_OK;
}

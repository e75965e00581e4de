/* How the mpi backend fails: MPI's error codes as symmem errors naming the
 * call, and the job counted lost once a PE died or a wait gave up. The
 * bottom of the backend: it calls nothing of the files above it, which all
 * report through it. */
#include <stdio.h>

#include "mpi_backend.h"

/* A PE died: MPI's teardown (a collective) and MPI_Finalize would wait for it. */
static int job_lost;

void symmem__mpi_lost(mpi_t *m)
{
    m->lost = job_lost = 1;
}

int symmem__mpi_job_lost(void)
{
    return job_lost;
}

/* An MPI error code as words. */
static void error_text(int code, char *out, size_t size)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
    text[len] = '\0';
    snprintf(out, size, "%s (MPI error %d)", len ? text : "unknown error", code);
}

symmem_status_t symmem__mpi_failed(int rc, const char *call, const char *what)
{
    char text[MPI_MAX_ERROR_STRING + 32];
    error_text(rc, text, sizeof(text));
    return MPI_CORE->error(SYMMEM_ERR_BACKEND, "%s: %s failed: %s", call, what, text);
}

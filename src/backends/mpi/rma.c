/* put and get: a copy where this process maps the peer's heap (the node
 * path), else MPI_Rput / MPI_Rget on the window, polled until the source
 * can be reused (put) or the data is here (get). The nbi forms leave the
 * operation to quiet, which flushes the window (flush.c). */
#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include "mpi_backend.h"

#define CHUNK ((size_t)1 << 30) /* MPI counts are ints */

typedef int rma_func_t(void *origin, int count, MPI_Datatype type, int pe, MPI_Aint disp,
                       int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req);

static int rput(void *origin, int count, MPI_Datatype type, int pe, MPI_Aint disp, int tcount,
                MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
    return MPI_Rput(origin, count, type, pe, disp, tcount, ttype, win, req);
}

/* One RMA operation of any size, waited for (wait) or left to quiet. */
static symmem_status_t transfer(mpi_t *m, const char *call, rma_func_t *fn, char *local,
                                const void *sym, size_t nbytes, int pe, int wait)
{
    for (size_t done = 0; done < nbytes; done += CHUNK) {
        int count = (int)(nbytes - done < CHUNK ? nbytes - done : CHUNK);
        MPI_Request req;
        int rc = fn(local + done, count, MPI_BYTE, pe, mpi_disp(m, (const char *)sym + done, pe),
                    count, MPI_BYTE, m->win, &req);
        if (rc != MPI_SUCCESS) return symmem__mpi_failed(rc, call, "an RMA operation");
        m->dirty = 1;
        if (wait)
            SYMMEM_CHECK(symmem__mpi_wait(m, call, &req));
        else
            MPI_Request_free(&req); /* completed by quiet's flush */
    }
    return SYMMEM_OK;
}

/* A get must see this PE's earlier puts to the same place (the cpu engine's
 * copies are done when put returns): MPI orders neither. */
static symmem_status_t flush_before_get(mpi_t *m, const char *call, int pe)
{
    if (!m->dirty) return SYMMEM_OK;
    return symmem__mpi_flush(m, call, pe);
}

static symmem_status_t put(mpi_t *m, const char *call, void *dst, const void *src, size_t nbytes,
                           int pe, int wait)
{
    char *mapped = mpi_ptr(m, dst, pe);
    if (mapped != NULL) {
        memmove(mapped, src, nbytes);
        atomic_thread_fence(memory_order_release); /* before a later signal or barrier */
        return SYMMEM_OK;
    }
    return transfer(m, call, rput, (char *)src, dst, nbytes, pe, wait);
}

static symmem_status_t get(mpi_t *m, const char *call, void *dst, const void *src, size_t nbytes,
                           int pe, int wait)
{
    const char *mapped = mpi_ptr(m, src, pe);
    if (mapped != NULL) {
        atomic_thread_fence(memory_order_acquire);
        memmove(dst, mapped, nbytes);
        return SYMMEM_OK;
    }
    SYMMEM_CHECK(flush_before_get(m, call, pe));
    return transfer(m, call, MPI_Rget, dst, src, nbytes, pe, wait);
}

symmem_status_t symmem__mpi_put(symmem_backend_t *be, void *dst, const void *src, size_t nbytes,
                                int pe, symmem_stream_t stream)
{
    (void)stream;
    return put(be, "put", dst, src, nbytes, pe, 1);
}

symmem_status_t symmem__mpi_put_nbi(symmem_backend_t *be, void *dst, const void *src, size_t nbytes,
                                    int pe, symmem_stream_t stream)
{
    (void)stream;
    return put(be, "put_nbi", dst, src, nbytes, pe, 0);
}

symmem_status_t symmem__mpi_get(symmem_backend_t *be, void *dst, const void *src, size_t nbytes,
                                int pe, symmem_stream_t stream)
{
    (void)stream;
    return get(be, "get", dst, src, nbytes, pe, 1);
}

symmem_status_t symmem__mpi_get_nbi(symmem_backend_t *be, void *dst, const void *src, size_t nbytes,
                                    int pe, symmem_stream_t stream)
{
    (void)stream;
    return get(be, "get_nbi", dst, src, nbytes, pe, 0);
}

symmem_status_t symmem__mpi_quiet(symmem_backend_t *be, symmem_stream_t stream)
{
    (void)stream;
    mpi_t *m = be;
    atomic_thread_fence(memory_order_seq_cst); /* the node path's stores */
    if (!m->dirty) return SYMMEM_OK;
    SYMMEM_CHECK(symmem__mpi_flush(m, "quiet", -1));
    m->dirty = 0;
    return SYMMEM_OK;
}

/* MPI does not order puts to one PE: fence completes them, as quiet does. */
symmem_status_t symmem__mpi_fence(symmem_backend_t *be, symmem_stream_t stream)
{
    return symmem__mpi_quiet(be, stream);
}

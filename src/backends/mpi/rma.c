/* put and get: a copy where this process maps the peer's heap (the node
 * path), else MPI_Put / MPI_Rget on the window, completed until the source
 * can be reused (put: MPI_Win_flush_local) or the data is here (get: the
 * request polled). The nbi forms leave the operation to quiet, which
 * flushes the PE written, or the window (flush.c). */
#include <limits.h>
#include <stdatomic.h>
#include <string.h>

#include "mpi_backend.h"

#define CHUNK ((size_t)1 << 30) /* MPI counts are ints */

/* One RMA operation of any size: a put completed at the origin (its source
 * reusable: MPI_Put then MPI_Win_flush_local, cheaper than a request) or
 * left to quiet; a get waited for (MPI_Rget, polled) or left to quiet. */
static symmem_status_t transfer(mpi_t *m, const char *call, int is_put, char *local,
                                const void *sym, size_t nbytes, int pe, int wait)
{
    for (size_t done = 0; done < nbytes; done += CHUNK) {
        int count = (int)(nbytes - done < CHUNK ? nbytes - done : CHUNK);
        MPI_Aint disp = mpi_disp(m, (const char *)sym + done, pe);
        MPI_Request req;
        int rc = is_put ? MPI_Put(local + done, count, MPI_BYTE, pe, disp, count, MPI_BYTE, m->win)
                 : wait ? MPI_Rget(local + done, count, MPI_BYTE, pe, disp, count, MPI_BYTE, m->win,
                                   &req)
                        : MPI_Get(local + done, count, MPI_BYTE, pe, disp, count, MPI_BYTE, m->win);
        if (rc != MPI_SUCCESS) return symmem__mpi_failed(rc, call, "an RMA operation");
        if (wait && !is_put) {
            SYMMEM_CHECK(symmem__mpi_wait(m, call, &req)); /* done: nothing left to quiet */
            continue;
        }
        m->dirty = m->dirty == -1 || m->dirty == pe ? pe : MPI_DIRTY_MANY;
    }
    if (wait && is_put) SYMMEM_CHECK(symmem__mpi_flush_local(m, call, pe));
    return SYMMEM_OK;
}

/* A get must see this PE's earlier puts to the same place (the cpu engine's
 * copies are done when put returns): MPI orders neither. */
static symmem_status_t flush_before_get(mpi_t *m, const char *call, int pe)
{
    if (m->dirty != pe && m->dirty != MPI_DIRTY_MANY) return SYMMEM_OK;
    SYMMEM_CHECK(symmem__mpi_flush(m, call, pe));
    if (m->dirty == pe) m->dirty = -1;
    return SYMMEM_OK;
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
    return transfer(m, call, 1, (char *)src, dst, nbytes, pe, wait);
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
    return transfer(m, call, 0, dst, src, nbytes, pe, wait);
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
    if (m->dirty == -1) return SYMMEM_OK;
    /* One PE's flush where only it was written: flush_all visits every PE */
    SYMMEM_CHECK(symmem__mpi_flush(m, "quiet", m->dirty == MPI_DIRTY_MANY ? -1 : m->dirty));
    m->dirty = -1;
    return SYMMEM_OK;
}

/* MPI does not order puts to one PE: fence completes them, as quiet does. */
symmem_status_t symmem__mpi_fence(symmem_backend_t *be, symmem_stream_t stream)
{
    return symmem__mpi_quiet(be, stream);
}

/* put_signal and the waits on this PE's own heap. A signal is an MPI
 * accumulate on the signal word (atomic with the atomics, which are
 * accumulates too), issued once the data has been flushed to the target, so
 * a PE that sees the signal sees the data. Waits poll the word after
 * MPI_Win_sync (the window's memory as RMA left it) and drive MPI's
 * progress while they do (progress.c). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../../core/vocab.h" /* SYMMEM__COMPARE_AS */
#include "mpi_backend.h"

symmem_status_t symmem__mpi_put_signal(symmem_backend_t *be, void *dst, const void *src,
                                       size_t nbytes, uint64_t *sig, uint64_t value,
                                       symmem_signal_op_t op, int pe, int nbi,
                                       symmem_stream_t stream)
{
    mpi_t *m = be;
    const char *call = nbi ? "put_signal_nbi" : "put_signal";
    if (nbytes > 0) {
        SYMMEM_CHECK(
            (nbi ? symmem__mpi_put_nbi : symmem__mpi_put)(m, dst, src, nbytes, pe, stream));
        if (mpi_ptr(m, dst, pe) == NULL)
            SYMMEM_CHECK(symmem__mpi_flush(m, call, pe)); /* data before signal */
    }
    uint64_t old;
    MPI_TRY(call, "MPI_Fetch_and_op",
            MPI_Fetch_and_op(&value, &old, MPI_UINT64_T, pe, mpi_disp(m, sig, pe),
                             op == SYMMEM_SIGNAL_SET ? MPI_REPLACE : MPI_SUM, m->win));
    return symmem__mpi_flush(m, call, pe);
}

/* An element being waited on, and the condition. */
typedef struct {
    void *ivar;
    symmem_dtype_t dtype;
    symmem_cmp_t cmp;
    int64_t value;
    uint64_t seen;
} element_wait_t;

/* Loads the element and tests the condition in its own type. */
static int element_ready(mpi_t *m, void *arg)
{
    element_wait_t *w = arg;
    MPI_Win_sync(m->win); /* the public copy of the window into ours */
    switch (w->dtype) {
#define CASE(DT, T)                                                                                \
    case DT: {                                                                                     \
        T v = __atomic_load_n((T *)w->ivar, __ATOMIC_ACQUIRE);                                     \
        int ok;                                                                                    \
        w->seen = (uint64_t)v;                                                                     \
        SYMMEM__COMPARE_AS(T, v, w->cmp, w->value, &ok); /* the core's comparisons */              \
        return ok;                                                                                 \
    }
        CASE(SYMMEM_DTYPE_INT8, int8_t)
        CASE(SYMMEM_DTYPE_INT16, int16_t)
        CASE(SYMMEM_DTYPE_INT32, int32_t)
        CASE(SYMMEM_DTYPE_INT64, int64_t)
        CASE(SYMMEM_DTYPE_UINT8, uint8_t)
        CASE(SYMMEM_DTYPE_UINT16, uint16_t)
        CASE(SYMMEM_DTYPE_UINT32, uint32_t)
        CASE(SYMMEM_DTYPE_UINT64, uint64_t)
#undef CASE
    default: return 0;
    }
}

static symmem_status_t element_wait(mpi_t *m, const char *call, element_wait_t *w)
{
    symmem_status_t status = symmem__mpi_poll(m, call, element_ready, w, 1);
    if (status == SYMMEM_ERR_TIMEOUT || status == SYMMEM_ERR_PEER_DEAD) {
        static const char *const names[] = {"==", "!=", ">", "<=", "<", ">="};
        char why[768];
        snprintf(why, sizeof(why), "%s", MPI_CORE->last_error());
        return MPI_CORE->error(status, "%s; waiting for value %s %lld, last seen %llu", why,
                               names[w->cmp], (long long)w->value, (unsigned long long)w->seen);
    }
    return status;
}

symmem_status_t symmem__mpi_signal_wait_until(symmem_backend_t *be, uint64_t *sig, symmem_cmp_t cmp,
                                              uint64_t value, symmem_stream_t stream,
                                              uint64_t *value_p)
{
    (void)stream;
    element_wait_t w = {sig, SYMMEM_DTYPE_UINT64, cmp, (int64_t)value, 0};
    SYMMEM_CHECK(element_wait(be, "signal_wait", &w));
    if (value_p) *value_p = w.seen;
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_signal_fetch(symmem_backend_t *be, const uint64_t *sig,
                                         uint64_t *value_p)
{
    mpi_t *m = be;
    MPI_Win_sync(m->win);
    *value_p = __atomic_load_n(sig, __ATOMIC_ACQUIRE);
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_wait_until(symmem_backend_t *be, void *ivar, symmem_dtype_t dtype,
                                       symmem_cmp_t cmp, int64_t value)
{
    element_wait_t w = {ivar, dtype, cmp, value, 0};
    return element_wait(be, "wait_until", &w);
}

symmem_status_t symmem__mpi_test(symmem_backend_t *be, void *ivar, symmem_dtype_t dtype,
                                 symmem_cmp_t cmp, int64_t value, int *result_p)
{
    element_wait_t w = {ivar, dtype, cmp, value, 0};
    *result_p = element_ready(be, &w);
    return SYMMEM_OK;
}

/* The atomics as MPI's atomic operations on the window: MPI_Fetch_and_op
 * (fetch, set, the arithmetic and bitwise ones, swap) and
 * MPI_Compare_and_swap, each flushed (flush.c) before it returns. Every atomic goes
 * through MPI, also on this node and on this PE's own heap: MPI makes
 * accumulates atomic only with each other. float32 and float64 move their
 * bits as integers of their width, except add, which MPI sums as floats. */
#include <string.h>

#include "mpi_backend.h"

/* The MPI type an atomic of op works on for dtype. */
static MPI_Datatype atomic_type(symmem_dtype_t dtype, symmem_atomic_op_t op)
{
    int add = op == SYMMEM_ATOMIC_ADD || op == SYMMEM_ATOMIC_FETCH_ADD;
    switch (dtype) {
    case SYMMEM_DTYPE_FLOAT32: return add ? MPI_FLOAT : MPI_UINT32_T;
    case SYMMEM_DTYPE_FLOAT64: return add ? MPI_DOUBLE : MPI_UINT64_T;
    case SYMMEM_DTYPE_INT32: return MPI_INT32_T;
    case SYMMEM_DTYPE_UINT32: return MPI_UINT32_T;
    case SYMMEM_DTYPE_INT64: return MPI_INT64_T;
    default: return MPI_UINT64_T;
    }
}

/* The atomic's name for messages (the core's symmem_atomic_op_name is not
 * reachable from this library, which links no core). */
static const char *op_name(symmem_atomic_op_t op)
{
    static const char *const names[SYMMEM_ATOMIC_COUNT] = {
        "atomic_fetch", "atomic_set",         "atomic_inc", "atomic_fetch_inc",
        "atomic_add",   "atomic_fetch_add",   "atomic_and", "atomic_fetch_and",
        "atomic_or",    "atomic_fetch_or",    "atomic_xor", "atomic_fetch_xor",
        "atomic_swap",  "atomic_compare_swap"};
    return (unsigned)op < SYMMEM_ATOMIC_COUNT ? names[op] : "atomic";
}

static MPI_Op atomic_op(symmem_atomic_op_t op)
{
    switch (op) {
    case SYMMEM_ATOMIC_FETCH: return MPI_NO_OP;
    case SYMMEM_ATOMIC_INC:
    case SYMMEM_ATOMIC_FETCH_INC:
    case SYMMEM_ATOMIC_ADD:
    case SYMMEM_ATOMIC_FETCH_ADD: return MPI_SUM;
    case SYMMEM_ATOMIC_AND:
    case SYMMEM_ATOMIC_FETCH_AND: return MPI_BAND;
    case SYMMEM_ATOMIC_OR:
    case SYMMEM_ATOMIC_FETCH_OR: return MPI_BOR;
    case SYMMEM_ATOMIC_XOR:
    case SYMMEM_ATOMIC_FETCH_XOR: return MPI_BXOR;
    default: return MPI_REPLACE; /* set, swap */
    }
}

symmem_status_t symmem__mpi_atomic(symmem_backend_t *be, symmem_atomic_op_t op, void *target,
                                   symmem_dtype_t dtype, uint64_t value, uint64_t cond, int pe,
                                   uint64_t *fetched_p)
{
    mpi_t *m = be;
    const char *call = op_name(op);
    MPI_Datatype type = atomic_type(dtype, op);
    int size;
    MPI_Type_size(type, &size);
    if (op == SYMMEM_ATOMIC_INC || op == SYMMEM_ATOMIC_FETCH_INC) value = 1;
    /* value and cond hold the element's bits, in their low bytes */
    uint64_t origin = value, compare = cond, result = 0;
    MPI_Aint disp = mpi_disp(m, target, pe);
    if (op == SYMMEM_ATOMIC_COMPARE_SWAP)
        MPI_TRY(call, "MPI_Compare_and_swap",
                MPI_Compare_and_swap(&origin, &compare, &result, type, pe, disp, m->win));
    else
        MPI_TRY(call, "MPI_Fetch_and_op",
                MPI_Fetch_and_op(&origin, &result, type, pe, disp, atomic_op(op), m->win));
    SYMMEM_CHECK(symmem__mpi_flush(m, call, pe));
    if (fetched_p) {
        uint64_t fetched = 0;
        memcpy(&fetched, &result, (size_t)size); /* zero-extended, as the cpu engine's */
        *fetched_p = fetched;
    }
    return SYMMEM_OK;
}

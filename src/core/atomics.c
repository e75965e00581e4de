/* Atomics on any PE's copy of a symmetric element: checks, then the backend. */
#include "error.h"
#include "checks.h"
#include "state.h"

#define RT (&symmem__rt)

static const char *const names[SYMMEM_ATOMIC_COUNT] = {
    "atomic_fetch", "atomic_set", "atomic_inc",       "atomic_fetch_inc", "atomic_add",
    "atomic_fetch_add", "atomic_and", "atomic_fetch_and", "atomic_or",    "atomic_fetch_or",
    "atomic_xor", "atomic_fetch_xor", "atomic_swap",  "atomic_compare_swap",
};

const char *symmem_atomic_op_name(symmem_atomic_op_t op)
{
    return (unsigned)op < SYMMEM_ATOMIC_COUNT ? names[op] : "atomic_unknown";
}

/* Which dtypes an operation takes: the four 32/64-bit integers always;
 * floats only where the result needs no bitwise meaning. */
static int dtype_allowed(symmem_atomic_op_t op, symmem_dtype_t dtype)
{
    switch (dtype) {
    case SYMMEM_DTYPE_INT32: case SYMMEM_DTYPE_INT64:
    case SYMMEM_DTYPE_UINT32: case SYMMEM_DTYPE_UINT64:
        return 1;
    case SYMMEM_DTYPE_FLOAT32: case SYMMEM_DTYPE_FLOAT64:
        return op == SYMMEM_ATOMIC_FETCH || op == SYMMEM_ATOMIC_SET || op == SYMMEM_ATOMIC_SWAP ||
               op == SYMMEM_ATOMIC_ADD || op == SYMMEM_ATOMIC_FETCH_ADD;
    default:
        return 0;
    }
}

symmem_status_t symmem_atomic(symmem_atomic_op_t op, void *target, symmem_dtype_t dtype,
                              uint64_t value, uint64_t cond, int pe, uint64_t *fetched_p)
{
    const char *call = symmem_atomic_op_name(op);
    SYMMEM_CHECK(symmem__check_initialized(call));
    if ((unsigned)op >= SYMMEM_ATOMIC_COUNT)
        return symmem__error(SYMMEM_ERR_INVALID, "atomic: op=%d is not an atomic operation",
                             (int)op);
    if (!dtype_allowed(op, dtype))
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: dtype %s is not supported (int32, int64, uint32, uint64%s)",
                             call, symmem_dtype_name(dtype),
                             dtype_allowed(op, SYMMEM_DTYPE_FLOAT32) ? ", float32, float64" : "");
    SYMMEM_CHECK(symmem__check_pe(call, "remote_pe", pe));
    size_t size = symmem_dtype_size(dtype);
    SYMMEM_CHECK(symmem__check_symmetric(call, "target", target, size));
    if ((uintptr_t)target % size != 0)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: target %p is not %zu-byte aligned", call,
                             target, size);
    return RT->ops->atomic(RT->be, op, target, dtype, value, cond, pe, fetched_p);
}

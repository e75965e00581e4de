/* Atomics on any PE's copy of a symmetric element: checks, then the backend. */
#include "error.h"
#include "checks.h"
#include "state.h"
#include "vocab.h"

#define RT (&symmem__rt)

#define NAME_OF(NAME, name, code, operands, fetches, floats, device) [code] = name,
static const char *const names[SYMMEM_ATOMIC_COUNT] = {SYMMEM_ATOMIC_OPS(NAME_OF)};
#undef NAME_OF
#define FLOATS_OF(NAME, name, code, operands, fetches, floats, device) [code] = floats,
static const unsigned char takes_floats[SYMMEM_ATOMIC_COUNT] = {SYMMEM_ATOMIC_OPS(FLOATS_OF)};
#undef FLOATS_OF

const char *symmem_atomic_op_name(symmem_atomic_op_t op)
{
    return (unsigned)op < SYMMEM_ATOMIC_COUNT ? names[op] : "atomic_unknown";
}

/* Which dtypes an operation takes: the four 32/64-bit integers always;
 * float32 and float64 where the vocabulary says (no bitwise meaning needed). */
static int dtype_allowed(symmem_atomic_op_t op, symmem_dtype_t dtype)
{
    size_t size = symmem__dtype_bytes(dtype);
    if (size != 4 && size != 8) return 0;
    if (symmem__dtype_is_integer(dtype)) return 1;
    return symmem__dtype_is_float(dtype) && (unsigned)op < SYMMEM_ATOMIC_COUNT && takes_floats[op];
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
                             "%s: dtype %s is not supported (int32, int64, uint32, uint64%s)", call,
                             symmem_dtype_name(dtype),
                             dtype_allowed(op, SYMMEM_DTYPE_FLOAT32) ? ", float32, float64" : "");
    SYMMEM_CHECK(symmem__check_pe(call, "remote_pe", pe));
    size_t size = symmem_dtype_size(dtype);
    SYMMEM_CHECK(symmem__check_symmetric(call, "target", target, size));
    if ((uintptr_t)target % size != 0)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: target %p is not %zu-byte aligned", call,
                             target, size);
    return RT->ops->atomic(RT->be, op, target, dtype, value, cond, pe, fetched_p);
}

/* symmem's device library (device.cuh): point-to-point synchronization on
 * more than one variable, or without waiting: NVSHMEM's test, and its waits
 * and tests on a set of variables (wait_until_all, _any, _some, test_all,
 * _any, _some, and their _vector forms). The variables are this PE's own
 * (NVSHMEM's ivars: symmetric, written by peers); every look is
 * symmem__test's acquire load, which pairs with the release fence before
 * the store it reads (put_signal's, signal_op's, or a p of the flag after
 * quiet or fence), as in symmem_dev_wait_until. */
#ifndef SYMMEM_DEVICE_WAIT_SETS_CUH
#define SYMMEM_DEVICE_WAIT_SETS_CUH

#include "device_base.cuh"

/* Whether ivar (dtype an integer symmem_dtype_t) compares true with value
 * now: 1 or 0, no wait. */
SYMMEM_DEVICE_API int symmem_dev_test(symmem_u64 st, symmem_u64 ivar, int dtype, int cmp,
                                      long long value)
{
    (void)st;
    return symmem__test(ivar, dtype, cmp, value);
}

/* A plain load of element i of the comparison values (their writer is this
 * thread, before the call), sign- or zero-extended as the dtype says. */
static __device__ __forceinline__ long long symmem__value_at(symmem_u64 values, symmem_u64 i,
                                                             int dtype)
{
    symmem_u64 at = values + i * symmem__dtype_size(dtype);
    switch (dtype) {
    case SYMMEM_DTYPE_INT8: return *(const signed char *)at;
    case SYMMEM_DTYPE_INT16: return *(const short *)at;
    case SYMMEM_DTYPE_INT32: return *(const int *)at;
    case SYMMEM_DTYPE_UINT8: return *(const unsigned char *)at;
    case SYMMEM_DTYPE_UINT16: return *(const unsigned short *)at;
    case SYMMEM_DTYPE_UINT32: return *(const unsigned int *)at;
    default: return *(const long long *)at;
    }
}

/* One look at the set: how many of the variables that status leaves in
 * (status[i] == 0; status 0: all) compare true, their indices written to
 * indices (where not 0) and the first to *first; *watched how many status
 * leaves in. */
static __device__ __forceinline__ symmem_u64 symmem__look(symmem_u64 ivars, symmem_u64 nelems,
                                                          symmem_u64 status, int dtype, int cmp,
                                                          long long value, symmem_u64 values,
                                                          symmem_u64 indices, symmem_u64 *first,
                                                          symmem_u64 *watched)
{
    symmem_u64 size = symmem__dtype_size(dtype), found = 0;
    *watched = 0;
    for (symmem_u64 i = 0; i < nelems; i++) {
        if (status != 0 && ((const int *)status)[i] != 0) continue;
        ++*watched;
        long long x = values != 0 ? symmem__value_at(values, i, dtype) : value;
        if (!symmem__test(ivars + i * size, dtype, cmp, x)) continue;
        if (found == 0) *first = i;
        if (indices != 0) ((symmem_u64 *)indices)[found] = i;
        found++;
    }
    return found;
}

/* wait_until_all: each variable status leaves in, in turn, until it
 * compares true (as NVSHMEM waits for them). */
static __device__ __forceinline__ void symmem__wait_all(symmem_u64 st, symmem_u64 ivars,
                                                        symmem_u64 nelems, symmem_u64 status,
                                                        int dtype, int cmp, long long value,
                                                        symmem_u64 values)
{
    symmem_u64 size = symmem__dtype_size(dtype), t0 = symmem__globaltimer();
    for (symmem_u64 i = 0; i < nelems; i++) {
        if (status != 0 && ((const int *)status)[i] != 0) continue;
        long long x = values != 0 ? symmem__value_at(values, i, dtype) : value;
        for (unsigned int spin = 1; !symmem__test(ivars + i * size, dtype, cmp, x); spin++)
            if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, "wait_until_all", t0);
    }
}

/* NVSHMEM's <T>_wait_until_{all,any,some}[_vector] and, with
 * SYMMEM_DEV_WAIT_TEST in how, <T>_test_{all,any,some}[_vector]: ivars[i]
 * (i < nelems, dtype an integer symmem_dtype_t) compared with values[i]
 * (values 0: with value), leaving out those whose status[i] is nonzero.
 * Returns, for ALL: 1 once every one compares true (the test: whether they
 * all do now); ANY: the index of one that does (~0 where none is watched,
 * or, for the test, none does); SOME: how many do, their indices written
 * to indices (0 where none is watched, or, for the test, none does). */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_wait_set(symmem_u64 st, symmem_u64 ivars, symmem_u64 nelems,
                                                 symmem_u64 status, int dtype, int cmp,
                                                 long long value, symmem_u64 values,
                                                 symmem_u64 indices, int how)
{
    int mode = how & ~SYMMEM_DEV_WAIT_TEST, test = (how & SYMMEM_DEV_WAIT_TEST) != 0;
    if (mode == SYMMEM_DEV_WAIT_ALL && !test) {
        symmem__wait_all(st, ivars, nelems, status, dtype, cmp, value, values);
        return 1;
    }
    symmem_u64 t0 = symmem__globaltimer(), first = ~0ull, watched;
    for (unsigned int spin = 1;; spin++) {
        /* only SOME has an indices array to fill */
        symmem_u64 found =
            symmem__look(ivars, nelems, status, dtype, cmp, value, values,
                         mode == SYMMEM_DEV_WAIT_SOME ? indices : 0, &first, &watched);
        if (mode == SYMMEM_DEV_WAIT_ALL) return found == watched; /* the test */
        if (found > 0 || watched == 0 || test)
            return mode == SYMMEM_DEV_WAIT_ANY ? (found > 0 ? first : ~0ull) : found;
        if (spin % SYMMEM_DEV_SPINS == 0)
            symmem__still_waiting(
                st, mode == SYMMEM_DEV_WAIT_ANY ? "wait_until_any" : "wait_until_some", t0);
    }
}

#endif

/* The atomics that go through NVSHMEM's device library: for a PE this PE
 * has no load/store mapping of (another node), NVSHMEM's own device atomics
 * pick the network transport. Each kernel has the name of its PTX twin
 * (atomics.ptx: amo_<op>_<type>) and one more parameter, the PE; the target
 * is the local symmetric address. Float adds have no NVSHMEM atomic: a
 * compare-and-swap loop on the bits does them. NVRTC compiles this module at
 * the first such atomic, against NVSHMEM's headers (nvshmem_atomics.c).
 *
 * NVSHMEM's device API alone: its collectives' headers need the C++ library
 * NVRTC does not have, and are not used. */
#include "non_abi/nvshmem_build_options.h"
#include "device/nvshmem_defines.h"
typedef unsigned int u32;
typedef unsigned long long u64;
#define KERNEL(name, T) extern "C" __global__ void name(T *t, u64 v, u64 c, T *r, int pe)

/* amo_<op>_<type>: *r = the old value of NVSHMEM's fetching atomic call
 * with value V. */
#define FETCHING(op, type, T, call, V)                                                             \
    KERNEL(amo_##op##_##type, T)                                                                   \
    {                                                                                              \
        *r = call(t, V, pe);                                                                       \
    }

FETCHING(or, b32, u32, nvshmem_uint32_atomic_fetch_or, (u32)v)
FETCHING(or, b64, u64, nvshmem_uint64_atomic_fetch_or, v)
FETCHING(exch, b32, u32, nvshmem_uint32_atomic_swap, (u32)v)
FETCHING(exch, b64, u64, nvshmem_uint64_atomic_swap, v)
FETCHING(add, u32, u32, nvshmem_uint32_atomic_fetch_add, (u32)v)
FETCHING(add, u64, u64, nvshmem_uint64_atomic_fetch_add, v)
FETCHING(and, b32, u32, nvshmem_uint32_atomic_fetch_and, (u32)v)
FETCHING(and, b64, u64, nvshmem_uint64_atomic_fetch_and, v)
FETCHING(xor, b32, u32, nvshmem_uint32_atomic_fetch_xor, (u32)v)
FETCHING(xor, b64, u64, nvshmem_uint64_atomic_fetch_xor, v)
KERNEL(amo_cas_b32, u32)
{
    *r = nvshmem_uint32_atomic_compare_swap(t, (u32)c, (u32)v, pe);
}
KERNEL(amo_cas_b64, u64)
{
    *r = nvshmem_uint64_atomic_compare_swap(t, c, v, pe);
}

/* old: what the target held; each try adds to it, and the swap holds only
 * if the target still held old */
KERNEL(amo_add_f32, u32)
{
    u32 old = nvshmem_uint32_atomic_fetch(t, pe), seen;
    float add = __uint_as_float((u32)v);
    while ((seen = nvshmem_uint32_atomic_compare_swap(
                t, old, __float_as_uint(__uint_as_float(old) + add), pe)) != old)
        old = seen;
    *r = old;
}
KERNEL(amo_add_f64, u64)
{
    u64 old = nvshmem_uint64_atomic_fetch(t, pe), seen;
    double add = __longlong_as_double((long long)v);
    while ((seen = nvshmem_uint64_atomic_compare_swap(
                t, old, (u64)__double_as_longlong(__longlong_as_double((long long)old) + add),
                pe)) != old)
        old = seen;
    *r = old;
}

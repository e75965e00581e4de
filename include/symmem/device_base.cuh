/* symmem's device library (device.cuh): the state it reads, failing
 * loudly, the scopes, where a PE's copy of an address is, and the waits,
 * over device_primitives.cuh (the memory-model primitives, the error
 * record's writer, a wait's check), which the gpu backend's own kernels
 * share. The layout of the state block, the constant state and the error
 * record is symmem/device_layout.h's, shared with the host. */
#ifndef SYMMEM_DEVICE_BASE_CUH
#define SYMMEM_DEVICE_BASE_CUH

#include "device_layout.h"
#include "device_primitives.cuh"
#include "vocabulary.h" /* the codes of signal ops, comparisons, dtypes and ops */

/* extern "C" __device__ for linking (symmem.device.numba); a header user
 * may define it as static __device__ __forceinline__ before the include. */
#ifndef SYMMEM_DEVICE_API
#define SYMMEM_DEVICE_API extern "C" __device__
#endif

/* The constant state (device_layout.h's symmem_device_consts_t), which the
 * host copies into the constant bank of each loaded module that links this
 * library (the gpu backend writes it at init, at each malloc and at
 * finalize). A fence's or an acquire's CCTL.IVALL empties L1: reading the
 * state block through L1 cost a round trip to L2 after each of them
 * (0.1-0.3 us a call, measured), and the constant cache keeps its lines.
 * magic is 0 until the host writes it (a module loaded where no one does)
 * and after finalize: calls then take the slow path, through the state
 * block. */
extern "C" {
__constant__ symmem_device_consts_t symmem_device_consts;
}

/* the device library's names for vocabulary.h's codes */
#define SYMMEM_DEV_SIGNAL_SET SYMMEM_SIGNAL_SET
#define SYMMEM_DEV_SIGNAL_ADD SYMMEM_SIGNAL_ADD
/* ComparisonType */
#define SYMMEM_DEV_CMP_EQ SYMMEM_CMP_EQ
#define SYMMEM_DEV_CMP_NE SYMMEM_CMP_NE
#define SYMMEM_DEV_CMP_GT SYMMEM_CMP_GT
#define SYMMEM_DEV_CMP_LE SYMMEM_CMP_LE
#define SYMMEM_DEV_CMP_LT SYMMEM_CMP_LT
#define SYMMEM_DEV_CMP_GE SYMMEM_CMP_GE

#define SYMMEM__ST(st) ((const symmem_device_state *)(st))

/* ---- failing loudly ---- */

/* The error record (symmem__fail_at) at the state block's error, naming
 * call; then traps. */
static __device__ __noinline__ void symmem__dev_fail(symmem_u64 st, const char *call, int what,
                                                     int pe, int arg, symmem_u64 value)
{
    symmem__fail_at(SYMMEM__ST(st)->error, call, 0, what, pe, arg, value);
}

/* ---- the scopes: which lane of how many, and their barrier ---- */

#define SYMMEM__THREAD 0
#define SYMMEM__WARP 1
#define SYMMEM__BLOCK 2

static __device__ __forceinline__ unsigned int symmem__lane(int scope)
{
    if (scope == SYMMEM__WARP) return threadIdx.x & 31u; /* warps are made along x first */
    if (scope == SYMMEM__BLOCK)
        return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return 0;
}

static __device__ __forceinline__ unsigned int symmem__lanes(int scope)
{
    if (scope == SYMMEM__WARP) return 32u;
    if (scope == SYMMEM__BLOCK) return blockDim.x * blockDim.y * blockDim.z;
    return 1u;
}

static __device__ __forceinline__ void symmem__scope_sync(int scope)
{
    if (scope == SYMMEM__WARP) __syncwarp();
    if (scope == SYMMEM__BLOCK) __syncthreads();
}

/* ---- reading the state block ---- */

/* A field of the state block, or of its peer and team tables, through the
 * read-only cache (ld.global.nc): they change only between kernels (the
 * host rewrites them). __ldg, not inline asm: the compiler knows it reads
 * memory, so it never hoists one above the check that makes its address
 * valid (it did hoist a pure asm load of a team entry above the branch
 * that skips teams: an illegal address). */
template <typename T>
static __device__ __forceinline__ T symmem__ro(const T *p)
{
    union {
        T value;
        symmem_u64 u64;
        unsigned int u32;
    } v;
    if (sizeof(T) == 8)
        v.u64 = __ldg((const symmem_u64 *)p);
    else
        v.u32 = __ldg((const unsigned int *)p);
    return v.value;
}
#define SYMMEM__RO(st, field) symmem__ro(&SYMMEM__ST(st)->field)

/* ---- where a PE's copy is ---- */

static __device__ __forceinline__ void symmem__check_pe(symmem_u64 st, const char *call, int pe)
{
    if (SYMMEM__RO(st, magic) != SYMMEM_DEVICE_STATE_MAGIC)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_NOT_INITIALIZED, SYMMEM__RO(st, my_pe), -1, 0);
    if (pe < 0 || pe >= SYMMEM__RO(st, n_pes))
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_PE, pe, -1, (symmem_u64)(long long)pe);
}

/* Where PE pe's heap is mapped here, unchecked (0: not mapped). */
static __device__ __forceinline__ symmem_u64 symmem__mapped(symmem_u64 st, int pe)
{
    return symmem__ro(&SYMMEM__RO(st, peer_base)[pe]);
}

/* Where PE pe's heap is mapped here; 0 (a PE on another node) fails. */
static __device__ __forceinline__ symmem_u64 symmem__peer_base(symmem_u64 st, const char *call,
                                                               int pe)
{
    symmem_u64 base = symmem__mapped(st, pe);
    if (base == 0) symmem__dev_fail(st, call, SYMMEM_DEV_ERR_UNREACHABLE, pe, -1, 0);
    return base;
}

/* symmem__remote's checks one by one, through the state block: each failure
 * named, and PEs past the constant peer table. */
static __device__ __noinline__ symmem_u64 symmem__remote_slow(symmem_u64 st, const char *call,
                                                              int arg, symmem_u64 addr,
                                                              symmem_u64 n, int pe)
{
    symmem__check_pe(st, call, pe);
    symmem_u64 base = SYMMEM__RO(st, heap_base), size = SYMMEM__RO(st, heap_size);
    symmem_u64 offset = addr - base;
    if (addr < base || offset > size || n > size - offset)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_NOT_SYMMETRIC, pe, arg, addr);
    return symmem__peer_base(st, call, pe) + offset;
}

/* Where PE pe's copy of the symmetric [addr, addr + n) is mapped here, in
 * *remote, and whether the constant state says so; no branch, so a caller
 * can check several addresses and branch once. */
static __device__ __forceinline__ int symmem__remote_fast(symmem_u64 addr, symmem_u64 n, int pe,
                                                          symmem_u64 *remote)
{
    const symmem_device_consts_t *c = &symmem_device_consts;
    unsigned int slot = (unsigned int)pe < SYMMEM_DEVICE_CONST_PEERS ? (unsigned int)pe : 0u;
    symmem_u64 delta = c->delta[slot], end = c->heap_end;
    *remote = addr + delta;
    return (c->magic == SYMMEM_DEVICE_STATE_MAGIC) & ((unsigned int)pe < (unsigned int)c->peers) &
           (addr >= c->heap_base) & (addr <= end) & (n <= end - addr) & ((delta & 1) == 0);
}

/* Where PE pe's copy of the symmetric [addr, addr + n) is mapped here. */
static __device__ __forceinline__ symmem_u64 symmem__remote(symmem_u64 st, const char *call,
                                                            int arg, symmem_u64 addr, symmem_u64 n,
                                                            int pe)
{
    symmem_u64 remote;
    if (!symmem__remote_fast(addr, n, pe, &remote))
        return symmem__remote_slow(st, call, arg, addr, n, pe);
    return remote;
}

/* ---- waiting ---- */

/* Called every SYMMEM_DEV_SPINS spins of a wait that started at t0. */
static __device__ __noinline__ void symmem__still_waiting(symmem_u64 st, const char *call,
                                                          symmem_u64 t0)
{
    const symmem_device_state *s = SYMMEM__ST(st);
    symmem__wait_check(s->abort_word, &s->timeout_ns, &s->my_pe, t0,
                       [=](int what, int pe, symmem_u64 value) {
                           symmem__dev_fail(st, call, what, pe, -1, value);
                       });
}

/* the comparisons of vocabulary.h (GE for a code it lacks) */
template <typename T>
static __device__ __forceinline__ int symmem__compare(T v, int cmp, T x)
{
    switch (cmp) {
#define SYMMEM__DEV_COMPARE(NAME, name, code, op)                                                  \
    case code: return v op x;
        SYMMEM_COMPARISONS(SYMMEM__DEV_COMPARE)
#undef SYMMEM__DEV_COMPARE
    default: return v >= x;
    }
}

/* The signal's value once it compares true; ld.acquire.sys pairs with the
 * writer's fence.acq_rel.sys before its signal store (put_signal, signal_op). */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_signal_wait(symmem_u64 st, symmem_u64 sig, int cmp,
                                                    symmem_u64 value)
{
    symmem_u64 t0 = symmem__globaltimer();
    for (unsigned int spin = 1;; spin++) {
        symmem_u64 v = symmem__ld_acquire_u64(sig);
        if (symmem__compare<symmem_u64>(v, cmp, value)) return v;
        if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, "signal_wait", t0);
    }
}

/* Bytes of symmem_dtype_t's element (vocabulary.h), 0 if none. */
static __device__ __forceinline__ symmem_u64 symmem__dtype_size(int dtype)
{
    switch (dtype) {
#define SYMMEM__DEV_DTYPE_SIZE(NAME, name, code, size, ctype, nvshmem, kind)                       \
    case code: return size;
        SYMMEM_DTYPES(SYMMEM__DEV_DTYPE_SIZE)
#undef SYMMEM__DEV_DTYPE_SIZE
    default: return 0;
    }
}

/* Whether the integer at ivar (dtype: an integer symmem_dtype_t, int8 ...
 * uint64, vocabulary.h) compares true with value now. The acquire load
 * pairs with the release fence before the store it reads (put_signal's,
 * signal_op's, or a p of the flag after quiet or fence). */
static __device__ __forceinline__ int symmem__test(symmem_u64 ivar, int dtype, int cmp,
                                                   long long value)
{
    long long v;
    switch (dtype) {
    case SYMMEM_DTYPE_INT8: v = (signed char)symmem__ld_acquire_u8(ivar); break;
    case SYMMEM_DTYPE_INT16: v = (short)symmem__ld_acquire_u16(ivar); break;
    case SYMMEM_DTYPE_INT32: v = (int)symmem__ld_acquire_u32(ivar); break;
    case SYMMEM_DTYPE_UINT8: v = (unsigned char)symmem__ld_acquire_u8(ivar); break;
    case SYMMEM_DTYPE_UINT16: v = symmem__ld_acquire_u16(ivar); break;
    case SYMMEM_DTYPE_UINT32: v = symmem__ld_acquire_u32(ivar); break;
    default: v = (long long)symmem__ld_acquire_u64(ivar);
    }
    if (dtype >= SYMMEM_DTYPE_UINT8)
        return symmem__compare<symmem_u64>((symmem_u64)v, cmp, (symmem_u64)value);
    return symmem__compare<long long>(v, cmp, value);
}

/* dtype: an integer symmem_dtype_t (int8 ... uint64, vocabulary.h). */
SYMMEM_DEVICE_API int symmem_dev_wait_until(symmem_u64 st, symmem_u64 ivar, int dtype, int cmp,
                                            long long value)
{
    symmem_u64 t0 = symmem__globaltimer();
    for (unsigned int spin = 1; !symmem__test(ivar, dtype, cmp, value); spin++)
        if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, "wait_until", t0);
    return 0;
}

#endif

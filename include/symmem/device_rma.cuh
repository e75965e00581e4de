/* symmem's device library (device.cuh): put, get, p, g, quiet, fence,
 * signals and atomics, on one PE's copy through the peer mapping. */
#ifndef SYMMEM_DEVICE_RMA_CUH
#define SYMMEM_DEVICE_RMA_CUH

#include "device_base.cuh"

/* ---- copies ---- */

/* This lane's share of copying n bytes, in the widest unit both addresses
 * and the length allow (16, 8, 4 bytes), then the leftover bytes. Where
 * dst and src are equally misaligned (a slice at the same offset of two
 * symmetric buffers, a grid's blocks each at its own offset), the bytes up
 * to their common boundary go first, so that the rest moves in wide units
 * (from 32 bytes: below, one narrower unit is cheaper than the bytes). */
template <int FLIGHT>
static __device__ __forceinline__ void symmem__copy_in_flight(symmem_u64 dst, symmem_u64 src,
                                                              symmem_u64 n, unsigned int lane,
                                                              unsigned int lanes)
{
    symmem_u64 apart = dst ^ src, head = 0;
    if (n >= 32) {
        if ((apart & 15) == 0)
            head = (0 - dst) & 15;
        else if ((apart & 7) == 0)
            head = (0 - dst) & 7;
        else if ((apart & 3) == 0)
            head = (0 - dst) & 3;
    }
    for (symmem_u64 i = lane; i < head; i += lanes)
        ((unsigned char *)dst)[i] = ((const unsigned char *)src)[i];
    dst += head;
    src += head;
    n -= head;
    symmem_u64 aligned = dst | src;
    symmem_u64 done = 0;
    if ((aligned & 15) == 0) {
        const uint4 *s = (const uint4 *)src;
        uint4 *d = (uint4 *)dst;
        symmem_u64 units = n / 16, i = lane;
        /* FLIGHT loads in flight before their stores: a lane waits for a
         * load's latency once per FLIGHT units, not once per unit. */
        for (; i + (FLIGHT - 1ull) * lanes < units; i += (symmem_u64)FLIGHT * lanes) {
            uint4 v[FLIGHT];
#pragma unroll
            for (int k = 0; k < FLIGHT; k++) v[k] = s[i + (symmem_u64)k * lanes];
#pragma unroll
            for (int k = 0; k < FLIGHT; k++) d[i + (symmem_u64)k * lanes] = v[k];
        }
        for (; i < units; i += lanes) d[i] = s[i];
        done = units * 16;
    } else if ((aligned & 7) == 0) {
        symmem_u64 units = n / 8;
        for (symmem_u64 i = lane; i < units; i += lanes)
            ((symmem_u64 *)dst)[i] = ((const symmem_u64 *)src)[i];
        done = units * 8;
    } else if ((aligned & 3) == 0) {
        symmem_u64 units = n / 4;
        for (symmem_u64 i = lane; i < units; i += lanes)
            ((unsigned int *)dst)[i] = ((const unsigned int *)src)[i];
        done = units * 4;
    }
    for (symmem_u64 i = done + lane; i < n; i += lanes)
        ((unsigned char *)dst)[i] = ((const unsigned char *)src)[i];
}

/* put and get: eight 16-byte loads in flight a lane (56 registers). */
static __device__ __forceinline__ void symmem__copy(symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                    unsigned int lane, unsigned int lanes)
{
    symmem__copy_in_flight<8>(dst, src, n, lane, lanes);
}

/* The collectives' copies, four in flight: their loops keep more live, and
 * a kernel calling them must stay within 64 registers to launch 1024
 * threads a block. */
static __device__ __forceinline__ void symmem__copy_small(symmem_u64 dst, symmem_u64 src,
                                                          symmem_u64 n, unsigned int lane,
                                                          unsigned int lanes)
{
    symmem__copy_in_flight<4>(dst, src, n, lane, lanes);
}

/* A thread's put of one aligned 4- or 8-byte word (a flag, a count, a
 * scalar) loads it before the address checks' branch: its round trip to L2
 * (after a fence it misses L1) then overlaps the checks, where a load in
 * the copy would wait for them first (with the checks reading the state
 * block, measured: 0.2 us a ping-pong). */
static __device__ __forceinline__ int symmem__one_word(int scope, symmem_u64 dst, symmem_u64 src,
                                                       symmem_u64 n)
{
    return scope == SYMMEM__THREAD && (n == 8 || n == 4) && ((dst | src) & (n - 1)) == 0;
}
static __device__ __forceinline__ symmem_u64 symmem__load_word(symmem_u64 src, symmem_u64 n)
{
    return n == 8 ? *(const symmem_u64 *)src : *(const unsigned int *)src;
}
/* The copy of a put whose source word (if one_word) is already loaded. */
static __device__ __forceinline__ void symmem__put_to(int scope, symmem_u64 remote, symmem_u64 src,
                                                      symmem_u64 n, int one_word, symmem_u64 word)
{
    if (one_word && n == 8)
        *(symmem_u64 *)remote = word;
    else if (one_word)
        *(unsigned int *)remote = (unsigned int)word;
    else
        symmem__copy(remote, src, n, symmem__lane(scope), symmem__lanes(scope));
    symmem__scope_sync(scope); /* the scope returns together: every copy issued */
}

static __device__ __forceinline__ void symmem__put(symmem_u64 st, const char *call, int scope,
                                                   symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                   int pe)
{
    int one_word = symmem__one_word(scope, dst, src, n);
    symmem_u64 word = one_word ? symmem__load_word(src, n) : 0;
    symmem__put_to(scope, symmem__remote(st, call, 0, dst, n, pe), src, n, one_word, word);
}

static __device__ __forceinline__ void symmem__get(symmem_u64 st, const char *call, int scope,
                                                   symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                   int pe)
{
    symmem_u64 remote = symmem__remote(st, call, 1, src, n, pe);
    symmem__copy(dst, remote, n, symmem__lane(scope), symmem__lanes(scope));
    symmem__scope_sync(scope); /* every lane's loads done: dst is complete for the scope */
}

#define SYMMEM__COPY_API(name, fn, scope)                                                          \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, symmem_u64 dst, symmem_u64 src,         \
                                            symmem_u64 nbytes, int pe)                             \
    {                                                                                              \
        fn(st, #name, scope, dst, src, nbytes, pe);                                                \
        return 0;                                                                                  \
    }

/* nbi forms are the blocking ones: a store through the mapping is issued
 * when it returns, and quiet completes both alike. */
SYMMEM__COPY_API(put, symmem__put, SYMMEM__THREAD)
SYMMEM__COPY_API(put_warp, symmem__put, SYMMEM__WARP)
SYMMEM__COPY_API(put_block, symmem__put, SYMMEM__BLOCK)
SYMMEM__COPY_API(get, symmem__get, SYMMEM__THREAD)
SYMMEM__COPY_API(get_warp, symmem__get, SYMMEM__WARP)
SYMMEM__COPY_API(get_block, symmem__get, SYMMEM__BLOCK)

/* ---- strided copies: iput and iget ---- */

/* One element of width bytes (1, 2, 4, 8 or 16: NVSHMEM's iput128). */
static __device__ __forceinline__ void symmem__copy_element(symmem_u64 dst, symmem_u64 src,
                                                            int width)
{
    switch (width) {
    case 1: *(unsigned char *)dst = *(const unsigned char *)src; break;
    case 2: *(unsigned short *)dst = *(const unsigned short *)src; break;
    case 4: *(unsigned int *)dst = *(const unsigned int *)src; break;
    case 8: *(symmem_u64 *)dst = *(const symmem_u64 *)src; break;
    default: *(uint4 *)dst = *(const uint4 *)src;
    }
}

/* iput (get 0) and iget (get 1): nelems elements of width bytes, element i
 * from src + i * src_stride elements to dst + i * dst_stride elements
 * (NVSHMEM's sst and dst), the scope's lanes taking every lanes-th. The
 * peer's side is checked as one span, from its lowest element to past its
 * highest. */
static __device__ __forceinline__ void symmem__strided(symmem_u64 st, const char *call, int scope,
                                                       int get, symmem_u64 dst, symmem_u64 src,
                                                       long long dst_stride, long long src_stride,
                                                       symmem_u64 nelems, int width, int pe)
{
    if (nelems > 0) {
        symmem_u64 peer = get ? src : dst;
        long long step = (get ? src_stride : dst_stride) * width;
        symmem_u64 last = peer + (symmem_u64)((long long)(nelems - 1) * step);
        symmem_u64 low = step < 0 ? last : peer, high = step < 0 ? peer : last;
        symmem_u64 delta = symmem__remote(st, call, get, low, high - low + width, pe) - low;
        if (get)
            src += delta;
        else
            dst += delta;
        for (symmem_u64 i = symmem__lane(scope); i < nelems; i += symmem__lanes(scope))
            symmem__copy_element(dst + (symmem_u64)((long long)i * dst_stride * width),
                                 src + (symmem_u64)((long long)i * src_stride * width), width);
    }
    symmem__scope_sync(scope); /* the scope returns together, as put and get do */
}

#define SYMMEM__STRIDED_API(name, get, scope)                                                      \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, symmem_u64 dst, symmem_u64 src,         \
                                            long long dst_stride, long long src_stride,            \
                                            symmem_u64 nelems, int width, int pe)                  \
    {                                                                                              \
        symmem__strided(st, #name, scope, get, dst, src, dst_stride, src_stride, nelems, width,    \
                        pe);                                                                       \
        return 0;                                                                                  \
    }

SYMMEM__STRIDED_API(iput, 0, SYMMEM__THREAD)
SYMMEM__STRIDED_API(iput_warp, 0, SYMMEM__WARP)
SYMMEM__STRIDED_API(iput_block, 0, SYMMEM__BLOCK)
SYMMEM__STRIDED_API(iget, 1, SYMMEM__THREAD)
SYMMEM__STRIDED_API(iget_warp, 1, SYMMEM__WARP)
SYMMEM__STRIDED_API(iget_block, 1, SYMMEM__BLOCK)

/* p of a 1, 2, 4 or 8-byte value (its bits). */
SYMMEM_DEVICE_API int symmem_dev_p(symmem_u64 st, symmem_u64 dst, symmem_u64 bits, int width,
                                   int pe)
{
    symmem_u64 remote = symmem__remote(st, "p", 0, dst, (symmem_u64)width, pe);
    switch (width) {
    case 1: *(unsigned char *)remote = (unsigned char)bits; break;
    case 2: *(unsigned short *)remote = (unsigned short)bits; break;
    case 4: *(unsigned int *)remote = (unsigned int)bits; break;
    default: *(symmem_u64 *)remote = bits;
    }
    return 0;
}

/* g: the bits of a 1, 2, 4 or 8-byte value; volatile, so a loop of g on a
 * flag reads memory every time. */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_g(symmem_u64 st, symmem_u64 src, int width, int pe)
{
    symmem_u64 remote = symmem__remote(st, "g", 0, src, (symmem_u64)width, pe);
    switch (width) {
    case 1: return *(const volatile unsigned char *)remote;
    case 2: return *(const volatile unsigned short *)remote;
    case 4: return *(const volatile unsigned int *)remote;
    default: return *(const volatile symmem_u64 *)remote;
    }
}

SYMMEM_DEVICE_API int symmem_dev_quiet(symmem_u64 st)
{
    (void)st;
    symmem__fence_sc_sys();
    return 0;
}

SYMMEM_DEVICE_API int symmem_dev_fence(symmem_u64 st)
{
    (void)st;
    symmem__fence_acq_rel_sys();
    return 0;
}

/* ---- signals ---- */

/* The release that signal_wait's acquire pairs with: fence.acq_rel.sys and
 * the relaxed update form a release pattern, ordering every earlier store
 * of this thread (and, after the scope's barrier, of the scope) before the
 * signal update. */
static __device__ __forceinline__ void symmem__signal(symmem_u64 remote_sig, symmem_u64 value,
                                                      int op)
{
    symmem__fence_acq_rel_sys();
    if (op == SYMMEM_DEV_SIGNAL_ADD)
        asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(remote_sig), "l"(value)
                     : "memory");
    else
        symmem__st_relaxed_u64(remote_sig, value);
}

SYMMEM_DEVICE_API int symmem_dev_signal_op(symmem_u64 st, symmem_u64 sig, symmem_u64 value, int op,
                                           int pe)
{
    symmem__signal(symmem__remote(st, "signal_op", 0, sig, 8, pe), value, op);
    return 0;
}

static __device__ __forceinline__ void symmem__put_signal(symmem_u64 st, const char *call,
                                                          int scope, symmem_u64 dst, symmem_u64 src,
                                                          symmem_u64 n, symmem_u64 sig,
                                                          symmem_u64 value, int op, int pe)
{
    /* both addresses checked before one branch */
    int one_word = symmem__one_word(scope, dst, src, n);
    symmem_u64 word = one_word ? symmem__load_word(src, n) : 0, remote_dst, remote_sig;
    if (!(symmem__remote_fast(dst, n, pe, &remote_dst) &
          symmem__remote_fast(sig, 8, pe, &remote_sig))) {
        remote_dst = symmem__remote_slow(st, call, 0, dst, n, pe);
        remote_sig = symmem__remote_slow(st, call, 2, sig, 8, pe);
    }
    symmem__put_to(scope, remote_dst, src, n, one_word, word); /* every copy issued */
    if (symmem__lane(scope) == 0) symmem__signal(remote_sig, value, op);
    symmem__scope_sync(scope);
}

#define SYMMEM__PUT_SIGNAL_API(name, scope)                                                        \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, symmem_u64 dst, symmem_u64 src,         \
                                            symmem_u64 nbytes, symmem_u64 sig, symmem_u64 value,   \
                                            int op, int pe)                                        \
    {                                                                                              \
        symmem__put_signal(st, #name, scope, dst, src, nbytes, sig, value, op, pe);                \
        return 0;                                                                                  \
    }

SYMMEM__PUT_SIGNAL_API(put_signal, SYMMEM__THREAD)
SYMMEM__PUT_SIGNAL_API(put_signal_warp, SYMMEM__WARP)
SYMMEM__PUT_SIGNAL_API(put_signal_block, SYMMEM__BLOCK)

/* ---- atomics: relaxed, system scope, on PE pe's copy ---- */

/* op: a symmem_dev_atomic_t (vocabulary.h's SYMMEM_DEVICE_ATOMICS; each
 * atomic op's row there says which it runs as); FETCH_ADD_FLOAT adds a
 * float (atomic32) or a double (atomic64). Values travel as their bits;
 * returns the old value's bits. */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_atomic64(symmem_u64 st, symmem_u64 dest, int op,
                                                 symmem_u64 value, symmem_u64 cond, int pe)
{
    symmem_u64 a = symmem__remote(st, "atomic", 0, dest, 8, pe), old = 0;
    switch (op) {
    case SYMMEM_DEV_ATOMIC_FETCH:
        asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(old) : "l"(a) : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_SET: symmem__st_relaxed_u64(a, value); break;
    case SYMMEM_DEV_ATOMIC_SWAP:
        asm volatile("atom.relaxed.sys.global.exch.b64 %0, [%1], %2;"
                     : "=l"(old)
                     : "l"(a), "l"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_COMPARE_SWAP:
        asm volatile("atom.relaxed.sys.global.cas.b64 %0, [%1], %2, %3;"
                     : "=l"(old)
                     : "l"(a), "l"(cond), "l"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_FETCH_ADD:
        asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], %2;"
                     : "=l"(old)
                     : "l"(a), "l"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_FETCH_AND:
        asm volatile("atom.relaxed.sys.global.and.b64 %0, [%1], %2;"
                     : "=l"(old)
                     : "l"(a), "l"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_FETCH_OR:
        asm volatile("atom.relaxed.sys.global.or.b64 %0, [%1], %2;"
                     : "=l"(old)
                     : "l"(a), "l"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_FETCH_XOR:
        asm volatile("atom.relaxed.sys.global.xor.b64 %0, [%1], %2;"
                     : "=l"(old)
                     : "l"(a), "l"(value)
                     : "memory");
        break;
    default: /* SYMMEM_DEV_ATOMIC_FETCH_ADD_FLOAT */
        asm volatile("atom.relaxed.sys.global.add.f64 %0, [%1], %2;"
                     : "=l"(old)
                     : "l"(a), "l"(value)
                     : "memory");
    }
    return old;
}

SYMMEM_DEVICE_API unsigned int symmem_dev_atomic32(symmem_u64 st, symmem_u64 dest, int op,
                                                   unsigned int value, unsigned int cond, int pe)
{
    symmem_u64 a = symmem__remote(st, "atomic", 0, dest, 4, pe);
    unsigned int old = 0;
    switch (op) {
    case SYMMEM_DEV_ATOMIC_FETCH:
        asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(old) : "l"(a) : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_SET:
        asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(a), "r"(value) : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_SWAP:
        asm volatile("atom.relaxed.sys.global.exch.b32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(a), "r"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_COMPARE_SWAP:
        asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;"
                     : "=r"(old)
                     : "l"(a), "r"(cond), "r"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_FETCH_ADD:
        asm volatile("atom.relaxed.sys.global.add.u32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(a), "r"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_FETCH_AND:
        asm volatile("atom.relaxed.sys.global.and.b32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(a), "r"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_FETCH_OR:
        asm volatile("atom.relaxed.sys.global.or.b32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(a), "r"(value)
                     : "memory");
        break;
    case SYMMEM_DEV_ATOMIC_FETCH_XOR:
        asm volatile("atom.relaxed.sys.global.xor.b32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(a), "r"(value)
                     : "memory");
        break;
    default: /* SYMMEM_DEV_ATOMIC_FETCH_ADD_FLOAT */
        asm volatile("atom.relaxed.sys.global.add.f32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(a), "r"(value)
                     : "memory");
    }
    return old;
}

/* atomic_add and atomic_fetch_add of a half (float16, its bits) on PE pe's
 * copy, relaxed at system scope like the others; pe < 0: at dest itself,
 * any address of this process (CUDA's atomicAdd_system, which NVSHMEM4Py's
 * bindings carry). Returns the old value's bits. */
SYMMEM_DEVICE_API unsigned int symmem_dev_atomic_add_f16(symmem_u64 st, symmem_u64 dest,
                                                         unsigned int bits, int pe)
{
    symmem_u64 a = pe < 0 ? dest : symmem__remote(st, "atomic_add", 0, dest, 2, pe);
    unsigned short old, value = (unsigned short)bits;
    asm volatile("atom.relaxed.sys.add.noftz.f16 %0, [%1], %2;"
                 : "=h"(old)
                 : "l"(a), "h"(value)
                 : "memory");
    return old;
}

#endif

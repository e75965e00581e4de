/* symmem's own reduce and reducescatter on a stream, for the members of a
 * team in one NVLink domain, for one dtype and op: the gpu backend puts
 * "#define SYMMEM_REDUCE_DTYPE d" and "#define SYMMEM_REDUCE_OP o" (the
 * codes of symmem.h's symmem_dtype_t and symmem_reduce_op_t) before this
 * file, and NVRTC compiles one module per pair (own_collectives.c). Every
 * PE reads the others' buffers through its peer mappings, meeting them as
 * meet.cuh says.
 *
 * one_shot: each PE reduces every element from every member's src into its
 * dst (reducescatter: from its own part of each src).
 * two_shot: each PE reduces its slice from every member's src into its own
 * dst (reduce-scatter), then copies the other slices from their owners' dst
 * (all-gather); src may be dst.
 *
 * Meetings: at the start (every src ready), between the two-shot's halves,
 * and at the end (nobody still reads this PE's buffers).
 *
 * ll_reduce (up to LL_MAX_BYTES, one block): no meeting. Each PE writes its
 * src into its mailbox on every member, each 4 bytes beside the epoch in
 * one 8-byte store; a member reading the epoch in a word has that word's
 * data (an aligned 8-byte access is single-copy atomic), so no fence is
 * needed. The mailbox of the epoch's parity is free again: a member writes
 * it for epoch e + 2 only after it has read this PE's data of epoch e + 1,
 * which this PE writes after it has read everything of epoch e. Nobody
 * reads src or dst of another PE, so dst may be src.
 *
 * push_one_shot and push_two_shot (push_one_shot.cuh, push_two_shot.cuh):
 * each PE writes into the others' staging buffers (stage.cuh) instead of
 * reading their src; they take packed buffers only.
 *
 * Whichever kernel, grid or slice computes an element, it combines the
 * members' values member 0 first (reduce_types.cuh): every kernel gives
 * the same bits (docs/reproducibility.md). */
#include "meet.cuh"
#include "reduce_types.cuh"

/* loops over PEs are unrolled to MAX_PES: indices known at compile time
 * keep the loads in registers (combine_packs: reduce_types.cuh) */
static __device__ __forceinline__ T reduce_one(const args &a, u64 i)
{
    ACC acc = TO_ACC(((const T *)a.src.p[0])[i]);
#pragma unroll
    for (int p = 1; p < MAX_PES; p++)
        if (p < a.n) {
            ACC b = TO_ACC(((const T *)a.src.p[p])[i]);
            acc = COMBINE(acc, b);
        }
    return FROM_ACC(acc);
}
static __device__ __forceinline__ uint4 reduce_pack(const args &a, u64 i)
{
    uint4 in[MAX_PES];
#pragma unroll
    for (int p = 0; p < MAX_PES; p++)
        if (p < a.n) in[p] = ((const uint4 *)a.src.p[p])[i];
    return combine_packs(in, a.n);
}
/* Every element from every member's src into this PE's dst: packs
 * where src and dst allow them, then one element at a time. A
 * reduce-scatter's src pointers already point at this PE's part. */
extern "C" __global__ void __launch_bounds__(THREADS) one_shot(const __grid_constant__ args a)
{
    u64 epoch = begin(a);
    meet(a, 0, epoch);
    u64 npacks = a.packed ? a.count / VEC : 0, stride = (u64)gridDim.x * blockDim.x;
    u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    uint4 *dst = (uint4 *)a.dst.p[a.me];
    for (u64 i = first; i < npacks; i += stride) dst[i] = reduce_pack(a, i);
    for (u64 i = npacks * VEC + first; i < a.count; i += stride)
        ((T *)a.dst.p[a.me])[i] = reduce_one(a, i);
    meet(a, 1, epoch);
    end(a, epoch);
}
#define LL_AT(base, parity, from) ((base) + SYMMEM_COLL_MAILBOX_AT(parity, from))
static __device__ __forceinline__ void st_ll(u64 at, u64 v, u32 flag)
{
    u64 lo = (v & 0xffffffffull) | ((u64)flag << 32), hi = (v >> 32) | ((u64)flag << 32);
    asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(at), "l"(lo), "l"(hi)
                 : "memory");
}
/* each half on its own single-copy atomic: its flag vouches for its data */
static __device__ __forceinline__ u64 ld_ll(const args &a, u64 at, u32 flag)
{
    u64 lo, hi, t0 = 0;
    for (u32 spin = 1;; spin++) {
        asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];"
                     : "=l"(lo), "=l"(hi)
                     : "l"(at)
                     : "memory");
        if ((u32)(lo >> 32) == flag && (u32)(hi >> 32) == flag) break;
        if (spin % SYMMEM_DEV_SPINS) continue;
        if (t0 == 0) t0 = symmem__globaltimer();
        still_waiting(a, t0);
    }
    return (lo & 0xffffffffull) | (hi << 32);
}
union chunk {
    u64 w;
    T e[8 / sizeof(T)];
};
extern "C" __global__ void __launch_bounds__(THREADS) ll_reduce(const __grid_constant__ args a)
{
    u64 epoch = begin(a);
    u32 flag = (u32)epoch;
    int parity = (int)(epoch & 1);
    const int per = 8 / sizeof(T);
    u64 chunks = (a.count + per - 1) / per;
    const T *src = (const T *)a.src.p[a.me];
    T *dst = (T *)a.dst.p[a.me];
    for (u64 c = threadIdx.x; c < chunks; c += blockDim.x) {
        chunk mine, in[MAX_PES];
        mine.w = 0;
        for (int k = 0; k < per && c * per + k < a.count; k++) mine.e[k] = src[c * per + k];
#pragma unroll
        for (int p = 0; p < MAX_PES; p++)
            if (p < a.n && p != a.me)
                st_ll(LL_AT(a.flags.p[p], parity, a.me) + 16 * c, mine.w, flag);
#pragma unroll
        for (int p = 0; p < MAX_PES; p++)
            if (p < a.n)
                in[p].w = p == a.me ? mine.w : ld_ll(a, LL_AT(a.mine, parity, p) + 16 * c, flag);
        for (int k = 0; k < per && c * per + k < a.count; k++) {
            ACC acc = TO_ACC(in[0].e[k]);
#pragma unroll
            for (int p = 1; p < MAX_PES; p++)
                if (p < a.n) {
                    ACC b = TO_ACC(in[p].e[k]);
                    acc = COMBINE(acc, b);
                }
            dst[c * per + k] = FROM_ACC(acc);
        }
    }
    end(a, epoch);
}
/* PE me's slice of the packs; the elements after the last pack are the
 * last PE's. Needs packed. */
extern "C" __global__ void __launch_bounds__(THREADS) two_shot(const __grid_constant__ args a)
{
    u64 epoch = begin(a);
    meet(a, 0, epoch);
    u64 npacks = a.count / VEC, slice = (npacks + a.n - 1) / a.n;
    u64 stride = (u64)gridDim.x * blockDim.x, first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    uint4 *dst = (uint4 *)a.dst.p[a.me];
    u64 lo = slice * a.me, hi = lo + slice < npacks ? lo + slice : npacks;
    for (u64 i = lo + first; i < hi; i += stride) dst[i] = reduce_pack(a, i);
    if (a.me == a.n - 1 && blockIdx.x == 0)
        for (u64 i = npacks * VEC + threadIdx.x; i < a.count; i += blockDim.x)
            ((T *)a.dst.p[a.me])[i] = reduce_one(a, i);
    meet(a, 1, epoch);
    for (int q = 0; q < a.n; q++) {
        if (q == a.me) continue;
        const uint4 *from = (const uint4 *)a.dst.p[q];
        u64 qlo = slice * q, qhi = qlo + slice < npacks ? qlo + slice : npacks;
        for (u64 i = qlo + first; i < qhi; i += stride) dst[i] = from[i];
        if (q == a.n - 1 && blockIdx.x == 0)
            for (u64 i = npacks * VEC + threadIdx.x; i < a.count; i += blockDim.x)
                ((T *)a.dst.p[a.me])[i] = ((const T *)from)[i];
    }
    meet(a, 2, epoch);
    end(a, epoch);
}

#include "push_one_shot.cuh"
#include "push_two_shot.cuh"

/* The push reduces' staging buffer (push_one_shot.cuh, push_two_shot.cuh):
 * where a block's slots are, the staging sequence that picks a half, and
 * the two moves through it: a push (this PE's src into a slot on other
 * members, NVLink writes) and a reduce (this PE's src and the slots that
 * the others pushed here, into dst here or on every member).
 *
 * The layout is symmem/device_layout.h's: for a launch of G blocks, half h,
 * block b, data from member k at h * stage_half + (b * n + k) * slot of
 * each member's staging part (the halves do not move with G or slot).
 * Ranges are of elements, [lo, hi) with lo a multiple of VEC, empty ones
 * too (clip), and the buffers 16-byte aligned (packed), so a range is the
 * packs [lo / VEC, hi / VEC) and, where hi is no multiple of VEC, tail
 * elements from hi / VEC * VEC to hi; element i of a range is at byte
 * (i - lo) * sizeof(T) of its slot.
 *
 * The staging sequence: how many rounds the push reduces have run through
 * the team's staging, one word per block in the flag area. A round uses the
 * half of (sequence + round) & 1. Every block reads its word at the start
 * and writes the sequence after its last round at the end; block 0 writes
 * the words of blocks that this launch does not have, so that all the
 * words agree when the next launch on the team reads them (launches on a
 * team are ordered on the GPU; the words are read and written by this PE
 * alone). Whatever grid the next launch has, its first round uses the half
 * that this launch's last round did not: see push_one_shot.cuh for why
 * that makes the staging safe to reuse. */
#ifndef SYMMEM_GPU_KERNELS_STAGE_CUH
#define SYMMEM_GPU_KERNELS_STAGE_CUH

#include "meet.cuh"
#include "reduce_types.cuh"

/* Packs a thread loads before it stores them: bytes in flight over NVLink. */
#define PUSH_UNROLL 4
#define REDUCE_UNROLL 2

/* This block's slot for what member `from` sends, in half `half` of the
 * staging part at base. */
static __device__ __forceinline__ u64 stage_slot(const args &a, u64 base, u64 half, int from)
{
    return base + half * a.stage_half + ((u64)blockIdx.x * (u64)a.n + (u64)from) * a.slot;
}

static __device__ __forceinline__ u64 stage_seq(const args &a)
{
    __shared__ u64 seq;
    if (threadIdx.x == 0) seq = *(const u64 *)(a.mine + SYMMEM_COLL_STAGE_SEQ_AT(blockIdx.x));
    __syncthreads();
    return seq;
}

static __device__ __forceinline__ void stage_seq_end(const args &a, u64 next)
{
    if (threadIdx.x == 0) *(u64 *)(a.mine + SYMMEM_COLL_STAGE_SEQ_AT(blockIdx.x)) = next;
    if (blockIdx.x == 0)
        for (u32 b = gridDim.x + threadIdx.x; b < MAX_BLOCKS; b += blockDim.x)
            *(u64 *)(a.mine + SYMMEM_COLL_STAGE_SEQ_AT(b)) = next;
}

/* [lo, hi): the len elements from `from` that lie below end; empty, at
 * from, where from is past end. lo stays from (a multiple of VEC): push and
 * reduce_slots take the elements from hi / VEC * VEC to hi as the range's
 * tail, so an empty range clipped to an end that is no multiple of VEC
 * would take the last elements before end again, at slot offsets below 0
 * (another slot's bytes) and, gathering, into every member's dst. */
static __device__ __forceinline__ void clip(u64 from, u64 len, u64 end, u64 &lo, u64 &hi)
{
    lo = from;
    hi = from + len < end ? from + len : end;
    if (hi < lo) hi = lo;
}

/* src[lo, hi) into this PE's slot (from = me) in half of member only's
 * staging, or of every other member's where only < 0. Each pack is loaded
 * once and stored to every target. */
static __device__ __forceinline__ void push(const args &a, const T *src, u64 lo, u64 hi, u64 half,
                                            int only)
{
    u64 plo = lo / VEC, phi = hi / VEC, step = blockDim.x;
    const uint4 *in = (const uint4 *)src;
    for (u64 i = plo + threadIdx.x; i < phi; i += PUSH_UNROLL * step) {
        uint4 v[PUSH_UNROLL];
#pragma unroll
        for (int u = 0; u < PUSH_UNROLL; u++)
            if (i + u * step < phi) v[u] = in[i + u * step];
#pragma unroll
        for (int p = 0; p < MAX_PES; p++) {
            if (p >= a.n || p == a.me || (only >= 0 && p != only)) continue;
            uint4 *out = (uint4 *)stage_slot(a, a.stage.p[p], half, a.me);
#pragma unroll
            for (int u = 0; u < PUSH_UNROLL; u++)
                if (i + u * step < phi) out[i + u * step - plo] = v[u];
        }
    }
    for (u64 i = phi * VEC + threadIdx.x; i < hi; i += step) {
        T v = src[i];
#pragma unroll
        for (int p = 0; p < MAX_PES; p++)
            if (p < a.n && p != a.me && (only < 0 || p == only))
                ((T *)stage_slot(a, a.stage.p[p], half, a.me))[i - lo] = v;
    }
}

/* Elements [lo, hi): this PE's src and what every other member pushed into
 * its slot here in half, reduced member 0 first, into dst at i - shift:
 * this PE's dst, or every member's where gather. The slots are read with
 * ld.global.cg (L2, where NVLink writes land; never a line of L1 from an
 * earlier round). */
static __device__ __forceinline__ void reduce_slots(const args &a, const T *src, u64 lo, u64 hi,
                                                    u64 half, u64 shift, int gather)
{
    u64 plo = lo / VEC, phi = hi / VEC, step = blockDim.x, pshift = shift / VEC;
    const uint4 *mine = (const uint4 *)src;
    for (u64 i = plo + threadIdx.x; i < phi; i += REDUCE_UNROLL * step) {
        uint4 out[REDUCE_UNROLL];
#pragma unroll
        for (int u = 0; u < REDUCE_UNROLL; u++) {
            u64 k = i + u * step;
            if (k >= phi) break;
            uint4 in[MAX_PES];
#pragma unroll
            for (int p = 0; p < MAX_PES; p++)
                if (p < a.n)
                    in[p] = p == a.me
                                ? mine[k]
                                : __ldcg((const uint4 *)stage_slot(a, a.stage.p[a.me], half, p) +
                                         (k - plo));
            out[u] = combine_packs(in, a.n);
        }
#pragma unroll
        for (int p = 0; p < MAX_PES; p++) {
            if (p >= a.n || (!gather && p != a.me)) continue;
            uint4 *to = (uint4 *)a.dst.p[p];
#pragma unroll
            for (int u = 0; u < REDUCE_UNROLL; u++)
                if (i + u * step < phi) to[i + u * step - pshift] = out[u];
        }
    }
    for (u64 i = phi * VEC + threadIdx.x; i < hi; i += step) {
        ACC acc = 0;
#pragma unroll
        for (int p = 0; p < MAX_PES; p++) {
            if (p >= a.n) continue;
            T v = p == a.me ? src[i]
                            : __ldcg((const T *)stage_slot(a, a.stage.p[a.me], half, p) + (i - lo));
            ACC b = TO_ACC(v);
            acc = p == 0 ? b : COMBINE(acc, b);
        }
        T r = FROM_ACC(acc);
#pragma unroll
        for (int p = 0; p < MAX_PES; p++)
            if (p < a.n && (gather || p == a.me)) ((T *)a.dst.p[p])[i - shift] = r;
    }
}

#endif

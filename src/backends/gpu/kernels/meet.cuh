/* What every own collective kernel (reduce.cu, move.cu) begins with: its
 * argument block, and how block b of every team member meets block b of
 * every other.
 *
 * Each block reads and writes the same elements on every PE (the same grid,
 * the same strides), so pairs of blocks are all the synchronisation a
 * collective needs. A block's epoch lives in this PE's flag area for the
 * team, not in the launch, so a CUDA graph replays correctly; it counts the
 * block's collectives on the team. At phase p of epoch e a block writes
 * e * 4 + p into its arrival word on every member and waits until every
 * member's word here is at least that: the words only grow, and no member
 * can pass a meeting before this one arrives, so a larger value means the
 * same arrival or a later one. The flag area's layout and the argument
 * block are symmem/device_layout.h's. */
#ifndef SYMMEM_GPU_KERNELS_MEET_CUH
#define SYMMEM_GPU_KERNELS_MEET_CUH

/* the memory-model primitives, the error record and a wait's check: the
 * device library's (its functions this module does not call are unused) */
#pragma nv_diag_suppress 177 /* "declared but never referenced" */
#include "symmem/device_primitives.cuh"

#define MAX_PES SYMMEM_COLL_MAX_PES
#define MAX_BLOCKS SYMMEM_COLL_MAX_BLOCKS
#define THREADS SYMMEM_COLL_THREADS

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef symmem_coll_args_t args;

/* Leaves the error record (the device watch thread reports it) and traps. */
static __device__ __noinline__ void fail(const args &a, int what, int pe, u64 value)
{
    symmem__fail_at(a.error, a.call, (int)sizeof(a.call), what, pe, -1, value);
}

/* What a wait of the collective that started at t0 does every
 * SYMMEM_DEV_SPINS spins: the device library's check, over the argument
 * block's abort word and timeout. */
static __device__ __forceinline__ void still_waiting(const args &a, u64 t0)
{
    symmem__wait_check((const volatile u32 *)a.abort_word, &a.timeout_ns, &a.me, t0,
                       [&](int what, int pe, u64 value) { fail(a, what, pe, value); });
}

#define ARRIVAL(base, block, pe) ((base) + SYMMEM_COLL_ARRIVAL_AT(block, pe))

/* Block b of this PE arrives at phase on every member, then waits for
 * block b of every member to arrive here. */
static __device__ __forceinline__ void meet(const args &a, int phase, u64 epoch)
{
    __syncthreads(); /* the block's accesses, CTA-ordered before the fence below */
    int t = threadIdx.x;
    if (t < a.n && t != a.me) {
        u64 value = epoch * 4 + (u64)phase;
        /* release: the block's reads and writes of every buffer before this
         * arrival on member t (cumulative over the bar.sync above) */
        symmem__fence_acq_rel_sys();
        symmem__st_relaxed_u64(ARRIVAL(a.flags.p[t], blockIdx.x, a.me), value);
        u64 at = ARRIVAL(a.mine, blockIdx.x, t), t0 = symmem__globaltimer();
        /* acquire: pairs with member t's fence before its arrival store
         * here, so its block's accesses happen before ours after this */
        for (u32 spin = 1; symmem__ld_acquire_u64(at) < value; spin++) {
            if (spin % SYMMEM_DEV_SPINS) continue;
            still_waiting(a, t0);
        }
    }
    __syncthreads(); /* every thread after the acquires */
}

/* One block's epoch: one more than its last collective's on the team (the
 * words at the start of the team's part). */
static __device__ __forceinline__ u64 begin(const args &a)
{
    __shared__ u64 epoch;
    if (threadIdx.x == 0) epoch = ((const u64 *)a.mine)[blockIdx.x] + 1;
    __syncthreads();
    return epoch;
}
static __device__ __forceinline__ void end(const args &a, u64 epoch)
{
    if (threadIdx.x == 0) ((u64 *)a.mine)[blockIdx.x] = epoch;
}

#endif

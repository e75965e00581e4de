/* push_two_shot: a reduce-scatter by pushing, then an all-gather by
 * pushing. In each round block b of every PE takes n slices of E = slot /
 * sizeof(T) elements, slice q owned by member q (reduce, round r: elements
 * ((r * G + b) * n + q) * E onwards; reducescatter (scatter): part q of
 * src, elements q * count + (r * G + b) * E onwards, into dst from (r * G
 * + b) * E). The block pushes slice q of its src into its slot on owner q;
 * meets; reduces its own slice from its src and the slots pushed here, and
 * writes the result into every member's dst (reducescatter: its own only).
 *
 * Pipelined: round r + 1's pushes go before the meeting that ends round r,
 * into the other staging half, so a launch of R rounds meets R + 1 times:
 *   push(0); meet; { reduce(r); push(r + 1); meet } for r = 0 .. R - 1.
 * - the slots of round r are complete when it reduces: every member pushed
 *   them before the meeting just before;
 * - block b of member q pushes round r + 1 into half (seq + r + 1) & 1 here
 *   after the meeting that ends round r - 1 (or starts the launch), which
 *   this block reaches after its reduce of round r - 1, the last read of
 *   that half (the first round: as across launches, push_one_shot.cuh);
 * - the last meeting comes after every member's last writes into this PE's
 *   dst, so dst is whole when the kernel ends, and nobody touches this
 *   PE's staging or buffers after it: the next launch's first round may
 *   use either half, and uses the other one from the last round anyway.
 * In place: member q writes this PE's dst (= src) in slice q of round r
 * only after the meeting that follows this PE's push of that slice; this
 * PE's own slice it reads and writes itself, element by element.
 * The meetings' epochs: epoch + k for the k-th; the word ends at epoch +
 * rounds. */
#ifndef SYMMEM_GPU_KERNELS_PUSH_TWO_SHOT_CUH
#define SYMMEM_GPU_KERNELS_PUSH_TWO_SHOT_CUH

#include "stage.cuh"

/* Slice q of round r for this block. */
static __device__ __forceinline__ void slice(const args &a, u64 r, int q, u64 &lo, u64 &hi)
{
    u64 per_slice = a.slot / sizeof(T);
    if (a.scatter) {
        clip((r * gridDim.x + blockIdx.x) * per_slice, per_slice, a.count, lo, hi);
        lo += (u64)q * a.count;
        hi += (u64)q * a.count;
    } else {
        clip(((r * gridDim.x + blockIdx.x) * (u64)a.n + (u64)q) * per_slice, per_slice, a.count, lo,
             hi);
    }
}

static __device__ __forceinline__ void push_round(const args &a, const T *src, u64 seq, u64 r)
{
    for (int k = 1; k < a.n; k++) { /* the next member's slice first: spread the writes */
        int q = (a.me + k) % a.n;
        u64 lo, hi;
        slice(a, r, q, lo, hi);
        push(a, src, lo, hi, (seq + r) & 1, q);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) push_two_shot(const __grid_constant__ args a)
{
    u64 epoch = begin(a), seq = stage_seq(a);
    u64 per_slice = a.slot / sizeof(T);
    u64 per_round = per_slice * gridDim.x * (a.scatter ? 1u : (u64)a.n);
    u64 rounds = a.count == 0 ? 1 : (a.count + per_round - 1) / per_round;
    u64 shift = a.scatter ? (u64)a.me * a.count : 0;
    const T *src = (const T *)a.src.p[a.me];
    push_round(a, src, seq, 0);
    /* release of round 0's pushes, acquire of the others' */
    meet(a, 0, epoch);
    for (u64 r = 0; r < rounds; r++) {
        u64 lo, hi;
        slice(a, r, a.me, lo, hi);
        reduce_slots(a, src, lo, hi, (seq + r) & 1, shift, !a.scatter);
        if (r + 1 < rounds) push_round(a, src, seq, r + 1);
        /* release of round r's results in every dst and round r + 1's
         * pushes; acquire of the others' */
        meet(a, 0, epoch + r + 1);
    }
    stage_seq_end(a, seq + rounds);
    end(a, epoch + rounds);
}

#endif

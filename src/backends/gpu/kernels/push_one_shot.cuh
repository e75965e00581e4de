/* push_one_shot: reduce by writing, not reading, over NVLink. In each
 * round, block b of every PE takes the same E = slot / sizeof(T) elements
 * (round r: from (r * G + b) * E), pushes its src of them into its slot on
 * every other member (stage.cuh), meets block b of every member once, and
 * reduces its own src and the slots pushed here into its own dst. Nobody
 * reads another PE's src or dst, so dst may be src (a thread reads each
 * element of src before it writes that element of dst).
 *
 * Rounds alternate the staging halves by the staging sequence (stage.cuh);
 * the kernel ends with no meeting after its last reduce. Why no member
 * overwrites a slot this PE still reads:
 * - within a launch: block b of member q writes half h in round r + 2 only
 *   after it met block b here in round r + 1, which this block reaches
 *   after its reduce of round r, the last read of half h before;
 * - across launches (any grid, any push kernel next): the next launch's
 *   first round uses the other half from this launch's last round, and q
 *   starts the next launch only when its blocks of this one have all met
 *   every block here in the last round, so every block here is past its
 *   reads of the round before the last. The next launch's rounds after its
 *   first come after its first meeting, which every block here reaches only
 *   after this launch ended on this PE.
 * The meetings' epochs: round r of a block meets at epoch + r, and the
 * block's epoch word ends at epoch + rounds - 1, so they keep growing. */
#ifndef SYMMEM_GPU_KERNELS_PUSH_ONE_SHOT_CUH
#define SYMMEM_GPU_KERNELS_PUSH_ONE_SHOT_CUH

#include "stage.cuh"

extern "C" __global__ void __launch_bounds__(THREADS) push_one_shot(const __grid_constant__ args a)
{
    u64 epoch = begin(a), seq = stage_seq(a);
    u64 per_block = a.slot / sizeof(T), per_round = per_block * gridDim.x;
    u64 rounds = a.count == 0 ? 1 : (a.count + per_round - 1) / per_round;
    const T *src = (const T *)a.src.p[a.me];
    for (u64 r = 0; r < rounds; r++) {
        u64 half = (seq + r) & 1, lo, hi;
        clip(r * per_round + blockIdx.x * per_block, per_block, a.count, lo, hi);
        push(a, src, lo, hi, half, -1);
        /* release of the pushes to every member, acquire of theirs here */
        meet(a, 0, epoch + r);
        reduce_slots(a, src, lo, hi, half, 0, 0);
    }
    stage_seq_end(a, seq + rounds);
    end(a, epoch + rounds - 1);
}

#endif

/* symmem's own byte-moving collectives and syncs on a stream, for the
 * members of a team in one NVLink domain (NVRTC compiles this module once:
 * own_collectives.c). Each PE pulls what it receives from the members' src
 * through its peer mappings into its own dst, meeting them as meet.cuh
 * says: at the start (every src ready) and at the end (nobody still reads
 * this PE's src).
 *
 * fcollect:  piece q from member q's src to dst + q * piece;
 * alltoall:  piece q from member q's src + me * piece to dst + q * piece;
 * broadcast: one piece, the root's src to dst (the root copies only where
 *            dst is not src).
 * Each PE starts with a different member's piece, so that the members do not
 * all read from one PE at once. move<W> copies in units of W bytes (16, 8,
 * 4, 2 or 1: the widest the addresses and the piece allow).
 * sync_only: the meeting alone, in one block (barrier and sync). */
#include "meet.cuh"

template <typename W>
static __device__ __forceinline__ void copy_pieces(const args &a)
{
    u64 units = a.count / sizeof(W), stride = (u64)gridDim.x * blockDim.x;
    u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < a.pieces; k++) {
        int q = (a.first + k) % a.n;
        const W *from = (const W *)(a.src.p[q] + a.src_step * (u64)a.me);
        W *to = (W *)(a.dst.p[a.me] + a.dst_step * (u64)q);
        if ((const void *)from == (const void *)to) continue;
        for (u64 i = first; i < units; i += stride) to[i] = from[i];
    }
}
#define MOVE(name, W)                                                                              \
    extern "C" __global__ void __launch_bounds__(THREADS) name(const __grid_constant__ args a)     \
    {                                                                                              \
        u64 epoch = begin(a);                                                                      \
        meet(a, 0, epoch);                                                                         \
        copy_pieces<W>(a);                                                                         \
        meet(a, 1, epoch);                                                                         \
        end(a, epoch);                                                                             \
    }
MOVE(move16, uint4)
MOVE(move8, u64)
MOVE(move4, u32)
MOVE(move2, u16)
MOVE(move1, unsigned char)
extern "C" __global__ void __launch_bounds__(THREADS) sync_only(const __grid_constant__ args a)
{
    u64 epoch = begin(a);
    meet(a, 0, epoch);
    end(a, epoch);
}

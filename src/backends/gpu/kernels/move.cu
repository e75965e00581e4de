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
 *
 * push<W> (fcollect and alltoall under the push collectives): each PE
 * writes its pieces into the members' dst instead, piece q of its src to
 * member q's dst + me * piece (NVLink writes outrun reads: a put reached
 * 397 GB/s on 2 x H200 where the pulls stayed under 320). The same
 * meetings: the first, so that no member still uses its dst; the last,
 * whose release (this block's writes, before its arrival on member t)
 * pairs with member t's acquire of that arrival, so the pieces are there
 * before member t's stream goes on.
 * sync_only: the meeting alone, in one block (barrier and sync). */
#include "meet.cuh"

template <typename W, bool PUSH>
static __device__ __forceinline__ void copy_pieces(const args &a)
{
    u64 units = a.count / sizeof(W), stride = (u64)gridDim.x * blockDim.x;
    u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < a.pieces; k++) {
        int q = (a.first + k) % a.n;
        /* pull: member q's piece for me into my dst; push: my piece for
         * member q into its dst */
        int from_pe = PUSH ? a.me : q, to_pe = PUSH ? q : a.me, piece = PUSH ? q : a.me;
        const W *from = (const W *)(a.src.p[from_pe] + a.src_step * (u64)piece);
        W *to = (W *)(a.dst.p[to_pe] + a.dst_step * (u64)(PUSH ? a.me : q));
        if ((const void *)from == (const void *)to) continue;
        for (u64 i = first; i < units; i += stride) to[i] = from[i];
    }
}
#define MOVE(name, W, PUSH)                                                                        \
    extern "C" __global__ void __launch_bounds__(THREADS) name(const __grid_constant__ args a)     \
    {                                                                                              \
        u64 epoch = begin(a);                                                                      \
        meet(a, 0, epoch);                                                                         \
        copy_pieces<W, PUSH>(a);                                                                   \
        meet(a, 1, epoch);                                                                         \
        end(a, epoch);                                                                             \
    }
MOVE(move16, uint4, false)
MOVE(move8, u64, false)
MOVE(move4, u32, false)
MOVE(move2, u16, false)
MOVE(move1, unsigned char, false)
MOVE(push16, uint4, true)
MOVE(push8, u64, true)
MOVE(push4, u32, true)
MOVE(push2, u16, true)
MOVE(push1, unsigned char, true)
extern "C" __global__ void __launch_bounds__(THREADS) sync_only(const __grid_constant__ args a)
{
    u64 epoch = begin(a);
    meet(a, 0, epoch);
    end(a, epoch);
}

/* The CUDA C of symmem's own byte-moving collectives and syncs on a stream,
 * for the members of a team in one NVLink domain (NVRTC compiles it once;
 * no headers). Each PE pulls what it receives from the members' src through
 * its peer mappings into its own dst, meeting them as meet_cu.c says: at the
 * start (every src ready) and at the end (nobody still reads this PE's src).
 *
 * fcollect:  piece q from member q's src to dst + q * piece;
 * alltoall:  piece q from member q's src + me * piece to dst + q * piece;
 * broadcast: one piece, the root's src to dst (the root copies only where
 *            dst is not src).
 * Each PE starts with a different member's piece, so that the members do not
 * all read from one PE at once. move<W> copies in units of W bytes (16, 8,
 * 4, 2 or 1: the widest the addresses and the piece allow).
 * sync_only: the meeting alone, in one block (barrier and sync). */
#include <stdio.h>

#include "collectives.h"

static const char body[] =
    "template <typename W> static __device__ __forceinline__ void copy_pieces(const args &a)\n"
    "{\n"
    "    u64 units = a.count / sizeof(W), stride = (u64)gridDim.x * blockDim.x;\n"
    "    u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    for (int k = 0; k < a.pieces; k++) {\n"
    "        int q = (a.first + k) % a.n;\n"
    "        const W *from = (const W *)(a.src.p[q] + a.src_step * (u64)a.me);\n"
    "        W *to = (W *)(a.dst.p[a.me] + a.dst_step * (u64)q);\n"
    "        if ((const void *)from == (const void *)to) continue;\n"
    "        for (u64 i = first; i < units; i += stride) to[i] = from[i];\n"
    "    }\n"
    "}\n"
    "#define MOVE(name, W) \\\n"
    "    extern \"C\" __global__ void __launch_bounds__(THREADS) \\\n"
    "    name(const __grid_constant__ args a) \\\n"
    "    { u64 epoch = begin(a); meet(a, 0, epoch); copy_pieces<W>(a); meet(a, 1, epoch); \\\n"
    "      end(a, epoch); }\n"
    "MOVE(move16, uint4)\n"
    "MOVE(move8, u64)\n"
    "MOVE(move4, u32)\n"
    "MOVE(move2, u16)\n"
    "MOVE(move1, unsigned char)\n"
    "extern \"C\" __global__ void __launch_bounds__(THREADS) sync_only(const __grid_constant__ args a)\n"
    "{ u64 epoch = begin(a); meet(a, 0, epoch); end(a, epoch); }\n";

int symmem__gpu_move_cu(char *out, size_t size)
{
    int n = snprintf(out, size, "#define MAX_PES %d\n#define MAX_BLOCKS %d\n#define THREADS %d\n%s%s",
                     SYMMEM_COLL_MAX_PES, SYMMEM_COLL_MAX_BLOCKS, SYMMEM_COLL_THREADS,
                     symmem__gpu_meet_cu, body);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

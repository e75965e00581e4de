/* The CUDA C every own collective kernel begins with: its argument block,
 * and how block b of every team member meets block b of every other.
 *
 * Each block reads and writes the same elements on every PE (the same grid,
 * the same strides), so pairs of blocks are all the synchronisation a
 * collective needs. A block's epoch lives in this PE's flag area for the
 * team, not in the launch, so a CUDA graph replays correctly; it counts the
 * block's collectives on the team. At phase p of epoch e a block writes
 * e * 4 + p into its arrival word on every member and waits until every
 * member's word here is at least that: the words only grow, and no member
 * can pass a meeting before this one arrives, so a larger value means the
 * same arrival or a later one. */
#include "collectives.h"

const char symmem__gpu_meet_cu[] =
    "typedef unsigned long long u64;\n"
    "typedef unsigned int u32;\n"
    "typedef unsigned short u16;\n"
    "struct ptrs { u64 p[MAX_PES]; };\n"
    /* src, dst and flags: each member's, as mapped here; mine: this PE's
     * flags for the team; count: elements (reduce) or bytes of a piece
     * (move); the move kernels copy pieces first .. first + pieces - 1
     * (mod n), piece q from member q's src + src_step * me to this PE's
     * dst + dst_step * q; packed: src and dst allow 16-byte packs */
    "struct args { ptrs src, dst, flags; u64 mine, count, abort_word, error, timeout_ns,\n"
    "              src_step, dst_step; int n, me, first, pieces, packed, unused;\n"
    "              char call[16]; };\n"
    "static __device__ __forceinline__ u64 ld_acquire(u64 a)\n"
    "{ u64 v; asm volatile(\"ld.acquire.sys.global.u64 %0, [%1];\" : \"=l\"(v) : \"l\"(a) : \"memory\");\n"
    "  return v; }\n"
    "static __device__ __forceinline__ void st_relaxed(u64 a, u64 v)\n"
    "{ asm volatile(\"st.relaxed.sys.global.u64 [%0], %1;\" :: \"l\"(a), \"l\"(v) : \"memory\"); }\n"
    "static __device__ __forceinline__ u64 now_ns(void)\n"
    "{ u64 t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; }\n"
    /* device.cuh's error record: the device watch thread reports it */
    "struct dev_error { u32 set; int what, pe, arg; u64 value; char call[32]; };\n"
    "static __device__ __noinline__ void fail(const args &a, int what, int pe, u64 value)\n"
    "{\n"
    "    dev_error *e = (dev_error *)a.error;\n"
    "    if (e != 0 && atomicCAS(&e->set, 0u, 2u) == 0u) {\n"
    "        e->what = what; e->pe = pe; e->arg = -1; e->value = value;\n"
    "        for (int i = 0; i < 16; i++) e->call[i] = a.call[i];\n"
    "        __threadfence_system(); /* the fields before set = 1, which the host polls */\n"
    "        *(volatile u32 *)&e->set = 1u;\n"
    "        __threadfence_system();\n"
    "    }\n"
    "    __trap();\n"
    "}\n"
    "#define ARRIVAL(base, block, pe) \\\n"
    "    ((base) + 8ull * (MAX_BLOCKS + (u64)(block) * MAX_PES + (u64)(pe)))\n"
    /* Block b of this PE arrives at phase on every member, then waits for
     * block b of every member to arrive here. */
    "static __device__ __forceinline__ void meet(const args &a, int phase, u64 epoch)\n"
    "{\n"
    "    __syncthreads(); /* the block's accesses, CTA-ordered before the fence below */\n"
    "    int t = threadIdx.x;\n"
    "    if (t < a.n && t != a.me) {\n"
    "        u64 value = epoch * 4 + (u64)phase;\n"
    "        /* release: the block's reads and writes of every buffer before this\n"
    "         * arrival on member t (cumulative over the bar.sync above) */\n"
    "        asm volatile(\"fence.acq_rel.sys;\" ::: \"memory\");\n"
    "        st_relaxed(ARRIVAL(a.flags.p[t], blockIdx.x, a.me), value);\n"
    "        u64 at = ARRIVAL(a.mine, blockIdx.x, t), t0 = now_ns();\n"
    "        /* acquire: pairs with member t's fence before its arrival store\n"
    "         * here, so its block's accesses happen before ours after this */\n"
    "        for (u32 spin = 1; ld_acquire(at) < value; spin++) {\n"
    "            if (spin % 1024u) continue;\n"
    "            const volatile u32 *word = (const volatile u32 *)a.abort_word;\n"
    "            if (word != 0 && word[0] != 0u) fail(a, 3, (int)word[1], 0);\n"
    "            if (a.timeout_ns != 0 && now_ns() - t0 > a.timeout_ns)\n"
    "                fail(a, 4, a.me, a.timeout_ns);\n"
    "        }\n"
    "    }\n"
    "    __syncthreads(); /* every thread after the acquires */\n"
    "}\n"
    /* One block's epoch: one more than its last collective's on the team */
    "static __device__ __forceinline__ u64 begin(const args &a)\n"
    "{\n"
    "    __shared__ u64 epoch;\n"
    "    if (threadIdx.x == 0) epoch = ((const u64 *)a.mine)[blockIdx.x] + 1;\n"
    "    __syncthreads();\n"
    "    return epoch;\n"
    "}\n"
    "static __device__ __forceinline__ void end(const args &a, u64 epoch)\n"
    "{\n"
    "    if (threadIdx.x == 0) ((u64 *)a.mine)[blockIdx.x] = epoch;\n"
    "}\n";

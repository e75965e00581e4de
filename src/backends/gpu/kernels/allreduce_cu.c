/* The CUDA C of symmem's own all-reduce on a stream, for PEs of one NVLink
 * domain, made for one dtype and op (NVRTC compiles it; no headers): every
 * PE reads the others' buffers through its peer mappings.
 *
 * one_shot: each PE reduces every element from every PE's src into its dst.
 * two_shot: each PE reduces its slice from every PE's src into its own dst
 * (reduce-scatter), then copies the other slices from their owners' dst
 * (all-gather); src may be dst.
 *
 * Block b of every PE meets block b of every other PE (meet): at the start
 * (every src ready), between the two-shot's halves, and at the end (nobody
 * still reads this PE's buffers). Each block reads and writes the same
 * elements on every PE (the same grid, the same strides), so pairs of
 * blocks are all the synchronisation needed. A block's epoch lives in this
 * PE's flag area, not in the launch, so a CUDA graph replays correctly. */
#include <stdio.h>

#include "allreduce.h"

/* Element type, accumulator, conversions and combine for each dtype: half
 * and bfloat16 are stored as u16 and added in float. */
static const struct {
    const char *type, *acc, *to_acc, *from_acc;
} types[SYMMEM_DTYPE_COUNT] = {
    [SYMMEM_DTYPE_BOOL] = {"unsigned char", "unsigned char", "(x)", "(x)"},
    [SYMMEM_DTYPE_INT8] = {"signed char", "signed char", "(x)", "(x)"},
    [SYMMEM_DTYPE_INT16] = {"short", "short", "(x)", "(x)"},
    [SYMMEM_DTYPE_INT32] = {"int", "int", "(x)", "(x)"},
    [SYMMEM_DTYPE_INT64] = {"long long", "long long", "(x)", "(x)"},
    [SYMMEM_DTYPE_UINT8] = {"unsigned char", "unsigned char", "(x)", "(x)"},
    [SYMMEM_DTYPE_UINT16] = {"unsigned short", "unsigned short", "(x)", "(x)"},
    [SYMMEM_DTYPE_UINT32] = {"unsigned int", "unsigned int", "(x)", "(x)"},
    [SYMMEM_DTYPE_UINT64] = {"unsigned long long", "unsigned long long", "(x)", "(x)"},
    [SYMMEM_DTYPE_FLOAT16] = {"u16", "float", "half_to_float(x)", "float_to_half(x)"},
    [SYMMEM_DTYPE_BFLOAT16] = {"u16", "float", "bf16_to_float(x)", "float_to_bf16(x)"},
    [SYMMEM_DTYPE_FLOAT32] = {"float", "float", "(x)", "(x)"},
    [SYMMEM_DTYPE_FLOAT64] = {"double", "double", "(x)", "(x)"},
};

static const char *const combine[SYMMEM_OP_COUNT] = {
    [SYMMEM_OP_SUM] = "((a) + (b))",           [SYMMEM_OP_MIN] = "((b) < (a) ? (b) : (a))",
    [SYMMEM_OP_MAX] = "((b) > (a) ? (b) : (a))", [SYMMEM_OP_PROD] = "((a) * (b))",
    [SYMMEM_OP_AND] = "((a) & (b))",           [SYMMEM_OP_OR] = "((a) | (b))",
    [SYMMEM_OP_XOR] = "((a) ^ (b))",
};

static const char body[] =
    "struct ptrs { u64 p[MAX_PES]; };\n"
    /* src and flags: every PE's, as mapped here; mine: this PE's flag area */
    "struct args { ptrs src, dst, flags; u64 mine, count, abort_word, error, timeout_ns;\n"
    "              int n, me; };\n"
    "static __device__ __forceinline__ float half_to_float(u16 x)\n"
    "{ float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(x)); return f; }\n"
    "static __device__ __forceinline__ u16 float_to_half(float f)\n"
    "{ u16 x; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(x) : \"f\"(f)); return x; }\n"
    "static __device__ __forceinline__ float bf16_to_float(u16 x)\n"
    "{ return __uint_as_float((u32)x << 16); }\n"
    /* round to nearest even; a NaN stays a NaN */
    "static __device__ __forceinline__ u16 float_to_bf16(float f)\n"
    "{ u32 b = __float_as_uint(f);\n"
    "  if ((b & 0x7fffffffu) > 0x7f800000u) return (u16)((b >> 16) | 0x40u);\n"
    "  return (u16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16); }\n"
    "#define VEC (16 / sizeof(T))\n"
    "union pack { uint4 v; T e[16 / sizeof(T)]; };\n"
    "static __device__ __forceinline__ u64 ld_acquire(u64 a)\n"
    "{ u64 v; asm volatile(\"ld.acquire.sys.global.u64 %0, [%1];\" : \"=l\"(v) : \"l\"(a) : \"memory\");\n"
    "  return v; }\n"
    "static __device__ __forceinline__ void st_relaxed(u64 a, u64 v)\n"
    "{ asm volatile(\"st.relaxed.sys.global.u64 [%0], %1;\" :: \"l\"(a), \"l\"(v) : \"memory\"); }\n"
    "static __device__ __forceinline__ u64 now_ns(void)\n"
    "{ u64 t; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t)); return t; }\n"
    /* device.cuh's error record: the device watch thread reports it */
    "struct dev_error { u32 set; int what, pe, arg; u64 value; char call[32]; };\n"
    "static __device__ __noinline__ void fail(u64 error, int what, int pe, u64 value)\n"
    "{\n"
    "    dev_error *e = (dev_error *)error;\n"
    "    if (e != 0 && atomicCAS(&e->set, 0u, 2u) == 0u) {\n"
    "        e->what = what; e->pe = pe; e->arg = -1; e->value = value;\n"
    "        const char call[] = \"reduce\";\n"
    "        for (int i = 0; i < (int)sizeof(call); i++) e->call[i] = call[i];\n"
    "        __threadfence_system(); /* the fields before set = 1, which the host polls */\n"
    "        *(volatile u32 *)&e->set = 1u;\n"
    "        __threadfence_system();\n"
    "    }\n"
    "    __trap();\n"
    "}\n"
    "#define FLAG(base, phase, block, pe) \\\n"
    "    ((base) + 8ull * (MAX_BLOCKS + ((u64)((phase) * MAX_BLOCKS + (block)) * MAX_PES + (pe))))\n"
    /* Block b of this PE arrives at phase on every PE, then waits for block
     * b of every PE to arrive here. */
    "static __device__ __forceinline__ void meet(const args &a, int phase, u64 epoch)\n"
    "{\n"
    "    __syncthreads(); /* the block's stores, CTA-ordered before the fence below */\n"
    "    int t = threadIdx.x;\n"
    "    if (t < a.n) {\n"
    "        /* release: the block's stores before this arrival on PE t */\n"
    "        asm volatile(\"fence.acq_rel.sys;\" ::: \"memory\");\n"
    "        st_relaxed(FLAG(a.flags.p[t], phase, blockIdx.x, a.me), epoch);\n"
    "        u64 at = FLAG(a.mine, phase, blockIdx.x, t), t0 = now_ns();\n"
    "        /* acquire: pairs with PE t's fence before its arrival store here */\n"
    "        for (u32 spin = 1; ld_acquire(at) < epoch; spin++) {\n"
    "            if (spin % 1024u) continue;\n"
    "            const volatile u32 *word = (const volatile u32 *)a.abort_word;\n"
    "            if (word != 0 && word[0] != 0u) fail(a.error, 3, (int)word[1], 0);\n"
    "            if (a.timeout_ns != 0 && now_ns() - t0 > a.timeout_ns)\n"
    "                fail(a.error, 4, a.me, a.timeout_ns);\n"
    "        }\n"
    "    }\n"
    "    __syncthreads(); /* every thread after the acquires */\n"
    "}\n"
    /* One block's epoch: one more than its last collective's */
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
    "}\n"
    /* loops over PEs are unrolled to MAX_PES: indices known at compile time
     * keep the loads in registers */
    "static __device__ __forceinline__ T reduce_one(const args &a, u64 i)\n"
    "{\n"
    "    ACC acc = TO_ACC(((const T *)a.src.p[0])[i]);\n"
    "#pragma unroll\n"
    "    for (int p = 1; p < MAX_PES; p++)\n"
    "        if (p < a.n) { ACC b = TO_ACC(((const T *)a.src.p[p])[i]); acc = COMBINE(acc, b); }\n"
    "    return FROM_ACC(acc);\n"
    "}\n"
    "static __device__ __forceinline__ uint4 reduce_pack(const args &a, u64 i)\n"
    "{\n"
    "    pack in[MAX_PES], out;\n"
    "#pragma unroll\n"
    "    for (int p = 0; p < MAX_PES; p++)\n"
    "        if (p < a.n) in[p].v = ((const uint4 *)a.src.p[p])[i];\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < (int)VEC; k++) {\n"
    "        ACC acc = TO_ACC(in[0].e[k]);\n"
    "#pragma unroll\n"
    "        for (int p = 1; p < MAX_PES; p++)\n"
    "            if (p < a.n) { ACC b = TO_ACC(in[p].e[k]); acc = COMBINE(acc, b); }\n"
    "        out.e[k] = FROM_ACC(acc);\n"
    "    }\n"
    "    return out.v;\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(THREADS) one_shot(const __grid_constant__ args a)\n"
    "{\n"
    "    u64 epoch = begin(a);\n"
    "    meet(a, 0, epoch);\n"
    "    u64 npacks = a.count / VEC, stride = (u64)gridDim.x * blockDim.x;\n"
    "    uint4 *dst = (uint4 *)a.dst.p[a.me];\n"
    "    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < npacks; i += stride)\n"
    "        dst[i] = reduce_pack(a, i);\n"
    "    if (blockIdx.x == 0)\n"
    "        for (u64 i = npacks * VEC + threadIdx.x; i < a.count; i += blockDim.x)\n"
    "            ((T *)a.dst.p[a.me])[i] = reduce_one(a, i);\n"
    "    meet(a, 1, epoch);\n"
    "    end(a, epoch);\n"
    "}\n"
    /* PE me's slice of the packs; the elements after the last pack are the
     * last PE's. */
    "extern \"C\" __global__ void __launch_bounds__(THREADS) two_shot(const __grid_constant__ args a)\n"
    "{\n"
    "    u64 epoch = begin(a);\n"
    "    meet(a, 0, epoch);\n"
    "    u64 npacks = a.count / VEC, slice = (npacks + a.n - 1) / a.n;\n"
    "    u64 stride = (u64)gridDim.x * blockDim.x, first = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    uint4 *dst = (uint4 *)a.dst.p[a.me];\n"
    "    u64 lo = slice * a.me, hi = lo + slice < npacks ? lo + slice : npacks;\n"
    "    for (u64 i = lo + first; i < hi; i += stride) dst[i] = reduce_pack(a, i);\n"
    "    if (a.me == a.n - 1 && blockIdx.x == 0)\n"
    "        for (u64 i = npacks * VEC + threadIdx.x; i < a.count; i += blockDim.x)\n"
    "            ((T *)a.dst.p[a.me])[i] = reduce_one(a, i);\n"
    "    meet(a, 1, epoch);\n"
    "    for (int q = 0; q < a.n; q++) {\n"
    "        if (q == a.me) continue;\n"
    "        const uint4 *from = (const uint4 *)a.dst.p[q];\n"
    "        u64 qlo = slice * q, qhi = qlo + slice < npacks ? qlo + slice : npacks;\n"
    "        for (u64 i = qlo + first; i < qhi; i += stride) dst[i] = from[i];\n"
    "        if (q == a.n - 1 && blockIdx.x == 0)\n"
    "            for (u64 i = npacks * VEC + threadIdx.x; i < a.count; i += blockDim.x)\n"
    "                ((T *)a.dst.p[a.me])[i] = ((const T *)from)[i];\n"
    "    }\n"
    "    meet(a, 2, epoch);\n"
    "    end(a, epoch);\n"
    "}\n";

int symmem__gpu_allreduce_cu(symmem_dtype_t dtype, symmem_reduce_op_t op, char *out,
                             size_t size)
{
    int is_float = dtype >= SYMMEM_DTYPE_FLOAT16 && dtype <= SYMMEM_DTYPE_FLOAT64;
    int bitwise = op == SYMMEM_OP_AND || op == SYMMEM_OP_OR || op == SYMMEM_OP_XOR;
    if ((unsigned)dtype >= SYMMEM_DTYPE_COUNT || (unsigned)op >= SYMMEM_OP_COUNT ||
        types[dtype].type == NULL || (is_float && bitwise))
        return -1;
    int n = snprintf(out, size,
                     "#define MAX_PES %d\n#define MAX_BLOCKS %d\n#define THREADS %d\n"
                     "typedef unsigned long long u64;\ntypedef unsigned int u32;\n"
                     "typedef unsigned short u16;\ntypedef %s T;\ntypedef %s ACC;\n#define TO_ACC(x) %s\n"
                     "#define FROM_ACC(x) %s\n#define COMBINE(a, b) %s\n%s",
                     SYMMEM_ALLREDUCE_MAX_PES, SYMMEM_ALLREDUCE_MAX_BLOCKS,
                     SYMMEM_ALLREDUCE_THREADS, types[dtype].type, types[dtype].acc,
                     types[dtype].to_acc, types[dtype].from_acc, combine[op], body);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

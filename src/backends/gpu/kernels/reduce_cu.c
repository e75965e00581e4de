/* The CUDA C of symmem's own reduce and reducescatter on a stream, for the
 * members of a team in one NVLink domain, made for one dtype and op (NVRTC
 * compiles it; no headers): every PE reads the others' buffers through its
 * peer mappings, meeting them as meet_cu.c says.
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
 * reads src or dst of another PE, so dst may be src. */
#include <stdio.h>

#include "collectives.h"

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
    /* Every element from every member's src into this PE's dst: packs
     * where src and dst allow them, then one element at a time. A
     * reduce-scatter's src pointers already point at this PE's part. */
    "extern \"C\" __global__ void __launch_bounds__(THREADS) one_shot(const __grid_constant__ args a)\n"
    "{\n"
    "    u64 epoch = begin(a);\n"
    "    meet(a, 0, epoch);\n"
    "    u64 npacks = a.packed ? a.count / VEC : 0, stride = (u64)gridDim.x * blockDim.x;\n"
    "    u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    uint4 *dst = (uint4 *)a.dst.p[a.me];\n"
    "    for (u64 i = first; i < npacks; i += stride) dst[i] = reduce_pack(a, i);\n"
    "    for (u64 i = npacks * VEC + first; i < a.count; i += stride)\n"
    "        ((T *)a.dst.p[a.me])[i] = reduce_one(a, i);\n"
    "    meet(a, 1, epoch);\n"
    "    end(a, epoch);\n"
    "}\n"
    "#define LL_AT(base, parity, from) \\\n"
    "    ((base) + SYNC_BYTES + ((u64)(parity) * MAX_PES + (u64)(from)) * LL_SLOT_BYTES)\n"
    "static __device__ __forceinline__ void st_ll(u64 at, u64 v, u32 flag)\n"
    "{ u64 lo = (v & 0xffffffffull) | ((u64)flag << 32), hi = (v >> 32) | ((u64)flag << 32);\n"
    "  asm volatile(\"st.relaxed.sys.global.v2.u64 [%0], {%1, %2};\" :: \"l\"(at), \"l\"(lo), \"l\"(hi) : \"memory\"); }\n"
    /* each half on its own single-copy atomic: its flag vouches for its data */
    "static __device__ __forceinline__ u64 ld_ll(const args &a, u64 at, u32 flag)\n"
    "{\n"
    "    u64 lo, hi, t0 = 0;\n"
    "    for (u32 spin = 1;; spin++) {\n"
    "        asm volatile(\"ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];\" : \"=l\"(lo), \"=l\"(hi) : \"l\"(at) : \"memory\");\n"
    "        if ((u32)(lo >> 32) == flag && (u32)(hi >> 32) == flag) break;\n"
    "        if (spin % 1024u) continue;\n"
    "        if (t0 == 0) t0 = now_ns();\n"
    "        const volatile u32 *word = (const volatile u32 *)a.abort_word;\n"
    "        if (word != 0 && word[0] != 0u) fail(a, 3, (int)word[1], 0);\n"
    "        if (a.timeout_ns != 0 && now_ns() - t0 > a.timeout_ns) fail(a, 4, a.me, a.timeout_ns);\n"
    "    }\n"
    "    return (lo & 0xffffffffull) | (hi << 32);\n"
    "}\n"
    "union chunk { u64 w; T e[8 / sizeof(T)]; };\n"
    "extern \"C\" __global__ void __launch_bounds__(THREADS) ll_reduce(const __grid_constant__ args a)\n"
    "{\n"
    "    u64 epoch = begin(a);\n"
    "    u32 flag = (u32)epoch;\n"
    "    int parity = (int)(epoch & 1);\n"
    "    const int per = 8 / sizeof(T);\n"
    "    u64 chunks = (a.count + per - 1) / per;\n"
    "    const T *src = (const T *)a.src.p[a.me];\n"
    "    T *dst = (T *)a.dst.p[a.me];\n"
    "    for (u64 c = threadIdx.x; c < chunks; c += blockDim.x) {\n"
    "        chunk mine, in[MAX_PES];\n"
    "        mine.w = 0;\n"
    "        for (int k = 0; k < per && c * per + k < a.count; k++) mine.e[k] = src[c * per + k];\n"
    "#pragma unroll\n"
    "        for (int p = 0; p < MAX_PES; p++)\n"
    "            if (p < a.n && p != a.me) st_ll(LL_AT(a.flags.p[p], parity, a.me) + 16 * c, mine.w, flag);\n"
    "#pragma unroll\n"
    "        for (int p = 0; p < MAX_PES; p++)\n"
    "            if (p < a.n) in[p].w = p == a.me ? mine.w : ld_ll(a, LL_AT(a.mine, parity, p) + 16 * c, flag);\n"
    "        for (int k = 0; k < per && c * per + k < a.count; k++) {\n"
    "            ACC acc = TO_ACC(in[0].e[k]);\n"
    "#pragma unroll\n"
    "            for (int p = 1; p < MAX_PES; p++)\n"
    "                if (p < a.n) { ACC b = TO_ACC(in[p].e[k]); acc = COMBINE(acc, b); }\n"
    "            dst[c * per + k] = FROM_ACC(acc);\n"
    "        }\n"
    "    }\n"
    "    end(a, epoch);\n"
    "}\n"
    /* PE me's slice of the packs; the elements after the last pack are the
     * last PE's. Needs packed. */
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

int symmem__gpu_reduce_cu(symmem_dtype_t dtype, symmem_reduce_op_t op, char *out, size_t size)
{
    int is_float = dtype >= SYMMEM_DTYPE_FLOAT16 && dtype <= SYMMEM_DTYPE_FLOAT64;
    int bitwise = op == SYMMEM_OP_AND || op == SYMMEM_OP_OR || op == SYMMEM_OP_XOR;
    if ((unsigned)dtype >= SYMMEM_DTYPE_COUNT || (unsigned)op >= SYMMEM_OP_COUNT ||
        types[dtype].type == NULL || (is_float && bitwise))
        return -1;
    int n = snprintf(out, size,
                     "#define MAX_PES %d\n#define MAX_BLOCKS %d\n#define THREADS %d\n"
                     "#define SYNC_BYTES %uull\n#define LL_SLOT_BYTES %uull\n%s"
                     "typedef %s T;\ntypedef %s ACC;\n#define TO_ACC(x) %s\n"
                     "#define FROM_ACC(x) %s\n#define COMBINE(a, b) %s\n%s",
                     SYMMEM_COLL_MAX_PES, SYMMEM_COLL_MAX_BLOCKS, SYMMEM_COLL_THREADS,
                     SYMMEM_COLL_SYNC_BYTES, SYMMEM_COLL_LL_SLOT_BYTES, symmem__gpu_meet_cu,
                     types[dtype].type, types[dtype].acc,
                     types[dtype].to_acc, types[dtype].from_acc, combine[op], body);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

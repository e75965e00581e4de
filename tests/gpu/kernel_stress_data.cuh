/* What tests/gpu/kernel_stress.cu's PEs do around each collective: the
 * kinds of collective, each PE's heap, the plan of one collective (the
 * same on every PE), the values each PE writes (fill) and the result it
 * must then hold (check: every element, and the guard bytes after it), and
 * a kernel that holds a PE back. Included after reduce.cu (T, ACC,
 * FROM_ACC) and meet.cuh (symmem__globaltimer).
 *
 * The result a reduce must give is the one order of docs/reproducibility.md,
 * written out here (not reduce_types.cuh's COMBINE): member 0's value, then
 * member 1's, ..., in float32 for the 16-bit floats, rounded to nearest
 * even once by CUDA's own conversions. The floats' values make the order
 * show (magnitudes over most of the type's range, cancellation, signed
 * zeros, NaNs, infinities, subnormals), and check() counts the elements
 * whose bits another order (the members reversed; for the 16-bit floats,
 * rounding after every member) would change: a run whose count is 0 could
 * not have told the orders apart. */
#ifndef SYMMEM_TESTS_GPU_KERNEL_STRESS_DATA_CUH
#define SYMMEM_TESTS_GPU_KERNEL_STRESS_DATA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>

enum Kind {
    ONE_SHOT_K,
    TWO_SHOT_K,
    LL_K,
    SCATTER_ONE_SHOT_K,
    PUSH_ONE_SHOT_K,
    PUSH_TWO_SHOT_K,
    PUSH_SCATTER_K,
    FCOLLECT_K,
    ALLTOALL_K,
    BROADCAST_K,
    FCOLLECT_PUSH_K,
    ALLTOALL_PUSH_K,
    SYNC_K,
    KINDS
};
static const char *const KIND_NAMES[KINDS] = {"reduce one_shot",
                                              "reduce two_shot",
                                              "reduce ll_reduce",
                                              "reducescatter one_shot",
                                              "reduce push_one_shot",
                                              "reduce push_two_shot",
                                              "reducescatter push_two_shot",
                                              "fcollect (pull)",
                                              "alltoall (pull)",
                                              "broadcast",
                                              "fcollect (push)",
                                              "alltoall (push)",
                                              "sync_only"};

static __host__ __device__ bool is_reduce(int kind)
{
    return kind <= PUSH_SCATTER_K;
}
static __host__ __device__ bool is_scatter(int kind)
{
    return kind == SCATTER_ONE_SHOT_K || kind == PUSH_SCATTER_K;
}

/* Each PE's heap: its flag part, staging part (two halves), src and dst. */
#define STAGE_HALF (256u << 10)
#define DATA_BYTES (8u << 20)
#define GUARD 64u /* bytes after dst's extent that must stay as they were */
#define CANARY 0xa5u
#define POISON 0x5au /* dst before a collective that does not work in place */
#define FLAG_AT 0u
#define STAGE_AT ((SYMMEM_COLL_TEAM_FLAG_BYTES + 255u) / 256u * 256u)
#define SRC_AT (STAGE_AT + 2u * STAGE_HALF)
#define DST_AT (SRC_AT + DATA_BYTES + 256u)
#define HEAP_BYTES (DST_AT + DATA_BYTES + 256u)

/* One collective, the same on every PE. */
struct plan {
    int kind, grid, root, in_place;
    u64 count; /* elements (reduce: of a part for reducescatter), bytes of a piece (moves) */
    u64 src_off, dst_off, slot;
    u64 number; /* which collective of the run */
};

/* ---- what every PE writes and expects ---- */

/* The reference's element conversions: CUDA's, rounded to nearest even. */
template <int D>
struct ref_num {
    static __device__ ACC wide(T x)
    {
        return x;
    }
    static __device__ T narrow(ACC a)
    {
        return a;
    }
};
template <>
struct ref_num<SYMMEM_DTYPE_FLOAT16> {
    static __device__ float wide(u16 x)
    {
        return __half2float(__ushort_as_half(x));
    }
    static __device__ u16 narrow(float a)
    {
        return __half_as_ushort(__float2half_rn(a));
    }
};
template <>
struct ref_num<SYMMEM_DTYPE_BFLOAT16> {
    static __device__ float wide(u16 x)
    {
        return __bfloat162float(__ushort_as_bfloat16(x));
    }
    static __device__ u16 narrow(float a)
    {
        return __bfloat16_as_ushort(__float2bfloat16_rn(a));
    }
};
typedef ref_num<SYMMEM_REDUCE_DTYPE> REF;
static const bool IS_FLOAT = symmem__element<SYMMEM_REDUCE_DTYPE>::is_float;

template <typename A>
static __device__ bool nan_of(A)
{
    return false;
}
static __device__ bool nan_of(float x)
{
    return isnan(x);
}
static __device__ bool nan_of(double x)
{
    return isnan(x);
}

/* a, members 0 .. j - 1 combined, op b, member j's value: min and max
 * take a NaN b, keep a NaN a, and keep a of equal values (+0, -0). */
template <typename A>
static __device__ A ref_combine(A a, A b)
{
    if constexpr (SYMMEM_REDUCE_OP == SYMMEM_OP_SUM)
        return a + b;
    else if constexpr (SYMMEM_REDUCE_OP == SYMMEM_OP_PROD)
        return a * b;
    else if constexpr (SYMMEM_REDUCE_OP == SYMMEM_OP_MIN)
        return b < a || nan_of(b) ? b : a;
    else if constexpr (SYMMEM_REDUCE_OP == SYMMEM_OP_MAX)
        return b > a || nan_of(b) ? b : a;
    else if constexpr (SYMMEM_REDUCE_OP == SYMMEM_OP_AND)
        return a & b;
    else if constexpr (SYMMEM_REDUCE_OP == SYMMEM_OP_OR)
        return a | b;
    else
        return a ^ b;
}

static __device__ u64 mix(u64 x) /* splitmix64's finaliser */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static __device__ T element(int pe, u64 number, u64 i)
{
    if (!IS_FLOAT) {
        long long v = (long long)((pe * 7u + number * 13u + i * 3u) % 19u) - 9;
        return FROM_ACC((ACC)v);
    }
    /* lo, hi: the exponents; specials at fixed indices, NaNs at one member */
    const int D = SYMMEM_REDUCE_DTYPE;
    int lo = D == SYMMEM_DTYPE_FLOAT16 ? -14 : D == SYMMEM_DTYPE_FLOAT64 ? -200 : -60;
    int hi = D == SYMMEM_DTYPE_FLOAT16 ? 12 : D == SYMMEM_DTYPE_FLOAT64 ? 200 : 60;
    double tiny = D == SYMMEM_DTYPE_FLOAT16    ? 0x1p-24
                  : D == SYMMEM_DTYPE_BFLOAT16 ? 0x1p-133
                  : D == SYMMEM_DTYPE_FLOAT32  ? 0x1p-149
                                               : 0x1p-1074;
    u64 h = mix((u64)pe * 0x9e3779b97f4a7c15ull ^ mix(number * 0x632be59bd9b4e019ull + i));
    double sign = (h >> 40) & 1 ? -1.0 : 1.0, x;
    if (i % 16 == 5)
        x = 0.0 * sign;
    else if (i % 16 == 9 && (i / 16) % MAX_PES == (u64)pe)
        x = nan("");
    else if (i % 64 == 13)
        x = sign * INFINITY;
    else if (i % 64 == 29)
        x = (double)(1 + (h >> 42) % 7) * tiny;
    else if (i % 4 == 0 && pe % 2 == 0) /* 1e8, x, -1e8, y, ...: cancellation */
        x = ldexp(1.0 + (double)(i % 1021) / 1021.0, hi - 2) * ((pe / 2) % 2 ? -1.0 : 1.0);
    else
        x = sign * ldexp(1.0 + (double)(h & 0xffffff) / 16777216.0,
                         lo + (int)((h >> 24) % (u64)(hi - lo)));
    if (D == SYMMEM_DTYPE_FLOAT64) return (T)x;
    return REF::narrow((ACC)(float)x);
}

static __device__ unsigned char byte_of(int pe, u64 number, u64 j)
{
    return (unsigned char)((pe * 31u + number * 7u + j * 5u + (j >> 8)) & 0xffu);
}

/* Element i of every member combined in the one order: members 0, 1, ...
 * (reverse: n - 1, ..., 0; every_step: rounded to T after each member). */
static __device__ T reduced(int n, u64 number, u64 i, bool reverse = false, bool every_step = false)
{
    ACC acc = REF::wide(element(reverse ? n - 1 : 0, number, i));
    for (int k = 1; k < n; k++) {
        acc = ref_combine<ACC>(acc, REF::wide(element(reverse ? n - 1 - k : k, number, i)));
        if (every_step) acc = REF::wide(REF::narrow(acc));
    }
    return REF::narrow(acc);
}

static __host__ __device__ u64 src_bytes(const plan &pl, int n)
{
    if (is_reduce(pl.kind)) return pl.count * sizeof(T) * (is_scatter(pl.kind) ? n : 1);
    return pl.kind == ALLTOALL_K || pl.kind == ALLTOALL_PUSH_K ? pl.count * n : pl.count;
}
static __host__ __device__ u64 dst_bytes(const plan &pl, int n)
{
    if (is_reduce(pl.kind)) return pl.count * sizeof(T);
    return pl.kind == BROADCAST_K ? pl.count : pl.count * n;
}

struct failure {
    unsigned long long wrong;
    int set, pe;
    u64 number, index, got, want;
};
__device__ failure first_wrong;
/* elements whose bits the reverse order, and rounding at every step, change */
__device__ unsigned long long order_shows, step_shows;

static __device__ void wrong(int pe, u64 number, u64 index, u64 got, u64 want)
{
    atomicAdd(&first_wrong.wrong, 1ull);
    if (atomicCAS(&first_wrong.set, 0, 1) == 0) {
        first_wrong.pe = pe;
        first_wrong.number = number;
        first_wrong.index = index;
        first_wrong.got = got;
        first_wrong.want = want;
    }
}

static __device__ u64 bits_of(T v)
{
    u64 b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}

/* The same bits, or both NaN (docs/reproducibility.md leaves a NaN's bits
 * to the engine). */
static __device__ bool same(T got, T want)
{
    return bits_of(got) == bits_of(want) || (nan_of(REF::wide(got)) && nan_of(REF::wide(want)));
}

/* src (this PE's values), dst poisoned where the collective does not work
 * in place, and the guard after dst. */
__global__ void fill(plan pl, int n, int pe, char *src, char *dst)
{
    u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x, stride = (u64)gridDim.x * blockDim.x;
    u64 sbytes = src_bytes(pl, n), dbytes = dst_bytes(pl, n);
    if (is_reduce(pl.kind)) {
        for (u64 i = first; i < sbytes / sizeof(T); i += stride)
            ((T *)src)[i] = element(pe, pl.number, i);
    } else {
        for (u64 j = first; j < sbytes; j += stride)
            ((unsigned char *)src)[j] = byte_of(pe, pl.number, j);
    }
    if (!pl.in_place)
        for (u64 j = first; j < dbytes; j += stride) ((unsigned char *)dst)[j] = POISON;
    for (u64 j = first; j < GUARD; j += stride) ((unsigned char *)dst)[dbytes + j] = CANARY;
}

__global__ void check(plan pl, int n, int pe, const char *dst, volatile u64 *done)
{
    u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x, stride = (u64)gridDim.x * blockDim.x;
    u64 dbytes = dst_bytes(pl, n);
    if (is_reduce(pl.kind)) {
        u64 shift = is_scatter(pl.kind) ? (u64)pe * pl.count : 0;
        for (u64 i = first; i < pl.count; i += stride) {
            T got = ((const T *)dst)[i], want = reduced(n, pl.number, i + shift);
            if (!same(got, want)) wrong(pe, pl.number, i, bits_of(got), bits_of(want));
            if (IS_FLOAT && !same(reduced(n, pl.number, i + shift, true), want))
                atomicAdd(&order_shows, 1ull);
            if (sizeof(T) == 2 && IS_FLOAT &&
                !same(reduced(n, pl.number, i + shift, false, true), want))
                atomicAdd(&step_shows, 1ull);
        }
    } else if (pl.kind != SYNC_K) {
        for (u64 j = first; j < dbytes; j += stride) {
            u64 q = pl.kind == BROADCAST_K ? (u64)pl.root : j / pl.count, at = j % pl.count;
            bool all_to_all = pl.kind == ALLTOALL_K || pl.kind == ALLTOALL_PUSH_K;
            unsigned char want = byte_of((int)q, pl.number, at + (all_to_all ? pe * pl.count : 0));
            unsigned char got = ((const unsigned char *)dst)[j];
            if (got != want) wrong(pe, pl.number, j, got, want);
        }
    }
    for (u64 j = first; j < GUARD; j += stride) {
        unsigned char got = ((const unsigned char *)dst)[dbytes + j];
        if (got != CANARY) wrong(pe, pl.number, dbytes + j, got, CANARY);
    }
    if (first == 0) done[pe] = pl.number + 1; /* the host reads it when PEs stop */
}

/* Holds this PE's stream back: it arrives late at the next collective. */
__global__ void hold_back(u64 ns)
{
    u64 t0 = symmem__globaltimer();
    while (symmem__globaltimer() - t0 < ns) {
    }
}

#endif

/* What tests/gpu/kernel_stress.cu's PEs do around each collective: the
 * kinds of collective, each PE's heap, the plan of one collective (the
 * same on every PE), the values each PE writes (fill) and the result it
 * must then hold (check: every element, and the guard bytes after it), and
 * a kernel that holds a PE back. Included after reduce.cu (T, ACC,
 * COMBINE) and meet.cuh (now_ns). */
#ifndef SYMMEM_TESTS_GPU_KERNEL_STRESS_DATA_CUH
#define SYMMEM_TESTS_GPU_KERNEL_STRESS_DATA_CUH

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

static __device__ T element(int pe, u64 number, u64 i)
{
    long long v = (long long)((pe * 7u + number * 13u + i * 3u) % 19u) - 9;
    return FROM_ACC((ACC)v);
}
static __device__ unsigned char byte_of(int pe, u64 number, u64 j)
{
    return (unsigned char)((pe * 31u + number * 7u + j * 5u + (j >> 8)) & 0xffu);
}
/* The reduction of element i of every member, member 0 first (the order
 * the kernels combine in, so floats agree to the bit). */
static __device__ T reduced(int n, u64 number, u64 i)
{
    ACC acc = TO_ACC(element(0, number, i));
    for (int p = 1; p < n; p++) {
        ACC b = TO_ACC(element(p, number, i));
        acc = COMBINE(acc, b);
    }
    return FROM_ACC(acc);
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
            if (bits_of(got) != bits_of(want)) wrong(pe, pl.number, i, bits_of(got), bits_of(want));
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
    u64 t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
}

#endif

/* The gpu backend's own collective kernels (src/backends/gpu/kernels/
 * reduce.cu and move.cu) under stress on ONE GPU: n PEs played by n streams
 * of this process, each with a heap of its own in this GPU's memory (its
 * part of the flag area, of the staging buffer, src and dst), the others'
 * heaps addressed directly, as peer mappings are on n GPUs. Each kernel
 * gets the argument block it gets from own_collectives.c, so its protocol
 * (meetings and epochs, the one-phase reduce's mailboxes and parity, the
 * push reduces' staging halves and sequence, block counts that change from
 * one launch to the next) runs at full concurrency through thousands of
 * random collectives: random kinds, sizes, grids, slots, alignments, in
 * place or not, one PE held back at random. Every PE's result is checked
 * element by element against the same reduction done here in the same
 * order, and the bytes after it are checked untouched.
 *
 * What it cannot show: NVLink's timing and ordering between GPUs (the PEs
 * here share one L2), and the host's choices (own_collectives.c); the
 * gpu suite on several GPUs covers those.
 *
 *   nvcc -std=c++17 -arch=sm_90 -DSYMMEM_REDUCE_DTYPE=11 -DSYMMEM_REDUCE_OP=0 \
 *       -I include -I src/backends/gpu/kernels -o kernel_stress tests/gpu/kernel_stress.cu
 *   ./kernel_stress N_PES ITERATIONS SEED     (STRESS_KINDS=0,2: those kinds only)
 *
 * Prints one line per kind with its count, then "OK"; exits 1 naming the
 * first wrong element (PE, collective, index, got, want), 2 naming the
 * collective each PE was in when the PEs stopped making progress.
 * tests/python/test_gpu_kernel_stress.py builds and runs it. */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include <unistd.h>
#include <vector>

#include "reduce.cu"
#include "move.cu"

#define CHECK_CUDA(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "kernel_stress: %s: %s\n", #call, cudaGetErrorString(e_));             \
            exit(3);                                                                               \
        }                                                                                          \
    } while (0)

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

/* ---- the run ---- */

struct run_state {
    int n, grid_cap;
    int kinds_allowed[KINDS], nkinds; /* STRESS_KINDS, else every kind */
    char *heap[MAX_PES];
    cudaStream_t stream[MAX_PES];
    volatile u64 *done_host, *done_dev;
    unsigned long long kinds[KINDS];
};

static u64 log_uniform(std::mt19937_64 &rng, u64 lo, u64 hi)
{
    double a = std::log((double)lo), b = std::log((double)hi + 1);
    u64 v = (u64)std::exp(std::uniform_real_distribution<double>(a, b)(rng));
    return v < lo ? lo : v > hi ? hi : v;
}

static plan choose(std::mt19937_64 &rng, const run_state &s, u64 number)
{
    plan pl = {};
    pl.number = number;
    pl.kind = s.kinds_allowed[rng() % (u64)s.nkinds];
    int n = s.n, k = pl.kind;
    auto pick = [&](u64 m) { return (u64)(rng() % m); };
    pl.grid = 1 + (int)pick((u64)s.grid_cap);
    u64 max_bytes = DATA_BYTES / (is_scatter(k) || k == FCOLLECT_K || k == ALLTOALL_K ||
                                          k == FCOLLECT_PUSH_K || k == ALLTOALL_PUSH_K
                                      ? (u64)n
                                      : 1u) -
                    64;
    if (is_reduce(k)) {
        u64 limit = k == LL_K ? SYMMEM_COLL_LL_MAX_BYTES : max_bytes;
        /* sizes at and around the one-phase limit and the packs too */
        pl.count = pick(4) == 0 ? SYMMEM_COLL_LL_MAX_BYTES / sizeof(T) - pick(2)
                                : log_uniform(rng, 1, limit / sizeof(T));
        if (pl.count * sizeof(T) > limit) pl.count = limit / sizeof(T);
        bool packs_needed = k == TWO_SHOT_K || k >= PUSH_ONE_SHOT_K;
        u64 shift = packs_needed || pick(2) ? 0 : sizeof(T) * (1 + pick(15 / sizeof(T) + 1));
        pl.src_off = pl.dst_off = shift % 16;
        if (k == PUSH_SCATTER_K) pl.count = (pl.count * sizeof(T) + 15) / 16 * 16 / sizeof(T);
        pl.in_place =
            (k == TWO_SHOT_K || k == LL_K || k == PUSH_ONE_SHOT_K || k == PUSH_TWO_SHOT_K) &&
            pick(3) == 0;
        if (k == LL_K) pl.grid = 1;
        if (k >= PUSH_ONE_SHOT_K) {
            while (pl.grid > 1 && (u64)pl.grid * n * 16 > STAGE_HALF) pl.grid /= 2;
            u64 fits = STAGE_HALF / ((u64)pl.grid * n) / 16;
            pl.slot = 16 * (1 + pick(pick(2) ? fits : (fits < 8 ? fits : 8)));
        }
    } else if (k != SYNC_K) {
        pl.count = pick(3) == 0 ? 1 + pick(64) : log_uniform(rng, 1, max_bytes / 2);
        pl.src_off = pick(2) ? 0 : pick(16);
        pl.dst_off = pick(2) ? pl.src_off : pick(16);
        pl.root = (int)pick((u64)n);
        pl.in_place = k == BROADCAST_K && pick(3) == 0;
        if (pl.in_place) pl.dst_off = pl.src_off;
    } else {
        pl.grid = 1;
    }
    return pl;
}

static void launch_on(run_state &s, const plan &pl, int pe)
{
    int n = s.n;
    args a = {};
    a.n = n;
    a.me = pe;
    a.mine = (u64)(s.heap[pe] + FLAG_AT);
    for (int i = 0; i < n; i++) {
        a.flags.p[i] = (u64)(s.heap[i] + FLAG_AT);
        a.stage.p[i] = (u64)(s.heap[i] + STAGE_AT);
        a.src.p[i] = (u64)(s.heap[i] + SRC_AT + pl.src_off);
        a.dst.p[i] = (u64)(s.heap[i] + (pl.in_place ? SRC_AT : DST_AT) + pl.dst_off);
    }
    snprintf(a.call, sizeof(a.call), "%s", "stress");
    a.count = pl.count;
    a.stage_half = STAGE_HALF;
    a.slot = pl.slot;
    cudaStream_t st = s.stream[pe];
    switch (pl.kind) {
    case ONE_SHOT_K:
    case TWO_SHOT_K:
    case SCATTER_ONE_SHOT_K:
        if (pl.kind == SCATTER_ONE_SHOT_K) /* this PE's part of every member's src */
            for (int i = 0; i < n; i++) a.src.p[i] += pl.count * sizeof(T) * (u64)pe;
        a.packed = (a.src.p[pe] | a.dst.p[pe]) % 16 == 0;
        if (pl.kind == TWO_SHOT_K)
            two_shot<<<pl.grid, THREADS, 0, st>>>(a);
        else
            one_shot<<<pl.grid, THREADS, 0, st>>>(a);
        break;
    case LL_K: ll_reduce<<<1, THREADS, 0, st>>>(a); break;
    case PUSH_ONE_SHOT_K:
        a.packed = 1;
        push_one_shot<<<pl.grid, THREADS, 0, st>>>(a);
        break;
    case PUSH_TWO_SHOT_K:
    case PUSH_SCATTER_K:
        a.packed = 1;
        a.scatter = pl.kind == PUSH_SCATTER_K;
        push_two_shot<<<pl.grid, THREADS, 0, st>>>(a);
        break;
    case SYNC_K: sync_only<<<1, THREADS, 0, st>>>(a); break;
    default: {
        bool alltoall = pl.kind == ALLTOALL_K || pl.kind == ALLTOALL_PUSH_K;
        bool push = pl.kind == FCOLLECT_PUSH_K || pl.kind == ALLTOALL_PUSH_K;
        a.first = pl.kind == BROADCAST_K ? pl.root : pe;
        a.pieces = pl.kind == BROADCAST_K ? 1 : n;
        a.src_step = alltoall ? pl.count : 0;
        a.dst_step = pl.kind == BROADCAST_K ? 0 : pl.count;
        u64 bits = pl.count | a.src.p[pe] | a.dst.p[pe];
        int w = bits % 16 == 0 ? 0 : bits % 8 == 0 ? 1 : bits % 4 == 0 ? 2 : bits % 2 == 0 ? 3 : 4;
        static void (*const pull[])(args) = {move16, move8, move4, move2, move1};
        static void (*const pushes[])(args) = {push16, push8, push4, push2, push1};
        (push ? pushes : pull)[w]<<<pl.grid, THREADS, 0, st>>>(a);
    }
    }
    CHECK_CUDA(cudaGetLastError());
}

static void describe(const char *what, const plan &pl)
{
    fprintf(stderr,
            "kernel_stress: %s: collective %llu, %s, count %llu, grid %d, slot %llu, src +%llu, "
            "dst +%llu%s, root %d\n",
            what, pl.number, KIND_NAMES[pl.kind], pl.count, pl.grid, pl.slot, pl.src_off,
            pl.dst_off, pl.in_place ? " (in place)" : "", pl.root);
}

/* Waits for every stream, at most timeout_s; 0 when they all finished. */
static int drain(run_state &s, double timeout_s)
{
    auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        int busy = 0;
        for (int p = 0; p < s.n; p++) {
            cudaError_t e = cudaStreamQuery(s.stream[p]);
            if (e == cudaErrorNotReady)
                busy++;
            else
                CHECK_CUDA(e);
        }
        if (busy == 0) return 0;
        std::chrono::duration<double> waited = std::chrono::steady_clock::now() - t0;
        if (waited.count() > timeout_s) return -1;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

static int grid_cap(int n)
{
    int sms = 0, fewest = 1 << 30;
    CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const void *kernels[] = {(const void *)one_shot,      (const void *)two_shot,
                             (const void *)push_one_shot, (const void *)push_two_shot,
                             (const void *)move16,        (const void *)push1};
    for (const void *k : kernels) {
        int blocks = 0;
        CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, THREADS, 0));
        if (blocks < fewest) fewest = blocks;
    }
    /* every PE's blocks resident at once, with room left for fill and check */
    int cap = sms * fewest / (n + 1);
    return cap < 1 ? 1 : cap > MAX_BLOCKS ? MAX_BLOCKS : cap;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: kernel_stress N_PES ITERATIONS SEED\n");
        return 3;
    }
    /* a hardware queue per stream: a kernel waiting in a shared queue would
     * hold back another PE's kernel that the waiting one needs */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 1);
    /* every kernel loaded before the first launch: loading one lazily, at
     * its first launch, can wait for the kernels that spin for it */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    run_state s = {};
    s.n = atoi(argv[1]);
    long iterations = atol(argv[2]);
    std::mt19937_64 rng(strtoull(argv[3], NULL, 10));
    if (s.n < 1 || s.n > MAX_PES) {
        fprintf(stderr, "kernel_stress: N_PES must be 1 to %d\n", MAX_PES);
        return 3;
    }
    s.grid_cap = grid_cap(s.n);
    /* STRESS_KINDS=0,1,2: only those kinds (KIND_NAMES' order) */
    for (const char *k = getenv("STRESS_KINDS"); k != NULL && *k != '\0';) {
        char *end;
        long kind = strtol(k, &end, 10);
        if (end == k || kind < 0 || kind >= KINDS) {
            fprintf(stderr, "kernel_stress: STRESS_KINDS: kinds are 0 to %d\n", KINDS - 1);
            return 3;
        }
        s.kinds_allowed[s.nkinds++] = (int)kind;
        k = *end == ',' ? end + 1 : end;
    }
    if (s.nkinds == 0)
        for (int k = 0; k < KINDS; k++) s.kinds_allowed[s.nkinds++] = k;
    for (int p = 0; p < s.n; p++) {
        CHECK_CUDA(cudaMalloc(&s.heap[p], HEAP_BYTES));
        CHECK_CUDA(cudaMemset(s.heap[p], 0, HEAP_BYTES));
        CHECK_CUDA(cudaStreamCreateWithFlags(&s.stream[p], cudaStreamNonBlocking));
    }
    CHECK_CUDA(cudaHostAlloc((void **)&s.done_host, sizeof(u64) * MAX_PES, cudaHostAllocMapped));
    CHECK_CUDA(cudaHostGetDevicePointer((void **)&s.done_dev, (void *)s.done_host, 0));
    CHECK_CUDA(cudaDeviceSynchronize());
    int order[MAX_PES];
    std::vector<plan> history;
    for (long number = 0; number < iterations; number++) {
        plan pl = choose(rng, s, (u64)number);
        history.push_back(pl);
        s.kinds[pl.kind]++;
        for (int p = 0; p < s.n; p++) order[p] = p;
        std::shuffle(order, order + s.n, rng);
        int late = rng() % 4 == 0 ? (int)(rng() % s.n) : -1;
        for (int k = 0; k < s.n; k++) {
            int p = order[k];
            char *src = s.heap[p] + SRC_AT + pl.src_off;
            char *dst = s.heap[p] + (pl.in_place ? SRC_AT : DST_AT) + pl.dst_off;
            fill<<<32, 256, 0, s.stream[p]>>>(pl, s.n, p, src, dst);
            if (p == late) hold_back<<<1, 32, 0, s.stream[p]>>>(1000 + rng() % 50000);
            launch_on(s, pl, p);
            check<<<32, 256, 0, s.stream[p]>>>(pl, s.n, p, dst, s.done_dev);
        }
        if (number % 64 != 63 && number + 1 != iterations) continue;
        if (drain(s, 15.0) != 0) {
            fprintf(stderr,
                    "kernel_stress: n=%d: no progress for 15 s; collectives done by PE:", s.n);
            for (int p = 0; p < s.n; p++) fprintf(stderr, " %llu", s.done_host[p]);
            fprintf(stderr, " (of %ld launched)\n", number + 1);
            for (int p = 0; p < s.n; p++)
                if (s.done_host[p] < history.size()) describe("stuck in", history[s.done_host[p]]);
            _exit(2); /* the kernels still spin: leave without waiting for them */
        }
        failure f;
        CHECK_CUDA(cudaMemcpyFromSymbol(&f, first_wrong, sizeof(f)));
        if (f.wrong != 0) {
            fprintf(stderr,
                    "kernel_stress: n=%d: %llu wrong; the first: PE %d, collective %llu, byte or "
                    "element %llu: got 0x%llx, want 0x%llx\n",
                    s.n, f.wrong, f.pe, f.number, f.index, f.got, f.want);
            describe("wrong in", history[f.number]);
            if (f.number > 0) describe("after", history[f.number - 1]);
            return 1;
        }
    }
    printf("kernel_stress: dtype %d, op %d, %d PEs, grids up to %d blocks, %ld collectives\n",
           SYMMEM_REDUCE_DTYPE, SYMMEM_REDUCE_OP, s.n, s.grid_cap, iterations);
    for (int i = 0; i < s.nkinds; i++)
        printf("  %-28s %llu\n", KIND_NAMES[s.kinds_allowed[i]], s.kinds[s.kinds_allowed[i]]);
    printf("OK\n");
    return 0;
}

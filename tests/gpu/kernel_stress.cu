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
 * element by element, bit for bit, against the reduction in the one order
 * of docs/reproducibility.md, written out in kernel_stress_data.cuh, with
 * values whose bits depend on the order; and the bytes after it are
 * checked untouched.
 *
 * What it cannot show: NVLink's timing and ordering between GPUs (the PEs
 * here share one L2), and the host's choices (own_collectives.c); the
 * gpu suite on several GPUs covers those.
 *
 *   nvcc -std=c++17 -arch=sm_90 -DSYMMEM_REDUCE_DTYPE=11 -DSYMMEM_REDUCE_OP=0 \
 *       -I include -I src/backends/gpu/kernels -o kernel_stress tests/gpu/kernel_stress.cu
 *   ./kernel_stress N_PES ITERATIONS SEED [graph]
 *
 * STRESS_KINDS=0,2: those kinds only; graph: each PE's collectives captured
 * in a CUDA graph and replayed STRESS_REPLAYS times (default 20).
 *
 * Prints one line per kind with its count, the elements whose bits another
 * order would have changed ("order shows in N elements, rounding at every
 * step in M"), then "OK"; exits 1 naming the
 * first wrong element (PE, collective, index, got, want), 2 naming the
 * collective each PE was in when the PEs stopped making progress.
 * tests/python/test_gpu_kernel_stress.py builds and runs it. */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

#include "kernel_stress_data.cuh"

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

/* One collective on every PE's stream, in a random PE order: fill, one PE
 * held back now and then, the collective, check. */
static void enqueue(run_state &s, const plan &pl, std::mt19937_64 &rng)
{
    int order[MAX_PES];
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
}

/* Waits for what was launched; exits 2 where the PEs stopped making
 * progress, 1 where a PE's result was wrong (naming it, and `when`). */
static void settle(run_state &s, const std::vector<plan> &history, const char *when)
{
    if (drain(s, 15.0) != 0) {
        fprintf(stderr,
                "kernel_stress: n=%d: no progress for 15 s %s; collectives done by PE:", s.n, when);
        for (int p = 0; p < s.n; p++) fprintf(stderr, " %llu", s.done_host[p]);
        fprintf(stderr, " (of %zu)\n", history.size());
        for (int p = 0; p < s.n; p++)
            if (s.done_host[p] < history.size()) describe("stuck in", history[s.done_host[p]]);
        _exit(2); /* the kernels still spin: leave without waiting for them */
    }
    failure f;
    CHECK_CUDA(cudaMemcpyFromSymbol(&f, first_wrong, sizeof(f)));
    if (f.wrong == 0) return;
    fprintf(stderr,
            "kernel_stress: n=%d: %llu wrong %s; the first: PE %d, collective %llu, byte or "
            "element %llu: got 0x%llx, want 0x%llx\n",
            s.n, f.wrong, when, f.pe, f.number, f.index, f.got, f.want);
    describe("wrong in", history[f.number]);
    if (f.number > 0) describe("after", history[f.number - 1]);
    exit(1);
}

/* Graph mode: each PE's stream captures the collectives into a CUDA graph
 * of its own, which is then replayed `replays` times, the PEs' replays
 * launched in a random order: the kernels keep their epochs and staging
 * sequence in the flag area, not in their arguments, so that a replay
 * (the same arguments again) still meets the other PEs' right replay. */
static void run_graphs(run_state &s, std::mt19937_64 &rng, long iterations, long replays,
                       std::vector<plan> &history)
{
    cudaGraph_t graph[MAX_PES];
    cudaGraphExec_t exec[MAX_PES];
    for (int p = 0; p < s.n; p++)
        CHECK_CUDA(cudaStreamBeginCapture(s.stream[p], cudaStreamCaptureModeRelaxed));
    for (long number = 0; number < iterations; number++) {
        history.push_back(choose(rng, s, (u64)number));
        s.kinds[history.back().kind]++;
        enqueue(s, history.back(), rng);
    }
    for (int p = 0; p < s.n; p++) {
        CHECK_CUDA(cudaStreamEndCapture(s.stream[p], &graph[p]));
        CHECK_CUDA(cudaGraphInstantiate(&exec[p], graph[p], 0));
    }
    int order[MAX_PES];
    char when[64];
    for (long r = 0; r < replays; r++) {
        for (int p = 0; p < s.n; p++) order[p] = p;
        std::shuffle(order, order + s.n, rng);
        for (int k = 0; k < s.n; k++)
            CHECK_CUDA(cudaGraphLaunch(exec[order[k]], s.stream[order[k]]));
        snprintf(when, sizeof(when), "in replay %ld", r + 1);
        if (r % 4 == 3 || r + 1 == replays) settle(s, history, when);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "graph") == 0)) {
        fprintf(stderr, "usage: kernel_stress N_PES ITERATIONS SEED [graph]\n");
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
    std::vector<plan> history;
    const char *replays = getenv("STRESS_REPLAYS");
    long graph_replays = argc == 5 ? (replays ? atol(replays) : 20) : 0;
    if (graph_replays > 0) {
        run_graphs(s, rng, iterations, graph_replays, history);
    } else {
        for (long number = 0; number < iterations; number++) {
            history.push_back(choose(rng, s, (u64)number));
            s.kinds[history.back().kind]++;
            enqueue(s, history.back(), rng);
            if (number % 64 == 63 || number + 1 == iterations) settle(s, history, "");
        }
    }
    printf("kernel_stress: dtype %d, op %d, %d PEs, grids up to %d blocks, %ld collectives",
           SYMMEM_REDUCE_DTYPE, SYMMEM_REDUCE_OP, s.n, s.grid_cap, iterations);
    if (graph_replays > 0) printf(" in CUDA graphs, replayed %ld times", graph_replays);
    printf("\n");
    for (int i = 0; i < s.nkinds; i++)
        printf("  %-28s %llu\n", KIND_NAMES[s.kinds_allowed[i]], s.kinds[s.kinds_allowed[i]]);
    unsigned long long shows[2];
    CHECK_CUDA(cudaMemcpyFromSymbol(&shows[0], order_shows, sizeof(shows[0])));
    CHECK_CUDA(cudaMemcpyFromSymbol(&shows[1], step_shows, sizeof(shows[1])));
    printf("order shows in %llu elements, rounding at every step in %llu\n", shows[0], shows[1]);
    printf("OK\n");
    return 0;
}

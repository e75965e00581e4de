/*
 * The reference for symmem's device calls: what symmem.bench.device_numba
 * measures with symmem.device.numba kernels, measured with NVSHMEM's own
 * device API. The kernels have the same shapes, the sizes and counts come
 * from the same plan (symmem/bench/plan.py, passed in the environment), and
 * the timing is the same: CUDA events around one kernel, the best of
 * DEVICE_RUNS runs after a warm-up run. PE 0 works and PE 1 is the target
 * (both play the ping-pong; every PE takes part in the barriers). PE 0 prints
 * one JSON record per line, as every worker of `python -m symmem.bench`.
 *
 *   device_put           nvshmemx_putmem_block from 1 block of 1024 threads,
 *                        repeated reps times in the kernel; us per put
 *   device_put_grid      the same from 2 blocks per SM, each its slice
 *   device_put_lat       one thread: nvshmem_putmem of 8 bytes + nvshmem_quiet
 *   device_p_lat         one thread: nvshmem_int64_p + nvshmem_quiet
 *   device_put_signal    nvshmem_putmem_signal (8 bytes, SIGNAL_SET) then
 *                        nvshmem_signal_wait_until(GE): half a round trip
 *   device_barrier       nvshmem_barrier_all from one thread (1x1 kernel)
 *   device_barrier_block nvshmemx_barrier_all_block from one block of 1024
 *                        threads (the block scope of NVSHMEM's perftest
 *                        barrier_latency, which runs one block)
 * The kernels that synchronise PEs (ping-pong, barriers) are started with
 * nvshmemx_collective_launch, as NVSHMEM asks; the others with <<<>>>.
 *
 * Started by symmem's launcher (SYMMEM_RANK, SYMMEM_NRANKS, SYMMEM_JOB);
 * NVSHMEM's unique id goes from PE 0 to the others as nvshmem_floor.c's does
 * (launched.h). `python -m symmem.bench` builds it (libraries.py, with the
 * GPU's sm_XY; sm_90 on H100 and H200), NVSHMEM being the nvidia-nvshmem wheel:
 *   nvcc -O2 -rdc=true -arch=sm_90 -I$NVSHMEM/include nvshmem_device.cu -o nvshmem_device \
 *        $NVSHMEM/lib/libnvshmem_device.a -L$NVSHMEM/lib -l:libnvshmem_host.so.3 -lcuda \
 *        -Xlinker -rpath -Xlinker $NVSHMEM/lib
 */
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launched.h"

#define LIB "nvshmem device"
#define UID_PREFIX "nvshmem-device"
#define PUT_THREADS 1024 /* one block's threads, as device_numba's kernels */

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "PE %d: %s failed: %s (%s:%d)\n", rank, #call,                         \
                    cudaGetErrorString(err_), __FILE__, __LINE__);                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int rank, nranks;
static cudaStream_t stream;
static long runs, loop_count, move_bytes, max_reps;

/* ---- kernels: the shapes of symmem.bench.device_numba's ---- */

__global__ void put_chunks(char *dst, const char *src, size_t size, size_t chunk, int pe, long reps)
{
    /* Blocks past the end put 0 bytes from the end, as a clamped slice. */
    size_t start = (size_t)blockIdx.x * chunk < size ? (size_t)blockIdx.x * chunk : size;
    size_t len = start + chunk < size ? chunk : size - start;
    for (long r = 0; r < reps; r++) nvshmemx_putmem_block(dst + start, src + start, len, pe);
    if (threadIdx.x == 0) nvshmem_quiet();
}

__global__ void put_loop(char *dst, const char *src, int pe, long count)
{
    for (long i = 0; i < count; i++) {
        nvshmem_putmem(dst, src, 8, pe);
        nvshmem_quiet();
    }
}

__global__ void p_loop(int64_t *dst, int pe, long count)
{
    for (long i = 0; i < count; i++) {
        nvshmem_int64_p(dst, (int64_t)i, pe);
        nvshmem_quiet();
    }
}

__global__ void ping_pong(int64_t *buf, const int64_t *src, uint64_t *sig, long rounds, int me,
                          int peer)
{
    for (long r = 1; r <= rounds; r++) {
        if (me == 0) {
            nvshmem_putmem_signal(buf, src, 8, sig, (uint64_t)r, NVSHMEM_SIGNAL_SET, peer);
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, (uint64_t)r);
        } else {
            nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, (uint64_t)r);
            nvshmem_putmem_signal(buf, src, 8, sig, (uint64_t)r, NVSHMEM_SIGNAL_SET, peer);
        }
    }
}

__global__ void barrier_loop(long count)
{
    for (long i = 0; i < count; i++) nvshmem_barrier_all();
}

__global__ void barrier_block_loop(long count)
{
    for (long i = 0; i < count; i++) nvshmemx_barrier_all_block();
}

/* ---- timing ---- */

static void collective_launch(const void *kernel, int threads, void **args)
{
    if (nvshmemx_collective_launch(kernel, dim3(1), dim3(threads), args, 0, stream) != 0) {
        fprintf(stderr, "PE %d: nvshmemx_collective_launch failed\n", rank);
        exit(1);
    }
}

/* Seconds of the fastest of `runs` CUDA-event timings of launch(), after
 * one warm-up; line_up() (if any) runs before each, on every PE. */
template <typename Launch, typename LineUp>
static double best_seconds(Launch launch, LineUp line_up)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    double best = 1e300;
    for (long i = 0; i <= runs; i++) { /* i == 0: the warm-up */
        line_up();
        CUDA_CHECK(cudaEventRecord(start, stream));
        launch();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (i > 0 && ms * 1e-3 < best) best = ms * 1e-3;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return best;
}

static void no_line_up(void) {}

static void emit(const char *op, size_t bytes, double seconds)
{
    if (rank == 0)
        printf("{\"lib\": \"" LIB "\", \"op\": \"%s\", \"bytes\": %zu, \"us\": %.4f}\n", op, bytes,
               seconds * 1e6);
    fflush(stdout);
}

/* ---- the operations ---- */

typedef struct {
    char *dst, *src;    /* max put size each */
    int64_t *buf, *one; /* the ping-pong's 8 bytes: target and source */
    uint64_t *sig;
    int sms;
} bufs_t;

static long reps_for(size_t size)
{
    long reps = move_bytes / (long)size;
    return reps < 1 ? 1 : reps > max_reps ? max_reps : reps;
}

static void device_put(const char *op, size_t size, const bufs_t *b)
{
    if (rank == 0) {
        int blocks = strcmp(op, "device_put_grid") == 0 ? 2 * b->sms : 1;
        size_t chunk = (size + (size_t)blocks - 1) / (size_t)blocks;
        long reps = reps_for(size);
        char *dst = b->dst, *src = b->src;
        double s = best_seconds(
            [&] { put_chunks<<<blocks, PUT_THREADS, 0, stream>>>(dst, src, size, chunk, 1, reps); },
            no_line_up);
        emit(op, size, s / (double)reps);
    }
    nvshmem_barrier_all();
}

static void device_latency(const char *op, const bufs_t *b)
{
    if (rank == 0) {
        long count = loop_count;
        char *dst = b->dst, *src = b->src;
        int64_t *d64 = (int64_t *)b->dst;
        double s =
            strcmp(op, "device_p_lat") == 0
                ? best_seconds([&] { p_loop<<<1, 1, 0, stream>>>(d64, 1, count); }, no_line_up)
                : best_seconds([&] { put_loop<<<1, 1, 0, stream>>>(dst, src, 1, count); },
                               no_line_up);
        emit(op, 8, s / (double)count);
    }
    nvshmem_barrier_all();
}

static void device_put_signal(const bufs_t *b)
{
    /* The launch is collective: PEs past 1 launch it too, with no rounds. */
    long rounds = loop_count, mine = rank < 2 ? rounds : 0;
    int me = rank, peer = rank == 0 ? 1 : 0;
    int64_t *buf = b->buf, *one = b->one;
    uint64_t *sig = b->sig;
    void *args[] = {&buf, &one, &sig, &mine, &me, &peer};
    /* Both PEs start from signal 0: reset, then meet before either puts. */
    double s = best_seconds([&] { collective_launch((const void *)ping_pong, 1, args); },
                            [&] {
                                CUDA_CHECK(cudaMemsetAsync(sig, 0, sizeof(uint64_t), stream));
                                CUDA_CHECK(cudaStreamSynchronize(stream));
                                nvshmem_barrier_all();
                            });
    emit("device_put_signal", 8, s / (double)rounds / 2); /* one way of the round trip */
}

static void device_barrier(const char *op)
{
    long count = loop_count;
    void *args[] = {&count};
    int block = strcmp(op, "device_barrier_block") == 0;
    double s = best_seconds(
        [&] {
            collective_launch(block ? (const void *)barrier_block_loop : (const void *)barrier_loop,
                              block ? PUT_THREADS : 1, args);
        },
        [&] {
            CUDA_CHECK(cudaStreamSynchronize(stream));
            nvshmem_barrier_all();
        });
    emit(op, 0, s / (double)count);
}

/* ---- start, run what DEVICE_OPS names, finish ---- */

static int start_nvshmem(void)
{
    int devices = 1;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    CUDA_CHECK(cudaSetDevice((int)env_long("SYMMEM_LOCAL_RANK", rank) % devices));
    CUDA_CHECK(cudaFree(0));
    nvshmemx_uniqueid_t uid = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0 && nvshmemx_get_uniqueid(&uid) != 0) {
        fprintf(stderr, "PE 0: nvshmemx_get_uniqueid failed\n");
        return -1;
    }
    if (uid_file_share(UID_PREFIX, rank, &uid, sizeof(uid)) != 0) return -1;
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    if (nvshmemx_set_attr_uniqueid_args(rank, nranks, &uid, &attr) != 0 ||
        nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) {
        fprintf(stderr, "PE %d: NVSHMEM's init failed\n", rank);
        return -1;
    }
    if (rank == 0) uid_file_remove(UID_PREFIX);
    if (nvshmem_my_pe() != rank || nvshmem_n_pes() != nranks) {
        fprintf(stderr, "PE %d: NVSHMEM says PE %d of %d\n", rank, nvshmem_my_pe(),
                nvshmem_n_pes());
        return -1;
    }
    return 0;
}

int main(void)
{
    rank = (int)env_long("SYMMEM_RANK", 0);
    nranks = (int)env_long("SYMMEM_NRANKS", 1);
    runs = env_long("DEVICE_RUNS", 5);
    loop_count = env_long("DEVICE_LOOP", 10000);
    move_bytes = env_long("DEVICE_MOVE_BYTES", 1L << 30);
    max_reps = env_long("DEVICE_MAX_REPS", 1L << 14);
    static char ops[1024], sizes[4096];
    snprintf(ops, sizeof(ops), "%s", getenv("DEVICE_OPS") ? getenv("DEVICE_OPS") : "");
    snprintf(sizes, sizeof(sizes), "%s", getenv("DEVICE_SIZES") ? getenv("DEVICE_SIZES") : "");
    if (nranks < 2) {
        fprintf(stderr, "nvshmem_device: needs 2 PEs (PE 0 puts to PE 1), got %d\n", nranks);
        return 1;
    }
    size_t max_size = 8;
    for (char *s = sizes; *s; s++)
        if (s == sizes || s[-1] == ',') {
            size_t v = (size_t)atol(s);
            max_size = v > max_size ? v : max_size;
        }
    double t0 = now();
    if (start_nvshmem() != 0) return 1;
    if (rank == 0)
        printf("{\"lib\": \"" LIB "\", \"op\": \"init\", \"seconds\": %.4f, \"n_pes\": %d}\n",
               now() - t0, nranks);
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    bufs_t b;
    CUDA_CHECK(cudaDeviceGetAttribute(&b.sms, cudaDevAttrMultiProcessorCount, 0));
    b.dst = (char *)nvshmem_malloc(max_size);
    b.src = (char *)nvshmem_malloc(max_size);
    b.buf = (int64_t *)nvshmem_malloc(8);
    b.one = (int64_t *)nvshmem_malloc(8);
    b.sig = (uint64_t *)nvshmem_malloc(8);
    if (!b.dst || !b.src || !b.buf || !b.one || !b.sig) {
        fprintf(stderr, "PE %d: nvshmem_malloc of %zu bytes failed (NVSHMEM_SYMMETRIC_SIZE)\n",
                rank, max_size);
        return 1;
    }
    CUDA_CHECK(cudaMemset(b.src, 1, max_size));
    CUDA_CHECK(cudaMemset(b.one, 1, 8));
    CUDA_CHECK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    for (char *op = strtok(ops, ","); op != NULL; op = strtok(NULL, ",")) {
        if (!strcmp(op, "device_put") || !strcmp(op, "device_put_grid")) {
            for (char *s = sizes; *s;) {
                device_put(op, (size_t)atol(s), &b);
                s = strchr(s, ',') ? strchr(s, ',') + 1 : s + strlen(s);
            }
        } else if (!strcmp(op, "device_put_lat") || !strcmp(op, "device_p_lat")) {
            device_latency(op, &b);
        } else if (!strcmp(op, "device_put_signal")) {
            device_put_signal(&b);
        } else if (!strcmp(op, "device_barrier") || !strcmp(op, "device_barrier_block")) {
            device_barrier(op);
        } else {
            fprintf(stderr, "nvshmem_device: unknown operation %s\n", op);
            return 1;
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    nvshmem_barrier_all();
    nvshmem_free(b.sig);
    nvshmem_free(b.one);
    nvshmem_free(b.buf);
    nvshmem_free(b.src);
    nvshmem_free(b.dst);
    nvshmem_finalize();
    return 0;
}

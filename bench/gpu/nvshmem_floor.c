/*
 * The floor for the gpu benchmarks: the same measurements as
 * bench/gpu/bench_gpu.py, made by calling NVSHMEM's host library directly
 * from C. Started by symmem's launcher (it reads SYMMEM_RANK, SYMMEM_NRANKS
 * and SYMMEM_JOB, and hands PE 0's unique id over a file in /dev/shm, as
 * symmem's gpu backend does). PE 0 prints one JSON object per line.
 *
 * Build (bench/gpu/run.sh does it):
 *   cc -O2 -Isrc/backends/gpu -I$CUDA/include nvshmem_floor.c \
 *      -L$NVSHMEM/lib -l:libnvshmem_host.so.3 -L$CUDA/lib64 -lcudart
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nvshmem_abi.h"

/* NVSHMEM's host API, declared as its library exports it. */
int nvshmemx_get_uniqueid(nv_uniqueid_t *uid);
int nvshmemx_set_attr_uniqueid_args(int rank, int nranks, const nv_uniqueid_t *uid,
                                    nv_init_attr_t *attr);
int nvshmemx_hostlib_init_attr(unsigned flags, nv_init_attr_t *attr);
void nvshmemx_hostlib_finalize(void);
void *nvshmem_malloc(size_t size);
void nvshmem_free(void *ptr);
void nvshmemx_putmem_on_stream(void *dst, const void *src, size_t n, int pe, cudaStream_t s);
void nvshmemx_quiet_on_stream(cudaStream_t s);
void nvshmemx_barrier_all_on_stream(cudaStream_t s);
int nvshmemx_float_sum_reduce_on_stream(int team, float *dst, const float *src, size_t n,
                                        cudaStream_t s);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int env_int(const char *name, int fallback)
{
    const char *text = getenv(name);
    return text ? atoi(text) : fallback;
}

static void exchange_uid(int rank, nv_uniqueid_t *uid)
{
    char path[256];
    snprintf(path, sizeof(path), "/dev/shm/floor-%s-uid", getenv("SYMMEM_JOB"));
    if (rank == 0) {
        memset(uid, 0, sizeof(*uid));
        uid->version = NV_UNIQUEID_VERSION;
        nvshmemx_get_uniqueid(uid);
        char tmp[300];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        fwrite(uid, sizeof(*uid), 1, f);
        fclose(f);
        rename(tmp, path);
        return;
    }
    for (;;) {
        FILE *f = fopen(path, "rb");
        if (f && fread(uid, sizeof(*uid), 1, f) == 1) {
            fclose(f);
            return;
        }
        if (f) fclose(f);
        usleep(1000);
    }
}

/* 8 B, 32 B, ... (x4), ending exactly at max. */
static size_t next_size(size_t bytes, size_t max)
{
    if (bytes == max) return 0;
    return bytes * 4 > max ? max : bytes * 4;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Seconds per call of body, timed with CUDA events over iters calls. */
#define TIME_ON_STREAM(stream, iters, seconds, body)                                      \
    do {                                                                                  \
        cudaEvent_t start, stop;                                                          \
        cudaEventCreate(&start);                                                          \
        cudaEventCreate(&stop);                                                           \
        nvshmemx_barrier_all_on_stream(stream);                                           \
        cudaEventRecord(start, stream);                                                   \
        for (int _i = 0; _i < (iters); _i++) { body; }                                    \
        cudaEventRecord(stop, stream);                                                    \
        cudaEventSynchronize(stop);                                                       \
        float _ms = 0;                                                                    \
        cudaEventElapsedTime(&_ms, start, stop);                                          \
        (seconds) = _ms * 1e-3 / (iters);                                                 \
        cudaEventDestroy(start);                                                          \
        cudaEventDestroy(stop);                                                           \
    } while (0)

int main(void)
{
    int rank = env_int("SYMMEM_RANK", 0), nranks = env_int("SYMMEM_NRANKS", 1);
    size_t max_bytes = (size_t)1 << env_int("FLOOR_MAX_LOG2", 30);
    double t0 = now();
    cudaSetDevice(rank % 8);
    cudaFree(0);
    nv_uniqueid_t uid;
    exchange_uid(rank, &uid);
    nv_init_attr_t attr;
    memset(&attr, 0, sizeof(attr));
    attr.version = (1 << 16) + (int)sizeof(attr);
    attr.args.version = (1 << 16) + (int)sizeof(attr.args);
    attr.args.uid_args.version = NV_UNIQUEID_ARGS_VERSION;
    nvshmemx_set_attr_uniqueid_args(rank, nranks, &uid, &attr);
    if (nvshmemx_hostlib_init_attr(NV_INIT_WITH_UNIQUEID, &attr) != 0) {
        fprintf(stderr, "nvshmem init failed\n");
        return 1;
    }
    double init_seconds = now() - t0;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    char *src = nvshmem_malloc(max_bytes), *dst = nvshmem_malloc(max_bytes);
    cudaMemset(src, 1, max_bytes);
    cudaDeviceSynchronize();
    int peer = (rank + 1) % nranks;
    if (rank == 0) printf("{\"what\": \"init\", \"seconds\": %.4f}\n", init_seconds);

    /* put on a stream: bandwidth per size (PE 0 puts, the others wait) */
    for (size_t bytes = 8; bytes != 0; bytes = next_size(bytes, max_bytes)) {
        int iters = bytes >= ((size_t)1 << 26) ? 20 : bytes >= ((size_t)1 << 20) ? 100 : 1000;
        double seconds = 0;
        TIME_ON_STREAM(s, iters, seconds,
                       if (rank == 0) nvshmemx_putmem_on_stream(dst, src, bytes, peer, s));
        nvshmemx_quiet_on_stream(s);
        cudaStreamSynchronize(s);
        if (rank == 0)
            printf("{\"what\": \"put_on_stream\", \"bytes\": %zu, \"us\": %.3f, \"GBps\": %.2f}\n",
                   bytes, seconds * 1e6, bytes / seconds / 1e9);
    }
    /* host cost of one 8-byte put on a stream: median of 10,000 enqueues */
    enum { CALLS = 10000 };
    static double costs[CALLS];
    nvshmemx_barrier_all_on_stream(s);
    cudaStreamSynchronize(s);
    for (int i = 0; i < CALLS; i++) {
        double a = now();
        nvshmemx_putmem_on_stream(dst, src, 8, peer, s);
        costs[i] = now() - a;
        if (i % 1000 == 999) cudaStreamSynchronize(s);
    }
    nvshmemx_quiet_on_stream(s);
    cudaStreamSynchronize(s);
    qsort(costs, CALLS, sizeof(double), compare_doubles);
    if (rank == 0)
        printf("{\"what\": \"put_call_cost\", \"bytes\": 8, \"median_us\": %.3f}\n",
               costs[CALLS / 2] * 1e6);
    /* blocking 8-byte put: enqueue, quiet, wait */
    for (int i = 0; i < CALLS / 10; i++) {
        double a = now();
        nvshmemx_putmem_on_stream(dst, src, 8, peer, s);
        nvshmemx_quiet_on_stream(s);
        cudaStreamSynchronize(s);
        costs[i] = now() - a;
    }
    qsort(costs, CALLS / 10, sizeof(double), compare_doubles);
    if (rank == 0)
        printf("{\"what\": \"put_blocking\", \"bytes\": 8, \"median_us\": %.3f}\n",
               costs[CALLS / 20] * 1e6);
    /* all-reduce, float sum, on a stream */
    for (size_t bytes = 8; bytes != 0; bytes = next_size(bytes, max_bytes)) {
        int iters = bytes >= ((size_t)1 << 26) ? 10 : bytes >= ((size_t)1 << 20) ? 50 : 200;
        double seconds = 0;
        TIME_ON_STREAM(s, iters, seconds,
                       nvshmemx_float_sum_reduce_on_stream(0, (float *)dst, (const float *)src,
                                                           bytes / 4, s));
        if (rank == 0)
            printf("{\"what\": \"reduce_on_stream\", \"bytes\": %zu, \"us\": %.3f, \"GBps\": %.2f}\n",
                   bytes, seconds * 1e6, bytes / seconds / 1e9);
    }
    nvshmemx_barrier_all_on_stream(s);
    cudaStreamSynchronize(s);
    nvshmem_free(dst);
    nvshmem_free(src);
    nvshmemx_hostlib_finalize();
    return 0;
}

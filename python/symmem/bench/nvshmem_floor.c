/*
 * The floor of the gpu benchmarks: every measurement of symmem's benchmark
 * worker (python/symmem/bench/shmem_worker.py), made by calling NVSHMEM's
 * host library directly from C, on one stream, timed with CUDA events.
 * Started by symmem's launcher (SYMMEM_RANK, SYMMEM_NRANKS, SYMMEM_JOB);
 * PE 0's unique id reaches the others through a file in /dev/shm
 * (launched.h). What to run comes from FLOOR_OPS (comma-separated),
 * FLOOR_MIN_BYTES and FLOOR_MAX_BYTES; PE 0 prints one JSON record per line.
 *
 * `python -m symmem.bench` compiles and runs it from the installed package,
 * where nvshmem_abi.h (the gpu backend's declarations of NVSHMEM's structs)
 * and launched.h lie beside it:
 *   cc -O2 -I$CUDA/include nvshmem_floor.c \
 *      -L$NVSHMEM/lib -l:libnvshmem_host.so.3 -L$CUDA/lib64 -lcudart
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvshmem_abi.h"
#include "launched.h"

/* NVSHMEM's host API, declared as its library exports it. */
int nvshmemx_get_uniqueid(nv_uniqueid_t *uid);
int nvshmemx_set_attr_uniqueid_args(int rank, int nranks, const nv_uniqueid_t *uid,
                                    nv_init_attr_t *attr);
int nvshmemx_hostlib_init_attr(unsigned flags, nv_init_attr_t *attr);
void nvshmemx_hostlib_finalize(void);
int nvshmem_my_pe(void);
void *nvshmem_malloc(size_t size);
void nvshmem_free(void *ptr);
void nvshmemx_putmem_on_stream(void *dst, const void *src, size_t n, int pe, cudaStream_t s);
void nvshmemx_getmem_on_stream(void *dst, const void *src, size_t n, int pe, cudaStream_t s);
void nvshmemx_quiet_on_stream(cudaStream_t s);
void nvshmemx_putmem_signal_on_stream(void *dst, const void *src, size_t n, uint64_t *sig,
                                      uint64_t value, int op, int pe, cudaStream_t s);
void nvshmemx_signal_wait_until_on_stream(uint64_t *sig, int cmp, uint64_t value, cudaStream_t s);
void nvshmemx_barrier_all_on_stream(cudaStream_t s);
int nvshmemx_float_sum_reduce_on_stream(int team, float *dst, const float *src, size_t n,
                                        cudaStream_t s);
int nvshmemx_float_sum_reducescatter_on_stream(int team, float *dst, const float *src, size_t n,
                                               cudaStream_t s);
int nvshmemx_float_broadcast_on_stream(int team, float *dst, const float *src, size_t n, int root,
                                       cudaStream_t s);
int nvshmemx_float_fcollect_on_stream(int team, float *dst, const float *src, size_t n,
                                      cudaStream_t s);
int nvshmemx_float_alltoall_on_stream(int team, float *dst, const float *src, size_t n,
                                      cudaStream_t s);

#define SIGNAL_ADD 10 /* NVSHMEM_SIGNAL_ADD */
#define CMP_GE 5      /* NVSHMEM_CMP_GE */
#define TEAM_WORLD 0
#define LATENCY_MAX_BYTES ((size_t)4 << 20) /* as symmem/bench/plan.py */
#define CALL_COST_CALLS 10000
#define REPEATS 3 /* as plan.py */

static int rank, nranks;
static cudaStream_t stream;

static int fixed_iterations; /* FLOOR_ITERS (--iters), else 0: by size */

static int iterations(size_t bytes)
{
    if (fixed_iterations > 0) return fixed_iterations;
    return bytes >= ((size_t)64 << 20) ? 10 : bytes >= ((size_t)1 << 20) ? 50 : 200;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One timed operation: what the worker's body() does, for one size. */
typedef struct {
    const char *op;
    size_t bytes;
    char *src, *dst;
    uint64_t *sig;
    uint64_t rounds; /* put_signal: signals received so far */
} run_t;

static void body(run_t *r)
{
    const char *op = r->op;
    size_t n = r->bytes, block = r->bytes / (size_t)nranks;
    int peer = 1 % nranks;
    if (!strcmp(op, "put") || !strcmp(op, "put_lat") || !strcmp(op, "get") ||
        !strcmp(op, "get_lat")) {
        if (rank != 0) return;
        if (op[0] == 'p')
            nvshmemx_putmem_on_stream(r->dst, r->src, n, peer, stream);
        else
            nvshmemx_getmem_on_stream(r->dst, r->src, n, peer, stream);
        if (strstr(op, "_lat")) nvshmemx_quiet_on_stream(stream);
    } else if (!strcmp(op, "put_signal")) {
        r->rounds++;
        if (rank == 0) {
            nvshmemx_putmem_signal_on_stream(r->dst, r->src, n, r->sig, 1, SIGNAL_ADD, 1, stream);
            nvshmemx_signal_wait_until_on_stream(r->sig, CMP_GE, r->rounds, stream);
        } else if (rank == 1) {
            nvshmemx_signal_wait_until_on_stream(r->sig, CMP_GE, r->rounds, stream);
            nvshmemx_putmem_signal_on_stream(r->dst, r->src, n, r->sig, 1, SIGNAL_ADD, 0, stream);
        }
    } else if (!strcmp(op, "reduce")) {
        nvshmemx_float_sum_reduce_on_stream(TEAM_WORLD, (float *)r->dst, (float *)r->src, n / 4,
                                            stream);
    } else if (!strcmp(op, "reducescatter")) {
        nvshmemx_float_sum_reducescatter_on_stream(TEAM_WORLD, (float *)r->dst, (float *)r->src,
                                                   block / 4, stream);
    } else if (!strcmp(op, "broadcast")) {
        nvshmemx_float_broadcast_on_stream(TEAM_WORLD, (float *)r->dst, (float *)r->src, n / 4, 0,
                                           stream);
    } else if (!strcmp(op, "fcollect")) {
        nvshmemx_float_fcollect_on_stream(TEAM_WORLD, (float *)r->dst, (float *)r->src, block / 4,
                                          stream);
    } else if (!strcmp(op, "alltoall")) {
        nvshmemx_float_alltoall_on_stream(TEAM_WORLD, (float *)r->dst, (float *)r->src, block / 4,
                                          stream);
    } else if (!strcmp(op, "barrier")) {
        nvshmemx_barrier_all_on_stream(stream);
    }
}

/* Microseconds per call: line every PE up, time iters calls. */
static double time_once(run_t *r, int iters)
{
    nvshmemx_barrier_all_on_stream(stream);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, stream);
    for (int i = 0; i < iters; i++) body(r);
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    nvshmemx_quiet_on_stream(stream);
    nvshmemx_barrier_all_on_stream(stream);
    cudaStreamSynchronize(stream);
    return ms * 1e3 / iters;
}

/* Warm up, then the best of REPEATS timed runs (as plan.py). */
static double time_op(run_t *r)
{
    int iters = iterations(r->bytes);
    for (int i = 0; i < (iters < 5 ? iters : 5); i++) body(r);
    double best = 1e300;
    for (int i = 0; i < REPEATS; i++) {
        double us = time_once(r, iters);
        best = us < best ? us : best;
    }
    return strcmp(r->op, "put_signal") ? best : best / 2; /* one way of the round trip */
}

static void call_cost(char *dst, char *src)
{
    static double costs[CALL_COST_CALLS];
    nvshmemx_barrier_all_on_stream(stream);
    cudaStreamSynchronize(stream);
    for (int i = 0; i < CALL_COST_CALLS; i++) {
        double a = now();
        nvshmemx_putmem_on_stream(dst, src, 8, 1 % nranks, stream);
        costs[i] = now() - a;
        if (i % 1000 == 999) cudaStreamSynchronize(stream);
    }
    nvshmemx_quiet_on_stream(stream);
    cudaStreamSynchronize(stream);
    qsort(costs, CALL_COST_CALLS, sizeof(double), compare_doubles);
    if (rank == 0)
        printf("{\"lib\": \"nvshmem C\", \"op\": \"call_cost\", \"bytes\": 8, \"us\": %.4f}\n",
               costs[CALL_COST_CALLS / 2] * 1e6);
}

/* The sizes op runs at, as plan.sizes makes them. */
static size_t next_size(const char *op, size_t bytes, size_t min, size_t max, int first)
{
    int latency = !strcmp(op, "put_lat") || !strcmp(op, "get_lat") || !strcmp(op, "put_signal");
    size_t top = latency && max > LATENCY_MAX_BYTES ? LATENCY_MAX_BYTES : max;
    if (first) return min < top ? min : top;
    if (bytes >= top) return 0;
    return bytes * 4 < top ? bytes * 4 : top;
}

static size_t collective_size(const char *op, size_t bytes)
{
    const char *collectives[] = {"reduce", "reducescatter", "broadcast", "fcollect", "alltoall"};
    for (size_t i = 0; i < sizeof(collectives) / sizeof(*collectives); i++)
        if (!strcmp(op, collectives[i])) {
            size_t unit = 4 * (size_t)nranks;
            return bytes - bytes % unit > unit ? bytes - bytes % unit : unit;
        }
    return bytes;
}

int main(void)
{
    rank = (int)env_long("SYMMEM_RANK", 0);
    nranks = (int)env_long("SYMMEM_NRANKS", 1);
    size_t min_bytes = (size_t)env_long("FLOOR_MIN_BYTES", 8);
    size_t max_bytes = (size_t)env_long("FLOOR_MAX_BYTES", 1 << 20);
    fixed_iterations = (int)env_long("FLOOR_ITERS", 0);
    char ops[512];
    snprintf(ops, sizeof(ops), "%s", getenv("FLOOR_OPS") ? getenv("FLOOR_OPS") : "put");
    double t0 = now();
    int devices = 1;
    cudaGetDeviceCount(&devices);
    cudaSetDevice((int)env_long("SYMMEM_LOCAL_RANK", rank) % devices);
    cudaFree(0);
    nv_uniqueid_t uid;
    memset(&uid, 0, sizeof(uid));
    uid.version = NV_UNIQUEID_VERSION;
    if (rank == 0 && nvshmemx_get_uniqueid(&uid) != 0) {
        fprintf(stderr, "nvshmemx_get_uniqueid failed\n");
        return 1;
    }
    if (uid_file_share("floor", rank, &uid, sizeof(uid)) != 0) return 1;
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
    if (rank == 0) uid_file_remove("floor");
    if (rank == 0)
        printf("{\"lib\": \"nvshmem C\", \"op\": \"init\", \"seconds\": %.4f, \"n_pes\": %d}\n",
               now() - t0, nranks);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    run_t r = {0};
    r.src = nvshmem_malloc(max_bytes);
    r.dst = nvshmem_malloc(max_bytes);
    r.sig = nvshmem_malloc(sizeof(uint64_t));
    cudaMemset(r.src, 1, max_bytes);
    cudaMemset(r.sig, 0, sizeof(uint64_t));
    cudaDeviceSynchronize();
    for (char *op = strtok(ops, ","); op != NULL; op = strtok(NULL, ",")) {
        r.op = op;
        if (!strcmp(op, "call_cost")) {
            call_cost(r.dst, r.src);
            continue;
        }
        if (!strcmp(op, "put_signal") && nranks < 2) continue;
        size_t last = 0;
        int first = 1;
        for (size_t bytes = 0; (bytes = next_size(op, bytes, min_bytes, max_bytes, first)) != 0;
             first = 0) {
            size_t size = !strcmp(op, "barrier") ? 0 : collective_size(op, bytes);
            if (!first && size == last) continue;
            last = size;
            r.bytes = size;
            double us = time_op(&r);
            if (rank == 0)
                printf("{\"lib\": \"nvshmem C\", \"op\": \"%s\", \"bytes\": %zu, \"us\": %.4f}\n",
                       op, size, us);
            fflush(stdout);
            if (!strcmp(op, "barrier")) break;
        }
    }
    nvshmemx_barrier_all_on_stream(stream);
    cudaStreamSynchronize(stream);
    nvshmem_free(r.sig);
    nvshmem_free(r.dst);
    nvshmem_free(r.src);
    nvshmemx_hostlib_finalize();
    return 0;
}

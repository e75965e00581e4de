/* symmem's own all-reduce (kernels/allreduce_cu.c) where SYMMEM_GPU_COLLECTIVES
 * asks for it and the team is every PE, all in this PE's NVLink domain. The
 * kernels for a dtype and op are compiled by NVRTC at their first use. Each
 * PE's flag area is allocated at the first such call (every PE makes it, as
 * the call is collective) and zeroed on every PE before any kernel runs.
 * Every decision here is the same on every PE: it depends on the call's
 * arguments, the job's size and the environment alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "kernels/allreduce.h"
#include "nvrtc.h"

#define MAX_PES SYMMEM_ALLREDUCE_MAX_PES
/* Measured on 2 x H200 (docs/benchmarks.md): with two PEs one-shot reads as
 * many bytes as two-shot and meets once less, and was faster at every size;
 * with more, two-shot above this. In place is always two-shot. */
#define ONE_SHOT_MAX_BYTES (64u << 10)

static const size_t dtype_bytes[SYMMEM_DTYPE_COUNT] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8};

/* The kernels' argument block (allreduce_cu.c's struct args). */
typedef struct {
    uint64_t p[MAX_PES];
} ptrs_t;
typedef struct {
    ptrs_t src, dst, flags;
    uint64_t mine, count, abort_word, error, timeout_ns;
    int32_t n, me;
} args_t;

int symmem__gpu_allreduce_takes(gpu_t *g, const symmem_team_view_t *team, const void *dst,
                                const void *src, size_t nelems)
{
    if (g->allreduce_mode == SYMMEM_GPU_ALLREDUCE_NVSHMEM || nelems == 0) return 0;
    if (g->boot.nranks > MAX_PES || team->n != g->boot.nranks || g->unmapped_pe >= 0 ||
        symmem__gpu_core->env_string("SYMMEM_GPU_UNMAPPED_PE")[0] != '\0')
        return 0; /* the hook holds on some PEs only: all PEs must decide alike */
    for (int pe = 0; pe < g->boot.nranks; pe++)
        if (libs.ptr(src, pe) == NULL) return 0; /* another node: every PE sees one */
    return ((uintptr_t)dst | (uintptr_t)src) % 16 == 0; /* the kernels move 16 bytes */
}

/* Every PE's flag area, zeroed on all before any kernel arrives. */
static symmem_status_t make_flags(gpu_t *g)
{
    g->allreduce_flags = libs.malloc(SYMMEM_ALLREDUCE_FLAG_BYTES);
    if (g->allreduce_flags == NULL)
        return ERROR(SYMMEM_ERR_NO_MEMORY, "reduce: nvshmem_malloc(%u) for the all-reduce's "
                     "flags failed", (unsigned)SYMMEM_ALLREDUCE_FLAG_BYTES);
    cu_result_t rc = libs.cuMemsetD8((cu_deviceptr_t)(uintptr_t)g->allreduce_flags, 0,
                                     SYMMEM_ALLREDUCE_FLAG_BYTES);
    if (rc != 0) return symmem__gpu_cuda_error("reduce", "zeroing the all-reduce's flags", rc);
    int64_t ignored[g->boot.nranks];
    return symmem__gpu_agree(g, "reduce", 0, ignored);
}

static symmem_status_t build(gpu_t *g, symmem_dtype_t dtype, symmem_reduce_op_t op)
{
    static char source[32768];
    char arch[32], why[2048];
    symmem__gpu_arch_option(g, arch, sizeof(arch));
    const char *options[] = {arch, "-std=c++17"};
    if (symmem__gpu_allreduce_cu(dtype, op, source, sizeof(source)) != 0)
        return ERROR(SYMMEM_ERR_BACKEND, "reduce: no all-reduce source for dtype %d, op %d",
                     (int)dtype, (int)op);
    char *ptx = NULL;
    if (symmem__gpu_nvrtc_compile(symmem__gpu_core, source, "symmem_allreduce.cu", options, 2,
                                  &ptx, why, sizeof(why)) != 0)
        return ERROR(SYMMEM_ERR_UNSUPPORTED, "reduce: symmem's all-reduce kernels "
                     "(SYMMEM_GPU_COLLECTIVES) need NVRTC: %s", why);
    void **module = &g->allreduce[dtype][op].module;
    cu_result_t rc = libs.cuModuleLoadData(module, ptx);
    free(ptx);
    if (rc == 0) rc = libs.cuModuleGetFunction(&g->allreduce[dtype][op].one_shot, *module,
                                               "one_shot");
    if (rc == 0) rc = libs.cuModuleGetFunction(&g->allreduce[dtype][op].two_shot, *module,
                                               "two_shot");
    return rc == 0 ? SYMMEM_OK : symmem__gpu_cuda_error("reduce", "loading the all-reduce", rc);
}

/* Where addr (symmetric) is mapped on pe: its offset from the flag area there. */
static uint64_t on_pe(gpu_t *g, const void *addr, int pe)
{
    uintptr_t anchor = (uintptr_t)libs.ptr(g->allreduce_flags, pe);
    return (uint64_t)(anchor + ((uintptr_t)addr - (uintptr_t)g->allreduce_flags));
}

symmem_status_t symmem__gpu_allreduce(gpu_t *g, void *dst, const void *src, size_t nelems,
                                      symmem_dtype_t dtype, symmem_reduce_op_t op, nv_stream_t s)
{
    if (g->allreduce_flags == NULL) SYMMEM_CHECK(make_flags(g));
    if (g->allreduce[dtype][op].module == NULL) SYMMEM_CHECK(build(g, dtype, op));
    int n = g->boot.nranks;
    args_t args = {.mine = (uint64_t)(uintptr_t)g->allreduce_flags, .count = nelems,
                   .timeout_ns = g->device_state.timeout_ns, .n = n, .me = g->boot.rank};
    symmem__gpu_device_words(&args.abort_word, &args.error);
    for (int pe = 0; pe < n; pe++) {
        args.src.p[pe] = on_pe(g, src, pe);
        args.dst.p[pe] = on_pe(g, dst, pe);
        args.flags.p[pe] = on_pe(g, g->allreduce_flags, pe);
    }
    size_t bytes = nelems * dtype_bytes[dtype];
    uintptr_t s_lo = (uintptr_t)src, d_lo = (uintptr_t)dst;
    int overlap = s_lo < d_lo + bytes && d_lo < s_lo + bytes;
    int one_shot = g->allreduce_mode == SYMMEM_GPU_ALLREDUCE_ONE_SHOT ||
                   (g->allreduce_mode == SYMMEM_GPU_ALLREDUCE_AUTO &&
                    (n == 2 || bytes <= ONE_SHOT_MAX_BYTES));
    if (overlap) one_shot = 0; /* one-shot writes dst while the others read src */
    size_t packs = bytes / 16, work = one_shot ? packs : (packs + (size_t)n - 1) / (size_t)n;
    size_t blocks = (work + SYMMEM_ALLREDUCE_THREADS - 1) / SYMMEM_ALLREDUCE_THREADS;
    if (blocks < 1) blocks = 1;
    if (blocks > SYMMEM_ALLREDUCE_MAX_BLOCKS) blocks = SYMMEM_ALLREDUCE_MAX_BLOCKS;
    void *kernel = one_shot ? g->allreduce[dtype][op].one_shot : g->allreduce[dtype][op].two_shot;
    void *params[] = {&args};
    cu_result_t rc = symmem__gpu_launch(kernel, blocks, SYMMEM_ALLREDUCE_THREADS, s, params);
    return rc == 0 ? SYMMEM_OK : symmem__gpu_cuda_error("reduce", "the all-reduce kernel", rc);
}

void symmem__gpu_allreduce_unload(gpu_t *g)
{
    for (int d = 0; d < SYMMEM_DTYPE_COUNT; d++)
        for (int o = 0; o < SYMMEM_OP_COUNT; o++)
            if (g->allreduce[d][o].module != NULL) libs.cuModuleUnload(g->allreduce[d][o].module);
    memset(g->allreduce, 0, sizeof(g->allreduce));
    libs.free(g->allreduce_flags); /* collective, as finalize is */
    g->allreduce_flags = NULL;
}

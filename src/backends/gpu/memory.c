/* The symmetric heap: the engine's malloc and free (engine.h) behind an
 * agreement on the size (exchange.c, checked as a collective), and which
 * memory is device memory on this PE's GPU. */
#include "gpu.h"

static int in_heap(gpu_t *g, const void *ptr)
{
    return (uintptr_t)ptr >= g->heap_lo && (uintptr_t)ptr < g->heap_hi;
}

int symmem__gpu_is_device_memory(gpu_t *g, const void *ptr)
{
    if (in_heap(g, ptr)) return 1; /* no driver call */
    unsigned int type = 0;
    if (libs.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (cu_deviceptr_t)ptr) !=
        0)
        return 0; /* unregistered host memory */
    return type == CU_MEMORYTYPE_DEVICE;
}

int symmem__gpu_is_on_this_gpu(gpu_t *g, const void *device_ptr)
{
    if (in_heap(g, device_ptr)) return 1;
    int ordinal = -1;
    return libs.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                      (cu_deviceptr_t)device_ptr) == 0 &&
           ordinal == g->device;
}

void symmem__gpu_heap_range(gpu_t *g, uintptr_t *start_p, size_t *size_p)
{
    *start_p = g->heap_lo;
    *size_p = g->heap_hi - g->heap_lo;
}

/* The exchange (exchange.c) as a collective of TEAM_WORLD like any other
 * (call_check.c): a PE in free while another is in barrier_all raises
 * instead of waiting. */
static symmem_status_t agree(gpu_t *g, const char *call, symmem_call_kind_t kind, int64_t value,
                             int64_t *values)
{
    gpu_call_ref_t ref;
    symmem_team_view_t world = {g->world, g->boot.nranks, g->boot.rank, 0};
    SYMMEM_CHECK(symmem__gpu_collective_enter(g, call, kind, &world, 0, 0, 0, 0, 1, &ref));
    SYMMEM_CHECK(symmem__gpu_exchange_start(g, call, value));
    SYMMEM_CHECK(symmem__gpu_collective_drain(g, call));
    return symmem__gpu_exchange_finish(g, call, values);
}

/* The PEs agree on the alignment too (0 for malloc), so PEs that mix malloc
 * and align stop here rather than in NVSHMEM's barrier. */
static symmem_status_t agree_on_alignment(gpu_t *g, size_t alignment)
{
    int64_t values[g->boot.nranks];
    symmem_status_t status = agree(g, "malloc", SYMMEM_CALL_MALLOC, (int64_t)alignment, values);
    for (int pe = 0; status == SYMMEM_OK && pe < g->boot.nranks; pe++)
        if (values[pe] != (int64_t)alignment)
            status = ERROR(SYMMEM_ERR_MISMATCH,
                           "malloc: alignment must be the same on every PE, but PE %d asked for "
                           "%lld (0: malloc) and this PE for %zu",
                           pe, (long long)values[pe], alignment);
    return status;
}

/* A block larger than this PE's GPU never fits, and NVSHMEM 3.4 asked for
 * one fails its next barrier with an illegal address (seen on H200): refused
 * here, after the agreement, so every PE of a job of like GPUs refuses it. */
static symmem_status_t fits_on_the_gpu(gpu_t *g, size_t size)
{
    size_t total = 0;
    if (libs.cuDeviceTotalMem(&total, g->cu_device) != 0 || size <= total) return SYMMEM_OK;
    return ERROR(SYMMEM_ERR_NO_MEMORY,
                 "malloc: size=%zu does not fit in the symmetric heap (cuda:%d has %zu bytes of "
                 "memory in all)",
                 size, g->device, total);
}

/* alignment 0: the engine's own (nvshmem_malloc); else nvshmem_align's */
symmem_status_t symmem__gpu_malloc(gpu_t *g, size_t size, size_t alignment, void **ptr_p)
{
    scope_t scope = symmem__gpu_enter(g);
    /* nvshmem_malloc's own barrier must not run beside one still in flight;
     * the symmem engine's heap grows with every PE's help (host mesh), and
     * a PE must not reuse freed memory a peer's kernel still uses. */
    symmem_status_t status = symmem__gpu_wait_device_idle(g, "malloc");
    int64_t sizes[g->boot.nranks];
    if (status == SYMMEM_OK) status = agree(g, "malloc", SYMMEM_CALL_MALLOC, (int64_t)size, sizes);
    if (status == SYMMEM_OK) status = symmem__gpu_same_size(g, "malloc", sizes, size);
    if (status == SYMMEM_OK) status = agree_on_alignment(g, alignment);
    if (status == SYMMEM_OK) status = fits_on_the_gpu(g, size);
    if (status == SYMMEM_OK && size > 0) {
        status = symmem__gpu_heap_take(g, "malloc", size, alignment, ptr_p);
        if (status == SYMMEM_OK) status = symmem__gpu_device_state_update(g);
    } else if (status == SYMMEM_OK) {
        *ptr_p = NULL;
    }
    return symmem__gpu_leave(g, scope, status);
}

/* nvshmem_free holds a barrier with no time limit, which NVSHMEM runs on its
 * own stream: started while the program's kernels or graph replays still run
 * a barrier of ours, the two mix their counts and hang (issue 17). So the
 * device goes idle first, then an agreement (bounded, and it catches PEs
 * freeing different blocks) lets NVSHMEM's barrier pair at once. The symmem
 * engine's free is this PE's alone after the same agreement. */
symmem_status_t symmem__gpu_free(gpu_t *g, void *ptr)
{
    scope_t scope = symmem__gpu_enter(g);
    int64_t offset = (int64_t)((uintptr_t)ptr - g->heap_lo), values[g->boot.nranks];
    symmem_status_t status = symmem__gpu_wait_device_idle(g, "free");
    if (status == SYMMEM_OK) status = agree(g, "free", SYMMEM_CALL_FREE, offset, values);
    for (int pe = 0; status == SYMMEM_OK && pe < g->boot.nranks; pe++)
        if (values[pe] != offset)
            status = ERROR(SYMMEM_ERR_MISMATCH,
                           "free: every PE must free the same allocation, but PE %d freed "
                           "heap offset %lld and this PE offset %lld",
                           pe, (long long)values[pe], (long long)offset);
    if (status == SYMMEM_OK) status = g->engine->release(g, "free", ptr);
    return symmem__gpu_leave(g, scope, status);
}

void *symmem__gpu_ptr(gpu_t *g, const void *ptr, int pe)
{
    scope_t scope = symmem__gpu_enter(g);
    void *peer = g->engine->ptr(g, ptr, pe);
    symmem__gpu_leave(g, scope, SYMMEM_OK);
    return peer;
}

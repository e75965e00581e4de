/* The engine's allocations on the symmetric heap, for malloc (after its
 * agreement) and for the backend's own buffers (the nvshmem engine's
 * exchange, the device sync area, the push reduces' staging, which every PE
 * makes in the same order at init), with the heap's span (heap_lo,
 * heap_hi) grown to hold them. */
#include "gpu.h"

symmem_status_t symmem__gpu_heap_take(gpu_t *g, const char *call, size_t size, size_t alignment,
                                      void **ptr_p)
{
    *ptr_p = NULL;
    SYMMEM_CHECK(g->engine->alloc(g, call, size, alignment, ptr_p));
    uintptr_t start = (uintptr_t)*ptr_p;
    if (g->heap_lo == 0 || start < g->heap_lo) g->heap_lo = start;
    if (start + size > g->heap_hi) g->heap_hi = start + size;
    return SYMMEM_OK;
}

void symmem__gpu_heap_give_back(gpu_t *g, void *ptr)
{
    if (ptr != NULL) g->engine->release(g, "finalize", ptr);
}

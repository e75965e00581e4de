/* The backend's own symmetric buffers (the nvshmem engine's exchange, the
 * device sync area, the push reduces' staging): the engine's allocation,
 * made by every PE in the same order at init, without malloc's agreement,
 * and the heap's span (heap_lo, heap_hi) grown to hold them. */
#include "gpu.h"

symmem_status_t symmem__gpu_heap_take(gpu_t *g, const char *call, size_t size, void **ptr_p)
{
    *ptr_p = NULL;
    SYMMEM_CHECK(g->engine->alloc(g, call, size, 0, ptr_p));
    uintptr_t start = (uintptr_t)*ptr_p;
    if (g->heap_lo == 0 || start < g->heap_lo) g->heap_lo = start;
    if (start + size > g->heap_hi) g->heap_hi = start + size;
    return SYMMEM_OK;
}

void symmem__gpu_heap_give_back(gpu_t *g, void *ptr)
{
    if (ptr != NULL) g->engine->release(g, "finalize", ptr);
}

/* The symmem engine's external memory: CUDA VMM memory the program made
 * (cuMemCreate with POSIX file descriptors among its handle types, mapped
 * from its first byte at ptr), which every PE passes with the same size;
 * each PE's is mapped into a window of its own (vmm_heap.h), whose slots
 * name it on every PE, and the symmetric address returned is this PE's
 * slot. */
#include "gpu.h"
#include "symmem_engine.h"

/* Why this PE's memory cannot be shared (0: it can): not VMM memory, not
 * exportable, or a size that is no multiple of the granule. *handle_p:
 * retained where it is VMM memory. */
static int why_not(gpu_t *g, void *ptr, size_t size, cu_mem_handle_t *handle_p)
{
    *handle_p = 0;
    if (libs.cuMemRetainAllocationHandle(handle_p, ptr) != 0) return 1;
    cu_mem_prop_t prop;
    if (libs.cuMemGetAllocationPropertiesFromHandle(&prop, *handle_p) != 0 ||
        !(prop.requested_handle_types & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
        return 2;
    if (size % g->sym->granule != 0 || (uintptr_t)ptr % g->sym->granule != 0) return 3;
    return 0;
}

symmem_status_t symmem__sym_register_external(gpu_t *g, void *ptr, size_t size, void **sym_p)
{
    const char *call = "register_external";
    int n = g->boot.nranks, me = g->boot.rank;
    int64_t sizes[n], whys[n];
    symmem_status_t status = symmem__gpu_exchange(g, call, (int64_t)size, sizes);
    if (status == SYMMEM_OK) status = symmem__gpu_same_size(g, call, sizes, size);
    if (status != SYMMEM_OK) return status;
    cu_mem_handle_t handle = 0;
    int why = why_not(g, ptr, size, &handle);
    /* Every PE learns whether every PE can: then all share, or none. */
    status = symmem__gpu_exchange(g, call, why, whys);
    for (int pe = 0; status == SYMMEM_OK && pe < n; pe++) {
        static const char *const words[] = {
            "", "memory that is not CUDA VMM memory (make it with cuMemCreate and cuMemMap)",
            "CUDA VMM memory made without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR in "
            "requestedHandleTypes, which the symmem engine shares memory by",
            "a size or an address that is not a multiple of the GPU's VMM granularity"};
        if (whys[pe] > 0 && whys[pe] < 4)
            status =
                ERROR(SYMMEM_ERR_INVALID, "%s: PE %d%s passed %s (granularity %zu bytes)", call, pe,
                      pe == me ? " (this PE)" : "", words[whys[pe]], g->sym->granule);
    }
    vmm_window_t *w = NULL;
    if (status == SYMMEM_OK) status = symmem__vmm_external_open(g, call, handle, size, &w);
    if (handle != 0) libs.cuMemRelease(handle); /* the mappings hold it */
    if (status == SYMMEM_OK) *sym_p = (void *)symmem__vmm_mine(g, w);
    return status;
}

/* This PE's mappings of every PE's memory go (each PE's own stays its own). */
symmem_status_t symmem__sym_unregister_external(gpu_t *g, void *sym, size_t size)
{
    (void)size;
    libs.cuStreamSynchronize(g->stream);
    for (vmm_window_t *w = g->sym->externals; w != NULL; w = w->next)
        if (symmem__vmm_mine(g, w) == (uintptr_t)sym) {
            symmem__vmm_external_close(g, w);
            return SYMMEM_OK;
        }
    return ERROR(SYMMEM_ERR_INVALID, "unregister_external: %p is no registered memory", sym);
}

/* The nvshmem engine's external memory: CUDA VMM memory the user made,
 * mapped into NVSHMEM's symmetric space with
 * nvshmemx_buffer_register_symmetric (NVSHMEM 3.3 and later, looked up by
 * name), once every PE has shown that it can be. */
#include "gpu.h"
#include "nvshmem_engine.h"

/* NVSHMEM_CUMEM_GRANULARITY: the unit NVSHMEM maps external memory in. */
static size_t external_granule(void)
{
    size_t value = symmem__gpu_core->env_size("NVSHMEM_CUMEM_GRANULARITY");
    return value > 0 ? value : (size_t)512 << 20; /* NVSHMEM's default */
}

symmem_status_t symmem__nv_register_external(gpu_t *g, void *ptr, size_t size, void **sym_p)
{
    const char *call = "register_external";
    void *(*register_symmetric)(void *, size_t, int) = (void *(*)(
        void *, size_t, int))symmem__gpu_libs_symbol(&libs, "nvshmemx_buffer_register_symmetric");
    if (register_symmetric == NULL)
        return ERROR(SYMMEM_ERR_UNSUPPORTED,
                     "%s: this NVSHMEM has no nvshmemx_buffer_register_symmetric (it came in "
                     "NVSHMEM 3.3)",
                     call);
    int64_t sizes[g->boot.nranks];
    symmem_status_t status = symmem__gpu_exchange(g, call, (int64_t)size, sizes);
    if (status == SYMMEM_OK) status = symmem__gpu_same_size(g, call, sizes, size);
    /* NVSHMEM maps the memory by its VMM handle, in its own granules, and
     * fails hard on anything else: it is asked only when every PE can. */
    size_t granule = external_granule();
    int64_t why = 0, whys[g->boot.nranks];
    uint64_t handle = 0;
    if (libs.cuMemRetainAllocationHandle(&handle, ptr) != 0)
        why = 1;
    else
        libs.cuMemRelease(handle);
    if (why == 0 && size % granule != 0) why = 2;
    if (status == SYMMEM_OK) status = symmem__gpu_exchange(g, call, why, whys);
    for (int pe = 0; status == SYMMEM_OK && pe < g->boot.nranks; pe++)
        if (whys[pe] != 0)
            status = ERROR(SYMMEM_ERR_INVALID,
                           whys[pe] == 1 ? "%s: PE %d%s passed memory that is not CUDA VMM "
                                           "memory (make it with cuMemCreate and cuMemMap)"
                                         : "%s: PE %d%s passed a size that is not a multiple of "
                                           "NVSHMEM's granule, NVSHMEM_CUMEM_GRANULARITY = %zu "
                                           "bytes",
                           call, pe, pe == g->boot.rank ? " (this PE)" : "", granule);
    if (status == SYMMEM_OK && (*sym_p = register_symmetric(ptr, size, 0)) == NULL)
        status = ERROR(SYMMEM_ERR_BACKEND,
                       "%s: nvshmemx_buffer_register_symmetric refused %p (%zu bytes); "
                       "NVSHMEM_DEBUG=INFO tells why",
                       call, ptr, size);
    return status;
}

symmem_status_t symmem__nv_unregister_external(gpu_t *g, void *sym, size_t size)
{
    int (*unregister_symmetric)(void *, size_t) = (int (*)(void *, size_t))symmem__gpu_libs_symbol(
        &libs, "nvshmemx_buffer_unregister_symmetric");
    libs.cuStreamSynchronize(g->stream);
    int rc = unregister_symmetric ? unregister_symmetric(sym, size) : -1;
    if (rc != 0)
        return ERROR(SYMMEM_ERR_BACKEND,
                     "unregister_external: nvshmemx_buffer_unregister_symmetric(%p) returned %d",
                     sym, rc);
    return SYMMEM_OK;
}

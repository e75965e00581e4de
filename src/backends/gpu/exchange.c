/* The exchange: one int64 from every PE gathered on every PE (NVSHMEM's
 * int64 fcollect over TEAM_WORLD on the backend's stream, through two
 * symmetric buffers made at init), so collective arguments can be compared
 * before NVSHMEM sees them (it would hang or corrupt the heap on a
 * mismatch). No collective check here: init's steps exchange before the
 * call pages exist; memory.c wraps the exchange in the check for malloc
 * and free. */
#include "gpu.h"

symmem_status_t symmem__gpu_exchange_start(gpu_t *g, const char *call, int64_t value)
{
    CU(call, libs.cuMemcpy((cu_deviceptr_t)g->agree_in, (cu_deviceptr_t)&value, sizeof(value)));
    int (*fcollect)(nv_team_t, int64_t *, const int64_t *, size_t, nv_stream_t) =
        (int (*)(nv_team_t, int64_t *, const int64_t *, size_t,
                 nv_stream_t))symmem__gpu_libs_symbol(&libs, "nvshmemx_int64_fcollect_on_stream");
    if (fcollect == NULL)
        return ERROR(SYMMEM_ERR_BACKEND, "%s: NVSHMEM has no nvshmemx_int64_fcollect_on_stream",
                     call);
    fcollect(0, g->agree_all, g->agree_in, 1, g->stream);
    return SYMMEM_OK;
}

symmem_status_t symmem__gpu_exchange_finish(gpu_t *g, const char *call, int64_t *values)
{
    CU(call, libs.cuMemcpy((cu_deviceptr_t)values, (cu_deviceptr_t)g->agree_all,
                           sizeof(int64_t) * (size_t)g->boot.nranks));
    return SYMMEM_OK;
}

symmem_status_t symmem__gpu_exchange(gpu_t *g, const char *call, int64_t value, int64_t *values)
{
    SYMMEM_CHECK(symmem__gpu_exchange_start(g, call, value));
    SYMMEM_CHECK(symmem__gpu_drain(g, call));
    return symmem__gpu_exchange_finish(g, call, values);
}

symmem_status_t symmem__gpu_same_size(gpu_t *g, const char *call, const int64_t *values,
                                      size_t size)
{
    for (int pe = 0; pe < g->boot.nranks; pe++)
        if (values[pe] != (int64_t)size)
            return ERROR(SYMMEM_ERR_MISMATCH,
                         "%s: size must be the same on every PE, but PE %d asked for %lld "
                         "bytes and this PE for %zu",
                         call, pe, (long long)values[pe], size);
    return SYMMEM_OK;
}

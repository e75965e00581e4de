/* The exchange: one int64 from every PE gathered on every PE (the engine's:
 * NVSHMEM's int64 fcollect over TEAM_WORLD on the backend's stream, or the
 * symmem engine's host mesh), so collective arguments can be compared
 * before the engine sees them (NVSHMEM would hang or corrupt the heap on a
 * mismatch). No collective check here: init's steps exchange before the
 * call pages exist; memory.c wraps the exchange in the check for malloc
 * and free. */
#include "gpu.h"

symmem_status_t symmem__gpu_exchange_start(gpu_t *g, const char *call, int64_t value)
{
    return g->engine->exchange_start(g, call, value);
}

symmem_status_t symmem__gpu_exchange_finish(gpu_t *g, const char *call, int64_t *values)
{
    return g->engine->exchange_finish(g, call, values);
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

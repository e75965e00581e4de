/* Atomics: NVSHMEM's host library has no working host-initiated atomics, so
 * each one is a one-thread PTX kernel (kernels/atomics_ptx.c) on the address
 * nvshmem_ptr gives for the target PE, on the backend's stream; the old
 * value comes back through the scratch buffer. */
#include "gpu.h"
#include "kernels/atomics.h"

symmem_status_t symmem__gpu_atomic(gpu_t *g, symmem_atomic_op_t op, void *target,
                                   symmem_dtype_t dtype, uint64_t value, uint64_t cond, int pe,
                                   uint64_t *fetched_p)
{
    const char *call = "atomic";
    scope_t scope = symmem__gpu_enter(g);
    void *remote = libs.ptr(target, pe);
    if (remote == NULL)
        return symmem__gpu_leave(g, scope,
                                 ERROR(SYMMEM_ERR_UNSUPPORTED,
                                       "atomic: PE %d cannot be reached by load/store from "
                                       "this PE (it is outside this PE's NVLink domain); the "
                                       "gpu backend's atomics work within one",
                                       pe));
    char name[32];
    void *kernel = NULL;
    symmem__gpu_atomic_kernel(op, dtype, name, sizeof(name), &value);
    cu_result_t rc = libs.cuModuleGetFunction(&kernel, g->atomics, name);
    uint64_t address = (uint64_t)(uintptr_t)remote, result = (uint64_t)g->scratch;
    void *params[] = {&address, &value, &cond, &result};
    if (rc == 0) rc = symmem__gpu_launch(kernel, 1, 1, g->stream, params);
    if (rc != 0) return symmem__gpu_leave(g, scope, symmem__gpu_cuda_error(call, name, rc));
    symmem_status_t status = symmem__gpu_drain(g, call);
    uint64_t old = 0;
    size_t size = dtype == SYMMEM_DTYPE_INT64 || dtype == SYMMEM_DTYPE_UINT64 ||
                          dtype == SYMMEM_DTYPE_FLOAT64 ? 8 : 4;
    if (status == SYMMEM_OK && (rc = libs.cuMemcpy((cu_deviceptr_t)&old, g->scratch, size)) != 0)
        status = symmem__gpu_cuda_error(call, "reading the old value", rc);
    if (status == SYMMEM_OK && fetched_p) *fetched_p = old;
    return symmem__gpu_leave(g, scope, status);
}

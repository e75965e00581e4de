/* Atomics: NVSHMEM's host library has no working host-initiated atomics, so
 * each one is a one-thread kernel on the backend's stream, and the old
 * value comes back through the scratch buffer. For a PE in this PE's NVLink
 * domain it is a PTX atom instruction (kernels/atomics.ptx) on the
 * address the engine's ptr gives; for any other (the nvshmem engine's PEs
 * on other nodes), NVSHMEM's device atomic of the same name
 * (nvshmem_atomics.c), which takes the network. */
#include "gpu.h"

/* kernels/atomics.ptx, which the driver compiles at the first atomic (not
 * at init: a job that never makes one never waits for it). */
static symmem_status_t atomics_module(gpu_t *g, const char *call)
{
    if (g->atomics == NULL)
        CU(call, libs.cuModuleLoadData(&g->atomics, symmem__gpu_kernel_atomics_ptx));
    return SYMMEM_OK;
}

symmem_status_t symmem__gpu_atomic(gpu_t *g, symmem_atomic_op_t op, void *target,
                                   symmem_dtype_t dtype, uint64_t value, uint64_t cond, int pe,
                                   uint64_t *fetched_p)
{
    const char *call = "atomic";
    scope_t scope = symmem__gpu_enter(g);
    char name[32];
    symmem__gpu_atomic_kernel(op, dtype, name, sizeof(name), &value);
    void *kernel = NULL, *address = g->engine->ptr(g, target, pe);
    symmem_status_t status = SYMMEM_OK;
    if (address == NULL || pe == g->unmapped_pe) { /* NVSHMEM's kernels take the local address */
        address = target;
        status = symmem__gpu_nvshmem_atomic_kernel(g, name, &kernel);
    } else if ((status = atomics_module(g, call)) == SYMMEM_OK) {
        cu_result_t rc = libs.cuModuleGetFunction(&kernel, g->atomics, name);
        if (rc != 0) status = symmem__gpu_cuda_error(call, name, rc);
    }
    if (status != SYMMEM_OK) return symmem__gpu_leave(g, scope, status);
    void *result = (void *)(uintptr_t)g->scratch;
    void *params[] = {&address, &value, &cond, &result, &pe}; /* the PTX kernels take 4 */
    cu_result_t rc = symmem__gpu_launch(kernel, 1, 1, g->stream, params);
    if (rc != 0) return symmem__gpu_leave(g, scope, symmem__gpu_cuda_error(call, name, rc));
    status = symmem__gpu_drain(g, call);
    uint64_t old = 0;
    size_t size = symmem__dtype_bytes(dtype);
    if (status == SYMMEM_OK && (rc = libs.cuMemcpy((cu_deviceptr_t)&old, g->scratch, size)) != 0)
        status = symmem__gpu_cuda_error(call, "reading the old value", rc);
    if (status == SYMMEM_OK && fetched_p) *fetched_p = old;
    return symmem__gpu_leave(g, scope, status);
}

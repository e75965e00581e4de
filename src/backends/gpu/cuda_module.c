/* NVSHMEM4Py's module_init / library_init and their finalizes, for a CUDA
 * module or library the program loaded. One built with symmem's device
 * library gets the constant copy of the device state its calls' fast path
 * reads (module_consts.c; without it they take the slow path through the
 * state block, whose address they were compiled with). One that links
 * NVSHMEM's own device library holds NVSHMEM's device state
 * (`nvshmemi_device_state_d`), which NVSHMEM's nvshmemx_cumodule_init /
 * nvshmemx_culibrary_init fill: this file finds out which, and calls those
 * for the second kind. */
#include <stdio.h>

#include "gpu.h"

#define NVSHMEM_STATE "nvshmemi_device_state_d"

static const char *init_name(int library, int op)
{
    if (op == SYMMEM_CUDA_MODULE_FINALIZE || op == SYMMEM_CUDA_MODULE_DETACH)
        return library ? "library_finalize" : "module_finalize";
    return library ? "library_init" : "module_init";
}

/* Whether the module or library defines NVSHMEM's device state. */
static symmem_status_t links_nvshmem(int library, uint64_t handle, const char *call, int *links_p)
{
    cu_deviceptr_t at = 0;
    size_t bytes = 0;
    cu_result_t rc =
        symmem__gpu_libs_module_global(&libs, library, handle, NVSHMEM_STATE, &at, &bytes);
    if (rc == -1)
        return ERROR(SYMMEM_ERR_UNSUPPORTED, "%s: this CUDA driver has no cu%sGetGlobal", call,
                     library ? "Library" : "Module");
    *links_p = rc == 0;
    if (rc == 0 || rc == CU_ERROR_NOT_FOUND) return SYMMEM_OK;
    const char *text = NULL;
    libs.cuGetErrorString(rc, &text);
    return ERROR(SYMMEM_ERR_INVALID,
                 "%s: %s=0x%llx is not a CU%s loaded in the current "
                 "context (CUDA error %d: %s)",
                 call, library ? "lib" : "mod", (unsigned long long)handle,
                 library ? "library" : "module", (int)rc, text ? text : "?");
}

symmem_status_t symmem__gpu_cuda_module(gpu_t *g, int library, uint64_t handle, int op,
                                        int *links_p)
{
    const char *call = init_name(library, op);
    scope_t scope = symmem__gpu_enter(g);
    if (op == SYMMEM_CUDA_MODULE_ATTACH)
        return symmem__gpu_leave(g, scope,
                                 symmem__gpu_consts_attach(library, handle, call, links_p));
    if (op == SYMMEM_CUDA_MODULE_DETACH) {
        symmem__gpu_consts_detach(handle);
        return symmem__gpu_leave(g, scope, SYMMEM_OK);
    }
    symmem_status_t status = links_nvshmem(library, handle, call, links_p);
    if (status == SYMMEM_OK && *links_p && op != SYMMEM_CUDA_MODULE_QUERY &&
        !g->engine->nvshmem_device_state)
        status = ERROR(SYMMEM_ERR_UNSUPPORTED,
                       "%s: %s=0x%llx links NVSHMEM's device library, whose state only NVSHMEM "
                       "fills, and this job runs on the gpu backend's %s engine: start it with "
                       "SYMMEM_GPU_ENGINE=nvshmem (one GPU a PE), or compile the kernel against "
                       "symmem's device library",
                       call, library ? "lib" : "mod", (unsigned long long)handle, g->engine->name);
    else if (status == SYMMEM_OK && *links_p && op != SYMMEM_CUDA_MODULE_QUERY) {
        char name[40];
        snprintf(name, sizeof(name), "nvshmemx_cu%s_%s", library ? "library" : "module",
                 op == SYMMEM_CUDA_MODULE_INIT ? "init" : "finalize");
        int (*fn)(void *) = (int (*)(void *))symmem__gpu_libs_symbol(&libs, name);
        int rc = fn != NULL ? fn((void *)(uintptr_t)handle) : -1;
        if (fn == NULL)
            status = ERROR(SYMMEM_ERR_UNSUPPORTED, "%s: this NVSHMEM has no %s", call, name);
        else if (rc != 0)
            status = ERROR(SYMMEM_ERR_BACKEND,
                           "%s: %s=0x%llx links NVSHMEM's device library, and "
                           "%s failed with status %d (NVSHMEM prints why; a device library of "
                           "another NVSHMEM version than the host library's is refused)",
                           call, library ? "lib" : "mod", (unsigned long long)handle, name, rc);
    }
    return symmem__gpu_leave(g, scope, status);
}

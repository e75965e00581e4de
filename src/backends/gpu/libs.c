/* Loads the CUDA driver and NVSHMEM's host library into the table libs.h
 * declares: every symbol the backend calls, or the reason it cannot run. */
#include "libs.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where libnvshmem_host.so.3 may be, in the order the contract gives:
 * SYMMEM_NVSHMEM_LIB, the nvidia-nvshmem wheel (its path is handed over by
 * the Python package as SYMMEM_NVSHMEM_WHEEL_LIB), then the system. */
static void *open_nvshmem(const symmem_core_services_t *core, char *why, size_t why_size)
{
    const char *candidates[] = {core->env_string("SYMMEM_NVSHMEM_LIB"),
                                core->env_string("SYMMEM_NVSHMEM_WHEEL_LIB"),
                                "libnvshmem_host.so.3"};
    int n = 0;
    n += snprintf(why, why_size, "libnvshmem_host.so.3 not found; tried:");
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
        if (candidates[i] == NULL || candidates[i][0] == '\0') continue;
        void *handle = dlopen(candidates[i], RTLD_NOW | RTLD_GLOBAL);
        if (handle != NULL) return handle;
        if (n < (int)why_size)
            n += snprintf(why + n, why_size - (size_t)n, " %s (%s);", candidates[i], dlerror());
    }
    if (n < (int)why_size)
        snprintf(why + n, why_size - (size_t)n,
                 " install the nvidia-nvshmem-cu13 (or -cu12) wheel or set SYMMEM_NVSHMEM_LIB");
    return NULL;
}

#define LOAD(handle, field, name)                                                                  \
    do {                                                                                           \
        *(void **)&libs->field = dlsym(handle, name);                                              \
        if (libs->field == NULL) {                                                                 \
            snprintf(why, why_size, "%s has no symbol %s", #handle, name);                         \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

/* NVSHMEM's host library, for the nvshmem engine: where it cannot load,
 * the table keeps NULL for its calls and the reason in nvshmem_why. */
static void load_nvshmem(gpu_libs_t *libs, const symmem_core_services_t *core)
{
    char *why = libs->nvshmem_why;
    size_t why_size = sizeof(libs->nvshmem_why);
    void *nv = open_nvshmem(core, why, why_size);
    if (nv == NULL) return;
/* A symbol NVSHMEM lacks: none of it is used (the fields are NULL again). */
#define LOAD_NV(field, name)                                                                       \
    do {                                                                                           \
        *(void **)&libs->field = dlsym(nv, name);                                                  \
        if (libs->field == NULL) {                                                                 \
            snprintf(why, why_size, "libnvshmem_host.so.3 has no symbol %s", name);                \
            memset(&libs->get_uniqueid, 0,                                                         \
                   offsetof(gpu_libs_t, nvshmem_handle) - offsetof(gpu_libs_t, get_uniqueid));     \
            return;                                                                                \
        }                                                                                          \
    } while (0)
    LOAD_NV(get_uniqueid, "nvshmemx_get_uniqueid");
    LOAD_NV(set_attr_uniqueid_args, "nvshmemx_set_attr_uniqueid_args");
    LOAD_NV(hostlib_init_attr, "nvshmemx_hostlib_init_attr");
    LOAD_NV(hostlib_finalize, "nvshmemx_hostlib_finalize");
    LOAD_NV(vendor_get_version_info, "nvshmemx_vendor_get_version_info");
    LOAD_NV(my_pe, "nvshmem_my_pe");
    LOAD_NV(n_pes, "nvshmem_n_pes");
    LOAD_NV(malloc, "nvshmem_malloc");
    LOAD_NV(align, "nvshmem_align");
    LOAD_NV(free, "nvshmem_free");
    LOAD_NV(ptr, "nvshmem_ptr");
    LOAD_NV(putmem_on_stream, "nvshmemx_putmem_on_stream");
    LOAD_NV(getmem_on_stream, "nvshmemx_getmem_on_stream");
    LOAD_NV(putmem_nbi_on_stream, "nvshmemx_putmem_nbi_on_stream");
    LOAD_NV(getmem_nbi_on_stream, "nvshmemx_getmem_nbi_on_stream");
    LOAD_NV(quiet_on_stream, "nvshmemx_quiet_on_stream");
    LOAD_NV(fence, "nvshmem_fence");
    LOAD_NV(putmem_signal_on_stream, "nvshmemx_putmem_signal_on_stream");
    LOAD_NV(putmem_signal_nbi_on_stream, "nvshmemx_putmem_signal_nbi_on_stream");
    LOAD_NV(signal_op_on_stream, "nvshmemx_signal_op_on_stream");
    LOAD_NV(signal_wait_until_on_stream, "nvshmemx_signal_wait_until_on_stream");
    LOAD_NV(signal_fetch, "nvshmem_signal_fetch");
    LOAD_NV(barrier_all_on_stream, "nvshmemx_barrier_all_on_stream");
    LOAD_NV(sync_all_on_stream, "nvshmemx_sync_all_on_stream");
    LOAD_NV(barrier_on_stream, "nvshmemx_barrier_on_stream");
    LOAD_NV(team_sync_on_stream, "nvshmemx_team_sync_on_stream");
    LOAD_NV(team_split_strided, "nvshmem_team_split_strided");
    LOAD_NV(team_split_2d, "nvshmem_team_split_2d");
    LOAD_NV(team_destroy, "nvshmem_team_destroy");
    LOAD_NV(team_n_pes, "nvshmem_team_n_pes");
    LOAD_NV(team_my_pe, "nvshmem_team_my_pe");
    LOAD_NV(team_translate_pe, "nvshmem_team_translate_pe");
#undef LOAD_NV
    libs->nvshmem_handle = nv;
    libs->nvshmem_why[0] = '\0';
}

int symmem__gpu_libs_load(gpu_libs_t *libs, const symmem_core_services_t *core, char *why,
                          size_t why_size)
{
    memset(libs, 0, sizeof(*libs));
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (cuda == NULL) {
        snprintf(why, why_size, "no CUDA driver (libcuda.so.1: %s)", dlerror());
        return -1;
    }
    LOAD(cuda, cuInit, "cuInit");
    LOAD(cuda, cuDeviceGetCount, "cuDeviceGetCount");
    LOAD(cuda, cuDeviceGet, "cuDeviceGet");
    LOAD(cuda, cuDeviceGetAttribute, "cuDeviceGetAttribute");
    LOAD(cuda, cuDeviceTotalMem, "cuDeviceTotalMem_v2");
    LOAD(cuda, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    LOAD(cuda, cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    LOAD(cuda, cuCtxGetCurrent, "cuCtxGetCurrent");
    LOAD(cuda, cuCtxSetCurrent, "cuCtxSetCurrent");
    LOAD(cuda, cuCtxGetDevice, "cuCtxGetDevice");
    LOAD(cuda, cuCtxSynchronize, "cuCtxSynchronize");
    LOAD(cuda, cuStreamGetCtx, "cuStreamGetCtx");
    *(void **)&libs->cuModuleGetGlobal = dlsym(cuda, "cuModuleGetGlobal_v2");
    *(void **)&libs->cuLibraryGetGlobal = dlsym(cuda, "cuLibraryGetGlobal");
    *(void **)&libs->cuUserObjectCreate = dlsym(cuda, "cuUserObjectCreate");
    *(void **)&libs->cuUserObjectRelease = dlsym(cuda, "cuUserObjectRelease");
    *(void **)&libs->cuGraphRetainUserObject = dlsym(cuda, "cuGraphRetainUserObject");
    if (libs->cuUserObjectCreate && libs->cuUserObjectRelease && libs->cuGraphRetainUserObject)
        *(void **)&libs->cuStreamGetCaptureInfo = dlsym(cuda, "cuStreamGetCaptureInfo_v2");
    LOAD(cuda, cuStreamCreate, "cuStreamCreate");
    LOAD(cuda, cuStreamDestroy, "cuStreamDestroy_v2");
    LOAD(cuda, cuStreamSynchronize, "cuStreamSynchronize");
    LOAD(cuda, cuStreamQuery, "cuStreamQuery");
    LOAD(cuda, cuMemcpy, "cuMemcpy");
    LOAD(cuda, cuMemAlloc, "cuMemAlloc_v2");
    LOAD(cuda, cuMemFree, "cuMemFree_v2");
    LOAD(cuda, cuMemsetD8, "cuMemsetD8_v2");
    LOAD(cuda, cuMemHostAlloc, "cuMemHostAlloc");
    LOAD(cuda, cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2");
    LOAD(cuda, cuPointerGetAttribute, "cuPointerGetAttribute");
    LOAD(cuda, cuGetErrorString, "cuGetErrorString");
    LOAD(cuda, cuModuleLoadData, "cuModuleLoadData");
    LOAD(cuda, cuModuleUnload, "cuModuleUnload");
    LOAD(cuda, cuModuleGetFunction, "cuModuleGetFunction");
    LOAD(cuda, cuLinkCreate, "cuLinkCreate_v2");
    LOAD(cuda, cuLinkAddData, "cuLinkAddData_v2");
    LOAD(cuda, cuLinkAddFile, "cuLinkAddFile_v2");
    LOAD(cuda, cuLinkComplete, "cuLinkComplete");
    LOAD(cuda, cuLinkDestroy, "cuLinkDestroy");
    LOAD(cuda, cuMemRetainAllocationHandle, "cuMemRetainAllocationHandle");
    LOAD(cuda, cuMemRelease, "cuMemRelease");
    LOAD(cuda, cuLaunchKernel, "cuLaunchKernel");
    LOAD(cuda, cuMemcpyAsync, "cuMemcpyAsync");
    LOAD(cuda, cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
    LOAD(cuda, cuMemAllocAsync, "cuMemAllocAsync");
    LOAD(cuda, cuMemFreeAsync, "cuMemFreeAsync");
    LOAD(cuda, cuMemCreate, "cuMemCreate");
    LOAD(cuda, cuMemAddressReserve, "cuMemAddressReserve");
    LOAD(cuda, cuMemAddressFree, "cuMemAddressFree");
    LOAD(cuda, cuMemMap, "cuMemMap");
    LOAD(cuda, cuMemUnmap, "cuMemUnmap");
    LOAD(cuda, cuMemSetAccess, "cuMemSetAccess");
    LOAD(cuda, cuMemExportToShareableHandle, "cuMemExportToShareableHandle");
    LOAD(cuda, cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle");
    LOAD(cuda, cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity");
    LOAD(cuda, cuMemGetAllocationPropertiesFromHandle, "cuMemGetAllocationPropertiesFromHandle");
    int count = 0;
    if (libs->cuInit(0) != 0 || libs->cuDeviceGetCount(&count) != 0 || count == 0) {
        snprintf(why, why_size,
                 "no usable CUDA device (cuInit or cuDeviceGetCount failed, or "
                 "0 devices)");
        return -1;
    }
    load_nvshmem(libs, core);
    return 0;
}

void *symmem__gpu_libs_symbol(const gpu_libs_t *libs, const char *name)
{
    /* dlsym(NULL) would search the whole process */
    return libs->nvshmem_handle != NULL ? dlsym(libs->nvshmem_handle, name) : NULL;
}

cu_result_t symmem__gpu_libs_module_global(const gpu_libs_t *libs, int library, uint64_t handle,
                                           const char *name, cu_deviceptr_t *at_p, size_t *bytes_p)
{
    void *h = (void *)(uintptr_t)handle;
    if (library)
        return libs->cuLibraryGetGlobal ? libs->cuLibraryGetGlobal(at_p, bytes_p, h, name) : -1;
    return libs->cuModuleGetGlobal ? libs->cuModuleGetGlobal(at_p, bytes_p, h, name) : -1;
}

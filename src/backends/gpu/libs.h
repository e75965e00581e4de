/* The CUDA driver and NVSHMEM host library, loaded at run time into a table
 * of function pointers (NCCL's ibvsymbols pattern). The driver is needed;
 * NVSHMEM only by the nvshmem engine (engine.h): where it does not load, its
 * pointers stay NULL and nvshmem_why says why. */
#ifndef SYMMEM_GPU_LIBS_H
#define SYMMEM_GPU_LIBS_H

#include <stddef.h>

#include "../../core/backend.h"
#include "cuda_vmm_abi.h"
#include "nvshmem_abi.h"

typedef struct {
    /* CUDA driver (libcuda.so.1) */
    cu_result_t (*cuInit)(unsigned flags);
    cu_result_t (*cuDeviceGetCount)(int *count);
    cu_result_t (*cuDeviceGet)(cu_device_t *device, int ordinal);
    cu_result_t (*cuDeviceGetAttribute)(int *value, int attribute, cu_device_t device);
    cu_result_t (*cuDeviceTotalMem)(size_t *bytes, cu_device_t device);
    cu_result_t (*cuDevicePrimaryCtxRetain)(cu_context_t *ctx, cu_device_t device);
    cu_result_t (*cuDevicePrimaryCtxRelease)(cu_device_t device);
    cu_result_t (*cuCtxGetCurrent)(cu_context_t *ctx);
    cu_result_t (*cuCtxSetCurrent)(cu_context_t ctx);
    cu_result_t (*cuCtxGetDevice)(cu_device_t *device);
    cu_result_t (*cuCtxSynchronize)(void);
    cu_result_t (*cuStreamGetCtx)(nv_stream_t stream, cu_context_t *ctx);
    /* optional (NULL on a driver without them): naming the graphs alive */
    cu_result_t (*cuStreamGetCaptureInfo)(nv_stream_t stream, int *status, uint64_t *id,
                                          void **graph, const void **deps, size_t *ndeps);
    cu_result_t (*cuUserObjectCreate)(void **object, void *ptr, void (*destroy)(void *),
                                      unsigned refcount, unsigned flags);
    cu_result_t (*cuUserObjectRelease)(void *object, unsigned count);
    cu_result_t (*cuGraphRetainUserObject)(void *graph, void *object, unsigned count,
                                           unsigned flags);
    cu_result_t (*cuStreamCreate)(nv_stream_t *stream, unsigned flags);
    cu_result_t (*cuStreamDestroy)(nv_stream_t stream);
    cu_result_t (*cuStreamSynchronize)(nv_stream_t stream);
    cu_result_t (*cuStreamQuery)(nv_stream_t stream);
    cu_result_t (*cuMemcpy)(cu_deviceptr_t dst, cu_deviceptr_t src, size_t bytes);
    cu_result_t (*cuMemAlloc)(cu_deviceptr_t *ptr, size_t bytes);
    cu_result_t (*cuMemFree)(cu_deviceptr_t ptr);
    cu_result_t (*cuMemsetD8)(cu_deviceptr_t ptr, unsigned char value, size_t bytes);
    cu_result_t (*cuMemHostAlloc)(void **ptr, size_t bytes, unsigned flags);
    cu_result_t (*cuMemHostGetDevicePointer)(cu_deviceptr_t *dptr, void *ptr, unsigned flags);
    cu_result_t (*cuPointerGetAttribute)(void *data, int attribute, cu_deviceptr_t ptr);
    cu_result_t (*cuGetErrorString)(cu_result_t error, const char **text);
    cu_result_t (*cuModuleLoadData)(void **module, const void *image);
    cu_result_t (*cuModuleUnload)(void *module);
    cu_result_t (*cuModuleGetFunction)(void **function, void *module, const char *name);
    /* the linker: NVSHMEM's device library into a module (nvshmem_atomics.c) */
    cu_result_t (*cuLinkCreate)(unsigned noptions, int *options, void **values, void **state);
    cu_result_t (*cuLinkAddData)(void *state, int type, void *data, size_t size, const char *name,
                                 unsigned noptions, int *options, void **values);
    cu_result_t (*cuLinkAddFile)(void *state, int type, const char *path, unsigned noptions,
                                 int *options, void **values);
    cu_result_t (*cuLinkComplete)(void *state, void **cubin, size_t *size);
    cu_result_t (*cuLinkDestroy)(void *state);
    /* optional: a module's or library's global (module_init) */
    cu_result_t (*cuModuleGetGlobal)(cu_deviceptr_t *ptr, size_t *bytes, void *module,
                                     const char *name);
    cu_result_t (*cuLibraryGetGlobal)(cu_deviceptr_t *ptr, size_t *bytes, void *library,
                                      const char *name);
    cu_result_t (*cuMemRetainAllocationHandle)(uint64_t *handle, void *address);
    cu_result_t (*cuMemRelease)(uint64_t handle);
    cu_result_t (*cuLaunchKernel)(void *function, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                  nv_stream_t stream, void **params, void **extra);
    cu_result_t (*cuMemcpyAsync)(cu_deviceptr_t dst, cu_deviceptr_t src, size_t bytes,
                                 nv_stream_t stream);
    cu_result_t (*cuDeviceCanAccessPeer)(int *can, cu_device_t device, cu_device_t peer);
    /* stream-ordered: a graph captures them */
    cu_result_t (*cuMemAllocAsync)(cu_deviceptr_t *ptr, size_t bytes, nv_stream_t stream);
    cu_result_t (*cuMemFreeAsync)(cu_deviceptr_t ptr, nv_stream_t stream);
    /* virtual memory management: the symmem engine's heap (vmm_heap.c) */
    cu_result_t (*cuMemCreate)(cu_mem_handle_t *handle, size_t bytes, const cu_mem_prop_t *prop,
                               unsigned long long flags);
    cu_result_t (*cuMemAddressReserve)(cu_deviceptr_t *ptr, size_t bytes, size_t alignment,
                                       cu_deviceptr_t hint, unsigned long long flags);
    cu_result_t (*cuMemAddressFree)(cu_deviceptr_t ptr, size_t bytes);
    cu_result_t (*cuMemMap)(cu_deviceptr_t ptr, size_t bytes, size_t offset, cu_mem_handle_t handle,
                            unsigned long long flags);
    cu_result_t (*cuMemUnmap)(cu_deviceptr_t ptr, size_t bytes);
    cu_result_t (*cuMemSetAccess)(cu_deviceptr_t ptr, size_t bytes, const cu_mem_access_t *desc,
                                  size_t count);
    cu_result_t (*cuMemExportToShareableHandle)(void *shareable, cu_mem_handle_t handle, int type,
                                                unsigned long long flags);
    cu_result_t (*cuMemImportFromShareableHandle)(cu_mem_handle_t *handle, void *os_handle,
                                                  int type);
    cu_result_t (*cuMemGetAllocationGranularity)(size_t *granularity, const cu_mem_prop_t *prop,
                                                 int option);
    cu_result_t (*cuMemGetAllocationPropertiesFromHandle)(cu_mem_prop_t *prop,
                                                          cu_mem_handle_t handle);

    /* NVSHMEM host library (libnvshmem_host.so.3) */
    int (*get_uniqueid)(nv_uniqueid_t *uid);
    int (*set_attr_uniqueid_args)(int rank, int nranks, const nv_uniqueid_t *uid,
                                  nv_init_attr_t *attr);
    int (*hostlib_init_attr)(unsigned flags, nv_init_attr_t *attr);
    void (*hostlib_finalize)(void);
    void (*vendor_get_version_info)(int *major, int *minor, int *patch);
    int (*my_pe)(void);
    int (*n_pes)(void);
    void *(*malloc)(size_t size);
    void *(*align)(size_t alignment, size_t size);
    void (*free)(void *ptr);
    void *(*ptr)(const void *ptr, int pe);
    void (*putmem_on_stream)(void *dst, const void *src, size_t n, int pe, nv_stream_t s);
    void (*getmem_on_stream)(void *dst, const void *src, size_t n, int pe, nv_stream_t s);
    void (*putmem_nbi_on_stream)(void *dst, const void *src, size_t n, int pe, nv_stream_t s);
    void (*getmem_nbi_on_stream)(void *dst, const void *src, size_t n, int pe, nv_stream_t s);
    void (*quiet_on_stream)(nv_stream_t s);
    void (*fence)(void);
    void (*putmem_signal_on_stream)(void *dst, const void *src, size_t n, uint64_t *sig,
                                    uint64_t value, int op, int pe, nv_stream_t s);
    void (*putmem_signal_nbi_on_stream)(void *dst, const void *src, size_t n, uint64_t *sig,
                                        uint64_t value, int op, int pe, nv_stream_t s);
    void (*signal_op_on_stream)(uint64_t *sig, uint64_t value, int op, int pe, nv_stream_t s);
    void (*signal_wait_until_on_stream)(uint64_t *sig, int cmp, uint64_t value, nv_stream_t s);
    uint64_t (*signal_fetch)(const uint64_t *sig);
    void (*barrier_all_on_stream)(nv_stream_t s);
    void (*sync_all_on_stream)(nv_stream_t s);
    int (*barrier_on_stream)(nv_team_t team, nv_stream_t s);
    int (*team_sync_on_stream)(nv_team_t team, nv_stream_t s);
    int (*team_split_strided)(nv_team_t parent, int start, int stride, int size, const void *config,
                              long mask, nv_team_t *new_team);
    int (*team_split_2d)(nv_team_t parent, int xrange, const void *xconfig, long xmask,
                         nv_team_t *xteam, const void *yconfig, long ymask, nv_team_t *yteam);
    void (*team_destroy)(nv_team_t team);
    int (*team_n_pes)(nv_team_t team);
    int (*team_my_pe)(nv_team_t team);
    int (*team_translate_pe)(nv_team_t src_team, int src_pe, nv_team_t dest_team);

    void *nvshmem_handle;  /* for typed collectives and atomics, looked up by name; NULL: none */
    char nvshmem_why[700]; /* why NVSHMEM did not load, where it did not */
} gpu_libs_t;

/* Loads the driver (non-zero with the reason in why where it cannot), then
 * tries NVSHMEM (nvshmem_handle NULL and nvshmem_why where it cannot). */
int symmem__gpu_libs_load(gpu_libs_t *libs, const symmem_core_services_t *core, char *why,
                          size_t why_size);
/* A typed NVSHMEM function such as "nvshmemx_float_sum_reduce_on_stream". */
void *symmem__gpu_libs_symbol(const gpu_libs_t *libs, const char *name);
/* cuLibraryGetGlobal (library 1) or cuModuleGetGlobal of name in handle;
 * -1 where this driver has no such call. */
cu_result_t symmem__gpu_libs_module_global(const gpu_libs_t *libs, int library, uint64_t handle,
                                           const char *name, cu_deviceptr_t *at_p, size_t *bytes_p);

#endif

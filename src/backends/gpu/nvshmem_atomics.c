/* Atomics on PEs this PE cannot load from or store to (another node): the
 * kernels of kernels/nvshmem_atomics.cu call NVSHMEM's device atomics,
 * which take the network transport. Built at the first such atomic: NVRTC
 * compiles them against NVSHMEM's headers, the driver's linker adds
 * libnvshmem_device.a (both beside the libnvshmem_host.so.3 in use), and
 * nvshmemx_cumodule_init gives the module NVSHMEM's device state. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "nvrtc.h"

#define MAX_INCLUDES 16
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define CU_JIT_INPUT_PTX 1
#define CU_JIT_INPUT_LIBRARY 4

/* The folder of the libnvshmem_host.so.3 loaded: its wheel (or install)
 * keeps include/ beside lib/. */
static int nvshmem_lib_dir(char *dir, size_t size)
{
    Dl_info info;
    if (dladdr((void *)libs.my_pe, &info) == 0 || info.dli_fname == NULL) return -1;
    char *real = realpath(info.dli_fname, NULL);
    if (real == NULL) return -1;
    char *slash = strrchr(real, '/');
    if (slash) *slash = '\0';
    int n = snprintf(dir, size, "%s", real);
    free(real);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

/* -arch, -rdc, NVSHMEM's headers, then the CUDA headers they include
 * (SYMMEM_CUDA_INCLUDE: folders separated by ':'); *storage_p to free. */
static int compile_options(gpu_t *g, const char *nvshmem_dir, const char **options,
                           char **storage_p)
{
    const char *cuda = symmem__gpu_core->env_string("SYMMEM_CUDA_INCLUDE");
    if (cuda == NULL || cuda[0] == '\0')
        cuda = "/usr/local/cuda/include:/usr/local/cuda/include/cccl";
    size_t room = strlen(cuda) + strlen(nvshmem_dir) + 64 + 4 * MAX_INCLUDES;
    char *storage = malloc(room), *at = storage;
    if (storage == NULL) return -1;
    int n = 0;
    options[n++] = at;
    symmem__gpu_arch_option(g, at, 32);
    at += strlen(at) + 1;
    options[n++] = "-rdc=true";
    options[n++] = "-std=c++17";
    options[n++] = at;
    at += sprintf(at, "-I%s/../include", nvshmem_dir) + 1;
    for (const char *folder = cuda; *folder && n < MAX_INCLUDES + 4;) {
        size_t len = strcspn(folder, ":");
        if (len > 0) {
            options[n++] = at;
            at += sprintf(at, "-I%.*s", (int)len, folder) + 1;
        }
        folder += len + (folder[len] == ':');
    }
    *storage_p = storage;
    return n;
}

/* Links ptx with NVSHMEM's device library into a loaded module. */
static symmem_status_t link_and_load(const char *ptx, const char *device_lib, void **module_p)
{
    char log[2048] = "";
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, (void *)(uintptr_t)sizeof(log)};
    void *state = NULL, *cubin = NULL;
    size_t size = 0;
    cu_result_t rc = libs.cuLinkCreate(2, options, values, &state);
    if (rc == 0)
        rc = libs.cuLinkAddData(state, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1,
                                "symmem_nvshmem_atomics", 0, NULL, NULL);
    if (rc == 0) rc = libs.cuLinkAddFile(state, CU_JIT_INPUT_LIBRARY, device_lib, 0, NULL, NULL);
    if (rc == 0) rc = libs.cuLinkComplete(state, &cubin, &size);
    if (rc == 0) rc = libs.cuModuleLoadData(module_p, cubin);
    if (state != NULL) libs.cuLinkDestroy(state);
    if (rc == 0) return SYMMEM_OK;
    return ERROR(SYMMEM_ERR_BACKEND,
                 "atomic: linking the NVSHMEM atomics with %s failed "
                 "(CUDA error %d): %s",
                 device_lib, (int)rc, log);
}

static symmem_status_t build(gpu_t *g)
{
    char dir[PATH_MAX], device_lib[PATH_MAX + 32], why[2048];
    if (nvshmem_lib_dir(dir, sizeof(dir)) != 0)
        return ERROR(SYMMEM_ERR_BACKEND, "atomic: cannot tell where libnvshmem_host.so.3 is");
    snprintf(device_lib, sizeof(device_lib), "%s/libnvshmem_device.a", dir);
    const char *options[MAX_INCLUDES + 4];
    char *storage = NULL, *ptx = NULL;
    int noptions = compile_options(g, dir, options, &storage);
    if (noptions < 0) return ERROR(SYMMEM_ERR_NO_MEMORY, "atomic: out of memory");
    int failed = symmem__gpu_nvrtc_compile(symmem__gpu_core, symmem__gpu_kernel_nvshmem_atomics_cu,
                                           "symmem_nvshmem_atomics.cu", options, noptions, &ptx,
                                           why, sizeof(why));
    symmem_status_t status = SYMMEM_OK;
    if (failed)
        status = ERROR(SYMMEM_ERR_UNSUPPORTED,
                       "atomic: an atomic on a PE outside this PE's NVLink domain runs NVSHMEM's "
                       "device atomics, compiled here with NVRTC against NVSHMEM's headers "
                       "(%s/../include) and CUDA's (SYMMEM_CUDA_INCLUDE, which needs "
                       "cuda_runtime.h and CCCL's cuda/std): %s",
                       dir, why);
    free(storage);
    if (status == SYMMEM_OK) status = link_and_load(ptx, device_lib, &g->nvshmem_atomics);
    free(ptx);
    if (status != SYMMEM_OK) return status;
    int (*init)(void *) = (int (*)(void *))symmem__gpu_libs_symbol(&libs, "nvshmemx_cumodule_init");
    int rc = init ? init(g->nvshmem_atomics) : -1;
    if (rc == 0) return SYMMEM_OK;
    libs.cuModuleUnload(g->nvshmem_atomics);
    g->nvshmem_atomics = NULL;
    return ERROR(SYMMEM_ERR_BACKEND,
                 "atomic: nvshmemx_cumodule_init of the NVSHMEM atomics "
                 "failed (%d)",
                 rc);
}

symmem_status_t symmem__gpu_nvshmem_atomic_kernel(gpu_t *g, const char *name, void **kernel_p)
{
    symmem_status_t status = g->nvshmem_atomics ? SYMMEM_OK : build(g);
    if (status != SYMMEM_OK) return status;
    cu_result_t rc = libs.cuModuleGetFunction(kernel_p, g->nvshmem_atomics, name);
    return rc == 0 ? SYMMEM_OK : symmem__gpu_cuda_error("atomic", name, rc);
}

void symmem__gpu_nvshmem_atomics_unload(gpu_t *g)
{
    if (g->nvshmem_atomics == NULL) return;
    int (*fini)(void *) =
        (int (*)(void *))symmem__gpu_libs_symbol(&libs, "nvshmemx_cumodule_finalize");
    if (fini) fini(g->nvshmem_atomics);
    libs.cuModuleUnload(g->nvshmem_atomics);
    g->nvshmem_atomics = NULL;
}

/* NVRTC through dlopen, like the driver and NVSHMEM (libs.c): the backend
 * builds and runs without it, and needs it only for what it compiles. */
#include "nvrtc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_cache.h"

typedef struct {
    int (*create)(void **prog, const char *src, const char *name, int nheaders,
                  const char *const *headers, const char *const *include_names);
    int (*compile)(void *prog, int noptions, const char *const *options);
    int (*log_size)(void *prog, size_t *size);
    int (*log)(void *prog, char *log);
    int (*ptx_size)(void *prog, size_t *size);
    int (*ptx)(void *prog, char *ptx);
    int (*destroy)(void **prog);
    int (*version)(int *major, int *minor);
} nvrtc_t;

static nvrtc_t nvrtc;
static pthread_mutex_t nvrtc_lock = PTHREAD_MUTEX_INITIALIZER;

static int load(const symmem_core_services_t *core, char *why, size_t why_size)
{
    if (nvrtc.create != NULL) return 0;
    const char *candidates[] = {core->env_string("SYMMEM_NVRTC_LIB"), "libnvrtc.so.13",
                                "libnvrtc.so.12"};
    void *handle = NULL;
    int n = snprintf(why, why_size, "NVRTC (the CUDA run-time compiler) not found; tried:");
    for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !handle; i++) {
        if (candidates[i] == NULL || candidates[i][0] == '\0') continue;
        handle = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL && n < (int)why_size)
            n += snprintf(why + n, why_size - (size_t)n, " %s (%s);", candidates[i], dlerror());
    }
    if (handle == NULL) {
        if (n < (int)why_size)
            snprintf(why + n, why_size - (size_t)n,
                     " install the nvidia-cuda-nvrtc wheel or set SYMMEM_NVRTC_LIB");
        return -1;
    }
    nvrtc_t found = {
        .create = (int (*)(void **, const char *, const char *, int, const char *const *,
                           const char *const *))dlsym(handle, "nvrtcCreateProgram"),
        .compile = (int (*)(void *, int, const char *const *))dlsym(handle, "nvrtcCompileProgram"),
        .log_size = (int (*)(void *, size_t *))dlsym(handle, "nvrtcGetProgramLogSize"),
        .log = (int (*)(void *, char *))dlsym(handle, "nvrtcGetProgramLog"),
        .ptx_size = (int (*)(void *, size_t *))dlsym(handle, "nvrtcGetPTXSize"),
        .ptx = (int (*)(void *, char *))dlsym(handle, "nvrtcGetPTX"),
        .destroy = (int (*)(void **))dlsym(handle, "nvrtcDestroyProgram"),
        .version = (int (*)(int *, int *))dlsym(handle, "nvrtcVersion"),
    };
    if (!found.create || !found.compile || !found.log_size || !found.log || !found.ptx_size ||
        !found.ptx || !found.destroy || !found.version) {
        snprintf(why, why_size, "the NVRTC library found lacks a symbol it must have");
        dlclose(handle);
        return -1;
    }
    nvrtc = found;
    return 0;
}

/* The compiler's log, its last why_size bytes (the errors come last). */
static void copy_log(void *prog, const char *name, int rc, char *why, size_t why_size)
{
    size_t size = 0;
    char *log = NULL;
    if (nvrtc.log_size(prog, &size) == 0 && size > 1 && (log = malloc(size)) != NULL &&
        nvrtc.log(prog, log) == 0) {
        size_t len = strlen(log), room = why_size > 80 ? why_size - 80 : 0;
        const char *tail = len > room ? log + len - room : log;
        snprintf(why, why_size, "NVRTC failed to compile %s (status %d): %s", name, rc, tail);
    } else {
        snprintf(why, why_size, "NVRTC failed to compile %s (status %d)", name, rc);
    }
    free(log);
}

int symmem__gpu_nvrtc_compile(const symmem_core_services_t *core, const char *source,
                              const char *name, const char *const *options, int noptions,
                              char **ptx_p, char *why, size_t why_size)
{
    pthread_mutex_lock(&nvrtc_lock);
    int rc = load(core, why, why_size);
    pthread_mutex_unlock(&nvrtc_lock);
    if (rc != 0) return -1;
    int major = 0, minor = 0;
    nvrtc.version(&major, &minor);
    uint64_t key = symmem__ptx_cache_key(source, name, options, noptions, major, minor);
    if ((*ptx_p = symmem__ptx_cache_load(core, key)) != NULL) return 0;
    void *prog = NULL;
    if ((rc = nvrtc.create(&prog, source, name, 0, NULL, NULL)) != 0) {
        snprintf(why, why_size, "nvrtcCreateProgram failed for %s (status %d)", name, rc);
        return -1;
    }
    size_t size = 0;
    char *ptx = NULL;
    if ((rc = nvrtc.compile(prog, noptions, options)) != 0) {
        copy_log(prog, name, rc, why, why_size);
    } else if ((rc = nvrtc.ptx_size(prog, &size)) != 0 || (ptx = malloc(size)) == NULL ||
               (rc = nvrtc.ptx(prog, ptx)) != 0) {
        snprintf(why, why_size, "NVRTC compiled %s but gave no PTX (status %d)", name, rc);
        free(ptx);
        ptx = NULL;
    }
    nvrtc.destroy(&prog);
    if (ptx != NULL) symmem__ptx_cache_store(core, key, ptx);
    *ptx_p = ptx;
    return ptx != NULL ? 0 : -1;
}

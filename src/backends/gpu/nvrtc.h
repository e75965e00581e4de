/* NVRTC, loaded at the first compile: CUDA C to PTX at run time, for the
 * kernels the backend builds from source (its own collectives, NVSHMEM's
 * device atomics), each compile kept in the PTX cache (ptx_cache.h). */
#ifndef SYMMEM_GPU_NVRTC_H
#define SYMMEM_GPU_NVRTC_H

#include <stddef.h>

#include "../../core/backend.h"

/* Compiles source (named name in messages) with options into PTX, a
 * malloc'ed string in *ptx_p; non-zero with the reason (the compiler's log
 * where it has one) in why. NVRTC is SYMMEM_NVRTC_LIB, else libnvrtc.so.13
 * or .12 on the library path. A compile the cache has costs no NVRTC call. */
int symmem__gpu_nvrtc_compile(const symmem_core_services_t *core, const char *source,
                              const char *name, const char *const *options, int noptions,
                              char **ptx_p, char *why, size_t why_size);

#endif

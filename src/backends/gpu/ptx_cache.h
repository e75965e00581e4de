/* What NVRTC made, kept on disk between runs: compiling symmem's reduce
 * kernels takes seconds per dtype and op, and every PE of every job paid it
 * again. A file per compile, named by a hash of everything that makes the
 * PTX (the source, its name, the options, NVRTC's version). */
#ifndef SYMMEM_GPU_PTX_CACHE_H
#define SYMMEM_GPU_PTX_CACHE_H

#include <stdint.h>

#include "../../core/backend.h"

/* The key of one compile: 64-bit FNV-1a over its inputs, in order. */
uint64_t symmem__ptx_cache_key(const char *source, const char *name, const char *const *options,
                               int noptions, int nvrtc_major, int nvrtc_minor);

/* The cached PTX for key (a malloc'ed string), or NULL where there is none,
 * it is unreadable, or the cache is off. */
char *symmem__ptx_cache_load(const symmem_core_services_t *core, uint64_t key);

/* Keeps ptx under key; quietly does nothing where the cache is off or
 * cannot be written (a cache only saves time). */
void symmem__ptx_cache_store(const symmem_core_services_t *core, uint64_t key, const char *ptx);

#endif

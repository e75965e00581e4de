/* The backends that live in shared objects of their own (the gpu backend,
 * the mpi backend), loaded on first use. */
#ifndef SYMMEM_CORE_GPU_LOADER_H
#define SYMMEM_CORE_GPU_LOADER_H

#include "backend.h"

/* The gpu backend's ops if its library loads and its table is complete;
 * else NULL and *why_p says why. */
const symmem_backend_ops_t *symmem__gpu_backend(const char **why_p);
/* The same for the mpi backend (SYMMEM_MPI_BACKEND_LIB). */
const symmem_backend_ops_t *symmem__mpi_backend(const char **why_p);

#endif

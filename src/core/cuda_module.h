/* NVSHMEM4Py's module_init, library_init and their finalizes: what the
 * running backend makes of a CUDA module or library the program loaded. */
#ifndef SYMMEM_CORE_CUDA_MODULE_H
#define SYMMEM_CORE_CUDA_MODULE_H

#include <stdint.h>

#include "symmem/symmem.h"

/* library: 0 a CUmodule, 1 a CUlibrary; op: SYMMEM_CUDA_MODULE_* (backend.h).
 * [out] *links_p: whether it links NVSHMEM's device library (then init and
 * finalize ran NVSHMEM's). An error naming call where symmem is not
 * initialised, the backend has no CUDA modules, or the handle is not one. */
symmem_status_t symmem__cuda_module(int library, uint64_t handle, int op, int *links_p);

#endif

/* The PTX kernels behind the gpu backend's atomics. */
#ifndef SYMMEM_GPU_KERNELS_ATOMICS_H
#define SYMMEM_GPU_KERNELS_ATOMICS_H

#include <stddef.h>
#include <stdint.h>

#include "symmem/symmem.h"

/* The PTX module with every kernel; non-zero if out is too small. */
int symmem__gpu_atomics_ptx(char *out, size_t size);
/* The same kernels in CUDA C over NVSHMEM's device atomics, for PEs on
 * other nodes (parameters: target, value, cond, result, pe). */
int symmem__gpu_nvshmem_atomics_cu(char *out, size_t size);
/* The kernel for op on dtype; may replace *value_p (inc adds 1, fetch ors 0). */
int symmem__gpu_atomic_kernel(symmem_atomic_op_t op, symmem_dtype_t dtype, char *name,
                              size_t size, uint64_t *value_p);

#endif

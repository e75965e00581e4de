/* symmem's own all-reduce kernels (allreduce_cu.c), as CUDA C for NVRTC. */
#ifndef SYMMEM_GPU_KERNELS_ALLREDUCE_H
#define SYMMEM_GPU_KERNELS_ALLREDUCE_H

#include <stddef.h>

#include "symmem/symmem.h"

#define SYMMEM_ALLREDUCE_MAX_PES 8     /* PEs of one NVLink domain it serves */
#define SYMMEM_ALLREDUCE_MAX_BLOCKS 64 /* blocks of a launch */
#define SYMMEM_ALLREDUCE_THREADS 512   /* threads of a block */
/* Each PE's flag area (symmetric, zeroed before first use): the epoch of
 * each block, then an arrival word per phase, block and PE. */
#define SYMMEM_ALLREDUCE_FLAG_BYTES \
    (8u * SYMMEM_ALLREDUCE_MAX_BLOCKS * (1u + 3u * SYMMEM_ALLREDUCE_MAX_PES))

/* The source of the kernels one_shot and two_shot for dtype and op (bool:
 * the caller passes an op that works on 0 and 1); -1 if out is too small
 * or the pair is not one the kernels do. */
int symmem__gpu_allreduce_cu(symmem_dtype_t dtype, symmem_reduce_op_t op, char *out,
                             size_t size);

#endif

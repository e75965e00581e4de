/* Element-wise host reductions, acc = acc op in, for every dtype and op of
 * the vocabulary: the cpu engine's collectives and the mpi backend's node
 * path (which compiles its own copy of reduce_kernels.c) reduce with them. */
#ifndef SYMMEM_CORE_REDUCE_KERNELS_H
#define SYMMEM_CORE_REDUCE_KERNELS_H

#include <stddef.h>

#include "symmem/symmem.h"

/* acc[i] = acc[i] op in[i] for n elements of dtype; a float dtype with a
 * bitwise op (refused by every call's checks before this) does nothing. */
void symmem__reduce_into(void *acc, const void *in, size_t n, symmem_dtype_t dtype,
                         symmem_reduce_op_t op);

#endif

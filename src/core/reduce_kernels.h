/* The host's reductions over the members of a team, for every dtype and op
 * of the vocabulary, in the one order docs/reproducibility.md promises: the
 * cpu engine's collectives and the mpi backend's own (which compiles its own
 * copy of reduce_kernels.c) reduce with it. */
#ifndef SYMMEM_CORE_REDUCE_KERNELS_H
#define SYMMEM_CORE_REDUCE_KERNELS_H

#include <stddef.h>

#include "symmem/symmem.h"

/* dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[n - 1][i] for i < count,
 * combined left to right (srcs in the team's order); float16 and bfloat16 in
 * float32, rounded to nearest even once. dst is apart from every src or one
 * of them exactly (in place). A float dtype with a bitwise op (refused by
 * every call's checks before this) leaves dst undefined. */
void symmem__reduce_members(void *dst, const void *const *srcs, int n, size_t count,
                            symmem_dtype_t dtype, symmem_reduce_op_t op);

#endif

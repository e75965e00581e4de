/* symmem's own collectives on a stream (reduce_cu.c, move_cu.c, with the
 * meeting code of meet_cu.c), as CUDA C for NVRTC. */
#ifndef SYMMEM_GPU_KERNELS_COLLECTIVES_H
#define SYMMEM_GPU_KERNELS_COLLECTIVES_H

#include <stddef.h>

#include "symmem/symmem.h"

#define SYMMEM_COLL_MAX_PES 8      /* members of a team they serve: one NVLink domain */
#define SYMMEM_COLL_MAX_BLOCKS 256 /* blocks of a launch */
#define SYMMEM_COLL_THREADS 512    /* threads of a block */
/* Each PE's part of the flag area for one team (symmetric, zeroed before
 * the team's first collective): the epoch of each block, then an arrival
 * word per block and member (SYNC_BYTES); then the one-phase reduce's
 * mailboxes, two (by the epoch's parity) for each member, each holding
 * LL_MAX_BYTES of data as 4-byte halves of 8-byte words whose other half is
 * the epoch. The flag area holds one part per team handle. */
#define SYMMEM_COLL_SYNC_BYTES (8u * SYMMEM_COLL_MAX_BLOCKS * (1u + SYMMEM_COLL_MAX_PES))
#define SYMMEM_COLL_LL_MAX_BYTES 4096u
#define SYMMEM_COLL_LL_SLOT_BYTES (2u * SYMMEM_COLL_LL_MAX_BYTES)
#define SYMMEM_COLL_TEAM_FLAG_BYTES \
    (SYMMEM_COLL_SYNC_BYTES + 2u * SYMMEM_COLL_MAX_PES * SYMMEM_COLL_LL_SLOT_BYTES)

/* The meeting code every kernel begins with (meet_cu.c). */
extern const char symmem__gpu_meet_cu[];

/* The source of the kernels one_shot, two_shot and ll_reduce for dtype and op (bool:
 * the caller passes an op that works on 0 and 1); -1 if out is too small
 * or the pair is not one the kernels do. */
int symmem__gpu_reduce_cu(symmem_dtype_t dtype, symmem_reduce_op_t op, char *out, size_t size);

/* The source of the byte movers move16, move8, move4, move2, move1 (by the
 * width they copy in) and of sync_only; -1 if out is too small. */
int symmem__gpu_move_cu(char *out, size_t size);

#endif

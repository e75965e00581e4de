/* symmem's own GPU programs, the CUDA and PTX files beside this header,
 * embedded at build time (tools/embed.py writes the strings, each with the
 * project headers it includes inlined), and which kernel of them a call
 * runs. The driver loads the PTX at init (start.c); NVRTC compiles the CUDA
 * at its first use (own_collectives.c, nvshmem_atomics.c). */
#ifndef SYMMEM_GPU_KERNELS_PROGRAMS_H
#define SYMMEM_GPU_KERNELS_PROGRAMS_H

#include <stddef.h>
#include <stdint.h>

#include "symmem/device_layout.h"
#include "symmem/symmem.h"

/* atomics.ptx: amo_<op>_<type>(target, value, cond, result). */
extern const char symmem__gpu_kernel_atomics_ptx[];
/* put_signal.ptx: put_signal_16, _8, _4 and _1 (the element width in bytes). */
extern const char symmem__gpu_kernel_put_signal_ptx[];
/* nvshmem_atomics.cu: atomics.ptx's kernels over NVSHMEM's device atomics,
 * for PEs on other nodes (one more parameter: the PE). */
extern const char symmem__gpu_kernel_nvshmem_atomics_cu[];
/* move.cu: move16, move8, move4, move2, move1 (by the width they copy in)
 * and sync_only. */
extern const char symmem__gpu_kernel_move_cu[];
/* reduce.cu, for the dtype and op its source defines. */
extern const char symmem__gpu_kernel_reduce_cu[];
/* signal_wait.cu: signal_wait, the symmem engine's wait on a stream. */
extern const char symmem__gpu_kernel_signal_wait_cu[];

/* The source of the kernels one_shot, two_shot and ll_reduce for dtype and
 * op (bool: the caller passes an op that works on 0 and 1): reduce.cu after
 * the two defines that pick its variant; -1 if out is too small or the pair
 * is not one the kernels do. */
int symmem__gpu_reduce_cu(symmem_dtype_t dtype, symmem_reduce_op_t op, char *out, size_t size);

/* The kernel of atomics.ptx (or nvshmem_atomics.cu) for op on dtype, in
 * name; may replace *value_p (inc adds 1, fetch ors 0). */
int symmem__gpu_atomic_kernel(symmem_atomic_op_t op, symmem_dtype_t dtype, char *name, size_t size,
                              uint64_t *value_p);

/* Bytes up to which one block copies and signals in one launch; above it
 * a grid of blocks copies and a second launch signals. */
#define GPU_PUT_SIGNAL_ONE_BLOCK_BYTES (128 << 10)
/* The widest element (16, 8, 4 or 1 bytes) of put_signal.ptx's kernels
 * that both addresses are aligned to and that nbytes holds at least one of. */
int symmem__gpu_put_signal_width(const void *dst, const void *src, size_t nbytes);

#endif

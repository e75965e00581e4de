/* The PTX kernels behind the gpu backend's put_signal within an NVLink domain. */
#ifndef SYMMEM_GPU_KERNELS_PUT_SIGNAL_H
#define SYMMEM_GPU_KERNELS_PUT_SIGNAL_H

#include <stddef.h>
#include <stdint.h>

/* Bytes up to which one block copies and signals in one launch; above it
 * a grid of blocks copies and a second launch signals. */
#define GPU_PUT_SIGNAL_ONE_BLOCK_BYTES (128 << 10)

/* The PTX module with the kernels put_signal_16, _8, _4 and _1 (the element
 * width in bytes); non-zero if out is too small. */
int symmem__gpu_put_signal_ptx(char *out, size_t size);
/* The widest element (16, 8, 4 or 1 bytes) that both addresses are aligned
 * to and that nbytes holds at least one of. */
int symmem__gpu_put_signal_width(const void *dst, const void *src, size_t nbytes);

#endif

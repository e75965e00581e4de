/* The device state block: what code running outside the library's calls
 * (njit functions on the cpu backend, GPU kernels) needs to reach the
 * symmetric heap by itself: who we are, where every PE's heap is mapped
 * here, and whether a peer died. One block per process at a fixed address
 * (a static), so compiled code may bake that address in as a constant; its
 * contents are valid while magic == SYMMEM_DEVICE_STATE_MAGIC (between init
 * and finalize). Everything is a fixed-size field, so the gpu backend can
 * copy the same struct into device memory (peer_base then pointing into that
 * copy). The layout is symmem/device_layout.h's, which device.cuh and the
 * gpu backend's kernels include too; it is exported to Python
 * (_symmem.DEVICE_STATE_LAYOUT, DEVICE_LAYOUT). */
#ifndef SYMMEM_CORE_DEVICE_STATE_H
#define SYMMEM_CORE_DEVICE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "symmem/device_layout.h" /* the block, its tables, the constant state */
#include "symmem/symmem.h"

/* The block itself; its address never changes. */
symmem_device_state_t *symmem__device_state(void);
/* Fills the block for the runtime that has just been initialised. */
symmem_status_t symmem__device_state_fill(void);
/* Marks the block invalid (magic 0) and frees its peer table; at finalize. */
void symmem__device_state_clear(void);
/* Marks the block invalid (magic 0) and frees nothing: in a child forked
 * after init (core/forked.h), which is no PE. */
void symmem__device_state_disown(void);
/* The same block for kernels on the backend's GPU: its device address, 0
 * on the cpu backend (whose njit code reads the block above). */
uint64_t symmem__device_state_gpu(void);
/* Whether [ptr, ptr + nbytes) overlaps a symmetric heap as this process maps
 * it: this PE's, or a peer's (the block's table); 0 outside init and for 0
 * bytes. For the extension: memory an object names there must be traced to
 * the allocation it was made over (src/extension/owner.h). */
int symmem__heap_mapped_at(const void *ptr, size_t nbytes);
/* Call after a store (release) by device code that a waiter on PE pe may be
 * watching: the backend wakes pe where its waits sleep (the cpu engine's
 * doorbell). Does nothing before init or for a pe out of range. */
void symmem__device_wake(int32_t pe);
/* Records that pe (or -1) died: later device waits end at once. */
void symmem__device_state_abort(int pe);

#endif

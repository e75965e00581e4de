/* The symmem engine's memory: CUDA VMM allocations that every PE of the
 * host maps into every other's address space.
 *
 * A window is one reservation of address space with a slot of slot_bytes
 * for each PE; PE p's memory is mapped into slot p of every PE's window at
 * the same offsets, so where PE p keeps a symmetric address here is the
 * address's offset in this PE's own slot, added to slot p's start:
 *
 *   window: | slot 0 | slot 1 | ... | slot n-1 |     (in every PE's process)
 *             PE 0's   PE 1's         PE n-1's memory
 *
 * The heap is a window whose memory grows: malloc commits more in chunks
 * (each PE makes one with cuMemCreate, exports it as a POSIX file
 * descriptor, hands it to every peer over the host mesh, and maps theirs),
 * up to slot_bytes (SYMMEM_SYMMETRIC_SIZE, else the GPU's memory). An
 * external window maps memory the program made (register_external) the
 * same way, once. */
#ifndef SYMMEM_GPU_VMM_HEAP_H
#define SYMMEM_GPU_VMM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "../../core/heap_alloc.h"
#include "cuda_vmm_abi.h"
#include "engine.h"

typedef struct {
    size_t offset, size;
} vmm_chunk_t;

typedef struct vmm_window {
    cu_deviceptr_t base; /* the reservation: n slots */
    size_t slot_bytes;   /* each PE's slot */
    size_t committed;    /* mapped from each slot's start, in every slot */
    int nchunks, room;   /* chunks mapped so far (the same in every slot) */
    vmm_chunk_t *chunks;
    struct vmm_window *next; /* external windows: the next one */
} vmm_window_t;

/* Where this PE's own slot of w starts. */
uintptr_t symmem__vmm_mine(const gpu_t *g, const vmm_window_t *w);
/* Where PE pe maps addr, an address in this PE's slot of w; 0 if addr is
 * outside the memory w maps. */
uintptr_t symmem__vmm_translate(const gpu_t *g, const vmm_window_t *w, uintptr_t addr, int pe);

/* Reserves the heap's window (slot_bytes a PE) and its allocator; nothing
 * is mapped yet. */
symmem_status_t symmem__vmm_heap_open(gpu_t *g, size_t slot_bytes);
/* Collective: size bytes at the same offset on every PE, committing more
 * memory where the heap needs it. */
symmem_status_t symmem__vmm_heap_alloc(gpu_t *g, const char *call, size_t size, size_t alignment,
                                       void **ptr_p);
/* Collective: the block at ptr is free again (its memory stays mapped). */
symmem_status_t symmem__vmm_heap_free(gpu_t *g, const char *call, void *ptr);
void symmem__vmm_heap_close(gpu_t *g);

/* Collective: maps every PE's allocation (handle, size bytes from its
 * start) into a new external window; *w_p is this PE's, whose own slot now
 * maps its memory a second time. handle 0: this PE has none to give (its
 * error is written); every PE fails then. */
symmem_status_t symmem__vmm_external_open(gpu_t *g, const char *call, cu_mem_handle_t handle,
                                          size_t size, vmm_window_t **w_p);
void symmem__vmm_external_close(gpu_t *g, vmm_window_t *w);

#endif

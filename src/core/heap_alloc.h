/* Offsets in a symmetric heap, the same on every PE (heap_alloc.c): every PE
 * runs the same sequence of collective allocations and frees. */
#ifndef SYMMEM_CORE_HEAP_ALLOC_H
#define SYMMEM_CORE_HEAP_ALLOC_H

#include <stddef.h>

#include "symmem/symmem.h"

typedef struct symmem_heap_allocator symmem_heap_allocator_t;

symmem_heap_allocator_t *symmem__heap_allocator_create(size_t heap_size);
void symmem__heap_allocator_destroy(symmem_heap_allocator_t *a);
/* alignment: 0 or a power of two; the offset returned is a multiple of it
 * (and always of the allocator's own 256 bytes). SYMMEM_ERR_NO_MEMORY if no
 * free block fits. */
symmem_status_t symmem__heap_allocator_alloc(symmem_heap_allocator_t *a, size_t size,
                                             size_t alignment, size_t *offset_p);
/* Returns the block's size, 0 if offset is not a live block. */
size_t symmem__heap_allocator_free(symmem_heap_allocator_t *a, size_t offset);
size_t symmem__heap_allocator_largest_free(const symmem_heap_allocator_t *a);

#endif

/* The live symmetric allocations of this PE, for argument checks: every
 * address handed to an operation must lie inside one of them. */
#ifndef SYMMEM_CORE_REGISTRY_H
#define SYMMEM_CORE_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "symmem/symmem.h"

typedef struct {
    uintptr_t start;
    size_t size;
    int external; /* registered with register_external, not malloc'd */
} symmem_allocation_t;

typedef struct {
    symmem_allocation_t *items; /* sorted by start, non-overlapping */
    size_t count;
    size_t capacity;
} symmem_registry_t;

symmem_status_t symmem__registry_add(symmem_registry_t *reg, void *start, size_t size,
                                     int external);
/* Removes the allocation starting at start; SYMMEM_ERR_NOT_SYMMETRIC if none. */
symmem_status_t symmem__registry_remove(symmem_registry_t *reg, void *start);
/* The allocation containing address, or NULL. */
const symmem_allocation_t *symmem__registry_find(const symmem_registry_t *reg,
                                                 uintptr_t address);
void symmem__registry_clear(symmem_registry_t *reg);

#endif

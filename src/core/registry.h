/* The live symmetric allocations of this PE, for argument checks: every
 * address handed to an operation must lie inside one of them.
 *
 * Each allocation gets a generation: a process-wide number, never reused,
 * that tells it from a later allocation at the same address (a freed block
 * is handed out again). Whoever holds an allocation (the extension's Buffer)
 * records its generation; finalize retires every generation handed out so
 * far, so an object kept across finalize and a new init never matches. */
#ifndef SYMMEM_CORE_REGISTRY_H
#define SYMMEM_CORE_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "symmem/symmem.h"

typedef struct {
    uintptr_t start;
    size_t size;
    int external;        /* registered with register_external, not malloc'd */
    uint64_t generation; /* > 0, unique for the life of the process */
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
const symmem_allocation_t *symmem__registry_find(const symmem_registry_t *reg, uintptr_t address);
/* A generation for an allocation with no address (size 0, which the
 * registry does not hold): never reused, and retired by the next finalize
 * like the others. */
uint64_t symmem__registry_new_generation(void);
/* Forgets every allocation and retires their generations (finalize). */
void symmem__registry_clear(symmem_registry_t *reg);
/* Generations below this one were retired by a finalize; an allocation
 * whose generation is at least this may still be live. A variable, not a
 * function: the extension compares against it for every argument of every
 * call. Written only by symmem__registry_clear. */
extern uint64_t symmem__registry_first_live;

#endif

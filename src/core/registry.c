#include "registry.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

/* Process-wide, so that no two allocations ever share a generation, across
 * finalize and a later init too. */
static uint64_t last_generation;
uint64_t symmem__registry_first_live = 1;

/* Index of the first allocation whose start is > address. */
static size_t upper_bound(const symmem_registry_t *reg, uintptr_t address)
{
    size_t lo = 0, hi = reg->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (reg->items[mid].start <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

symmem_status_t symmem__registry_add(symmem_registry_t *reg, void *start, size_t size, int external)
{
    if (reg->count == reg->capacity) {
        size_t capacity = reg->capacity ? reg->capacity * 2 : 64;
        symmem_allocation_t *items = realloc(reg->items, capacity * sizeof(*items));
        if (items == NULL) return symmem__error(SYMMEM_ERR_NO_MEMORY, "malloc: out of host memory");
        reg->items = items;
        reg->capacity = capacity;
    }
    size_t at = upper_bound(reg, (uintptr_t)start);
    memmove(&reg->items[at + 1], &reg->items[at], (reg->count - at) * sizeof(*reg->items));
    reg->items[at] = (symmem_allocation_t){(uintptr_t)start, size, external, ++last_generation};
    reg->count++;
    return SYMMEM_OK;
}

const symmem_allocation_t *symmem__registry_find(const symmem_registry_t *reg, uintptr_t address)
{
    size_t at = upper_bound(reg, address);
    if (at == 0) return NULL;
    const symmem_allocation_t *a = &reg->items[at - 1];
    return address - a->start < a->size ? a : NULL;
}

symmem_status_t symmem__registry_remove(symmem_registry_t *reg, void *start)
{
    const symmem_allocation_t *a = symmem__registry_find(reg, (uintptr_t)start);
    if (a == NULL || a->start != (uintptr_t)start) return SYMMEM_ERR_NOT_SYMMETRIC;
    size_t at = (size_t)(a - reg->items);
    memmove(&reg->items[at], &reg->items[at + 1], (reg->count - at - 1) * sizeof(*reg->items));
    reg->count--;
    return SYMMEM_OK;
}

uint64_t symmem__registry_new_generation(void)
{
    return ++last_generation;
}

void symmem__registry_clear(symmem_registry_t *reg)
{
    free(reg->items);
    memset(reg, 0, sizeof(*reg));
    symmem__registry_first_live = last_generation + 1;
}

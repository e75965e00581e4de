/* Offsets in the symmetric heap. Every PE runs the same sequence of
 * collective allocations and frees, so every PE computes the same offsets.
 * Shared by the backends (the cpu engine; the mpi backend compiles it into
 * its own shared object). */
#include <stdlib.h>
#include <string.h>

#include "heap_alloc.h"

#define ALIGNMENT 256 /* enough for any dtype and for vector copies */

typedef struct {
    size_t offset;
    size_t size;
} block_t;

/* A sorted array of blocks. */
typedef struct {
    block_t *items;
    size_t count;
    size_t capacity;
} block_list_t;

struct symmem_heap_allocator {
    block_list_t free_blocks; /* sorted by offset, coalesced */
    block_list_t live_blocks; /* sorted by offset */
};

static int list_insert(block_list_t *list, size_t at, block_t block)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 32;
        block_t *items = realloc(list->items, capacity * sizeof(*items));
        if (items == NULL) return -1;
        list->items = items;
        list->capacity = capacity;
    }
    memmove(&list->items[at + 1], &list->items[at], (list->count - at) * sizeof(block_t));
    list->items[at] = block;
    list->count++;
    return 0;
}

static void list_remove(block_list_t *list, size_t at)
{
    memmove(&list->items[at], &list->items[at + 1], (list->count - at - 1) * sizeof(block_t));
    list->count--;
}

/* First index whose offset is >= offset. */
static size_t list_lower_bound(const block_list_t *list, size_t offset)
{
    size_t lo = 0, hi = list->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (list->items[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

symmem_heap_allocator_t *symmem__heap_allocator_create(size_t heap_size)
{
    symmem_heap_allocator_t *a = calloc(1, sizeof(*a));
    if (a == NULL) return NULL;
    if (list_insert(&a->free_blocks, 0, (block_t){0, heap_size / ALIGNMENT * ALIGNMENT}) != 0) {
        free(a);
        return NULL;
    }
    return a;
}

void symmem__heap_allocator_destroy(symmem_heap_allocator_t *a)
{
    if (a == NULL) return;
    free(a->free_blocks.items);
    free(a->live_blocks.items);
    free(a);
}

symmem_status_t symmem__heap_allocator_alloc(symmem_heap_allocator_t *a, size_t size,
                                             size_t alignment, size_t *offset_p)
{
    if (alignment < ALIGNMENT) alignment = ALIGNMENT;
    if (size > SIZE_MAX - ALIGNMENT) return SYMMEM_ERR_NO_MEMORY;
    size_t need = (size + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    for (size_t i = 0; i < a->free_blocks.count; i++) {
        block_t *b = &a->free_blocks.items[i];
        /* the gap before an aligned start stays a free block of its own */
        size_t offset = (b->offset + alignment - 1) & ~(alignment - 1), gap = offset - b->offset;
        if (b->size < gap || b->size - gap < need) continue;
        size_t at = list_lower_bound(&a->live_blocks, offset);
        if (list_insert(&a->live_blocks, at, (block_t){offset, need}) != 0)
            return SYMMEM_ERR_NO_MEMORY;
        block_t after = {offset + need, b->size - gap - need};
        if (gap == 0) {
            *b = after;
            if (b->size == 0) list_remove(&a->free_blocks, i);
        } else {
            b->size = gap;
            if (after.size != 0 && list_insert(&a->free_blocks, i + 1, after) != 0) {
                list_remove(&a->live_blocks, at);
                b->size = gap + need + after.size;
                return SYMMEM_ERR_NO_MEMORY;
            }
        }
        *offset_p = offset;
        return SYMMEM_OK;
    }
    return SYMMEM_ERR_NO_MEMORY;
}

size_t symmem__heap_allocator_free(symmem_heap_allocator_t *a, size_t offset)
{
    size_t at = list_lower_bound(&a->live_blocks, offset);
    if (at == a->live_blocks.count || a->live_blocks.items[at].offset != offset) return 0;
    block_t block = a->live_blocks.items[at];
    list_remove(&a->live_blocks, at);

    block_list_t *fl = &a->free_blocks;
    size_t i = list_lower_bound(fl, offset);
    int joins_prev = i > 0 && fl->items[i - 1].offset + fl->items[i - 1].size == offset;
    int joins_next = i < fl->count && offset + block.size == fl->items[i].offset;
    if (joins_prev && joins_next) {
        fl->items[i - 1].size += block.size + fl->items[i].size;
        list_remove(fl, i);
    } else if (joins_prev) {
        fl->items[i - 1].size += block.size;
    } else if (joins_next) {
        fl->items[i].offset = offset;
        fl->items[i].size += block.size;
    } else if (list_insert(fl, i, block) != 0) {
        return block.size; /* out of host memory: the block is lost, not reused */
    }
    return block.size;
}

size_t symmem__heap_allocator_largest_free(const symmem_heap_allocator_t *a)
{
    size_t largest = 0;
    for (size_t i = 0; i < a->free_blocks.count; i++)
        if (a->free_blocks.items[i].size > largest) largest = a->free_blocks.items[i].size;
    return largest;
}

/* The symmem engine's windows of CUDA VMM memory, mapped by every PE of the
 * host at the same offsets: vmm_heap.h. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "symmem_engine.h"

#define SLOT_ALIGNMENT ((size_t)1 << 30) /* every slot starts at a 1 GiB boundary */
#define MIN_GROWTH ((size_t)32 << 20)    /* the heap commits at least this much at a time */
#define EXTERNAL_KEY (1ULL << 62)        /* mesh keys of external windows' descriptors */

static size_t round_up(size_t n, size_t unit)
{
    return (n + unit - 1) / unit * unit;
}

uintptr_t symmem__vmm_mine(const gpu_t *g, const vmm_window_t *w)
{
    return w->base + (size_t)g->boot.rank * w->slot_bytes;
}

uintptr_t symmem__vmm_translate(const gpu_t *g, const vmm_window_t *w, uintptr_t addr, int pe)
{
    uintptr_t mine = symmem__vmm_mine(g, w);
    if (addr < mine || addr - mine >= w->committed) return 0;
    return w->base + (size_t)pe * w->slot_bytes + (addr - mine);
}

/* ---- mapping ---- */

/* Maps handle's first size bytes at at, readable and writable by this PE's GPU. */
static cu_result_t map_at(gpu_t *g, cu_deviceptr_t at, size_t size, cu_mem_handle_t handle)
{
    cu_result_t rc = libs.cuMemMap(at, size, 0, handle, 0);
    if (rc != 0) return rc;
    cu_mem_access_t access = {{CU_MEM_LOCATION_TYPE_DEVICE, g->device},
                              CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    rc = libs.cuMemSetAccess(at, size, &access, 1);
    if (rc != 0) libs.cuMemUnmap(at, size);
    return rc;
}

/* Unmaps [offset, offset + size) of every slot where mapped[pe] says it is. */
static void unmap_chunk(gpu_t *g, vmm_window_t *w, size_t offset, size_t size, const char *mapped)
{
    for (int pe = 0; pe < g->boot.nranks; pe++)
        if (mapped[pe]) libs.cuMemUnmap(w->base + (size_t)pe * w->slot_bytes + offset, size);
}

/* This PE's part of a chunk: its memory mapped into its own slot and
 * exported; *fd_p -1 where it failed (its error written). */
static symmem_status_t map_mine(gpu_t *g, const char *call, vmm_window_t *w, size_t offset,
                                size_t size, cu_mem_handle_t mine, int *fd_p)
{
    *fd_p = -1;
    cu_result_t rc = map_at(g, symmem__vmm_mine(g, w) + offset, size, mine);
    if (rc != 0) return symmem__gpu_cuda_error(call, "mapping the symmetric memory", rc);
    int fd = -1;
    rc = libs.cuMemExportToShareableHandle(&fd, mine, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (rc != 0) {
        libs.cuMemUnmap(symmem__vmm_mine(g, w) + offset, size);
        return symmem__gpu_cuda_error(call, "exporting the symmetric memory to the other PEs", rc);
    }
    *fd_p = fd;
    return SYMMEM_OK;
}

/* A peer's part: its memory, from the descriptor it sent, mapped into its slot. */
static symmem_status_t map_theirs(gpu_t *g, const char *call, vmm_window_t *w, int pe,
                                  size_t offset, size_t size, int fd)
{
    cu_mem_handle_t handle = 0;
    cu_result_t rc = libs.cuMemImportFromShareableHandle(&handle, (void *)(uintptr_t)fd,
                                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (rc != 0) return symmem__gpu_cuda_error(call, "importing a peer's symmetric memory", rc);
    rc = map_at(g, w->base + (size_t)pe * w->slot_bytes + offset, size, handle);
    libs.cuMemRelease(handle); /* the mapping holds it */
    if (rc != 0)
        return ERROR(SYMMEM_ERR_BACKEND,
                     "%s: cannot map PE %d's symmetric memory into cuda:%d (CUDA error %d): its "
                     "GPU must be this one or one this GPU reaches by peer access",
                     call, pe, g->device, rc);
    return SYMMEM_OK;
}

/* Collective over the world: [offset, offset + size) of every slot of w
 * maps its PE's memory (mine: this PE's, 0 where it could not make it, or
 * w not reserved: its error written). On any PE's failure, every PE unmaps
 * what it mapped of the chunk and fails. */
static symmem_status_t share_chunk(gpu_t *g, const char *call, vmm_window_t *w, uint64_t key,
                                   size_t offset, size_t size, cu_mem_handle_t mine)
{
    symmem_engine_state_t *s = g->sym;
    int n = g->boot.nranks, me = g->boot.rank, fd = -1, first_failed = -1;
    char mapped[n];
    memset(mapped, 0, sizeof(mapped));
    /* no memory, or no window to map it in: this PE takes part, and fails */
    symmem_status_t status = mine != 0 && w->base != 0
                                 ? map_mine(g, call, w, offset, size, mine, &fd)
                                 : SYMMEM_ERR_NO_MEMORY;
    mapped[me] = status == SYMMEM_OK;
    sym_wait_t wait;
    symmem__sym_wait_start(&wait, g, call, "every PE to share its part of the symmetric memory", 0);
    int rc = 0;
    for (int pe = 0; pe < n && rc == 0; pe++) {
        if (pe == me) continue;
        mesh_msg_t msg = {.kind = MESH_HEAP_FD,
                          .key = key,
                          .value = {(int64_t)offset, (int64_t)size, fd >= 0 ? 0 : -1}};
        rc = symmem__mesh_send(&s->mesh, pe, &msg, fd, &wait.mesh);
    }
    for (int pe = 0; pe < n && rc == 0; pe++) {
        if (pe == me) continue;
        mesh_msg_t msg;
        int theirs = -1;
        rc = symmem__mesh_recv(&s->mesh, pe, MESH_HEAP_FD, key, &msg, &theirs, &wait.mesh);
        if (rc != 0) break;
        if (theirs < 0 || msg.value[2] != 0 || msg.value[0] != (int64_t)offset ||
            msg.value[1] != (int64_t)size) {
            if (first_failed < 0) first_failed = pe;
        } else if (status == SYMMEM_OK) {
            status = map_theirs(g, call, w, pe, offset, size, theirs);
            mapped[pe] = status == SYMMEM_OK;
        }
        if (theirs >= 0) close(theirs);
    }
    if (fd >= 0) close(fd);
    if (rc != 0) status = symmem__sym_mesh_failed(g, &wait, rc);
    /* every PE learns whether every PE has mapped everything */
    int64_t oks[n];
    if (rc == 0) {
        symmem_status_t agreed = symmem__sym_allgather(
            g, call, g->world, n, status == SYMMEM_OK && first_failed < 0, oks);
        for (int pe = 0; agreed == SYMMEM_OK && pe < n; pe++)
            if (!oks[pe] && first_failed < 0 && pe != me) first_failed = pe;
        if (agreed != SYMMEM_OK) status = agreed;
    }
    if (status == SYMMEM_OK && first_failed >= 0)
        status = ERROR(SYMMEM_ERR_NO_MEMORY,
                       "%s: PE %d could not make or map its part of the symmetric memory (%zu "
                       "bytes; its error says why)",
                       call, first_failed, size);
    if (status != SYMMEM_OK) {
        unmap_chunk(g, w, offset, size, mapped);
        return status;
    }
    if (w->nchunks == w->room) {
        int room = w->room ? 2 * w->room : 8;
        vmm_chunk_t *chunks = realloc(w->chunks, sizeof(*chunks) * (size_t)room);
        if (chunks == NULL) { /* every PE maps it, but one cannot remember it: unmapped at exit */
            return ERROR(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
        }
        w->chunks = chunks;
        w->room = room;
    }
    w->chunks[w->nchunks++] = (vmm_chunk_t){offset, size};
    w->committed = offset + size;
    return SYMMEM_OK;
}

/* ---- windows ---- */

static symmem_status_t reserve(gpu_t *g, const char *call, vmm_window_t *w, size_t slot_bytes,
                               size_t alignment)
{
    memset(w, 0, sizeof(*w));
    size_t n = (size_t)g->boot.nranks;
    cu_result_t rc = libs.cuMemAddressReserve(&w->base, slot_bytes * n, alignment, 0, 0);
    if (rc != 0 && alignment > g->sym->granule)
        rc = libs.cuMemAddressReserve(&w->base, slot_bytes * n, g->sym->granule, 0, 0);
    if (rc != 0)
        return ERROR(SYMMEM_ERR_NO_MEMORY,
                     "%s: cannot reserve %zu bytes of address space (%zu PEs x %zu bytes; "
                     "SYMMEM_SYMMETRIC_SIZE sets the second for the heap): CUDA error %d",
                     call, slot_bytes * n, n, slot_bytes, rc);
    w->slot_bytes = slot_bytes;
    return SYMMEM_OK;
}

static void unreserve(gpu_t *g, vmm_window_t *w)
{
    char all[g->boot.nranks];
    memset(all, 1, sizeof(all));
    for (int k = 0; k < w->nchunks; k++)
        unmap_chunk(g, w, w->chunks[k].offset, w->chunks[k].size, all);
    if (w->base != 0) libs.cuMemAddressFree(w->base, w->slot_bytes * (size_t)g->boot.nranks);
    free(w->chunks);
    memset(w, 0, sizeof(*w));
}

/* ---- the heap ---- */

symmem_status_t symmem__vmm_heap_open(gpu_t *g, size_t slot_bytes)
{
    symmem_engine_state_t *s = g->sym;
    cu_mem_prop_t prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                          .requested_handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                          .location = {CU_MEM_LOCATION_TYPE_DEVICE, g->device}};
    CU("init", libs.cuMemGetAllocationGranularity(&s->granule, &prop,
                                                  CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    if (s->granule == 0 || SLOT_ALIGNMENT % s->granule != 0)
        return ERROR(SYMMEM_ERR_BACKEND,
                     "init: cuda:%d's VMM granularity %zu bytes is not a "
                     "power of two up to 1 GiB",
                     g->device, s->granule);
    slot_bytes = round_up(slot_bytes, SLOT_ALIGNMENT);
    SYMMEM_CHECK(reserve(g, "init", &s->heap, slot_bytes, SLOT_ALIGNMENT));
    s->alloc = symmem__heap_allocator_create(slot_bytes);
    if (s->alloc == NULL) {
        unreserve(g, &s->heap);
        return ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    }
    g->heap_lo = g->heap_hi = symmem__vmm_mine(g, &s->heap);
    return SYMMEM_OK;
}

/* Collective: commits memory in every slot up to at least end (the same on
 * every PE, as the allocator's offsets are), half as much again as the heap
 * has where that is more, so that a heap grows in few chunks. */
static symmem_status_t grow(gpu_t *g, const char *call, size_t end)
{
    symmem_engine_state_t *s = g->sym;
    vmm_window_t *w = &s->heap;
    size_t target = w->committed + w->committed / 2;
    if (target < end) target = end;
    if (target < w->committed + MIN_GROWTH) target = w->committed + MIN_GROWTH;
    target = round_up(target, s->granule);
    if (target > w->slot_bytes) target = w->slot_bytes; /* end fits: the allocator's limit */
    size_t size = target - w->committed;
    cu_mem_handle_t mine = 0;
    cu_mem_prop_t prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                          .requested_handle_types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                          .location = {CU_MEM_LOCATION_TYPE_DEVICE, g->device}};
    cu_result_t rc = libs.cuMemCreate(&mine, size, &prop, 0);
    if (rc == CU_ERROR_OUT_OF_MEMORY)
        ERROR(SYMMEM_ERR_NO_MEMORY,
              "%s: cuda:%d has no room for %zu more bytes of symmetric heap (cuMemCreate: out "
              "of memory; the heap has %zu)",
              call, g->device, size, w->committed);
    else if (rc != 0)
        symmem__gpu_cuda_error(call, "cuMemCreate for the symmetric heap", rc);
    if (rc != 0) mine = 0;
    symmem_status_t status =
        share_chunk(g, call, w, (uint64_t)w->nchunks, w->committed, size, mine);
    if (mine != 0) libs.cuMemRelease(mine); /* the mappings hold it */
    if (status == SYMMEM_OK) g->heap_hi = symmem__vmm_mine(g, w) + w->committed;
    return status;
}

symmem_status_t symmem__vmm_heap_alloc(gpu_t *g, const char *call, size_t size, size_t alignment,
                                       void **ptr_p)
{
    symmem_engine_state_t *s = g->sym;
    size_t offset = 0;
    if (symmem__heap_allocator_alloc(s->alloc, size, alignment, &offset) != SYMMEM_OK)
        return ERROR(SYMMEM_ERR_NO_MEMORY,
                     "%s: the symmetric heap has no room for %zu bytes (the largest free block "
                     "has %zu of its %zu; SYMMEM_SYMMETRIC_SIZE sets its size)",
                     call, size, symmem__heap_allocator_largest_free(s->alloc), s->heap.slot_bytes);
    if (offset + size > s->heap.committed) {
        symmem_status_t status = grow(g, call, offset + size);
        if (status != SYMMEM_OK) {
            symmem__heap_allocator_free(s->alloc, offset);
            return status;
        }
    }
    *ptr_p = (void *)(symmem__vmm_mine(g, &s->heap) + offset);
    return SYMMEM_OK;
}

symmem_status_t symmem__vmm_heap_free(gpu_t *g, const char *call, void *ptr)
{
    symmem_engine_state_t *s = g->sym;
    size_t offset = (uintptr_t)ptr - symmem__vmm_mine(g, &s->heap);
    if (symmem__heap_allocator_free(s->alloc, offset) == 0)
        return ERROR(SYMMEM_ERR_INVALID, "%s: %p is not a live block of the symmetric heap", call,
                     ptr);
    return SYMMEM_OK;
}

void symmem__vmm_heap_close(gpu_t *g)
{
    symmem_engine_state_t *s = g->sym;
    unreserve(g, &s->heap);
    symmem__heap_allocator_destroy(s->alloc);
    s->alloc = NULL;
}

/* ---- external windows ---- */

symmem_status_t symmem__vmm_external_open(gpu_t *g, const char *call, cu_mem_handle_t handle,
                                          size_t size, vmm_window_t **w_p)
{
    symmem_engine_state_t *s = g->sym;
    vmm_window_t *w = calloc(1, sizeof(*w));
    if (w == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    /* every PE reserves, whatever its own memory: the sharing that follows
     * is collective */
    symmem_status_t status = reserve(g, call, w, round_up(size, s->granule), s->granule);
    uint64_t key = EXTERNAL_KEY | s->registrations++;
    symmem_status_t shared = share_chunk(g, call, w, key, 0, size, handle);
    if (status == SYMMEM_OK) status = shared;
    if (status != SYMMEM_OK) {
        unreserve(g, w);
        free(w);
        return status;
    }
    w->next = s->externals;
    s->externals = w;
    *w_p = w;
    return SYMMEM_OK;
}

void symmem__vmm_external_close(gpu_t *g, vmm_window_t *w)
{
    symmem_engine_state_t *s = g->sym;
    for (vmm_window_t **at = &s->externals; *at != NULL; at = &(*at)->next)
        if (*at == w) {
            *at = w->next;
            break;
        }
    unreserve(g, w);
    free(w);
}

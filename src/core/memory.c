/* Symmetric memory: collective malloc and free, peer addresses, and the
 * lookup of the allocation an address falls in (and its generation). */
#include "checks.h"
#include "error.h"
#include "state.h"

/* alignment 0: the backend's own (enough for any dtype and vector copies) */
static symmem_status_t allocate(const char *call, size_t size, size_t alignment, void **ptr_p)
{
    SYMMEM_CHECK(symmem__check_initialized(call));
    if (ptr_p == NULL) return symmem__error(SYMMEM_ERR_INVALID, "%s: ptr_p is NULL", call);
    void *ptr = NULL;
    SYMMEM_CHECK(symmem__rt.ops->malloc(symmem__rt.be, size, alignment, &ptr));
    if (ptr != NULL) {
        symmem_status_t status = symmem__registry_add(&symmem__rt.registry, ptr, size, 0);
        if (status != SYMMEM_OK) return status;
    }
    *ptr_p = ptr;
    return SYMMEM_OK;
}

symmem_status_t symmem_malloc(size_t size, void **ptr_p)
{
    return allocate("malloc", size, 0, ptr_p);
}

symmem_status_t symmem_align(size_t alignment, size_t size, void **ptr_p)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        return symmem__error(SYMMEM_ERR_INVALID, "align: alignment=%zu is not a power of two",
                             alignment);
    return allocate("align", size, alignment, ptr_p);
}

symmem_status_t symmem_free(void *ptr)
{
    SYMMEM_CHECK(symmem__check_initialized("free"));
    if (ptr == NULL) return SYMMEM_OK;
    const symmem_allocation_t *a = symmem__registry_find(&symmem__rt.registry, (uintptr_t)ptr);
    if (a == NULL)
        return symmem__error(SYMMEM_ERR_NOT_SYMMETRIC,
                             "free: %p is not a live symmetric allocation (freed twice, "
                             "or not allocated by symmem)",
                             ptr);
    if (a->start != (uintptr_t)ptr)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "free: %p is %zu bytes inside the allocation at %p; pass its "
                             "start",
                             ptr, (size_t)((uintptr_t)ptr - a->start), (void *)a->start);
    if (a->external)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "free: %p is external memory made symmetric by register_external; "
                             "unregister it with unregister_external instead",
                             ptr);
    SYMMEM_CHECK(symmem__rt.ops->free(symmem__rt.be, ptr));
    return symmem__registry_remove(&symmem__rt.registry, ptr);
}

void *symmem_ptr(const void *ptr, int pe)
{
    if (!symmem__rt.initialized || pe < 0 || pe >= symmem__rt.n_pes) return NULL;
    if (symmem__registry_find(&symmem__rt.registry, (uintptr_t)ptr) == NULL) return NULL;
    return symmem__rt.ops->ptr(symmem__rt.be, ptr, pe);
}

symmem_status_t symmem_find_allocation(const void *ptr, size_t nbytes, void **start_p,
                                       size_t *size_p)
{
    SYMMEM_CHECK(symmem__check_initialized("find_allocation"));
    SYMMEM_CHECK(symmem__check_symmetric("find_allocation", "ptr", ptr, nbytes));
    const symmem_allocation_t *a = symmem__registry_find(&symmem__rt.registry, (uintptr_t)ptr);
    *start_p = (void *)a->start;
    *size_p = a->size;
    return SYMMEM_OK;
}

uint64_t symmem__allocation_generation(const void *start)
{
    if (!symmem__rt.initialized) return 0;
    const symmem_allocation_t *a = symmem__registry_find(&symmem__rt.registry, (uintptr_t)start);
    return a != NULL && a->start == (uintptr_t)start ? a->generation : 0;
}

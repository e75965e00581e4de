/* External memory made symmetric: the caller keeps owning it, symmem only
 * names it on every PE until it is unregistered. */
#include "error.h"
#include "checks.h"
#include "state.h"

symmem_status_t symmem_register_external(void *ptr, size_t size, void **sym_p)
{
    const char *call = "register_external";
    SYMMEM_CHECK(symmem__check_initialized(call));
    if (sym_p == NULL) return symmem__error(SYMMEM_ERR_INVALID, "%s: sym_p is NULL", call);
    if (ptr == NULL || size == 0)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: ptr=%p, size=%zu: nothing to register", call,
                             ptr, size);
    if (symmem__registry_find(&symmem__rt.registry, (uintptr_t)ptr) != NULL)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: %p is already symmetric memory; register only memory from "
                             "outside symmem",
                             call, ptr);
    void *sym = NULL;
    SYMMEM_CHECK(symmem__rt.ops->register_external(symmem__rt.be, ptr, size, &sym));
    symmem_status_t status = symmem__registry_add(&symmem__rt.registry, sym, size, 1);
    if (status != SYMMEM_OK) {
        symmem__rt.ops->unregister_external(symmem__rt.be, sym, size);
        return status;
    }
    *sym_p = sym;
    return SYMMEM_OK;
}

symmem_status_t symmem_unregister_external(void *sym)
{
    const char *call = "unregister_external";
    SYMMEM_CHECK(symmem__check_initialized(call));
    const symmem_allocation_t *a = symmem__registry_find(&symmem__rt.registry, (uintptr_t)sym);
    if (a == NULL || a->start != (uintptr_t)sym || !a->external)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: %p is not memory returned by register_external (unregistered "
                             "twice, or allocated by malloc: free that instead)",
                             call, sym);
    SYMMEM_CHECK(symmem__rt.ops->unregister_external(symmem__rt.be, sym, a->size));
    return symmem__registry_remove(&symmem__rt.registry, sym);
}

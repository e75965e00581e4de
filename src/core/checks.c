/* The argument checks of checks.h. */
#include "checks.h"

#include "error.h"
#include "forked.h"
#include "state.h"

symmem_status_t symmem__check_initialized(const char *call)
{
    if (symmem__rt.initialized) return SYMMEM_OK;
    SYMMEM_CHECK(symmem__check_not_forked(call)); /* a forked child reads as not initialised */
    return symmem__error(SYMMEM_ERR_NOT_INITIALIZED,
                         "%s: symmem is not initialized (call init() first)", call);
}

const char *symmem__pe_range_hint(void)
{
    /* a program started without a launcher is a world of one PE */
    return symmem__rt.n_pes == 1 ? " (this is a world of 1 PE: start N PEs with python -m "
                                   "symmem.run -n N prog.py)"
                                 : "";
}

symmem_status_t symmem__check_pe(const char *call, const char *arg, int pe)
{
    if (pe >= 0 && pe < symmem__rt.n_pes) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_INVALID, "%s: %s=%d is outside [0, %d)%s", call, arg, pe,
                         symmem__rt.n_pes, symmem__pe_range_hint());
}

symmem_status_t symmem__check_symmetric(const char *call, const char *arg, const void *ptr,
                                        size_t nbytes)
{
    uintptr_t address = (uintptr_t)ptr;
    const symmem_allocation_t *a = symmem__registry_find(&symmem__rt.registry, address);
    if (a == NULL)
        return symmem__error(SYMMEM_ERR_NOT_SYMMETRIC,
                             "%s: %s [%p, +%zu) is not on the symmetric heap (not "
                             "allocated by symmem, or already freed)",
                             call, arg, ptr, nbytes);
    if (nbytes > a->size - (address - a->start))
        return symmem__error(SYMMEM_ERR_NOT_SYMMETRIC,
                             "%s: %s [%p, +%zu) runs %zu bytes past the end of its "
                             "symmetric allocation [%p, +%zu)",
                             call, arg, ptr, nbytes, nbytes - (a->size - (address - a->start)),
                             (void *)a->start, a->size);
    return SYMMEM_OK;
}

symmem_status_t symmem__check_private(const char *call, const char *arg, const void *ptr,
                                      size_t nbytes)
{
    uintptr_t start, address = (uintptr_t)ptr;
    size_t size;
    symmem__rt.ops->heap_range(symmem__rt.be, &start, &size);
    if (address + nbytes <= start || address >= start + size) return SYMMEM_OK;
    /* Inside our heap: only live allocations may be read or written. */
    const symmem_allocation_t *a = symmem__registry_find(&symmem__rt.registry, address);
    if (a != NULL && nbytes <= a->size - (address - a->start)) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_NOT_SYMMETRIC,
                         "%s: %s [%p, +%zu) lies in this PE's symmetric heap outside any live "
                         "allocation (its memory was freed)",
                         call, arg, ptr, nbytes);
}

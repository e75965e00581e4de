#include "interrupt.h"

#include <stdatomic.h>

#include "error.h"

/* Set once at the extension's import, read by waiting threads: relaxed is
 * enough, a wait that misses a new check sees it at its next poll. */
static _Atomic(symmem_interrupt_check_func_t) installed;

void symmem__interrupt_set_check(symmem_interrupt_check_func_t check)
{
    atomic_store_explicit(&installed, check, memory_order_relaxed);
}

symmem_status_t symmem__interrupted(const char *call)
{
    symmem_interrupt_check_func_t check = atomic_load_explicit(&installed, memory_order_relaxed);
    if (check == NULL || !check()) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_INTERRUPTED, "%s: interrupted by a signal while waiting", call);
}

/* module_init and friends through the running backend's cuda_module slot. */
#include "cuda_module.h"

#include "error.h"
#include "state.h"

symmem_status_t symmem__cuda_module(int library, uint64_t handle, int op, int *links_p)
{
    *links_p = 0;
    if (!symmem__rt.initialized)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: symmem is not initialized (call "
                             "symmem.init() first)",
                             library ? "library_init" : "module_init");
    return symmem__rt.ops->cuda_module(symmem__rt.be, library, handle, op, links_p);
}

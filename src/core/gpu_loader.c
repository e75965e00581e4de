/* Loads the gpu backend, its own shared object, on first use. Its path comes
 * from SYMMEM_GPU_BACKEND_LIB (the Python package sets it to the library it
 * ships); any failure leaves a reason and the cpu engine still works. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "env.h"
#include "env_check.h"
#include "error.h"
#include "interrupt.h"
#include "peer_status.h"
#include "gpu_loader.h"

static const symmem_core_services_t services = {
    .version = SYMMEM_CORE_SERVICES_VERSION,
    .error = symmem__error,
    .last_error = symmem_last_error,
    .process_start_time = symmem__process_start_time,
    .process_gone = symmem__process_gone,
    .exit_report = symmem__exit_report,
    .env_string = symmem__env_string,
    .env_is_set = symmem__env_is_set,
    .env_size = symmem__env_size,
    .env_choice = symmem__env_choice,
    .interrupted = symmem__interrupted,
    .calls_group = symmem__calls_group,
    .call_describe = symmem__call_describe,
};

const symmem_backend_ops_t *symmem__gpu_backend(const char **why_p)
{
    static int tried;
    static const symmem_backend_ops_t *ops;
    static char why[1024];
    if (!tried) {
        tried = 1;
        const char *path = symmem__env_string("SYMMEM_GPU_BACKEND_LIB");
        void *lib = NULL;
        symmem_backend_open_func_t open_backend = NULL;
        if (path == NULL || path[0] == '\0')
            snprintf(why, sizeof(why), "SYMMEM_GPU_BACKEND_LIB is not set (the symmem Python "
                                       "package sets it to its libsymmem_gpu)");
        else if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
            snprintf(why, sizeof(why), "cannot load the gpu backend %s: %s", path, dlerror());
        else if ((open_backend = (symmem_backend_open_func_t)dlsym(
                      lib, SYMMEM_GPU_BACKEND_ENTRY)) == NULL)
            snprintf(why, sizeof(why), "%s has no %s", path, SYMMEM_GPU_BACKEND_ENTRY);
        else if (open_backend(&services, &ops, why, sizeof(why)) != 0)
            ops = NULL;
        if (ops != NULL && ops->version != SYMMEM_BACKEND_OPS_VERSION) {
            snprintf(why, sizeof(why), "%s has ops table version %u, this core needs %u", path,
                     ops->version, SYMMEM_BACKEND_OPS_VERSION);
            ops = NULL;
        }
        if (ops != NULL && !symmem__backend_ops_complete(ops, why, sizeof(why))) ops = NULL;
    }
    *why_p = why;
    return ops;
}

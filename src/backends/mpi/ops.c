/* The mpi backend's ops table and the one symbol this library exports: the
 * core calls symmem_mpi_backend_open once and lends its services. */
#include <stdio.h>

#include "mpi_backend.h"

const symmem_core_services_t *symmem__mpi_core;

static void *mpi_ptr_slot(symmem_backend_t *be, const void *ptr, int pe)
{
    return mpi_ptr(be, ptr, pe);
}

static int mpi_device(symmem_backend_t *be)
{
    (void)be;
    return -1; /* host memory */
}

/* An id as the cpu engine makes one: a program that hands one to its PEs
 * (init with initializer_method="uid") runs unchanged; they must still be
 * the processes of one MPI job, numbered as MPI numbers them. */
static symmem_status_t mpi_unique_id(symmem_unique_id_t *uid_p)
{
    return MPI_CORE->unique_id(uid_p);
}

static symmem_status_t mpi_register_external(symmem_backend_t *be, void *ptr, size_t size,
                                             void **sym_p)
{
    (void)be, (void)ptr, (void)size, (void)sym_p;
    return MPI_CORE->error(SYMMEM_ERR_UNSUPPORTED,
                           "register_external: not supported by the mpi backend (its heap is "
                           "an MPI window made at init)");
}

static symmem_status_t mpi_unregister_external(symmem_backend_t *be, void *sym, size_t size)
{
    (void)be, (void)sym, (void)size;
    return MPI_CORE->error(SYMMEM_ERR_UNSUPPORTED,
                           "unregister_external: not supported by the mpi backend");
}

static symmem_status_t mpi_device_state(symmem_backend_t *be,
                                        const struct symmem_device_state *host,
                                        uint64_t *device_addr_p)
{
    (void)be, (void)host;
    *device_addr_p = 0; /* device code is host code (njit): it reads the host's block */
    return SYMMEM_OK;
}

static symmem_status_t mpi_cuda_module(symmem_backend_t *be, int library, uint64_t handle, int op,
                                       int *links_p)
{
    (void)be, (void)library, (void)handle, (void)op, (void)links_p;
    return MPI_CORE->error(SYMMEM_ERR_UNSUPPORTED,
                           "module_init: CUDA modules need the gpu backend, not the mpi "
                           "backend");
}

/* Waits on window memory poll it (signals.c): nothing to wake. */
static void mpi_no_wake(symmem_backend_t *be, int pe)
{
    (void)be, (void)pe;
}

/* One engine: MPI's. */
static void mpi_one_engine(symmem_backend_t *be, const symmem_bootstrap_t *boot, char *name,
                           size_t name_size, char *why, size_t why_size)
{
    (void)be, (void)boot;
    if (name_size > 0) name[0] = '\0';
    if (why_size > 0) why[0] = '\0';
}

static const symmem_backend_ops_t mpi_ops = {
    .version = SYMMEM_BACKEND_OPS_VERSION,
    .name = "mpi",
    .init = symmem__mpi_init,
    .finalize = symmem__mpi_finalize,
    .malloc = symmem__mpi_malloc,
    .free = symmem__mpi_free,
    .ptr = mpi_ptr_slot,
    .put = symmem__mpi_put,
    .get = symmem__mpi_get,
    .put_nbi = symmem__mpi_put_nbi,
    .get_nbi = symmem__mpi_get_nbi,
    .quiet = symmem__mpi_quiet,
    .fence = symmem__mpi_fence,
    .put_signal = symmem__mpi_put_signal,
    .signal_wait_until = symmem__mpi_signal_wait_until,
    .signal_fetch = symmem__mpi_signal_fetch,
    .wait_until = symmem__mpi_wait_until,
    .test = symmem__mpi_test,
    .barrier_all = symmem__mpi_barrier_all,
    .sync_all = symmem__mpi_sync_all,
    .team_split_strided = symmem__mpi_team_split_strided,
    .team_split_2d = symmem__mpi_team_split_2d,
    .team_destroy = symmem__mpi_team_destroy,
    .barrier = symmem__mpi_barrier,
    .sync = symmem__mpi_sync,
    .reduce = symmem__mpi_reduce,
    .reducescatter = symmem__mpi_reducescatter,
    .alltoall = symmem__mpi_alltoall,
    .fcollect = symmem__mpi_fcollect,
    .broadcast = symmem__mpi_broadcast,
    .atomic = symmem__mpi_atomic,
    .device = mpi_device,
    .get_unique_id = mpi_unique_id,
    .can_run = symmem__mpi_can_run,
    .team_init = symmem__mpi_team_init,
    .heap_range = symmem__mpi_heap_range,
    .register_external = mpi_register_external,
    .unregister_external = mpi_unregister_external,
    .library_version = symmem__mpi_library_version,
    .prepare_finalize = symmem__mpi_prepare_finalize,
    .device_state = mpi_device_state,
    .cuda_module = mpi_cuda_module,
    .predefined_team = symmem__mpi_predefined_team,
    .device_wake = mpi_no_wake,
    .engine = mpi_one_engine,
    /* Only mpi_processes: the heap is host memory but reached through MPI
     * calls that can wait (so no host_rma: the extension lets go of the
     * GIL), peers' heaps load and store only on one node, and a job across
     * hosts starts through MPI (mpirun, a communicator), not the unique-id
     * rendezvous that spans_hosts asks for. */
    .capabilities = SYMMEM_CAP_MPI_PROCESSES,
};

__attribute__((visibility("default"))) int symmem_mpi_backend_open(
    const symmem_core_services_t *services, const symmem_backend_ops_t **ops_p, char *why,
    size_t why_size)
{
    if (services == NULL || services->version != SYMMEM_CORE_SERVICES_VERSION) {
        snprintf(why, why_size, "the mpi backend was built for another symmem core");
        return -1;
    }
    symmem__mpi_core = services;
    *ops_p = &mpi_ops;
    return 0;
}

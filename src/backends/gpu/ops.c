/* The gpu backend's ops table and the one symbol this library exports: the
 * core calls symmem_gpu_backend_open once, which lends the core's services
 * and loads the CUDA driver, and NVSHMEM where it can (libs.c). */
#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"

const symmem_core_services_t *symmem__gpu_core;
gpu_libs_t symmem__gpu_libs;

/* Kernels' waits watch the memory itself: nothing to wake. (The gpu
 * backend is its own shared object: it cannot take the core's
 * symmem__no_wake.) */
static void gpu_no_wake(symmem_backend_t *be, int pe)
{
    (void)be;
    (void)pe;
}

/* External memory is the engine's to map (nvshmem_external.c,
 * symmem_external.c). */
static symmem_status_t register_external(gpu_t *g, void *ptr, size_t size, void **sym_p)
{
    scope_t scope = symmem__gpu_enter(g);
    return symmem__gpu_leave(g, scope, g->engine->register_external(g, ptr, size, sym_p));
}

static symmem_status_t unregister_external(gpu_t *g, void *sym, size_t size)
{
    scope_t scope = symmem__gpu_enter(g);
    return symmem__gpu_leave(g, scope, g->engine->unregister_external(g, sym, size));
}

static const symmem_backend_ops_t gpu_ops = {
    .version = SYMMEM_BACKEND_OPS_VERSION,
    .name = "gpu",
    .init = symmem__gpu_init,
    .finalize = symmem__gpu_finalize,
    .malloc = symmem__gpu_malloc,
    .free = symmem__gpu_free,
    .ptr = symmem__gpu_ptr,
    .put = symmem__gpu_put,
    .get = symmem__gpu_get,
    .put_nbi = symmem__gpu_put_nbi,
    .get_nbi = symmem__gpu_get_nbi,
    .quiet = symmem__gpu_quiet,
    .fence = symmem__gpu_fence,
    .put_signal = symmem__gpu_put_signal,
    .signal_wait_until = symmem__gpu_signal_wait_until,
    .signal_fetch = symmem__gpu_signal_fetch,
    .wait_until = symmem__gpu_wait_until,
    .test = symmem__gpu_test,
    .barrier_all = symmem__gpu_barrier_all,
    .sync_all = symmem__gpu_sync_all,
    .team_split_strided = symmem__gpu_team_split_strided,
    .team_split_2d = symmem__gpu_team_split_2d,
    .team_destroy = symmem__gpu_team_destroy,
    .barrier = symmem__gpu_barrier,
    .sync = symmem__gpu_sync,
    .reduce = symmem__gpu_reduce,
    .reducescatter = symmem__gpu_reducescatter,
    .alltoall = symmem__gpu_alltoall,
    .fcollect = symmem__gpu_fcollect,
    .broadcast = symmem__gpu_broadcast,
    .atomic = symmem__gpu_atomic,
    .device = symmem__gpu_device,
    .get_unique_id = symmem__gpu_unique_id,
    .heap_range = symmem__gpu_heap_range,
    .team_init = symmem__gpu_team_init,
    .can_run = symmem__gpu_can_run,
    .register_external = register_external,
    .unregister_external = unregister_external,
    .library_version = symmem__gpu_library_version,
    .prepare_finalize = symmem__gpu_prepare_finalize,
    .device_state = symmem__gpu_device_state,
    .cuda_module = symmem__gpu_cuda_module,
    .predefined_team = symmem__gpu_predefined_team,
    .device_wake = gpu_no_wake,
    .engine = symmem__gpu_engine_slot,
    /* NVLink multicast is never mapped (_multicast.py says why) */
    .capabilities = SYMMEM_CAP_DEVICE_MEMORY | SYMMEM_CAP_PEER_LOAD_STORE |
                    SYMMEM_CAP_DEVICE_CALLS | SYMMEM_CAP_STREAM_ORDERED | SYMMEM_CAP_SPANS_HOSTS,
};

/* SYMMEM_SYMMETRIC_SIZE sizes NVSHMEM's heap unless NVSHMEM's own variable
 * does. Set before NVSHMEM is loaded: it reads its variables early (an
 * empty one crashes it), before any unique id or init. */
static void pass_heap_size(void)
{
    const symmem_core_services_t *core = symmem__gpu_core;
    if (core->env_is_set("NVSHMEM_SYMMETRIC_SIZE")) return;
    if (!core->env_is_set("SYMMEM_SYMMETRIC_SIZE")) {
        unsetenv("NVSHMEM_SYMMETRIC_SIZE"); /* set but empty: NVSHMEM's default */
        return;
    }
    char bytes[32];
    snprintf(bytes, sizeof(bytes), "%zu", core->env_size("SYMMEM_SYMMETRIC_SIZE"));
    setenv("NVSHMEM_SYMMETRIC_SIZE", bytes, 1);
}

__attribute__((visibility("default"))) int symmem_gpu_backend_open(
    const symmem_core_services_t *services, const symmem_backend_ops_t **ops_p, char *why,
    size_t why_size)
{
    if (services == NULL || services->version != SYMMEM_CORE_SERVICES_VERSION) {
        snprintf(why, why_size, "the gpu backend was built for another symmem core");
        return -1;
    }
    symmem__gpu_core = services;
    static int loaded;
    if (!loaded) {
        pass_heap_size();
        if (symmem__gpu_libs_load(&libs, symmem__gpu_core, why, why_size) != 0) return -1;
        loaded = 1;
    }
    *ops_p = &gpu_ops;
    return 0;
}

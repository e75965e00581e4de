/* The constant copy of the device state in loaded modules that link
 * symmem's device library (device.cuh's symmem_device_consts, read by the
 * fast path of every call: the constant cache keeps it across the fences
 * that empty L1). A module is attached once loaded (symmem.device.numba's
 * load hook, or module_init / library_init of a user's module); from then
 * on every change of the state (init, each malloc) is written into it, and
 * finalize writes magic 0, so that its kernels take the slow path through
 * the state block and fail there, named. Unloading a module detaches it.
 * The copy in device memory after the state block (for Triton kernels) is
 * attached the same way, as handle 0. */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "../../core/device_state.h"
#include "gpu.h"

typedef struct {
    uint64_t handle;
    cu_deviceptr_t at; /* its symmem_device_consts */
} attached_t;

/* Modules outlive a runtime (a later init re-attaches them), so this is the
 * process's list; the lock because module calls run without the GIL. */
static struct {
    pthread_mutex_t lock;
    attached_t *list;
    int count, capacity;
    symmem_device_consts_t consts; /* what every attached module holds */
    size_t bytes;                  /* how much of it is filled */
} modules = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, {0}, 0};

static symmem_status_t write_one(const attached_t *m, const char *call)
{
    if (modules.bytes == 0) return SYMMEM_OK; /* nothing written yet: magic stays 0 */
    cu_result_t rc = libs.cuMemcpy(m->at, (cu_deviceptr_t)&modules.consts, modules.bytes);
    return rc == 0 ? SYMMEM_OK
                   : symmem__gpu_cuda_error(call, "writing a module's constant device state", rc);
}

symmem_status_t symmem__gpu_consts_update(gpu_t *g, const uint64_t *peers)
{
    symmem_device_consts_t *c = &modules.consts;
    int n = g->boot.nranks;
    pthread_mutex_lock(&modules.lock);
    c->magic = SYMMEM_DEVICE_STATE_MAGIC;
    c->my_pe = g->device_state.my_pe;
    c->n_pes = n;
    c->heap_base = g->heap_lo;
    c->heap_end = g->heap_hi;
    c->sync_base = (uint64_t)(uintptr_t)g->sync_area;
    c->peers = n < SYMMEM_DEVICE_CONST_PEERS ? n : SYMMEM_DEVICE_CONST_PEERS;
    for (int pe = 0; pe < c->peers; pe++)
        c->delta[pe] = peers[pe] != 0 ? peers[pe] - g->heap_lo : 1; /* odd: not mapped */
    modules.bytes = offsetof(symmem_device_consts_t, delta) + sizeof(uint64_t) * (size_t)c->peers;
    symmem_status_t status = SYMMEM_OK;
    for (int i = 0; i < modules.count && status == SYMMEM_OK; i++)
        status = write_one(&modules.list[i], "init");
    pthread_mutex_unlock(&modules.lock);
    return status;
}

void symmem__gpu_consts_invalidate(void)
{
    pthread_mutex_lock(&modules.lock);
    uint64_t zero = 0;
    for (int i = 0; i < modules.count; i++)
        libs.cuMemcpy(modules.list[i].at, (cu_deviceptr_t)&zero, sizeof(zero));
    modules.bytes = 0;
    modules.consts.magic = 0;
    pthread_mutex_unlock(&modules.lock);
}

/* Where the module's or library's symmem_device_consts is; 0 if it has none. */
static symmem_status_t find(int library, uint64_t handle, const char *call, cu_deviceptr_t *at_p)
{
    size_t bytes = 0;
    *at_p = 0;
    cu_result_t rc =
        symmem__gpu_libs_module_global(&libs, library, handle, SYMMEM_DEVICE_CONSTS, at_p, &bytes);
    if (rc == -1 || rc == CU_ERROR_NOT_FOUND)
        *at_p = 0; /* -1, an old driver: the slow path */
    else if (rc != 0)
        return symmem__gpu_cuda_error(call, "looking up a module's globals", rc);
    else if (bytes != sizeof(symmem_device_consts_t))
        return ERROR(SYMMEM_ERR_INVALID,
                     "%s: the module's %s has %zu bytes, not the %zu of this "
                     "symmem's device library (compiled from another version of device.cuh?)",
                     call, SYMMEM_DEVICE_CONSTS, bytes, sizeof(symmem_device_consts_t));
    return SYMMEM_OK;
}

/* Adds (or finds) the copy at at for handle and writes the state into it. */
static symmem_status_t add(uint64_t handle, cu_deviceptr_t at, const char *call)
{
    symmem_status_t status = SYMMEM_OK;
    pthread_mutex_lock(&modules.lock);
    int i = 0;
    while (i < modules.count && modules.list[i].handle != handle) i++;
    if (i == modules.count && modules.count == modules.capacity) {
        int capacity = modules.capacity ? 2 * modules.capacity : 16;
        attached_t *list = realloc(modules.list, sizeof(attached_t) * (size_t)capacity);
        if (list == NULL)
            status = ERROR(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
        else
            modules.list = list, modules.capacity = capacity;
    }
    if (status == SYMMEM_OK) {
        modules.list[i] = (attached_t){handle, at};
        if (i == modules.count) modules.count++;
        status = write_one(&modules.list[i], call);
    }
    pthread_mutex_unlock(&modules.lock);
    return status;
}

symmem_status_t symmem__gpu_consts_attach(int library, uint64_t handle, const char *call,
                                          int *has_p)
{
    cu_deviceptr_t at = 0;
    symmem_status_t status = find(library, handle, call, &at);
    *has_p = status == SYMMEM_OK && at != 0;
    return *has_p ? add(handle, at, call) : status;
}

symmem_status_t symmem__gpu_consts_attach_copy(cu_deviceptr_t at)
{
    return add(0, at, "init"); /* handle 0: no module's, never detached */
}

void symmem__gpu_consts_detach(uint64_t handle)
{
    pthread_mutex_lock(&modules.lock);
    for (int i = 0; i < modules.count; i++)
        if (modules.list[i].handle == handle) modules.list[i--] = modules.list[--modules.count];
    pthread_mutex_unlock(&modules.lock);
}

/* init/finalize, backend choice, queries and symmetric memory management. */
#include "runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap.h"
#include "env.h"
#include "error.h"

symmem_runtime_t symmem__rt = {.my_pe = -1, .n_pes = -1};

void symmem_init_attr_default(symmem_init_attr_t *attr)
{
    memset(attr, 0, sizeof(*attr));
    attr->version = SYMMEM_INIT_ATTR_VERSION;
    attr->method = SYMMEM_INIT_FROM_ENV;
    attr->device = -1;
}

/* Chooses the backend's ops table from requested or SYMMEM_BACKEND:
 * auto takes the gpu backend where it is usable, else the cpu engine. */
static symmem_status_t choose_backend(const char *call, const char *requested,
                                      const symmem_bootstrap_t *boot,
                                      const symmem_backend_ops_t **ops_p)
{
    const char *name = requested;
    if (name == NULL) {
        int index;
        SYMMEM_CHECK(symmem__env_choice(call, "SYMMEM_BACKEND", &index));
        name = symmem__env_string("SYMMEM_BACKEND");
    }
    const char *why = NULL;
    char reason[512];
    if (strcmp(name, "cpu") == 0) {
        *ops_p = &symmem__cpu_backend_ops;
    } else if (strcmp(name, "auto") == 0 || name[0] == '\0') {
        /* The gpu where it loads and every PE of the host can have a GPU. */
        const symmem_backend_ops_t *gpu = symmem__gpu_backend(&why);
        if (gpu != NULL && boot != NULL && !gpu->can_run(boot, reason, sizeof(reason))) gpu = NULL;
        *ops_p = gpu != NULL ? gpu : &symmem__cpu_backend_ops;
    } else if (strcmp(name, "gpu") == 0) {
        *ops_p = symmem__gpu_backend(&why);
        if (*ops_p != NULL && boot != NULL && !(*ops_p)->can_run(boot, reason, sizeof(reason))) {
            *ops_p = NULL;
            why = reason;
        }
        if (*ops_p == NULL)
            return symmem__error(SYMMEM_ERR_BACKEND,
                                 "%s: backend='gpu' cannot run here: %s", call, why);
    } else {
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: backend='%s' is not one of 'cpu', 'gpu', 'auto'", call, name);
    }
    return SYMMEM_OK;
}

symmem_status_t symmem_get_unique_id(symmem_unique_id_t *uid_p)
{
    if (uid_p == NULL)
        return symmem__error(SYMMEM_ERR_INVALID, "get_unique_id: uid_p is NULL");
    const symmem_backend_ops_t *ops = NULL;
    SYMMEM_CHECK(choose_backend("get_unique_id", NULL, NULL, &ops));
    return ops->get_unique_id(uid_p);
}

symmem_status_t symmem_init(void)
{
    symmem_init_attr_t attr;
    symmem_init_attr_default(&attr);
    return symmem_init_attr(&attr);
}

symmem_status_t symmem_init_attr(const symmem_init_attr_t *attr)
{
    symmem_runtime_t *rt = &symmem__rt;
    if (rt->initialized) return SYMMEM_OK;
    if (attr == NULL || attr->version != SYMMEM_INIT_ATTR_VERSION)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "init: attr is NULL or has version %u (expected %u)",
                             attr ? attr->version : 0, SYMMEM_INIT_ATTR_VERSION);
    symmem_bootstrap_t boot;
    SYMMEM_CHECK(symmem__bootstrap_from_attr(attr, &boot));
    const symmem_backend_ops_t *ops = NULL;
    SYMMEM_CHECK(choose_backend("init", attr->backend, &boot, &ops));
    symmem__error_set_pe(boot.rank);
    symmem_backend_t *be;
    symmem_status_t status = ops->init(&boot, &be);
    if (status != SYMMEM_OK) {
        symmem__error_set_pe(-1);
        return status;
    }
    rt->ops = ops;
    rt->be = be;
    rt->my_pe = boot.rank;
    rt->n_pes = boot.nranks;
    rt->initialized = 1;
    status = symmem__teams_init();
    if (status != SYMMEM_OK) {
        symmem_finalize();
        return status;
    }
    return SYMMEM_OK;
}

symmem_status_t symmem_finalize(void)
{
    symmem_runtime_t *rt = &symmem__rt;
    if (!rt->initialized) return SYMMEM_OK;
    symmem_status_t status = rt->ops->finalize(rt->be);
    symmem__registry_clear(&rt->registry);
    symmem__teams_clear();
    rt->initialized = 0;
    rt->be = NULL;
    rt->my_pe = rt->n_pes = -1;
    symmem__error_set_pe(-1);
    return status;
}

int symmem_initialized(void) { return symmem__rt.initialized; }

int symmem_device(void)
{
    return symmem__rt.initialized ? symmem__rt.ops->device(symmem__rt.be) : -1;
}
int symmem_my_pe(void) { return symmem__rt.my_pe; }
int symmem_n_pes(void) { return symmem__rt.n_pes; }

const char *symmem_backend_name(void)
{
    return symmem__rt.initialized ? symmem__rt.ops->name : NULL;
}

symmem_status_t symmem__check_initialized(const char *call)
{
    if (symmem__rt.initialized) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_NOT_INITIALIZED,
                         "%s: symmem is not initialized (call init() first)", call);
}

symmem_status_t symmem__check_pe(const char *call, const char *arg, int pe)
{
    if (pe >= 0 && pe < symmem__rt.n_pes) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_INVALID, "%s: %s=%d is outside [0, %d)", call, arg, pe,
                         symmem__rt.n_pes);
}

symmem_status_t symmem__check_symmetric(const char *call, const char *arg,
                                        const void *ptr, size_t nbytes)
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
                             call, arg, ptr, nbytes,
                             nbytes - (a->size - (address - a->start)), (void *)a->start,
                             a->size);
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

symmem_status_t symmem_malloc(size_t size, void **ptr_p)
{
    SYMMEM_CHECK(symmem__check_initialized("malloc"));
    if (ptr_p == NULL) return symmem__error(SYMMEM_ERR_INVALID, "malloc: ptr_p is NULL");
    void *ptr = NULL;
    SYMMEM_CHECK(symmem__rt.ops->malloc(symmem__rt.be, size, &ptr));
    if (ptr != NULL) {
        symmem_status_t status = symmem__registry_add(&symmem__rt.registry, ptr, size, 0);
        if (status != SYMMEM_OK) return status;
    }
    *ptr_p = ptr;
    return SYMMEM_OK;
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

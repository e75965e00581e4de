/* What a backend points a slot at when it lacks the operation or has the
 * common answer, and the load-time check that no slot is left empty
 * (backend.h's promise). */
#include <stddef.h>
#include <stdio.h>

#include "backend.h"
#include "error.h"
#include "state.h"

symmem_status_t symmem__unsupported_register_external(symmem_backend_t *be, void *ptr, size_t size,
                                                      void **sym_p)
{
    (void)be, (void)ptr, (void)size, (void)sym_p;
    return symmem__error(SYMMEM_ERR_UNSUPPORTED,
                         "register_external: the %s backend cannot take memory from outside "
                         "its symmetric heap; external CUDA-VMM memory needs the gpu backend",
                         symmem__rt.ops->name);
}

symmem_status_t symmem__unsupported_unregister_external(symmem_backend_t *be, void *sym,
                                                        size_t size)
{
    (void)be, (void)sym, (void)size;
    return symmem__error(SYMMEM_ERR_UNSUPPORTED,
                         "unregister_external: the %s backend has no external memory",
                         symmem__rt.ops->name);
}

void symmem__no_library_version(symmem_backend_t *be, char *text, size_t size)
{
    (void)be;
    if (size > 0) text[0] = '\0';
}

symmem_status_t symmem__no_device_state(symmem_backend_t *be,
                                        const struct symmem_device_state *host,
                                        uint64_t *device_addr_p)
{
    (void)be, (void)host;
    *device_addr_p = 0;
    return SYMMEM_OK;
}

void symmem__one_engine(symmem_backend_t *be, const symmem_bootstrap_t *boot, char *name,
                        size_t name_size, char *why, size_t why_size)
{
    (void)be, (void)boot;
    if (name_size > 0) name[0] = '\0';
    if (why_size > 0) why[0] = '\0';
}

void symmem__no_wake(symmem_backend_t *be, int pe)
{
    (void)be;
    (void)pe;
}

symmem_status_t symmem__unsupported_cuda_module(symmem_backend_t *be, int library, uint64_t handle,
                                                int op, int *links_p)
{
    (void)be, (void)handle, (void)op;
    *links_p = 0;
    return symmem__error(SYMMEM_ERR_UNSUPPORTED, "%s: the %s backend runs no CUDA modules",
                         library ? "library_init" : "module_init", symmem__rt.ops->name);
}

symmem_status_t symmem__one_host_predefined_team(symmem_backend_t *be, symmem_team_t team,
                                                 int *members, int *n_p)
{
    (void)be;
    static const symmem_team_t just_me[] = SYMMEM_TEAMS_OF_ONE;
    for (size_t k = 0; k < sizeof(just_me) / sizeof(just_me[0]); k++)
        if (team == just_me[k]) {
            members[0] = symmem__rt.my_pe;
            *n_p = 1;
            return SYMMEM_OK;
        }
    for (int pe = 0; pe < symmem__rt.n_pes; pe++) members[pe] = pe;
    *n_p = symmem__rt.n_pes;
    return SYMMEM_OK;
}

symmem_status_t symmem__nothing_to_prepare(symmem_backend_t *be)
{
    (void)be;
    return SYMMEM_OK;
}

int symmem__backend_ops_complete(const symmem_backend_ops_t *ops, char *why, size_t why_size)
{
#define SYMMEM_BACKEND_SLOT(name, type) {#name, (const void *)ops->name},
    const struct {
        const char *name;
        const void *func;
    } slots[] = {
#include "backend_slots.def"
    };
#undef SYMMEM_BACKEND_SLOT
    for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
        if (slots[i].func == NULL) {
            snprintf(why, why_size, "the %s backend's ops table has no %s", ops->name,
                     slots[i].name);
            return 0;
        }
    return 1;
}

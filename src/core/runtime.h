/* The process-wide runtime state and the argument checks every call uses. */
#ifndef SYMMEM_CORE_RUNTIME_H
#define SYMMEM_CORE_RUNTIME_H

#include "backend.h"
#include "registry.h"

/* A team: world PE numbers of its members, and our place in it. */
typedef struct {
    int in_use;
    symmem_team_view_t view;
    int *members; /* owned; view.members points here */
} symmem_team_entry_t;

typedef struct {
    int initialized;
    int my_pe;
    int n_pes;
    const symmem_backend_ops_t *ops;
    symmem_backend_t *be;
    symmem_registry_t registry; /* live allocations of this PE */
    symmem_team_entry_t teams[SYMMEM_TEAM_MAX]; /* indexed by handle */
} symmem_runtime_t;

extern symmem_runtime_t symmem__rt;

/* gpu_loader.c: the gpu backend's ops if its library loads and it can run
 * here; else NULL and *why_p says why. */
const symmem_backend_ops_t *symmem__gpu_backend(const char **why_p);

symmem_status_t symmem__check_initialized(const char *call);
symmem_status_t symmem__check_pe(const char *call, const char *arg, int pe);
/* [ptr, ptr+nbytes) must lie inside one live allocation of this PE. */
symmem_status_t symmem__check_symmetric(const char *call, const char *arg,
                                        const void *ptr, size_t nbytes);
/* A private argument may be anywhere but in freed parts of our own heap. */
symmem_status_t symmem__check_private(const char *call, const char *arg, const void *ptr,
                                      size_t nbytes);

/* teams.c: the predefined teams after init; every team at finalize. */
symmem_status_t symmem__teams_init(void);
void symmem__teams_clear(void);
/* The team behind a handle, or an INVALID error naming call. */
symmem_status_t symmem__team_lookup(const char *call, symmem_team_t team,
                                    const symmem_team_view_t **view_p);

#endif

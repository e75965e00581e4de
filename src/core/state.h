/* The process-wide runtime state: the running backend, who we are, the live
 * allocations and the teams. One instance, symmem__rt; only the core's
 * files read it. */
#ifndef SYMMEM_CORE_STATE_H
#define SYMMEM_CORE_STATE_H

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
    symmem_registry_t registry;                 /* live allocations of this PE */
    symmem_team_entry_t teams[SYMMEM_TEAM_MAX]; /* indexed by handle */
} symmem_runtime_t;

extern symmem_runtime_t symmem__rt;

#endif

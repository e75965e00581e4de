/* Teams, whichever engine makes them (nvshmem_teams.c, symmem_teams.c): the
 * predefined ones, read once at init, which the core's team table, the call
 * pages and the device team table all take; a new team, which the call
 * pages count collectives of (keyed with its members) and device kernels
 * find in the device team table; and team_destroy. */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* A team this PE is in, made on every member: the call pages count its
 * collectives, and device kernels find it in the device team table once
 * every member has zeroed its sync slots (the engine's meeting after). */
static symmem_status_t team_known(gpu_t *g, const char *call, int team, const int *members, int n)
{
    symmem__gpu_calls_set_team(&g->calls, team, members, n);
    SYMMEM_CHECK(symmem__gpu_device_team_set(g, team, members, n));
    return g->engine->team_meet(g, call, team, members, n);
}

symmem_status_t symmem__gpu_predefined_teams_read(gpu_t *g)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem_status_t status = g->engine->predefined_teams(g);
    if (status != SYMMEM_OK) symmem__gpu_predefined_teams_free(g);
    return symmem__gpu_leave(g, scope, status);
}

void symmem__gpu_predefined_teams_free(gpu_t *g)
{
    for (int team = 0; team < SYMMEM_TEAM_FIRST_USER; team++) {
        free(g->predefined[team].members);
        g->predefined[team].members = NULL;
        g->predefined[team].n = 0;
    }
}

symmem_status_t symmem__gpu_predefined_team(gpu_t *g, symmem_team_t team, int *members, int *n_p)
{
    *n_p = g->predefined[team].n;
    memcpy(members, g->predefined[team].members, sizeof(int) * (size_t)*n_p);
    return SYMMEM_OK;
}

symmem_status_t symmem__gpu_team_split_strided(gpu_t *g, const symmem_team_view_t *parent,
                                               int start, int stride, int size, int in_team,
                                               int *handle_p)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem_status_t status =
        g->engine->split_strided(g, parent, start, stride, size, in_team, handle_p);
    if (status == SYMMEM_OK && in_team) {
        int members[size];
        for (int i = 0; i < size; i++) members[i] = parent->members[start + i * stride];
        status = team_known(g, "team_split_strided", *handle_p, members, size);
    }
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_team_split_2d(gpu_t *g, const symmem_team_view_t *parent, int xrange,
                                          int *xhandle_p, int *yhandle_p)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem_status_t status = g->engine->split_2d(g, parent, xrange, xhandle_p, yhandle_p);
    if (status != SYMMEM_OK) return symmem__gpu_leave(g, scope, status);
    /* x: the xrange consecutive members this PE is among; y: the members
     * with this PE's index in its x team */
    int members[parent->n], n = 0, first = parent->me / xrange * xrange;
    for (int i = first; i < first + xrange && i < parent->n; i++) members[n++] = parent->members[i];
    status = team_known(g, "team_split_2d", *xhandle_p, members, n);
    n = 0;
    for (int i = parent->me % xrange; i < parent->n; i += xrange) members[n++] = parent->members[i];
    if (status == SYMMEM_OK) status = team_known(g, "team_split_2d", *yhandle_p, members, n);
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_team_destroy(gpu_t *g, const symmem_team_view_t *team)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem__gpu_device_team_forget(g, team->channel);
    g->engine->team_destroy(g, team->channel);
    symmem__gpu_calls_forget_team(&g->calls, team->channel);
    return symmem__gpu_leave(g, scope, SYMMEM_OK);
}

symmem_status_t symmem__gpu_team_init(gpu_t *g, uint64_t key, int npes, int index, int *members,
                                      int *handle_p)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem_status_t status = g->engine->team_init(g, key, npes, index, members, handle_p);
    if (status == SYMMEM_OK) status = team_known(g, "team_init", *handle_p, members, npes);
    return symmem__gpu_leave(g, scope, status);
}

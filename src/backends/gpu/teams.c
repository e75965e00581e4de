/* Teams: NVSHMEM's predefined teams, its splits and team_destroy; team_init through
 * nvshmemx_team_init (NVSHMEM 3.3 and later), looked up by name so that an
 * older NVSHMEM still loads. A team's handle is NVSHMEM's team number, the
 * same on every member (NVSHMEM picks it by a reduction over the parent's
 * members); the call pages count collectives by it and key it with the
 * members, which a new team tells them here. */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"

/* A team this PE is in, made on every member: the call pages count its
 * collectives, and device kernels find it in the device team table once
 * every member has zeroed its sync slots (the team sync after). */
static symmem_status_t team_known(gpu_t *g, const char *call, nv_team_t team, const int *members,
                                  int n)
{
    symmem__gpu_calls_set_team(&g->calls, team, members, n);
    SYMMEM_CHECK(symmem__gpu_device_team_set(g, team, members, n));
    if (libs.team_sync_on_stream(team, g->stream) != 0)
        return ERROR(SYMMEM_ERR_BACKEND, "%s: the new team's first sync failed", call);
    return symmem__gpu_drain(g, call);
}

/* NVSHMEM places the PEs: TEAM_NODE holds the PEs of this host,
 * TEAM_SHARED those whose memory this GPU maps, TEAM_SAME_MYPE_NODE the PEs
 * with this PE's local number on every host. Read once; the core's team
 * table, the call pages and the device team table all take them from here,
 * so each agrees with the collectives NVSHMEM runs on them. */
symmem_status_t symmem__gpu_predefined_teams_read(gpu_t *g)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem_status_t status = SYMMEM_OK;
    for (nv_team_t team = 0; team < SYMMEM_TEAM_FIRST_USER && status == SYMMEM_OK; team++) {
        int n = libs.team_n_pes(team);
        if (n < 1 || libs.team_my_pe(team) < 0) continue; /* not in it */
        int *members = malloc(sizeof(int) * (size_t)n);
        if (members == NULL) {
            status = ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
            break;
        }
        for (int i = 0; i < n; i++) {
            members[i] = libs.team_translate_pe(team, i, NV_TEAM_WORLD);
            if (members[i] < 0 || members[i] >= g->boot.nranks)
                status = ERROR(SYMMEM_ERR_BACKEND,
                               "init: NVSHMEM says PE %d of its "
                               "predefined team %d is world PE %d, which is no PE",
                               i, (int)team, members[i]);
        }
        g->predefined[team].n = n;
        g->predefined[team].members = members;
    }
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

static symmem_status_t team_error(const char *call, int rc)
{
    return ERROR(SYMMEM_ERR_NO_MEMORY,
                 "%s: NVSHMEM could not make the team (it returned %d); it keeps at most "
                 "NVSHMEM_MAX_TEAMS teams (32 by default): destroy teams with team_destroy",
                 call, rc);
}

symmem_status_t symmem__gpu_team_split_strided(gpu_t *g, const symmem_team_view_t *parent,
                                               int start, int stride, int size, int in_team,
                                               int *handle_p)
{
    scope_t scope = symmem__gpu_enter(g);
    nv_team_t team = -1;
    int rc = libs.team_split_strided(parent->channel, start, stride, size, NULL, 0, &team);
    *handle_p = in_team ? team : SYMMEM_TEAM_INVALID;
    if (rc != 0) return symmem__gpu_leave(g, scope, team_error("team_split_strided", rc));
    symmem_status_t status = SYMMEM_OK;
    if (in_team) {
        int members[size];
        for (int i = 0; i < size; i++) members[i] = parent->members[start + i * stride];
        status = team_known(g, "team_split_strided", team, members, size);
    }
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_team_split_2d(gpu_t *g, const symmem_team_view_t *parent, int xrange,
                                          int *xhandle_p, int *yhandle_p)
{
    scope_t scope = symmem__gpu_enter(g);
    nv_team_t x = -1, y = -1;
    int rc = libs.team_split_2d(parent->channel, xrange, NULL, 0, &x, NULL, 0, &y);
    *xhandle_p = x;
    *yhandle_p = y;
    if (rc != 0) return symmem__gpu_leave(g, scope, team_error("team_split_2d", rc));
    /* x: the xrange consecutive members this PE is among; y: the members
     * with this PE's index in its x team */
    int members[parent->n], n = 0, first = parent->me / xrange * xrange;
    for (int i = first; i < first + xrange && i < parent->n; i++) members[n++] = parent->members[i];
    symmem_status_t status = team_known(g, "team_split_2d", x, members, n);
    n = 0;
    for (int i = parent->me % xrange; i < parent->n; i += xrange) members[n++] = parent->members[i];
    if (status == SYMMEM_OK) status = team_known(g, "team_split_2d", y, members, n);
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_team_destroy(gpu_t *g, const symmem_team_view_t *team)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem__gpu_device_team_forget(g, team->channel);
    libs.team_destroy(team->channel);
    symmem__gpu_calls_forget_team(&g->calls, team->channel);
    return symmem__gpu_leave(g, scope, SYMMEM_OK);
}

/* nvshmemx_team_init: the members find each other by the key (NVSHMEM's
 * team unique id), and each learns the others' world numbers afterwards. */
symmem_status_t symmem__gpu_team_init(gpu_t *g, uint64_t key, int npes, int index, int *members,
                                      int *handle_p)
{
    int (*team_init)(nv_team_t *, nv_team_config_t *, long, int, int) =
        (int (*)(nv_team_t *, nv_team_config_t *, long, int, int))symmem__gpu_libs_symbol(
            &libs, "nvshmemx_team_init");
    int (*translate)(nv_team_t, int, nv_team_t) =
        (int (*)(nv_team_t, int, nv_team_t))symmem__gpu_libs_symbol(&libs,
                                                                    "nvshmem_team_translate_pe");
    if (team_init == NULL || translate == NULL)
        return ERROR(SYMMEM_ERR_UNSUPPORTED,
                     "team_init: this NVSHMEM has no nvshmemx_team_init (it came in NVSHMEM "
                     "3.3); use team_split_strided or team_split_2d");
    scope_t scope = symmem__gpu_enter(g);
    nv_team_config_t config;
    memset(&config, 0, sizeof(config));
    config.version = NV_TEAM_CONFIG_VERSION;
    config.uniqueid = key & ~(1ULL << 63); /* never NVSHMEM's "no id" (~0) */
    nv_team_t team = -1;
    int rc = team_init(&team, &config, NV_TEAM_CONFIG_MASK_UNIQUEID, npes, index);
    if (rc != 0 || team < 0) return symmem__gpu_leave(g, scope, team_error("team_init", rc));
    for (int i = 0; i < npes; i++) members[i] = translate(team, i, NV_TEAM_WORLD);
    *handle_p = team;
    return symmem__gpu_leave(g, scope, team_known(g, "team_init", team, members, npes));
}

/* The nvshmem engine's teams: NVSHMEM's predefined teams, its splits,
 * team_init through nvshmemx_team_init (NVSHMEM 3.3 and later, looked up by
 * name so that an older NVSHMEM still loads) and team_destroy. A team's
 * handle is NVSHMEM's team number, the same on every member (NVSHMEM picks
 * it by a reduction over the parent's members). */
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "nvshmem_engine.h"

/* NVSHMEM places the PEs: TEAM_NODE holds the PEs of this host,
 * TEAM_SHARED those whose memory this GPU maps, TEAM_SAME_MYPE_NODE the PEs
 * with this PE's local number on every host. Read once. */
symmem_status_t symmem__nv_predefined_teams(gpu_t *g)
{
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
    return status;
}

static symmem_status_t team_error(const char *call, int rc)
{
    return ERROR(SYMMEM_ERR_NO_MEMORY,
                 "%s: NVSHMEM could not make the team (it returned %d); it keeps at most "
                 "NVSHMEM_MAX_TEAMS teams (32 by default): destroy teams with team_destroy",
                 call, rc);
}

symmem_status_t symmem__nv_split_strided(gpu_t *g, const symmem_team_view_t *parent, int start,
                                         int stride, int size, int in_team, int *handle_p)
{
    (void)g;
    nv_team_t team = -1;
    int rc = libs.team_split_strided(parent->channel, start, stride, size, NULL, 0, &team);
    *handle_p = in_team ? team : SYMMEM_TEAM_INVALID;
    return rc == 0 ? SYMMEM_OK : team_error("team_split_strided", rc);
}

symmem_status_t symmem__nv_split_2d(gpu_t *g, const symmem_team_view_t *parent, int xrange,
                                    int *xhandle_p, int *yhandle_p)
{
    (void)g;
    nv_team_t x = -1, y = -1;
    int rc = libs.team_split_2d(parent->channel, xrange, NULL, 0, &x, NULL, 0, &y);
    *xhandle_p = x;
    *yhandle_p = y;
    return rc == 0 ? SYMMEM_OK : team_error("team_split_2d", rc);
}

void symmem__nv_team_destroy(gpu_t *g, int handle)
{
    (void)g;
    libs.team_destroy(handle);
}

/* nvshmemx_team_init: the members find each other by the key (NVSHMEM's
 * team unique id), and each learns the others' world numbers afterwards. */
symmem_status_t symmem__nv_team_init(gpu_t *g, uint64_t key, int npes, int index, int *members,
                                     int *handle_p)
{
    (void)g;
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
    nv_team_config_t config;
    memset(&config, 0, sizeof(config));
    config.version = NV_TEAM_CONFIG_VERSION;
    config.uniqueid = key & ~(1ULL << 63); /* never NVSHMEM's "no id" (~0) */
    nv_team_t team = -1;
    int rc = team_init(&team, &config, NV_TEAM_CONFIG_MASK_UNIQUEID, npes, index);
    if (rc != 0 || team < 0) return team_error("team_init", rc);
    for (int i = 0; i < npes; i++) members[i] = translate(team, i, NV_TEAM_WORLD);
    *handle_p = team;
    return SYMMEM_OK;
}

/* NVSHMEM's sync of the new team, on the backend's stream. */
symmem_status_t symmem__nv_team_meet(gpu_t *g, const char *call, int handle, const int *members,
                                     int n)
{
    (void)members, (void)n;
    if (libs.team_sync_on_stream(handle, g->stream) != 0)
        return ERROR(SYMMEM_ERR_BACKEND, "%s: the new team's first sync failed", call);
    return symmem__gpu_drain(g, call);
}

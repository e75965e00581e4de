/* Teams: ordered sets of world PEs. Splits are collective over the parent;
 * the backend agrees on a channel that becomes the team's handle. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "checks.h"
#include "state.h"
#include "teams.h"

#define RT (&symmem__rt)

/* Stores a team under handle; members is taken over. */
static symmem_status_t team_store(symmem_team_t handle, int *members, int n, int channel)
{
    symmem_team_entry_t *t = &RT->teams[handle];
    t->in_use = 1;
    t->members = members;
    t->view.members = members;
    t->view.n = n;
    t->view.channel = channel;
    t->view.me = -1;
    for (int i = 0; i < n; i++)
        if (members[i] == RT->my_pe) t->view.me = i;
    return SYMMEM_OK;
}

static int *members_alloc(int n)
{
    return malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
}

symmem_status_t symmem__teams_init(void)
{
    /* The backend knows where the PEs are; a team's channel is its handle,
     * which the backend maps to its own. */
    for (symmem_team_t team = 0; team < SYMMEM_TEAM_FIRST_USER; team++) {
        int *members = members_alloc(RT->n_pes), n = 0;
        if (members == NULL) return symmem__error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
        symmem_status_t status = RT->ops->predefined_team(RT->be, team, members, &n);
        if (status != SYMMEM_OK || n < 1) {
            free(members); /* an error, or this PE is in no such team */
            SYMMEM_CHECK(status);
            continue;
        }
        team_store(team, members, n, team);
    }
    return SYMMEM_OK;
}

void symmem__teams_clear(void)
{
    for (int h = 0; h < SYMMEM_TEAM_MAX; h++) {
        free(RT->teams[h].members);
        memset(&RT->teams[h], 0, sizeof(RT->teams[h]));
    }
}

symmem_status_t symmem__team_lookup(const char *call, symmem_team_t team,
                                    const symmem_team_view_t **view_p)
{
    SYMMEM_CHECK(symmem__check_initialized(call));
    if (team < 0 || team >= SYMMEM_TEAM_MAX || !RT->teams[team].in_use)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: team=%d is not a valid team (never created, destroyed, or "
                             "this PE is not a member)",
                             call, (int)team);
    *view_p = &RT->teams[team].view;
    return SYMMEM_OK;
}

int symmem_team_my_pe(symmem_team_t team)
{
    const symmem_team_view_t *v;
    if (team < 0 || team >= SYMMEM_TEAM_MAX || !RT->initialized || !RT->teams[team].in_use)
        return -1;
    v = &RT->teams[team].view;
    return v->me;
}

int symmem_team_n_pes(symmem_team_t team)
{
    if (team < 0 || team >= SYMMEM_TEAM_MAX || !RT->initialized || !RT->teams[team].in_use)
        return -1;
    return RT->teams[team].view.n;
}

int symmem_team_world_pe(symmem_team_t team, int team_pe)
{
    if (symmem_team_n_pes(team) <= team_pe || team_pe < 0) return -1;
    return RT->teams[team].view.members[team_pe];
}

int symmem_team_translate_pe(symmem_team_t src_team, int src_pe, symmem_team_t dest_team)
{
    int world_pe = symmem_team_world_pe(src_team, src_pe);
    int n = symmem_team_n_pes(dest_team);
    if (world_pe < 0 || n < 0) return -1;
    for (int i = 0; i < n; i++)
        if (RT->teams[dest_team].view.members[i] == world_pe) return i;
    return -1;
}

/* The members parent[start + i*stride], i < size; *in_team_p says if we are one. */
static int *strided_members(const symmem_team_view_t *parent, int start, int stride, int size,
                            int *in_team_p)
{
    int *members = members_alloc(size);
    if (members == NULL) return NULL;
    *in_team_p = 0;
    for (int i = 0; i < size; i++) {
        members[i] = parent->members[start + i * stride];
        *in_team_p |= members[i] == RT->my_pe;
    }
    return members;
}

/* Keeps a new team under the handle the backend gave it. */
static symmem_status_t adopt(const char *call, int handle, int *members, int size,
                             symmem_team_t *team_p)
{
    if (handle < 0 || handle >= SYMMEM_TEAM_MAX || RT->teams[handle].in_use) {
        free(members);
        *team_p = SYMMEM_TEAM_INVALID;
        if (handle == SYMMEM_TEAM_INVALID) return SYMMEM_OK; /* not a member */
        return symmem__error(SYMMEM_ERR_BACKEND,
                             "%s: the backend returned team handle %d, "
                             "which is out of range or in use",
                             call, handle);
    }
    team_store(handle, members, size, handle);
    *team_p = handle;
    return SYMMEM_OK;
}

symmem_status_t symmem_team_split_strided(symmem_team_t parent, int start, int stride, int size,
                                          symmem_team_t *new_team_p)
{
    const char *call = "team_split_strided";
    const symmem_team_view_t *p = NULL;
    SYMMEM_CHECK(symmem__team_lookup(call, parent, &p));
    if (size < 1) return symmem__error(SYMMEM_ERR_INVALID, "%s: size=%d must be >= 1", call, size);
    if (stride < 1)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: stride=%d must be >= 1", call, stride);
    if (start < 0 || start >= p->n)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: start=%d is outside the parent's [0, %d)",
                             call, start, p->n);
    if ((long long)start + (long long)(size - 1) * stride >= p->n)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: start=%d, stride=%d, size=%d reaches PE %lld, beyond the "
                             "parent's %d PEs",
                             call, start, stride, size,
                             (long long)start + (long long)(size - 1) * stride, p->n);
    if (p->me < 0)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: this PE is not in the parent team", call);
    int in_team;
    int *members = strided_members(p, start, stride, size, &in_team);
    if (members == NULL) return symmem__error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    int handle = SYMMEM_TEAM_INVALID;
    symmem_status_t status =
        RT->ops->team_split_strided(RT->be, p, start, stride, size, in_team, &handle);
    if (status != SYMMEM_OK) {
        free(members);
        return status;
    }
    return adopt(call, in_team ? handle : SYMMEM_TEAM_INVALID, members, size, new_team_p);
}

symmem_status_t symmem_team_split_2d(symmem_team_t parent, int xrange, symmem_team_t *xteam_p,
                                     symmem_team_t *yteam_p)
{
    const char *call = "team_split_2d";
    const symmem_team_view_t *p = NULL;
    SYMMEM_CHECK(symmem__team_lookup(call, parent, &p));
    if (xrange < 1)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: xrange=%d must be >= 1", call, xrange);
    if (xrange > p->n) xrange = p->n; /* as NVSHMEM: one x team of all PEs */
    int x = p->me % xrange, y = p->me / xrange;
    int xsize = p->n - y * xrange < xrange ? p->n - y * xrange : xrange;
    int ysize = (p->n - x + xrange - 1) / xrange;
    int in_x, in_y;
    int *xmembers = strided_members(p, y * xrange, 1, xsize, &in_x);
    int *ymembers = strided_members(p, x, xrange, ysize, &in_y);
    int xhandle = SYMMEM_TEAM_INVALID, yhandle = SYMMEM_TEAM_INVALID;
    symmem_status_t status =
        xmembers && ymembers ? RT->ops->team_split_2d(RT->be, p, xrange, &xhandle, &yhandle)
                             : symmem__error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    if (status != SYMMEM_OK) {
        free(xmembers);
        free(ymembers);
        return status;
    }
    SYMMEM_CHECK(adopt(call, xhandle, xmembers, xsize, xteam_p));
    return adopt(call, yhandle, ymembers, ysize, yteam_p);
}

symmem_status_t symmem_team_init(uint64_t key, int npes, int index, symmem_team_t *new_team_p)
{
    const char *call = "team_init";
    SYMMEM_CHECK(symmem__check_initialized(call));
    if (npes < 1 || npes > RT->n_pes)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: npes=%d is outside [1, %d]", call, npes,
                             RT->n_pes);
    if (index < 0 || index >= npes)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: pe_idx_in_team=%d is outside [0, npes=%d)",
                             call, index, npes);
    int *members = members_alloc(npes);
    if (members == NULL) return symmem__error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", call);
    int handle = SYMMEM_TEAM_INVALID;
    symmem_status_t status = RT->ops->team_init(RT->be, key | 1, npes, index, members, &handle);
    if (status != SYMMEM_OK) {
        free(members);
        return status;
    }
    return adopt(call, handle, members, npes, new_team_p);
}

symmem_status_t symmem_team_destroy(symmem_team_t team)
{
    const symmem_team_view_t *v = NULL;
    SYMMEM_CHECK(symmem__team_lookup("team_destroy", team, &v));
    if (team < SYMMEM_TEAM_FIRST_USER)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "team_destroy: team=%d is predefined and cannot be destroyed",
                             (int)team);
    SYMMEM_CHECK(RT->ops->team_destroy(RT->be, v));
    free(RT->teams[team].members);
    memset(&RT->teams[team], 0, sizeof(RT->teams[team]));
    return SYMMEM_OK;
}

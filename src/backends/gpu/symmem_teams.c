/* The symmem engine's teams. The predefined ones follow from where the PEs
 * are: one host, every heap mapped (WORLD, SHARED and NODE hold every PE),
 * SAME_GPU the PEs on this PE's GPU, GPU_LEADERS the first PE of each GPU.
 * A new team takes the lowest handle that no member of its parent (of
 * team_init: no member) has in use, so it is the same on every member; a
 * split is a collective on its parent, checked through the call pages
 * before the members agree over the host mesh. team_init's PEs find each
 * other by its key: each asks every PE of the job, and the npes - 1 askers
 * with its key are its team. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "symmem_engine.h"

/* ---- predefined ---- */

static int in_predefined(const gpu_t *g, int team, int pe)
{
    const int64_t *gpus = g->sym->gpus;
    int me = g->boot.rank;
    switch (team) {
    case SYMMEM_TEAM_SAME_MYPE_NODE: return pe == me;
    case SYMMEM_TEAM_SAME_GPU: return gpus[pe] == gpus[me];
    case SYMMEM_TEAM_GPU_LEADERS:
        for (int q = 0; q < pe; q++)
            if (gpus[q] == gpus[pe]) return 0; /* pe is not its GPU's first */
        return 1;
    default: return 1; /* WORLD, SHARED, NODE */
    }
}

symmem_status_t symmem__sym_predefined_teams(gpu_t *g)
{
    int n = g->boot.nranks;
    for (int team = 0; team < SYMMEM_TEAM_FIRST_USER; team++) {
        if (!in_predefined(g, team, g->boot.rank)) continue; /* not in it */
        int *members = malloc(sizeof(int) * (size_t)n), count = 0;
        if (members == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
        for (int pe = 0; pe < n; pe++)
            if (in_predefined(g, team, pe)) members[count++] = pe;
        g->predefined[team].n = count;
        g->predefined[team].members = members;
    }
    return SYMMEM_OK;
}

/* ---- handles ---- */

/* The lowest handle free in busy (SYMMEM_TEAM_INVALID: none). */
static int lowest_free(uint64_t busy)
{
    for (int h = SYMMEM_TEAM_FIRST_USER; h < SYMMEM_TEAM_MAX; h++)
        if (!(busy >> h & 1)) return h;
    return SYMMEM_TEAM_INVALID;
}

static symmem_status_t no_handle(const char *call)
{
    return ERROR(SYMMEM_ERR_NO_MEMORY,
                 "%s: too many teams: every team handle (%d) is in use on some member "
                 "(destroy teams with team_destroy)",
                 call, SYMMEM_TEAM_MAX - SYMMEM_TEAM_FIRST_USER);
}

/* A split: checked as a collective on the parent (args: what every parent
 * member must pass alike), then the parent's handles in use, gathered. */
static symmem_status_t split_start(gpu_t *g, const char *call, const symmem_team_view_t *parent,
                                   uint64_t args, uint64_t *busy_p)
{
    *busy_p = g->sym->teams_in_use;
    if (parent->n == 1) return SYMMEM_OK; /* nobody to agree with (TEAM_SAME_MYPE_NODE) */
    gpu_call_ref_t ref;
    SYMMEM_CHECK(symmem__gpu_collective_enter(g, call, SYMMEM_CALL_TEAM_SPLIT, parent, args, 0, 0,
                                              0, 1, &ref));
    int64_t masks[parent->n];
    SYMMEM_CHECK(symmem__sym_allgather(g, call, parent->members, parent->n,
                                       (int64_t)g->sym->teams_in_use, masks));
    *busy_p = 0;
    for (int i = 0; i < parent->n; i++) *busy_p |= (uint64_t)masks[i];
    return SYMMEM_OK;
}

symmem_status_t symmem__sym_split_strided(gpu_t *g, const symmem_team_view_t *parent, int start,
                                          int stride, int size, int in_team, int *handle_p)
{
    const char *call = "team_split_strided";
    uint64_t busy, args = (uint64_t)(uint32_t)start << 40 ^ (uint64_t)(uint32_t)stride << 20 ^
                          (uint64_t)(uint32_t)size;
    SYMMEM_CHECK(split_start(g, call, parent, args, &busy));
    int handle = lowest_free(busy);
    if (handle == SYMMEM_TEAM_INVALID) return no_handle(call);
    if (in_team) g->sym->teams_in_use |= 1ULL << handle;
    *handle_p = in_team ? handle : SYMMEM_TEAM_INVALID;
    return SYMMEM_OK;
}

/* Every PE is in one x team and one y team: the lowest two handles free on
 * the whole parent (x teams are apart from each other, as y teams are). */
symmem_status_t symmem__sym_split_2d(gpu_t *g, const symmem_team_view_t *parent, int xrange,
                                     int *xhandle_p, int *yhandle_p)
{
    const char *call = "team_split_2d";
    uint64_t busy;
    SYMMEM_CHECK(split_start(g, call, parent, (uint64_t)1 << 63 | (uint32_t)xrange, &busy));
    int x = lowest_free(busy);
    int y = x == SYMMEM_TEAM_INVALID ? x : lowest_free(busy | 1ULL << x);
    if (y == SYMMEM_TEAM_INVALID) return no_handle(call);
    g->sym->teams_in_use |= 1ULL << x | 1ULL << y;
    *xhandle_p = x;
    *yhandle_p = y;
    return SYMMEM_OK;
}

void symmem__sym_team_destroy(gpu_t *g, int handle)
{
    g->sym->teams_in_use &= ~(1ULL << handle);
}

symmem_status_t symmem__sym_team_meet(gpu_t *g, const char *call, int handle, const int *members,
                                      int n)
{
    (void)handle;
    int64_t values[n];
    return symmem__sym_allgather(g, call, members, n, 0, values);
}

/* ---- team_init ---- */

/* team_init's wait also ends where a member it waits for waits on the host
 * in a collective for this PE: neither could ever go on. */
typedef struct {
    sym_wait_t wait;
    int (*plain)(void *arg);
    const int *found; /* [n]: PEs heard from */
} init_wait_t;

static int init_still_waiting(void *arg)
{
    init_wait_t *w = arg;
    if (w->plain(&w->wait) != 0) return 1;
    gpu_t *g = w->wait.g;
    for (int pe = 0; pe < g->boot.nranks; pe++) {
        symmem_call_t theirs;
        if (pe == g->boot.rank || w->found[pe] || g->calls.peers == NULL ||
            !symmem__gpu_calls_waits_for_me(&g->calls, pe, &theirs))
            continue;
        char what[160];
        symmem__gpu_core->call_describe(theirs, what, sizeof(what));
        w->wait.status = ERROR(SYMMEM_ERR_MISMATCH,
                               "team_init: PE %d is in %s, which waits for this PE, and this PE "
                               "is in team_init (every PE must make the same collective calls "
                               "in the same order)",
                               pe, what);
        return 1;
    }
    return 0;
}

symmem_status_t symmem__sym_team_init(gpu_t *g, uint64_t key, int npes, int index, int *members,
                                      int *handle_p)
{
    const char *call = "team_init";
    symmem_engine_state_t *s = g->sym;
    int n = g->boot.nranks, me = g->boot.rank, found[n];
    memset(found, 0, sizeof(found));
    init_wait_t w = {.found = found};
    symmem__sym_wait_start(&w.wait, g, call, "the other PEs of the team (the same key)", 0);
    w.plain = w.wait.mesh.still_waiting;
    w.wait.mesh = (mesh_wait_t){init_still_waiting, &w};
    int rc = 0;
    for (int pe = 0; pe < n && rc == 0 && npes > 1; pe++) {
        if (pe == me) continue;
        mesh_msg_t ask = {
            .kind = MESH_TEAM_INIT, .key = key, .value = {index, npes, (int64_t)s->teams_in_use}};
        rc = symmem__mesh_send(&s->mesh, pe, &ask, -1, &w.wait.mesh);
    }
    for (int i = 0; i < npes; i++) members[i] = -1;
    members[index] = me;
    uint64_t busy = s->teams_in_use;
    for (int heard = 1; heard < npes && rc == 0; heard++) {
        mesh_msg_t msg;
        rc = symmem__mesh_recv(&s->mesh, -1, MESH_TEAM_INIT, key, &msg, NULL, &w.wait.mesh);
        if (rc != 0) break;
        int from = msg.from, at = (int)msg.value[0];
        if (msg.value[1] != npes || at < 0 || at >= npes || members[at] >= 0 || found[from])
            return ERROR(SYMMEM_ERR_MISMATCH,
                         "team_init: PE %d asked for this key's team as index %lld of %lld PEs, "
                         "and this PE as index %d of %d (each index once; every PE the same "
                         "npes)",
                         from, (long long)msg.value[0], (long long)msg.value[1], index, npes);
        found[from] = 1;
        members[at] = from;
        busy |= (uint64_t)msg.value[2];
    }
    if (rc != 0) return symmem__sym_mesh_failed(g, &w.wait, rc);
    int handle = lowest_free(busy);
    if (handle == SYMMEM_TEAM_INVALID) return no_handle(call);
    s->teams_in_use |= 1ULL << handle;
    *handle_p = handle;
    return SYMMEM_OK;
}

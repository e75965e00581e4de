/* The symmem engine's waits on the host mesh (host_mesh.h): as every wait
 * of the backend, ended by Ctrl-C, a dead peer and SYMMEM_TIMEOUT (before
 * the call pages exist, at init, by init's own limit too); a mesh call's
 * failure as the backend's error; and the allgather the engine's other
 * files meet with. */
#include <stdio.h>

#include "gpu.h"
#include "symmem_engine.h"

static int still_waiting(void *arg)
{
    sym_wait_t *w = arg;
    w->status = symmem__gpu_still_waiting(w->g, w->call, w->what, w->started, &w->next_check);
    if (w->status == SYMMEM_OK && w->limit > 0 && w->g->boot.timeout <= 0 &&
        symmem__gpu_now() - w->started > w->limit)
        w->status =
            ERROR(SYMMEM_ERR_TIMEOUT, "%s: waited %.0f s for %s (SYMMEM_TIMEOUT sets how long)",
                  w->call, w->limit, w->what);
    return w->status != SYMMEM_OK;
}

void symmem__sym_wait_start(sym_wait_t *w, gpu_t *g, const char *call, const char *what,
                            double limit)
{
    *w = (sym_wait_t){.g = g, .call = call, .what = what, .limit = limit};
    w->started = symmem__gpu_now();
    w->next_check = w->started + 0.1;
    w->mesh = (mesh_wait_t){still_waiting, w};
}

symmem_status_t symmem__sym_mesh_failed(gpu_t *g, const sym_wait_t *w, int rc)
{
    const host_mesh_t *m = &g->sym->mesh;
    if (rc == MESH_STOPPED) return w->status;
    if (rc == MESH_GONE) {
        char how[256];
        int dead = symmem__gpu_peer_watch_find_dead(&g->watch, symmem__gpu_core, how, sizeof(how));
        if (dead != m->culprit) snprintf(how, sizeof(how), "closed its connection to this PE");
        return ERROR(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s while this PE waited for %s", w->call,
                     m->culprit, how, w->what);
    }
    return ERROR(SYMMEM_ERR_BACKEND, "%s: the symmem engine's sockets between the PEs: %s", w->call,
                 m->why);
}

symmem_status_t symmem__sym_allgather(gpu_t *g, const char *call, const int *members, int n,
                                      int64_t value, int64_t *values)
{
    int world[members == NULL ? g->boot.nranks : 1];
    if (members == NULL) { /* the world (init's steps come before g->world) */
        n = g->boot.nranks;
        for (int pe = 0; pe < n; pe++) world[pe] = pe;
        members = world;
    }
    sym_wait_t w; /* before the call pages (init's first steps), init's limit */
    symmem__sym_wait_start(&w, g, call, "every PE taking part to arrive",
                           g->world == NULL ? GPU_INIT_TIMEOUT_SECONDS : 0);
    int rc = symmem__mesh_allgather(&g->sym->mesh, members, n, value, values, &w.mesh);
    return rc == 0 ? SYMMEM_OK : symmem__sym_mesh_failed(g, &w, rc);
}

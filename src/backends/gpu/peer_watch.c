/* Which peers still run: see peer_watch.h. */
#include "peer_watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A 31-bit hash of the host name: equal on PEs that share a host. */
static uint32_t host_hash(const char *host)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = host; *c; c++) h = (h ^ (uint8_t)*c) * 16777619u;
    return h & 0x7fffffffu;
}

int64_t symmem__gpu_peer_watch_host_pid(const char *host)
{
    return ((int64_t)host_hash(host) << 32) | (int64_t)(uint32_t)getpid();
}

int64_t symmem__gpu_peer_watch_start_time(const symmem_core_services_t *core)
{
    return (int64_t)core->process_start_time(getpid());
}

int symmem__gpu_peer_watch_init(peer_watch_t *w, int n_pes, int me, const int64_t *host_pids,
                                const int64_t *starts, const char *status_dir)
{
    memset(w, 0, sizeof(*w));
    w->n_pes = n_pes;
    w->me = me;
    snprintf(w->status_dir, sizeof(w->status_dir), "%s", status_dir ? status_dir : "");
    w->pids = calloc((size_t)n_pes, sizeof(*w->pids));
    w->starts = calloc((size_t)n_pes, sizeof(*w->starts));
    if (w->pids == NULL || w->starts == NULL) {
        symmem__gpu_peer_watch_free(w);
        return -1;
    }
    int64_t my_host = host_pids[me] >> 32;
    for (int pe = 0; pe < n_pes; pe++) {
        w->elsewhere += host_pids[pe] >> 32 != my_host;
        if (pe == me || host_pids[pe] >> 32 != my_host) continue;
        w->pids[pe] = (pid_t)(uint32_t)host_pids[pe];
        w->starts[pe] = (uint64_t)starts[pe];
    }
    return 0;
}

void symmem__gpu_peer_watch_free(peer_watch_t *w)
{
    free(w->pids);
    free(w->starts);
    w->pids = NULL;
    w->starts = NULL;
}

int symmem__gpu_peer_watch_find_dead(const peer_watch_t *w, const symmem_core_services_t *core,
                                     char *how, size_t how_size)
{
    double when = 0;
    int lost = w->remote != NULL ? symmem__heartbeat_lost(w->remote, how, how_size) : -1;
    if (lost >= 0) return lost;
    for (int pe = 0; pe < w->n_pes && w->pids != NULL; pe++) {
        if (pe == w->me) continue;
        if (core->exit_report(w->status_dir, pe, how, how_size, &when)) return pe;
        if (w->pids[pe] == 0 || !core->process_gone(w->pids[pe], w->starts[pe])) continue;
        /* The launcher writes its report right after reaping: give it a moment. */
        for (int i = 0; i < 20 && w->status_dir[0] != '\0'; i++) {
            if (core->exit_report(w->status_dir, pe, how, how_size, &when)) return pe;
            usleep(10000);
        }
        snprintf(how, how_size, "is gone (pid %ld is no longer running)", (long)w->pids[pe]);
        return pe;
    }
    return -1;
}

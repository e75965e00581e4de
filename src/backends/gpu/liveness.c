/* Init's steps that learn which peers run (peer_watch.h): every PE's host
 * and pid, and where any PE is on another host, the heartbeat to PE 0
 * (heartbeat.h). */
#include <stdlib.h>

#include "gpu.h"

/* Every PE learns where the others run, to notice one that dies. */
symmem_status_t symmem__gpu_watch_peers(gpu_t *g)
{
    int n = g->boot.nranks;
    int64_t *host_pids = calloc((size_t)n, sizeof(int64_t));
    int64_t *starts = calloc((size_t)n, sizeof(int64_t));
    symmem_status_t status =
        host_pids && starts ? SYMMEM_OK : ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    if (status == SYMMEM_OK)
        status = symmem__gpu_exchange(g, "init", symmem__gpu_peer_watch_host_pid(g->boot.host),
                                      host_pids);
    if (status == SYMMEM_OK)
        status = symmem__gpu_exchange(g, "init",
                                      symmem__gpu_peer_watch_start_time(symmem__gpu_core), starts);
    if (status == SYMMEM_OK && symmem__gpu_peer_watch_init(&g->watch, n, g->boot.rank, host_pids,
                                                           starts, g->boot.status_dir) != 0)
        status = ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    free(host_pids);
    free(starts);
    return status;
}

/* A PE on another host cannot be checked by its pid: where there is one,
 * every PE connects to PE 0's heartbeat (core/heartbeat.c), whose address and
 * token PE 0 hands over in three agreements, and a fourth says whether every
 * PE got through. Every PE takes part in all four, whatever happened to it. */
symmem_status_t symmem__gpu_heartbeat_start(gpu_t *g)
{
    if (g->watch.elsewhere == 0) return SYMMEM_OK; /* one host: pids tell */
    int n = g->boot.nranks, me = g->boot.rank, ok = 1, failed = -1;
    const char *ifname = symmem__gpu_core->env_string("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME");
    char why[400] = "";
    heartbeat_t *h = &g->heartbeat;
    if (me == 0)
        ok = symmem__heartbeat_serve(h, n, g->boot.heartbeat, ifname, why, sizeof(why)) == 0;
    const heartbeat_hub_t *mine = &h->hub;
    int64_t words[3] = {ok ? (int64_t)mine->port << 32 | mine->addrs[0] : 0, (int64_t)mine->token,
                        (int64_t)mine->addrs[1] << 32 | mine->addrs[2]};
    int64_t *values = calloc((size_t)n, sizeof(int64_t));
    if (values == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    heartbeat_hub_t hub = {{0}, 0, 0};
    symmem_status_t status = SYMMEM_OK;
    for (int k = 0; k < 3 && status == SYMMEM_OK; k++) {
        status = symmem__gpu_exchange(g, "init", me == 0 ? words[k] : 0, values);
        uint64_t word = (uint64_t)values[0];
        if (k == 0) hub.port = (uint16_t)(word >> 32), hub.addrs[0] = (uint32_t)word;
        if (k == 1) hub.token = word;
        if (k == 2) hub.addrs[1] = (uint32_t)(word >> 32), hub.addrs[2] = (uint32_t)word;
    }
    if (status == SYMMEM_OK && me != 0 && hub.port != 0)
        ok = symmem__heartbeat_join(h, me, n, g->boot.heartbeat, &hub, why, sizeof(why)) == 0;
    if (status == SYMMEM_OK) status = symmem__gpu_exchange(g, "init", ok, values);
    for (int pe = 0; status == SYMMEM_OK && pe < n && failed < 0; pe++)
        if (values[pe] == 0) failed = pe;
    free(values);
    if (status == SYMMEM_OK && failed >= 0)
        status = failed == me ? ERROR(SYMMEM_ERR_BACKEND,
                                      "init: the heartbeat between PEs on "
                                      "different hosts: %s",
                                      why)
                              : ERROR(SYMMEM_ERR_BACKEND,
                                      "init: PE %d could not start the "
                                      "heartbeat between PEs on different hosts (its error "
                                      "says why)",
                                      failed);
    if (status != SYMMEM_OK) {
        symmem__heartbeat_stop(h, 0);
        return status;
    }
    g->watch.remote = h;
    return SYMMEM_OK;
}

void symmem__gpu_heartbeat_stop(gpu_t *g, int finished)
{
    if (g->watch.remote == NULL) return;
    g->watch.remote = NULL;
    symmem__heartbeat_stop(&g->heartbeat, finished);
}

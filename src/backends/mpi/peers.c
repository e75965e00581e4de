/* What each PE learns of the others at init, for liveness.c: the pid and
 * start time of each PE on this host, and where any PE is on another host
 * (or SYMMEM_ONE_HOST_PER_PE=1 says so) the heartbeat to PE 0
 * (core/heartbeat.c). Collective, through waits that watch the exit
 * reports already (progress.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_backend.h"

/* A 31-bit hash of the host's real name (not the bootstrap's, which
 * SYMMEM_ONE_HOST_PER_PE changes: a pid is still checkable here). */
static uint32_t host_hash(void)
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = host; *c; c++) h = (h ^ (uint8_t)*c) * 16777619u;
    return h & 0x7fffffffu;
}

symmem_status_t symmem__mpi_peers_init(mpi_t *m)
{
    mpi_peers_t *p = &m->peers;
    snprintf(p->status_dir, sizeof(p->status_dir), "%s", m->boot.status_dir);
    p->pids = calloc((size_t)m->n, sizeof(*p->pids));
    p->starts = calloc((size_t)m->n, sizeof(*p->starts));
    uint64_t mine[2] = {(uint64_t)host_hash() << 32 | (uint32_t)getpid(),
                        MPI_CORE->process_start_time(getpid())};
    uint64_t *all = calloc(2 * (size_t)m->n, sizeof(uint64_t));
    if (p->pids == NULL || p->starts == NULL || all == NULL) {
        free(all);
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    }
    MPI_Request req;
    int rc = MPI_Iallgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, m->world, &req);
    symmem_status_t status = rc == MPI_SUCCESS ? symmem__mpi_wait(m, "init", &req)
                                               : symmem__mpi_failed(rc, "init", "MPI_Iallgather");
    if (status != SYMMEM_OK) {
        free(all);
        return status;
    }
    for (int pe = 0; pe < m->n; pe++) {
        if (pe == m->me || all[2 * pe] >> 32 != mine[0] >> 32) continue;
        p->pids[pe] = (pid_t)(uint32_t)all[2 * pe];
        p->starts[pe] = all[2 * pe + 1];
    }
    free(all);
    return SYMMEM_OK;
}

/* Whether the heartbeat is needed: a PE whose pid this PE cannot check. */
static int any_elsewhere(const mpi_t *m)
{
    for (int pe = 0; pe < m->n; pe++)
        if (pe != m->me && m->peers.pids[pe] == 0) return 1;
    return MPI_CORE->env_string("SYMMEM_ONE_HOST_PER_PE") != NULL &&
           strcmp(MPI_CORE->env_string("SYMMEM_ONE_HOST_PER_PE"), "1") == 0 && m->n > 1;
}

/* PE 0 serves the heartbeat and hands its address over (MPI_Ibcast); every
 * PE then joins, and all agree whether every one got through. Collective. */
symmem_status_t symmem__mpi_heartbeat_start(mpi_t *m)
{
    const char *call = "init";
    if (!any_elsewhere(m)) return SYMMEM_OK;
    heartbeat_t *h = calloc(1, sizeof(*h));
    if (h == NULL) return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    const char *ifname = MPI_CORE->env_string("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME");
    char why[400] = "";
    int ok = 1, all_ok = 0;
    if (m->me == 0)
        ok = symmem__heartbeat_serve(h, m->n, m->boot.heartbeat, ifname ? ifname : "", why,
                                     sizeof(why)) == 0;
    heartbeat_hub_t hub = h->hub;
    MPI_Request req;
    symmem_status_t status = SYMMEM_OK;
    int rc = MPI_Ibcast(&hub, (int)sizeof(hub), MPI_BYTE, 0, m->world, &req);
    if (rc == MPI_SUCCESS) status = symmem__mpi_wait(m, call, &req);
    if (rc == MPI_SUCCESS && status == SYMMEM_OK && m->me != 0 && hub.port != 0)
        ok = symmem__heartbeat_join(h, m->me, m->n, m->boot.heartbeat, &hub, why, sizeof(why)) == 0;
    if (rc == MPI_SUCCESS && status == SYMMEM_OK)
        rc = MPI_Iallreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->world, &req);
    if (rc == MPI_SUCCESS && status == SYMMEM_OK) status = symmem__mpi_wait(m, call, &req);
    if (rc != MPI_SUCCESS || status != SYMMEM_OK || !all_ok) {
        symmem__heartbeat_stop(h, 0);
        free(h);
        if (status != SYMMEM_OK) return status;
        if (rc != MPI_SUCCESS) return symmem__mpi_failed(rc, call, "the heartbeat's start");
        return ok ? MPI_CORE->error(SYMMEM_ERR_BACKEND,
                                    "init: another PE could not start the "
                                    "heartbeat between PEs on different hosts (its error says "
                                    "why)")
                  : MPI_CORE->error(SYMMEM_ERR_BACKEND,
                                    "init: the heartbeat between PEs on "
                                    "different hosts: %s",
                                    why);
    }
    m->peers.heartbeat = h;
    return SYMMEM_OK;
}

void symmem__mpi_heartbeat_stop(mpi_t *m, int finished)
{
    heartbeat_t *h = m->peers.heartbeat;
    if (h == NULL) return;
    m->peers.heartbeat = NULL;
    symmem__heartbeat_stop(h, finished);
    free(h);
}

void symmem__mpi_peers_free(mpi_t *m)
{
    free(m->peers.pids);
    free(m->peers.starts);
    m->peers.pids = NULL;
    m->peers.starts = NULL;
}

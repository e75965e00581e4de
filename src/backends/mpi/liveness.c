/* Which PEs still run. MPI without fault tolerance often just hangs when a
 * process dies (or the launcher ends the job), so the mpi backend watches
 * its peers itself, as the cpu engine does: a PE on this host by its pid
 * and start time, any PE by the launcher's exit report (python -m
 * symmem.run writes one per PE), and where any PE is on another host (or
 * SYMMEM_ONE_HOST_PER_PE=1 says so) by the gpu backend's heartbeat to PE 0
 * (core/heartbeat.c): a PE that dies closes its connection, one that stops
 * falls silent for SYMMEM_HEARTBEAT_S. */
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
    int rc = MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, m->world);
    if (rc != MPI_SUCCESS) {
        free(all);
        return symmem__mpi_failed(rc, "init", "MPI_Allgather");
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

/* PE 0 serves the heartbeat and hands its address over (MPI_Bcast); every
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
    int rc = MPI_Bcast(&hub, (int)sizeof(hub), MPI_BYTE, 0, m->world);
    if (rc == MPI_SUCCESS && m->me != 0 && hub.port != 0)
        ok = symmem__heartbeat_join(h, m->me, m->n, m->boot.heartbeat, &hub, why, sizeof(why)) == 0;
    if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, m->world);
    if (rc != MPI_SUCCESS || !all_ok) {
        symmem__heartbeat_stop(h, 0);
        free(h);
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

/* Whether PE pe has ended; how and when (for the first death) if so. */
static int peer_dead(const mpi_peers_t *p, int pe, char *how, size_t how_size, double *when_p)
{
    *when_p = 1e300;
    if (MPI_CORE->exit_report(p->status_dir, pe, how, how_size, when_p)) return 1;
    if (p->pids[pe] == 0 || !MPI_CORE->process_gone(p->pids[pe], p->starts[pe])) return 0;
    /* The launcher writes its report right after reaping: give it a moment. */
    for (int i = 0; i < 20 && p->status_dir[0] != '\0'; i++) {
        if (MPI_CORE->exit_report(p->status_dir, pe, how, how_size, when_p)) return 1;
        usleep(10000);
    }
    snprintf(how, how_size, "is gone (pid %ld is no longer running)", (long)p->pids[pe]);
    return 1;
}

symmem_status_t symmem__mpi_peers_check(mpi_t *m, const char *call)
{
    char how[256], first_how[256] = "";
    int first = -1;
    double first_when = 0, when;
    for (int pe = 0; pe < m->n && m->peers.pids != NULL; pe++) {
        if (pe == m->me || !peer_dead(&m->peers, pe, how, sizeof(how), &when)) continue;
        if (first < 0 || when < first_when) { /* later deaths are often its echoes */
            first = pe;
            first_when = when;
            memcpy(first_how, how, sizeof(how));
        }
    }
    if (first < 0 && m->peers.heartbeat != NULL) { /* a PE on another host */
        int lost = symmem__heartbeat_lost(m->peers.heartbeat, first_how, sizeof(first_how));
        if (lost >= 0 && lost != m->me) { /* dead elsewhere, or stopped (silent) */
            symmem__mpi_lost(m);
            /* A closed connection often comes before the launcher's report:
             * give the report a moment, it says more (how the PE ended). */
            for (int i = 0; i < 20 && m->peers.status_dir[0] != '\0'; i++) {
                if (MPI_CORE->exit_report(m->peers.status_dir, lost, how, sizeof(how), &when)) {
                    memcpy(first_how, how, sizeof(how));
                    break;
                }
                usleep(10000);
            }
            if (m->peers.pids[lost] != 0)
                return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d (pid %d) %s", call, lost,
                                       (int)m->peers.pids[lost], first_how);
            return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s", call, lost, first_how);
        }
    }
    if (first < 0) return SYMMEM_OK;
    symmem__mpi_lost(m);
    if (m->peers.pids[first] != 0)
        return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d (pid %d) %s", call, first,
                               (int)m->peers.pids[first], first_how);
    return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s", call, first, first_how);
}

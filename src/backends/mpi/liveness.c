/* Which PEs still run. MPI without fault tolerance often just hangs when a
 * process dies (or the launcher ends the job), so the mpi backend watches
 * its peers itself, as the cpu engine does: a PE on this host by its pid
 * and start time, any PE by the launcher's exit report (python -m
 * symmem.run writes one per PE). A PE on another host that dies without
 * a report is found by SYMMEM_TIMEOUT only (docs/multi-node.md). */
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
    if (first < 0) return SYMMEM_OK;
    symmem__mpi_lost(m);
    if (m->peers.pids[first] != 0)
        return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d (pid %d) %s", call, first,
                               (int)m->peers.pids[first], first_how);
    return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s", call, first, first_how);
}

/* Which PEs still run. MPI without fault tolerance often just hangs when a
 * process dies (or the launcher ends the job), so the mpi backend watches
 * its peers itself, as the cpu engine does: a PE on this host by its pid
 * and start time, any PE by the launcher's exit report (python -m
 * symmem.run writes one per PE), and where any PE is on another host (or
 * SYMMEM_ONE_HOST_PER_PE=1 says so) by the gpu backend's heartbeat to PE 0
 * (core/heartbeat.c): a PE that dies closes its connection, one that stops
 * falls silent for SYMMEM_HEARTBEAT_S. What each PE knows of the others is
 * gathered at init (peers.c); until then the exit reports tell. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mpi_backend.h"

/* Whether PE pe has ended; how and when (for the first death) if so. */
static int peer_dead(const mpi_peers_t *p, int pe, char *how, size_t how_size, double *when_p)
{
    *when_p = 1e300;
    if (MPI_CORE->exit_report(p->status_dir, pe, how, how_size, when_p)) return 1;
    if (p->pids == NULL || p->pids[pe] == 0 || !MPI_CORE->process_gone(p->pids[pe], p->starts[pe]))
        return 0;
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
    for (int pe = 0; pe < m->n; pe++) {
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
            if (m->peers.pids[lost] != 0) /* the heartbeat starts after the pids */
                return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d (pid %d) %s", call, lost,
                                       (int)m->peers.pids[lost], first_how);
            return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s", call, lost, first_how);
        }
    }
    if (first < 0) return SYMMEM_OK;
    symmem__mpi_lost(m);
    if (m->peers.pids != NULL && m->peers.pids[first] != 0)
        return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d (pid %d) %s", call, first,
                               (int)m->peers.pids[first], first_how);
    return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD, "%s: PE %d %s", call, first, first_how);
}

/* A team's meeting: every member arrives with the fingerprint of the
 * collective call it makes, before anything moves. Every collective meets
 * first, and so do malloc and free (on TEAM_WORLD) and the team calls (on
 * the parent or the team), all the same way for one team, so that any two
 * calls of its members meet and compare their fingerprints, never wait in
 * different mechanisms (PE 0 in barrier_all's exchange, PE 1 in free's
 * MPI_Iallgather, each for ever). The way depends on the team only: over
 * the node's shared window where every member maps every other's heap,
 * else by one exchange of messages for a small team, else on the team's
 * communicator (MPI_Iallgather of the fingerprints, or MPI_Ibarrier). */
#include "mpi_backend.h"

symmem_status_t symmem__mpi_comm_barrier(mpi_t *m, const char *call, MPI_Comm comm)
{
    MPI_Request req;
    MPI_TRY(call, "MPI_Ibarrier", MPI_Ibarrier(comm, &req));
    return symmem__mpi_wait(m, call, &req);
}

/* MPI_Ibarrier on the team's communicator, as a meeting (departures.c). */
static symmem_status_t team_barrier(mpi_t *m, const symmem_team_view_t *team, symmem_call_t call)
{
    SYMMEM_CHECK(symmem__mpi_meeting_begin(m, team, call));
    symmem_status_t status =
        symmem__mpi_comm_barrier(m, symmem__mpi_call_name(call), m->teams[team->channel]);
    symmem__mpi_meeting_end(m, status);
    return status;
}

symmem_status_t symmem__mpi_meet(mpi_t *m, const symmem_team_view_t *team, symmem_call_t call,
                                 int compare)
{
    if (symmem__mpi_on_node(m, team)) return symmem__mpi_node_barrier(m, team, call);
    if (symmem__mpi_exchange_fits(team)) /* the exchange waits for every member */
        return symmem__mpi_exchange(m, team, call, NULL, 0, NULL);
    if (compare) /* comparing the fingerprints waits for every member */
        return symmem__mpi_check_call(m, team, call, 1);
    return team_barrier(m, team, call);
}

const symmem_team_view_t *symmem__mpi_world_view(const mpi_t *m, symmem_team_view_t *view)
{
    view->members = NULL;
    view->n = m->n;
    view->me = m->me;
    view->channel = SYMMEM_TEAM_WORLD;
    return view;
}

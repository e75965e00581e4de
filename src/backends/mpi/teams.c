/* Teams are communicators, by handle in m->teams: the predefined ones made
 * at init from where the PEs are (the node's communicator), splits made by
 * MPI_Comm_split on the parent's (bounded: comms.c), after its members agreed on the
 * arguments (a fingerprint, calls.c) and on a handle free on all of them. */
#include <stdlib.h>

#include "mpi_backend.h"

static symmem_status_t own(mpi_t *m, symmem_team_t team, MPI_Comm comm)
{
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    m->teams[team] = comm;
    m->departures.met[team] = 0; /* a new team: its members count its meetings from here */
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_teams_init(mpi_t *m)
{
    const char *call = "init";
    MPI_Comm c;
    SYMMEM_CHECK(symmem__mpi_comm_dup(m, call, m->world, &c));
    own(m, SYMMEM_TEAM_WORLD, c);
    SYMMEM_CHECK(symmem__mpi_comm_dup(m, call, m->world, &c));
    own(m, SYMMEM_TEAM_GPU_LEADERS, c); /* no GPUs: every PE leads its own */
    SYMMEM_CHECK(symmem__mpi_comm_dup(m, call, m->node, &c));
    own(m, SYMMEM_TEAM_SHARED, c);
    SYMMEM_CHECK(symmem__mpi_comm_dup(m, call, m->node, &c));
    own(m, SYMMEM_TEAM_NODE, c);
    SYMMEM_CHECK(symmem__mpi_comm_split(m, call, m->world, m->local_rank[m->me], m->me, &c));
    own(m, SYMMEM_TEAM_SAME_MYPE_NODE, c);
    SYMMEM_CHECK(symmem__mpi_comm_dup(m, call, MPI_COMM_SELF, &c));
    own(m, SYMMEM_TEAM_SAME_GPU, c);
    return SYMMEM_OK;
}

void symmem__mpi_teams_free(mpi_t *m)
{
    for (int t = 0; t < SYMMEM_TEAM_MAX; t++)
        if (m->teams[t] != MPI_COMM_NULL) MPI_Comm_free(&m->teams[t]);
}

symmem_status_t symmem__mpi_predefined_team(symmem_backend_t *be, symmem_team_t team, int *members,
                                            int *n_p)
{
    mpi_t *m = be;
    int n = 0;
    switch (team) {
    case SYMMEM_TEAM_SHARED:
    case SYMMEM_TEAM_NODE:
        for (int i = 0; i < m->node_n; i++) members[n++] = m->node_pes[i];
        break;
    case SYMMEM_TEAM_SAME_MYPE_NODE: /* the PEs with this PE's number on their node */
        for (int pe = 0; pe < m->n; pe++)
            if (m->local_rank[pe] == m->local_rank[m->me]) members[n++] = pe;
        break;
    case SYMMEM_TEAM_SAME_GPU: members[n++] = m->me; break;
    default: /* WORLD, GPU_LEADERS */
        for (int pe = 0; pe < m->n; pe++) members[n++] = pe;
        break;
    }
    *n_p = n;
    return SYMMEM_OK;
}

/* FNV-1a over a split's arguments: every parent member must pass the same. */
static uint64_t hash_args(const int *args, int count)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < count; i++) h = (h ^ (uint32_t)args[i]) * 1099511628211ULL;
    return h;
}

/* The parent's members agree on the arguments and on want handles free on
 * all of them ([out] handles, lowest first). */
static symmem_status_t agree(mpi_t *m, const symmem_team_view_t *parent, uint64_t args_hash,
                             int want, int *handles)
{
    const char *call = "team_split";
    MPI_Comm comm = m->teams[parent->channel];
    SYMMEM_CHECK(symmem__mpi_meet(
        m, parent, symmem__call(SYMMEM_CALL_TEAM_SPLIT, parent->channel, args_hash, 0, 0, 0), 1));
    uint64_t mine = 0, busy = 0;
    for (int t = 0; t < SYMMEM_TEAM_MAX; t++)
        if (m->teams[t] != MPI_COMM_NULL) mine |= 1ULL << t;
    MPI_Request req;
    MPI_TRY(call, "MPI_Iallreduce",
            MPI_Iallreduce(&mine, &busy, 1, MPI_UINT64_T, MPI_BOR, comm, &req));
    SYMMEM_CHECK(symmem__mpi_wait(m, call, &req));
    int found = 0;
    for (int t = SYMMEM_TEAM_FIRST_USER; t < SYMMEM_TEAM_MAX && found < want; t++)
        if (!(busy >> t & 1)) handles[found++] = t;
    if (found < want)
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY,
                               "%s: too many teams: all %d team slots are in use on some PE "
                               "(destroy teams with team_destroy)",
                               call, SYMMEM_TEAM_MAX - SYMMEM_TEAM_FIRST_USER);
    return SYMMEM_OK;
}

static symmem_status_t split(mpi_t *m, const symmem_team_view_t *parent, int color, int handle,
                             int *handle_p)
{
    MPI_Comm comm;
    SYMMEM_CHECK(symmem__mpi_comm_split(m, "team_split", m->teams[parent->channel], color,
                                        parent->me, &comm));
    if (comm == MPI_COMM_NULL) {
        *handle_p = SYMMEM_TEAM_INVALID;
        return SYMMEM_OK;
    }
    own(m, handle, comm);
    SYMMEM_CHECK(symmem__mpi_node_channel_open(m, "team_split", comm, handle));
    *handle_p = handle;
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_team_split_strided(symmem_backend_t *be,
                                               const symmem_team_view_t *parent, int start,
                                               int stride, int size, int in_team, int *handle_p)
{
    mpi_t *m = be;
    int args[] = {1, start, stride, size}, handle;
    SYMMEM_CHECK(agree(m, parent, hash_args(args, 4), 1, &handle));
    return split(m, parent, in_team ? 0 : MPI_UNDEFINED, handle, handle_p);
}

symmem_status_t symmem__mpi_team_split_2d(symmem_backend_t *be, const symmem_team_view_t *parent,
                                          int xrange, int *xhandle_p, int *yhandle_p)
{
    /* Teams of one axis are disjoint, so they share a handle. */
    mpi_t *m = be;
    int args[] = {2, xrange}, handles[2];
    SYMMEM_CHECK(agree(m, parent, hash_args(args, 2), 2, handles));
    SYMMEM_CHECK(split(m, parent, parent->me / xrange, handles[0], xhandle_p));
    symmem_status_t status = split(m, parent, parent->me % xrange, handles[1], yhandle_p);
    if (status != SYMMEM_OK) MPI_Comm_free(&m->teams[handles[0]]);
    return status;
}

symmem_status_t symmem__mpi_team_destroy(symmem_backend_t *be, const symmem_team_view_t *team)
{
    mpi_t *m = be;
    /* Nobody may still be inside a collective of the team. */
    SYMMEM_CHECK(symmem__mpi_meet(
        m, team, symmem__call(SYMMEM_CALL_TEAM_DESTROY, team->channel, 0, 0, 0, 0), 1));
    MPI_Comm_free(&m->teams[team->channel]);
    return SYMMEM_OK;
}

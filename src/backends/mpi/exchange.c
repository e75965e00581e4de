/* The fingerprint check of a small team's collective, and a small
 * reduction's data with it, in one exchange: every member sends every
 * other one message on the team's communicator (point to point, which
 * never meets MPI's collectives on it): the fingerprint, then up to
 * MPI_EXCHANGE_DATA bytes. Each member receives into a buffer of the
 * largest size, so a member in another collective (a message of another
 * size) is received whole and compared, never truncated; and as every
 * collective sends exactly one message to each member, the messages of one
 * collective meet those of the same one in order (MPI's non-overtaking),
 * mismatched or not: after a mismatch the team goes on.
 *
 * Cheaper than comparing with an MPI_Iallgather before an MPI collective
 * (two of MPI's non-blocking collectives, whose schedules cost more than
 * their messages on one host): a barrier is one exchange, and so is a
 * reduction of up to MPI_EXCHANGE_DATA bytes, reduced by every member in
 * the members' order (the same result, bit for bit, on all). Teams of more
 * than MPI_EXCHANGE_MAX_PES members compare with MPI_Iallgather (calls.c),
 * whose rounds grow as the log of their size. */
#include <stdlib.h>
#include <string.h>

#include "../../core/reduce_kernels.h"
#include "mpi_backend.h"

#define TAG 7301 /* any tag: the team's communicator carries no other point to point */
#define SLOT (sizeof(symmem_call_t) + MPI_EXCHANGE_DATA)

int symmem__mpi_exchange_fits(const symmem_team_view_t *team)
{
    return team->n <= MPI_EXCHANGE_MAX_PES;
}

typedef struct {
    MPI_Request reqs[2 * MPI_EXCHANGE_MAX_PES];
    int count, rc;
} exchange_wait_t;

/* The mismatch error: which PEs called what (out of line). */
__attribute__((noinline, cold)) static symmem_status_t mismatch(const symmem_team_view_t *team,
                                                                const char *slots,
                                                                symmem_call_t call)
{
    symmem_call_t calls[MPI_EXCHANGE_MAX_PES];
    int pes[MPI_EXCHANGE_MAX_PES];
    char text[1024] = "";
    for (int i = 0; i < team->n; i++) {
        memcpy(&calls[i], slots + (size_t)i * SLOT, sizeof(symmem_call_t));
        pes[i] = mpi_member(team, i);
    }
    MPI_CORE->calls_group(calls, pes, team->n, text, sizeof(text));
    return MPI_CORE->error(SYMMEM_ERR_MISMATCH,
                           "%s: PEs disagree: %s (every PE must make the same collective calls, "
                           "with the same arguments, in the same order)",
                           symmem__mpi_call_name(call), text);
}

symmem_status_t symmem__mpi_exchange(mpi_t *m, const symmem_team_view_t *team, symmem_call_t call,
                                     const void *data, size_t bytes, const char **slots_p)
{
    const char *name = symmem__mpi_call_name(call);
    MPI_Comm comm = m->teams[team->channel];
    if (m->exchange == NULL && (m->exchange = malloc(SLOT * MPI_EXCHANGE_MAX_PES)) == NULL)
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "%s: out of host memory", name);
    SYMMEM_CHECK(symmem__mpi_meeting_begin(m, team, call));
    char *slots = m->exchange, *mine = slots + (size_t)team->me * SLOT;
    memcpy(mine, &call, sizeof(call));
    if (bytes) memcpy(mine + sizeof(call), data, bytes);
    exchange_wait_t w = {.count = 0, .rc = MPI_SUCCESS};
    int sent = (int)(sizeof(call) + bytes);
    for (int i = 0; i < team->n; i++) {
        if (i == team->me) continue;
        int rc = MPI_Irecv(slots + (size_t)i * SLOT, (int)SLOT, MPI_BYTE, i, TAG, comm,
                           &w.reqs[w.count]);
        if (rc == MPI_SUCCESS) w.count++;
        if (rc == MPI_SUCCESS) rc = MPI_Isend(mine, sent, MPI_BYTE, i, TAG, comm, &w.reqs[w.count]);
        if (rc == MPI_SUCCESS) w.count++;
        if (rc != MPI_SUCCESS) {
            w.rc = rc;
            break;
        }
    }
    symmem_status_t status = w.rc == MPI_SUCCESS
                                 ? symmem__mpi_wait_all(m, name, w.reqs, w.count, &w.rc)
                                 : symmem__mpi_failed(w.rc, name, "MPI_Isend");
    symmem__mpi_meeting_end(m, status == SYMMEM_OK && w.rc == MPI_SUCCESS ? SYMMEM_OK
                                                                          : SYMMEM_ERR_BACKEND);
    if (status == SYMMEM_OK && w.rc != MPI_SUCCESS) {
        SYMMEM_CHECK(symmem__mpi_peers_check(m, name)); /* a dead PE says more than MPI */
        status = symmem__mpi_failed(w.rc, name, "an exchange of fingerprints");
    }
    if (status != SYMMEM_OK) {
        /* MPI may still write the buffer, or send from it: it stays MPI's,
         * and the receives not yet matched are withdrawn, so that the next
         * collective's messages meet the next receives. */
        for (int i = 0; i < w.count; i += 2) /* the receives: even, each before its send */
            if (w.reqs[i] != MPI_REQUEST_NULL) MPI_Cancel(&w.reqs[i]);
        m->exchange = NULL;
        return status;
    }
    if (m->check_calls)
        for (int i = 0; i < team->n; i++)
            if (memcmp(slots + (size_t)i * SLOT, &call, sizeof(call)) != 0)
                return mismatch(team, slots, call);
    if (slots_p) *slots_p = slots + sizeof(call);
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_exchange_reduce(mpi_t *m, const symmem_team_view_t *team, void *dst,
                                            const void *src, size_t nelems, size_t bytes,
                                            symmem_dtype_t dtype, symmem_reduce_op_t op)
{
    symmem_call_t call = mpi_call(SYMMEM_CALL_REDUCE, team, nelems, (int)dtype, (int)op, 0);
    const char *data;
    SYMMEM_CHECK(symmem__mpi_exchange(m, team, call, src, bytes, &data));
    /* in the members' order, with the cpu engine's loops
     * (core/reduce_kernels.c): the same bits on every member */
    const void *srcs[MPI_EXCHANGE_MAX_PES];
    for (int i = 0; i < team->n; i++) srcs[i] = data + (size_t)i * SLOT;
    symmem__reduce_members(dst, srcs, team->n, nelems, dtype, op);
    MPI_Win_sync(m->win); /* as after MPI's collectives: the heap's public copy */
    return SYMMEM_OK;
}

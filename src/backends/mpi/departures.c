/* finalize() among the collectives. No collective call can match a PE's
 * finalize(), so a peer waiting for it in a collective, and the PE waiting
 * in finalize() for the peer, would wait for each other for ever. Instead
 * a PE entering finalize() sends every other PE a notice (LEAVE, on the
 * world communicator, which carries no other point to point) with how many
 * meetings it completed on each team's channel. A PE waiting in meeting k
 * of a team (meet.c's, or one of MPI's collectives) finds, between its
 * polls, a member whose notice counts fewer than k on that channel: the
 * member left before it, and never comes. It raises SYMMEM_ERR_PEER_DEAD
 * naming the member, and tells it (STUCK, with its collective), so that the
 * member's finalize() raises SYMMEM_ERR_MISMATCH naming this PE and its
 * collective. A member that completed meeting k before leaving has sent
 * its part of it: the wait goes on, and ends.
 *
 * A PE's STUCK comes before its own LEAVE (MPI keeps the order of two
 * messages between the same PEs with the same tag), so a PE whose
 * finalize() counts every other PE's LEAVE has heard every STUCK too. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_backend.h"

#define TAG 7302 /* the world communicator's notices; no other message has it */
enum { LEAVE = 1, STUCK = 2 };

struct mpi_notice {
    int32_t kind; /* LEAVE or STUCK */
    int32_t pe;   /* the sender */
    symmem_call_t call;
    uint64_t met[SYMMEM_TEAM_MAX]; /* LEAVE: the sender's meetings by channel */
};

#define RULE                                                                                       \
    "every PE must make the same collective calls, with the same arguments, in the same order"

static symmem_status_t post(mpi_t *m)
{
    mpi_departures_t *d = &m->departures;
    int rc = MPI_Irecv(d->in, sizeof(*d->in), MPI_BYTE, MPI_ANY_SOURCE, TAG, m->world, &d->in_req);
    if (rc != MPI_SUCCESS) {
        d->in_req = MPI_REQUEST_NULL;
        return symmem__mpi_failed(rc, "init", "MPI_Irecv");
    }
    return SYMMEM_OK;
}

symmem_status_t symmem__mpi_departures_start(mpi_t *m)
{
    mpi_departures_t *d = &m->departures;
    if (m->n == 1) return SYMMEM_OK; /* nobody to hear from */
    d->in = malloc(sizeof(*d->in));
    d->left_order = calloc((size_t)m->n, sizeof(int));
    if (d->in == NULL || d->left_order == NULL)
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    return post(m);
}

void symmem__mpi_departures_stop(mpi_t *m)
{
    mpi_departures_t *d = &m->departures;
    if (d->in_req != MPI_REQUEST_NULL) {
        MPI_Cancel(&d->in_req); /* a receive's cancel completes here */
        MPI_Wait(&d->in_req, MPI_STATUS_IGNORE);
    }
    free(d->in);
    free(d->left_order);
    free(d->left);
    if (d->out_reqs != NULL && !m->lost) { /* all sent: every PE heard it in finalize */
        free(d->out_reqs);
        free(d->out);
    } /* else MPI may still send them: they stay MPI's */
}

/* The notice that landed in d->in. */
static void take(mpi_t *m)
{
    mpi_departures_t *d = &m->departures;
    const mpi_notice_t *in = d->in;
    int pe = in->pe;
    if (pe < 0 || pe >= m->n || pe == m->me) return;
    if (in->kind == STUCK) {
        /* the first: the others raised over the same finalize() */
        if (d->stuck_pe < 0 && !d->stuck_said) {
            d->stuck_pe = pe;
            d->stuck_call = in->call;
        }
        return;
    }
    if (in->kind != LEAVE || d->left_order[pe]) return;
    if (d->left == NULL && (d->left = calloc((size_t)m->n, sizeof(*d->left))) == NULL) return;
    memcpy(d->left[pe], in->met, sizeof(in->met));
    d->left_order[pe] = ++d->left_n;
}

/* Every notice that has come. */
static void absorb(mpi_t *m)
{
    mpi_departures_t *d = &m->departures;
    int done = 1;
    while (d->in_req != MPI_REQUEST_NULL && done) {
        if (MPI_Test(&d->in_req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return;
        if (!done) return;
        take(m);
        if (post(m) != SYMMEM_OK) return;
    }
}

symmem_status_t symmem__mpi_meeting_begin(mpi_t *m, const symmem_team_view_t *team,
                                          symmem_call_t call)
{
    mpi_departures_t *d = &m->departures;
    if (d->out != NULL) {
        char what[160];
        MPI_CORE->call_describe(call, what, sizeof(what));
        return MPI_CORE->error(SYMMEM_ERR_INVALID,
                               "%s: this PE has called finalize(), which raised, and takes part "
                               "in no more collectives: call finalize() again, or end the program",
                               what);
    }
    d->team = team;
    d->call = call;
    return SYMMEM_OK;
}

void symmem__mpi_meeting_end(mpi_t *m, symmem_status_t status)
{
    mpi_departures_t *d = &m->departures;
    if (status == SYMMEM_OK && d->team != NULL) d->met[d->team->channel]++;
    d->team = NULL;
}

/* Tells pe, which left, that this PE raised waiting for it in call; waits
 * for the message to leave (briefly: it is small), as this PE may exit next. */
static void tell_stuck(mpi_t *m, int pe, symmem_call_t call)
{
    mpi_notice_t *note = calloc(1, sizeof(*note));
    if (note == NULL) return;
    note->kind = STUCK;
    note->pe = m->me;
    note->call = call;
    MPI_Request req;
    if (MPI_Isend(note, sizeof(*note), MPI_BYTE, pe, TAG, m->world, &req) != MPI_SUCCESS) {
        free(note);
        return;
    }
    int done = 0;
    const struct timespec ms = {0, 1000000};
    for (int i = 0; i < 1000 && MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done;
         i++)
        nanosleep(&ms, NULL);
    if (done)
        free(note);
    else
        MPI_Request_free(&req); /* sent later by MPI, from note, which stays */
}

symmem_status_t symmem__mpi_departures_check(mpi_t *m, const char *call)
{
    mpi_departures_t *d = &m->departures;
    absorb(m);
    const symmem_team_view_t *team = d->team;
    if (team == NULL || d->left_n == 0) return SYMMEM_OK;
    uint64_t meeting = d->met[team->channel] + 1; /* the one this PE waits in */
    int first = -1; /* of those that left before it, the first to leave: the cause */
    for (int i = 0; i < team->n; i++) {
        int pe = mpi_member(team, i);
        if (pe == m->me || !d->left_order[pe] || d->left[pe][team->channel] >= meeting) continue;
        if (first < 0 || d->left_order[pe] < d->left_order[first]) first = pe;
    }
    if (first < 0) return SYMMEM_OK;
    tell_stuck(m, first, d->call);
    /* This PE's own finalize() raises for no STUCK now: those this PE may
     * get tell of the same finalize() (of a PE that raised as this one did,
     * then left: its LEAVE may come before the first's) */
    d->stuck_said = 1;
    return MPI_CORE->error(SYMMEM_ERR_PEER_DEAD,
                           "%s: PE %d has called finalize() and left the job (it takes part in "
                           "no more collectives)",
                           call, first);
}

symmem_status_t symmem__mpi_leave(mpi_t *m)
{
    mpi_departures_t *d = &m->departures;
    if (d->out != NULL || m->n == 1) return SYMMEM_OK; /* told already (finalize again) */
    mpi_notice_t *out = calloc(1, sizeof(*out));
    MPI_Request *reqs = malloc((size_t)m->n * sizeof(*reqs));
    if (out == NULL || reqs == NULL) {
        free(out);
        free(reqs);
        return MPI_CORE->error(SYMMEM_ERR_NO_MEMORY, "finalize: out of host memory");
    }
    out->kind = LEAVE;
    out->pe = m->me;
    memcpy(out->met, d->met, sizeof(d->met));
    for (int pe = 0; pe < m->n; pe++) {
        reqs[pe] = MPI_REQUEST_NULL;
        int rc = pe == m->me ? MPI_SUCCESS
                             : MPI_Isend(out, sizeof(*out), MPI_BYTE, pe, TAG, m->world, &reqs[pe]);
        if (rc != MPI_SUCCESS) {
            symmem__mpi_lost(m); /* the sends made stay MPI's, with out */
            return symmem__mpi_failed(rc, "finalize", "MPI_Isend");
        }
    }
    d->out = out;
    d->out_reqs = reqs;
    return SYMMEM_OK;
}

int symmem__mpi_all_left(mpi_t *m)
{
    mpi_departures_t *d = &m->departures;
    if (m->n == 1) return 1;
    absorb(m);
    if (d->stuck_pe >= 0) return 1;
    int sent = 0;
    if (d->out_reqs != NULL) MPI_Testall(m->n, d->out_reqs, &sent, MPI_STATUSES_IGNORE);
    return sent && d->left_n == m->n - 1;
}

symmem_status_t symmem__mpi_left_error(mpi_t *m, const char *call)
{
    mpi_departures_t *d = &m->departures;
    if (d->stuck_pe < 0) return SYMMEM_OK;
    char what[160];
    MPI_CORE->call_describe(d->stuck_call, what, sizeof(what));
    int pe = d->stuck_pe;
    d->stuck_pe = -1; /* said: finalize() again waits for the others */
    d->stuck_said = 1;
    return MPI_CORE->error(SYMMEM_ERR_MISMATCH,
                           "%s: PE %d is in %s, which this PE never entered: this PE called "
                           "finalize() instead (%s)",
                           call, pe, what, RULE);
}

/* Barriers among PEs of one node, over the shared window, as the cpu engine
 * makes them: each PE publishes the fingerprint of the collective it is in
 * beside its epoch for the team's channel, and waits until every member's
 * epoch has caught up; then it compares their fingerprints with its own,
 * so that PEs in different collectives (or the same one with other
 * arguments) raise, each naming what every PE called. No MPI call on the
 * way: a team whose members all map each other's heaps meets here (the
 * node path), every other team through MPI (collectives.c).
 *
 * Each PE's channels lie in its own part of the window, past its heap and
 * the rendezvous table (heap.c clears them). A new team's members raise
 * their epochs on its channel to a common base first (node_channel_open),
 * as the channel may have served teams of other members before. */
#include <stdlib.h>

#include "mpi_backend.h"

/* PE pe's channels, where this process maps its heap; NULL where it does not. */
static mpi_node_channel_t *channels_of(const mpi_t *m, int pe)
{
    char *heap = mpi_ptr(m, m->base, pe);
    return heap != NULL ? (mpi_node_channel_t *)(heap + mpi_node_ctl_offset(m)) : NULL;
}

int symmem__mpi_on_node(const mpi_t *m, const symmem_team_view_t *team)
{
    if (m->node_n == m->n) return 1; /* every PE maps every heap */
    for (int i = 0; i < team->n; i++) {
        int pe = team->members ? team->members[i] : i;
        if (mpi_ptr(m, m->base, pe) == NULL) return 0;
    }
    return 1;
}

symmem_status_t symmem__mpi_node_channel_open(mpi_t *m, const char *call, MPI_Comm comm,
                                              int channel)
{
    uint64_t mine = m->node_epoch[channel], base = 0;
    MPI_Request req;
    MPI_TRY(call, "MPI_Iallreduce",
            MPI_Iallreduce(&mine, &base, 1, MPI_UINT64_T, MPI_MAX, comm, &req));
    SYMMEM_CHECK(symmem__mpi_wait(m, call, &req));
    m->node_epoch[channel] = base;
    /* relaxed: no member waits for base itself, only for base + 1 and on,
     * which the release in the first barrier publishes */
    atomic_store_explicit(&channels_of(m, m->me)[channel].epoch, base, memory_order_relaxed);
    return SYMMEM_OK;
}

typedef struct {
    const mpi_t *m;
    const symmem_team_view_t *team;
    int channel;
    uint64_t epoch;
    symmem_call_t call; /* ours */
    int next;           /* members before this one have arrived (and were compared) */
    int mismatch;       /* a member arrived with another fingerprint */
} node_wait_t;

static int member(const node_wait_t *w, int i)
{
    return w->team->members ? w->team->members[i] : i;
}

static int all_arrived(mpi_t *m, void *arg)
{
    (void)m;
    node_wait_t *w = arg;
    for (; w->next < w->team->n; w->next++) {
        mpi_node_channel_t *theirs = &channels_of(w->m, member(w, w->next))[w->channel];
        /* acquire: pairs with the member's release of its epoch in
         * symmem__mpi_node_barrier: its fingerprint (and every store it made
         * before arriving) is visible once we see the epoch */
        if (atomic_load_explicit(&theirs->epoch, memory_order_acquire) < w->epoch) return 0;
        if (w->m->check_calls && !symmem__call_same(&theirs->call[w->epoch % 2], &w->call))
            w->mismatch = 1;
    }
    return 1;
}

/* The mismatch error: which PEs called what (out of line: the fast path
 * stays small). */
__attribute__((noinline, cold)) static symmem_status_t mismatch(const node_wait_t *w)
{
    int n = w->team->n;
    symmem_call_t *calls = malloc((size_t)n * sizeof(*calls));
    int *pes = malloc((size_t)n * sizeof(int));
    char text[1024] = "";
    if (calls != NULL && pes != NULL) {
        for (int i = 0; i < n; i++) {
            pes[i] = member(w, i);
            calls[i] = channels_of(w->m, pes[i])[w->channel].call[w->epoch % 2];
        }
        MPI_CORE->calls_group(calls, pes, n, text, sizeof(text));
    }
    free(calls);
    free(pes);
    return MPI_CORE->error(SYMMEM_ERR_MISMATCH,
                           "%s: PEs disagree: %s (every PE must make the same collective calls, "
                           "with the same arguments, in the same order)",
                           symmem__mpi_call_name(w->call), text);
}

symmem_status_t symmem__mpi_node_barrier(mpi_t *m, const symmem_team_view_t *team,
                                         symmem_call_t call)
{
    if (team->n == 1) return SYMMEM_OK; /* nobody to wait for */
    SYMMEM_CHECK(symmem__mpi_meeting_begin(m, team, call));
    int channel = team->channel;
    node_wait_t w = {m, team, channel, ++m->node_epoch[channel], call, 0, 0};
    mpi_node_channel_t *mine = &channels_of(m, m->me)[channel];
    /* A member reads this half only after seeing epoch w.epoch, and we write
     * it again only at w.epoch + 2, which every member must first have
     * arrived at w.epoch + 1 for: by then all have finished reading it. */
    mine->call[w.epoch % 2] = call;
    /* release: the fingerprint, and the data this PE stored, before the arrival */
    atomic_store_explicit(&mine->epoch, w.epoch, memory_order_release);
    symmem_status_t status = symmem__mpi_poll(m, symmem__mpi_call_name(call), all_arrived, &w, 1);
    symmem__mpi_meeting_end(m, status);
    if (status != SYMMEM_OK) {
        --m->node_epoch[channel]; /* a member in another collective has not counted it */
        return status;
    }
    /* Every member has arrived and seen the same fingerprints, so a mismatch
     * is raised on all of them. */
    return w.mismatch ? mismatch(&w) : SYMMEM_OK;
}

/* Collective fingerprints on the gpu backend. NVSHMEM's collectives carry
 * none, and PEs in mismatched collectives would pair up or hang on the
 * GPU; so every collective is published in this PE's call page
 * (call_page.h) before it is launched and compared with the same-host
 * members' records of it:
 *  - at enqueue, with the members that published already: a mismatch, or a
 *    member that called finalize() instead, raises before the launch;
 *  - a blocking call then waits on the host (meet) until every member has
 *    published it, comparing as they do, before it launches; a member that
 *    waits there in a collective this PE has not entered (PEs in
 *    collectives on different teams) is a mismatch too;
 *  - a stream call not yet matched by every member is remembered and
 *    compared by this PE's later collectives (blocking ones also while they
 *    wait on the GPU) and finalize.
 * SYMMEM_CHECK=0 leaves out the fingerprints, never the finalize() rule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

#define RULE                                                                                       \
    "every PE must make the same collective calls, with the same arguments, in the same order"

/* The mismatch error: what each PE called, grouped. earlier: a stream call
 * found out by a later call. The job must end now, so stuck.c stands down. */
__attribute__((cold)) static symmem_status_t mismatch(gpu_t *g, const char *call,
                                                      const symmem_call_t *calls, const int *pes,
                                                      int n, int earlier)
{
    symmem__gpu_stuck_mismatch_seen(g);
    char text[768];
    symmem__gpu_core->calls_group(calls, pes, n, text, sizeof(text));
    if (!earlier) return ERROR(SYMMEM_ERR_MISMATCH, "%s: PEs disagree: %s (%s)", call, text, RULE);
    return ERROR(SYMMEM_ERR_MISMATCH,
                 "%s: PEs disagreed in an earlier collective made on a stream: %s (%s)", call, text,
                 RULE);
}

static symmem_status_t left(const char *call, int pe)
{
    return ERROR(SYMMEM_ERR_PEER_DEAD,
                 "%s: PE %d has called finalize() and left the job (it takes part in no more "
                 "collectives)",
                 call, pe);
}

/* The verdict on ref as an error; *waiting_p says whether some member has
 * not published it yet. */
static symmem_status_t judge(gpu_t *g, const char *call, const gpu_call_ref_t *ref, int earlier,
                             int *waiting_p)
{
    symmem_call_t calls[GPU_CALL_MAX_PEERS + 1];
    int pes[GPU_CALL_MAX_PEERS + 1], n = 0, culprit = -1;
    int verdict = symmem__gpu_calls_verdict(&g->calls, ref, g->check, calls, pes, &n, &culprit);
    *waiting_p = verdict == GPU_VERDICT_WAITING;
    if (verdict == GPU_VERDICT_MISMATCH) return mismatch(g, call, calls, pes, n, earlier);
    if (verdict == GPU_VERDICT_LEFT) return left(call, culprit);
    return SYMMEM_OK;
}

/* The stream calls still unverified: a mismatch raises now, naming them;
 * those whose every member has published (or whose records are gone) are
 * done. */
static symmem_status_t check_pending(gpu_t *g, const char *call)
{
    int kept = 0;
    symmem_status_t status = SYMMEM_OK;
    for (int i = 0; i < g->npending; i++) {
        int waiting = 0;
        if (status == SYMMEM_OK) status = judge(g, call, &g->pending[i], 1, &waiting);
        if (status != SYMMEM_OK) continue; /* reported once: forgotten */
        if (waiting) g->pending[kept++] = g->pending[i];
    }
    g->npending = kept;
    return status;
}

/* A member that has not published ref but waits on the host in a collective
 * of a team this PE is in and has not entered: each waits for the other. */
static symmem_status_t crossed(gpu_t *g, const char *call, const gpu_call_ref_t *ref)
{
    for (int i = 0; g->check && i < ref->npeers; i++) {
        symmem_call_t theirs, unused;
        int pe = ref->peers[i];
        if (symmem__gpu_calls_find(&g->calls, pe, ref->handle, ref->team_key, ref->seq, &unused) !=
                GPU_RECORD_NOT_YET ||
            !symmem__gpu_calls_waits_for_me(&g->calls, pe, &theirs))
            continue;
        symmem_call_t calls[2] = {ref->call, theirs};
        int pes[2] = {g->calls.me, pe};
        if (pe < g->calls.me) {
            calls[0] = theirs, calls[1] = ref->call;
            pes[0] = pe, pes[1] = g->calls.me;
        }
        return mismatch(g, call, calls, pes, 2, 0);
    }
    return SYMMEM_OK;
}

/* Waits until every member has published ref (or raises: a mismatch, a
 * crossed wait, a peer gone, SYMMEM_TIMEOUT, Ctrl-C). */
static symmem_status_t meet(gpu_t *g, const char *call, const gpu_call_ref_t *ref, int *waiting_p)
{
    double started = symmem__gpu_now(), next_check = started + 0.1;
    symmem_status_t status = SYMMEM_OK;
    symmem__gpu_calls_set_blocked(&g->calls, ref->stamp);
    while (status == SYMMEM_OK && *waiting_p) {
        status = crossed(g, call, ref);
        /* an earlier stream call's mismatch, seen before a peer that raised
         * it and left is reported as dead */
        if (status == SYMMEM_OK && g->npending > 0) status = check_pending(g, call);
        if (status == SYMMEM_OK)
            status = symmem__gpu_still_waiting(g, call, "every PE of the team to make the call",
                                               started, &next_check);
        if (status == SYMMEM_OK) status = judge(g, call, ref, 0, waiting_p);
        if (*waiting_p && symmem__gpu_now() - started > 1e-3) usleep(20);
    }
    symmem__gpu_calls_set_blocked(&g->calls, 0);
    return status;
}

symmem_status_t symmem__gpu_collective_enter(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                             const symmem_team_view_t *team, uint64_t count,
                                             int dtype, int op, int root, int blocking,
                                             gpu_call_ref_t *ref)
{
    SYMMEM_CHECK(check_pending(g, call));
    symmem__gpu_calls_publish(&g->calls, team->channel, team->members, team->n,
                              symmem__call(kind, team->channel, count, dtype, op, root), ref);
    int waiting = 0;
    symmem_status_t status = judge(g, call, ref, 0, &waiting);
    /* A blocking call meets every same-host member on the host before it
     * launches: NVSHMEM may block on the host inside a launch (setting up
     * NCCL for a team's first collective), where no check would run, and a
     * mismatch then raises on every PE with nothing left on the GPU. The
     * last PE to arrive launches at once, so this costs the job nothing. */
    if (status == SYMMEM_OK && waiting && blocking) status = meet(g, call, ref, &waiting);
    if (status != SYMMEM_OK) {
        /* A peer left: this call is not launched and is taken back, as the
         * cpu engine's barrier takes back its epoch, so that the peer in
         * finalize() never finds this PE ahead of it and this PE can still
         * finalize. A mismatch stays published: every peer must see it. */
        if (status == SYMMEM_ERR_PEER_DEAD) symmem__gpu_calls_unpublish(&g->calls, ref);
        return status;
    }
    if (waiting && !blocking) {
        if (g->npending == GPU_CALL_RING) { /* the oldest's records are gone by now */
            memmove(&g->pending[0], &g->pending[1], sizeof(g->pending[0]) * (GPU_CALL_RING - 1));
            g->npending--;
        }
        g->pending[g->npending++] = *ref;
    }
    return SYMMEM_OK;
}

static const char *const WHAT = "the call to complete on the GPU (every PE taking part)";

/* The call itself was compared before it launched (a blocking call meets
 * every same-host member in enter first), so only earlier stream calls are
 * left to compare here: while it runs, and once more when it is done (those
 * still unmatched then are compared by later calls). */
symmem_status_t symmem__gpu_collective_drain(gpu_t *g, const char *call)
{
    double started = symmem__gpu_now(), next_check = started + 0.1, next_pending = started;
    for (;;) {
        cu_result_t rc = libs.cuStreamQuery(g->stream);
        if (rc != 0 && rc != CU_ERROR_NOT_READY) return symmem__gpu_wait_failed(g, call, WHAT, rc);
        double t = symmem__gpu_now();
        if (g->npending > 0 && (t >= next_pending || rc == 0)) {
            SYMMEM_CHECK(check_pending(g, call));
            next_pending = t + 1e-3;
        }
        if (rc == 0) return SYMMEM_OK;
        SYMMEM_CHECK(symmem__gpu_still_waiting(g, call, WHAT, started, &next_check));
        if (t - started > 1e-3) usleep(20);
    }
}

/* ---- finalize ---- */

symmem_status_t symmem__gpu_calls_leave(gpu_t *g)
{
    SYMMEM_CHECK(check_pending(g, "finalize"));
    symmem__gpu_calls_set_state(&g->calls, GPU_PE_FINALIZING);
    double started = symmem__gpu_now(), next_check = started + 0.1, ahead_since = 0;
    for (;;) {
        int all = 1, ahead = 0;
        for (int pe = 0; pe < g->calls.n_pes; pe++) {
            if (g->calls.peers[pe] == NULL) continue;
            symmem_call_t theirs;
            /* A peer that finds this PE FINALIZING as it enters a collective
             * takes its record back within microseconds; one still ahead
             * 10 ms later is in that collective for good. */
            if (symmem__gpu_calls_ahead(&g->calls, pe, &theirs)) {
                ahead = 1;
                if (ahead_since == 0) ahead_since = symmem__gpu_now();
                if (symmem__gpu_now() - ahead_since < 0.01) continue;
                char what[160];
                symmem__gpu_core->call_describe(theirs, what, sizeof(what));
                symmem__gpu_stuck_mismatch_seen(g);
                return ERROR(SYMMEM_ERR_MISMATCH,
                             "finalize: PE %d is in %s, which this PE never entered: this PE "
                             "called finalize() instead (%s)",
                             pe, (theirs.what & 0xff) ? what : "a collective", RULE);
            }
            if (symmem__gpu_calls_state(&g->calls, pe) != GPU_PE_FINALIZING) all = 0;
        }
        if (!ahead) ahead_since = 0;
        if (all && !ahead) return SYMMEM_OK;
        SYMMEM_CHECK(symmem__gpu_still_waiting(
            g, "finalize", "every PE on this host to call finalize()", started, &next_check));
        usleep(200);
    }
}

/* ---- init's step ---- */

/* Every PE learns whether all succeeded; *failed_p: the first PE that did not. */
static symmem_status_t all_ok(gpu_t *g, int ok, int *failed_p)
{
    int n = g->boot.nranks;
    int64_t *values = calloc((size_t)n, sizeof(int64_t));
    if (values == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    symmem_status_t status = symmem__gpu_exchange(g, "init", ok, values);
    *failed_p = -1;
    for (int pe = 0; status == SYMMEM_OK && pe < n; pe++)
        if (values[pe] == 0 && *failed_p < 0) *failed_p = pe;
    free(values);
    return status;
}

symmem_status_t symmem__gpu_calls_start(gpu_t *g)
{
    int n = g->boot.nranks, me = g->boot.rank, failed = -1;
    char why[400] = "";
    g->check = strcmp(symmem__gpu_core->env_string("SYMMEM_CHECK"), "0") != 0;
    g->npending = 0;
    g->world = calloc((size_t)n, sizeof(int));
    if (g->world == NULL) return ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    for (int pe = 0; pe < n; pe++) g->world[pe] = pe;
    uint64_t start = (uint64_t)symmem__gpu_peer_watch_start_time(symmem__gpu_core);
    int ok = symmem__gpu_calls_create(&g->calls, n, me, start, why, sizeof(why)) == 0;
    /* Every PE takes part in both agreements, whatever happened to it. */
    symmem_status_t status = all_ok(g, ok, &failed);
    for (int pe = 0; status == SYMMEM_OK && failed < 0 && ok && pe < n; pe++)
        if (pe != me && g->watch.pids[pe] != 0 &&
            symmem__gpu_calls_open_peer(&g->calls, pe, g->watch.pids[pe], g->watch.starts[pe], why,
                                        sizeof(why)) != 0)
            ok = 0;
    if (status == SYMMEM_OK && failed < 0) status = all_ok(g, ok, &failed);
    symmem__gpu_calls_unlink(&g->calls); /* every peer has mapped it, or none will */
    if (status == SYMMEM_OK && failed >= 0) {
        int pe = ok ? failed : me;
        status = pe == me ? ERROR(SYMMEM_ERR_BACKEND,
                                  "init: the gpu backend's call page (/dev/shm, where same-host "
                                  "PEs check each other's collectives): %s",
                                  why)
                          : ERROR(SYMMEM_ERR_BACKEND,
                                  "init: PE %d could not make or open the gpu backend's call "
                                  "pages in /dev/shm (its error says why)",
                                  pe);
    }
    if (status != SYMMEM_OK) {
        symmem__gpu_calls_free(&g->calls);
        free(g->world);
        g->world = NULL;
        return status;
    }
    /* The predefined teams of more than this PE, as NVSHMEM placed them. */
    for (int team = 0; team < SYMMEM_TEAM_FIRST_USER; team++)
        if (g->predefined[team].n > 1)
            symmem__gpu_calls_set_team(&g->calls, team, g->predefined[team].members,
                                       g->predefined[team].n);
    return SYMMEM_OK;
}

void symmem__gpu_calls_stop(gpu_t *g)
{
    symmem__gpu_calls_free(&g->calls);
    free(g->world);
    g->world = NULL;
}

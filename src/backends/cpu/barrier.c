/* Barriers: each PE publishes the fingerprint of the collective it is in,
 * bumps its own epoch for the channel, rings the members, and waits until
 * every member's epoch has caught up; then it compares their fingerprints
 * with its own, so that PEs in different collectives (or the same one with
 * other arguments) never pair up. Agreement rides on a barrier: publish,
 * barrier, read everyone's slot. finalize() meets the others through the
 * slots' states instead, which no barrier can match. */
#include <stdio.h>
#include <string.h>

#include "../../core/error.h"
#include "cpu.h"

typedef struct {
    cpu_t *cpu;
    int channel;
    const int *members;
    int count;
    uint64_t epoch;
    symmem_call_t call; /* our fingerprint */
    int next;           /* members before this one have arrived (and were compared) */
    int mismatch;       /* a member arrived with another fingerprint */
    int left;           /* a member that entered finalize() before arriving, or -1 */
    int polls;          /* the crossed check's so far; > 0: our record is up (crossed.c) */
} barrier_wait_t;

/* Whether member pe has arrived; if so its fingerprint is compared with ours
 * (while its cache line is at hand). If not and it has entered finalize(),
 * it never will: w->left says so and the wait ends. */
static int arrived(barrier_wait_t *w, int pe)
{
    cpu_pe_slot_t *slot = &w->cpu->ctl->slots[pe];
    cpu_channel_t *theirs = &slot->channel[w->channel];
    /* acquire pairs with the member's release in symmem__cpu_barrier: what it
     * stored before arriving (its fingerprint) is visible once we see its epoch. */
    if (atomic_load_explicit(&theirs->epoch, memory_order_acquire) < w->epoch) {
        /* acquire pairs with the release of PE_FINALIZED in symmem__cpu_leave,
         * which follows every epoch the member will ever store: reading the
         * epoch again after it tells whether it arrived before leaving. */
        if (atomic_load_explicit(&slot->state, memory_order_acquire) != PE_FINALIZED) return 0;
        if (atomic_load_explicit(&theirs->epoch, memory_order_acquire) < w->epoch) {
            if (w->left < 0) w->left = pe;
            return 0;
        }
    }
    if (!w->cpu->no_check && !symmem__call_same(&theirs->call[w->epoch % 2], &w->call))
        w->mismatch = 1;
    return 1;
}

static int barrier_ready(void *arg)
{
    barrier_wait_t *w = arg;
    int all = 1;
    /* every member not yet known to have arrived, not just up to the first
     * missing one: any of them may have left */
    for (int i = w->next; i < w->count; i++) {
        if (!arrived(w, w->members[i]))
            all = 0;
        else if (all)
            w->next = i + 1;
    }
    return all || w->left >= 0;
}

static void barrier_pending(void *arg, char *out, size_t size)
{
    barrier_wait_t *w = arg;
    int n = snprintf(out, size, "PEs not arrived:");
    for (int i = 0; i < w->count && n < (int)size; i++) {
        cpu_pe_slot_t *slot = &w->cpu->ctl->slots[w->members[i]];
        if (atomic_load_explicit(&slot->channel[w->channel].epoch, memory_order_acquire) < w->epoch)
            n += snprintf(out + n, size - (size_t)n, " %d", w->members[i]);
    }
}

/* At every poll of a barrier that waits: our record up (once), then a
 * cycle of PEs waiting for each other in barriers of different teams looked
 * for (crossed.c). Off the fast path: a barrier that completes within a
 * poll publishes nothing. */
static symmem_status_t barrier_stuck(void *arg)
{
    barrier_wait_t *w = arg;
    if (w->polls++ == 0)
        symmem__cpu_blocked_publish(w->cpu, w->channel, w->epoch, w->call, w->members, w->count);
    return symmem__cpu_crossed_check(w->cpu, symmem__call_name(w->call), w->polls);
}

/* The mismatch error: which PEs called what, grouped by call (out of line:
 * the barrier's fast path stays small). */
__attribute__((noinline, cold)) static symmem_status_t mismatch(barrier_wait_t *w,
                                                                const symmem_call_t *mine)
{
    symmem_call_t calls[w->count];
    char text[768];
    for (int i = 0; i < w->count; i++)
        calls[i] = w->cpu->ctl->slots[w->members[i]].channel[w->channel].call[w->epoch % 2];
    symmem__calls_group(calls, w->members, w->count, text, sizeof(text));
    return symmem__error(SYMMEM_ERR_MISMATCH,
                         "%s: PEs disagree: %s (every PE must make the same collective "
                         "calls, with the same arguments, in the same order)",
                         symmem__call_name(*mine), text);
}

symmem_status_t symmem__cpu_barrier(cpu_t *cpu, const symmem_team_view_t *team, symmem_call_t call)
{
    if (team->n == 1) return SYMMEM_OK; /* nobody to wait for */
    /* After a crossed mismatch: the others of its cycle raise it first. */
    if (cpu->ncrossed) SYMMEM_CHECK(symmem__cpu_crossed_settle(cpu, symmem__call_name(call)));
    int channel = cpu_channel(team);
    barrier_wait_t w = {cpu, channel, team->members, team->n, ++cpu->epoch[channel], call, 0, 0,
                        -1,  0};
    cpu_channel_t *mine = &cpu->ctl->slots[cpu->me].channel[channel];
    /* A member reads this half only after seeing epoch w.epoch, and we write it
     * again only at epoch w.epoch + 2, which every member must first have
     * arrived at w.epoch + 1 for: by then all have finished reading it. */
    /* Stored without looking at what is there: the members poll this line,
     * and a load from it here costs a transfer (20 ns a barrier, measured),
     * where stores next to the epoch's cost nothing more. */
    if (!cpu->no_check) mine->call[w.epoch % 2] = call;
    /* release: the fingerprint (and, for agreement, the value) before the arrival */
    atomic_store_explicit(&mine->epoch, w.epoch, memory_order_release);
    for (int i = 0; i < team->n; i++)
        if (team->members[i] != cpu->me) symmem__cpu_ring(cpu, team->members[i], CPU_WAIT_PEERS);
    const char *name = symmem__call_name(call);
    symmem_status_t status = symmem__cpu_wait(cpu, name, CPU_WAIT_PEERS, barrier_ready,
                                              barrier_pending, barrier_stuck, &w, 0);
    /* Down before any later epoch of ours; a crossed mismatch keeps it up
     * (marked raised) until the next call settles it. */
    if (w.polls > 0 && cpu->ncrossed == 0) symmem__cpu_blocked_clear(cpu);
    if (status == SYMMEM_OK && w.left >= 0)
        status = symmem__error(SYMMEM_ERR_PEER_DEAD,
                               "%s: PE %d has called finalize() and left the job (it takes "
                               "part in no more collectives)",
                               name, w.left);
    if (status != SYMMEM_OK) {
        --cpu->epoch[channel]; /* stays consistent for messages */
        return status;
    }
    /* Every member has arrived: the barrier is passed on every member, and each
     * has seen the same fingerprints, so a mismatch is raised on all of them. */
    return w.mismatch ? mismatch(&w, &call) : SYMMEM_OK;
}

symmem_status_t symmem__cpu_barrier_world(cpu_t *cpu, symmem_call_kind_t kind)
{
    return symmem__cpu_barrier(cpu, &cpu->world, cpu_call(kind, &cpu->world, 0, 0, 0, 0));
}

symmem_status_t symmem__cpu_agree(cpu_t *cpu, symmem_call_kind_t kind, int step,
                                  const symmem_team_view_t *team, uint64_t value,
                                  uint64_t *values_p)
{
    int channel = cpu_channel(team);
    uint64_t seq = ++cpu->agree_seq[channel];
    cpu_agree_t *mine = &cpu->ctl->slots[cpu->me].agree[channel][seq % 2];
    mine->seq = seq;
    mine->value = value;
    /* The barrier's release/acquire publishes these stores to every member;
     * the next agreement on this channel writes the other half, and cannot
     * reach this half again before every member has passed the next
     * barrier, i.e. finished reading. */
    symmem_status_t status =
        symmem__cpu_barrier(cpu, team, cpu_call(kind, team, (uint64_t)step, 0, 0, 0));
    if (status != SYMMEM_OK) {
        /* A member in another collective has not counted this agreement. */
        --cpu->agree_seq[channel];
        return status;
    }
    for (int i = 0; i < team->n; i++) {
        int pe = team->members[i];
        cpu_agree_t *theirs = &cpu->ctl->slots[pe].agree[channel][seq % 2];
        if (theirs->seq != seq)
            return symmem__error(SYMMEM_ERR_MISMATCH,
                                 "%s: PE %d has made a different number of collective "
                                 "allocations or team splits",
                                 symmem__call_name(cpu_call(kind, team, 0, 0, 0, 0)), pe);
        values_p[i] = theirs->value;
    }
    return SYMMEM_OK;
}

/* ---- finalize's rendezvous ---- */

static int all_left(void *arg)
{
    cpu_t *cpu = arg;
    for (int pe = 0; pe < cpu->n; pe++)
        if (atomic_load_explicit(&cpu->ctl->slots[pe].state, memory_order_acquire) != PE_FINALIZED)
            return 0;
    return 1;
}

static void not_left(void *arg, char *out, size_t size)
{
    cpu_t *cpu = arg;
    int n = snprintf(out, size, "PEs that have not called finalize():");
    for (int pe = 0; pe < cpu->n && n < (int)size; pe++)
        if (atomic_load_explicit(&cpu->ctl->slots[pe].state, memory_order_acquire) != PE_FINALIZED)
            n += snprintf(out + n, size - (size_t)n, " %d", pe);
}

symmem_status_t symmem__cpu_leave(cpu_t *cpu)
{
    /* release: after every epoch we stored (see arrived()) */
    atomic_store_explicit(&cpu->ctl->slots[cpu->me].state, PE_FINALIZED, memory_order_release);
    /* Peers waiting for us in a collective must notice now. */
    for (int pe = 0; pe < cpu->n; pe++)
        if (pe != cpu->me) symmem__cpu_ring(cpu, pe, CPU_WAIT_PEERS);
    return symmem__cpu_wait(cpu, "finalize", CPU_WAIT_PEERS, all_left, not_left, NULL, cpu, 0);
}

/* Crossed barriers: PEs that wait for each other in barriers of different
 * teams (PE 0 in barrier(team A) while PE 1 is in barrier(team B), both in
 * both teams) are never paired by a barrier, so no fingerprint is compared
 * and each would wait for ever. A barrier that has waited a poll (0.1 s)
 * publishes its record (channel, epoch, fingerprint, the team's members)
 * and at every poll looks, among the PEs with records up, for a cycle of
 *     x waits for y  iff  y is in x's team and y's epoch on x's channel < x's
 * (exactly the condition x's barrier waits on) through this PE. A cycle is
 * a deadlock: a PE publishes its record after storing its epoch, stores no
 * epoch while it is up, and takes it down before storing another; y's epoch
 * is read after y's record, so it is not older than the one y had when it
 * published, and x's wait can end only after y's has ended, which around a
 * cycle never happens (unless one of them ends by another error: a
 * timeout, a dead peer, Ctrl-C). So there is no false alarm: PEs of
 * disjoint teams, and a peer busy in another collective that does not wait
 * for us (it will come), make no cycle. What is reported is every PE that
 * this PE waits for and that waits for it (through others), once none of
 * them waits for anyone else (a late PE may still join the deadlock): then
 * nothing changes it until all have raised, and each PE of it reports the
 * same PEs and calls. One that also waits for a PE outside it (busy, or in
 * a wait that is no barrier, which may never end) is reported after
 * PATIENCE polls all the same. A PE that waits for a deadlock it is not in
 * keeps waiting (its peers raise, and then exit or go on).
 *
 * The PE that raises takes back its arrival (the others never pair a later
 * call of it with this one) and leaves its record up, marked raised, until
 * its next collective step (symmem__cpu_crossed_settle): that waits until
 * the cycle's other PEs have raised too, so that every one of them raises,
 * none is matched instead by a later call of this PE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "cpu.h"

#define WORDS(n) (((n) + 63) / 64)
#define PATIENCE 10 /* polls, about a second */

void symmem__cpu_blocked_publish(cpu_t *cpu, int channel, uint64_t epoch, symmem_call_t call,
                                 const int *members, int count)
{
    if (cpu->n > CPU_CROSSED_MAX_PES) return;
    cpu_blocked_t *b = &cpu->ctl->slots[cpu->me].blocked;
    uint64_t bits[WORDS(CPU_CROSSED_MAX_PES)] = {0};
    for (int i = 0; i < count; i++) bits[members[i] / 64] |= 1ULL << (members[i] % 64);
    /* Seqlock write: seq is 0 here (taken down, or never up), and the
     * release fence orders that before the fields' stores; it pairs with the
     * acquire fence a reader issues before reading seq again. */
    atomic_store_explicit(&b->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (int i = 0; i < WORDS(cpu->n); i++)
        atomic_store_explicit(&b->members[i], bits[i], memory_order_relaxed);
    atomic_store_explicit(&b->channel, channel, memory_order_relaxed);
    atomic_store_explicit(&b->epoch, epoch, memory_order_relaxed);
    atomic_store_explicit(&b->what, call.what, memory_order_relaxed);
    atomic_store_explicit(&b->count, call.count, memory_order_relaxed);
    atomic_store_explicit(&b->raised, 0, memory_order_relaxed);
    /* release: the fields, and every epoch we stored before, ahead of seq;
     * pairs with the acquire load of seq in read_record */
    atomic_store_explicit(&b->seq, ++cpu->blocked_seq, memory_order_release);
}

void symmem__cpu_blocked_clear(cpu_t *cpu)
{
    if (cpu->n > CPU_CROSSED_MAX_PES) return;
    /* release: before any epoch we store later (a reader that sees that epoch
     * with acquire finds the record down) */
    atomic_store_explicit(&cpu->ctl->slots[cpu->me].blocked.seq, 0, memory_order_release);
}

/* A PE's record, as read. */
typedef struct {
    int pe, channel;
    int next; /* the next PE to look at as one this one waits for */
    uint64_t seq, epoch;
    symmem_call_t call;
    uint64_t members[WORDS(CPU_CROSSED_MAX_PES)];
} node_t;

/* A consistent copy of PE pe's record into v; 0 if it has none up. */
static int read_record(cpu_t *cpu, int pe, node_t *v)
{
    const cpu_blocked_t *b = &cpu->ctl->slots[pe].blocked;
    for (int tries = 0; tries < 8; tries++) {
        /* acquire pairs with the release store of seq in publish: the fields,
         * and the epochs the PE stored before, are visible */
        uint64_t seq = atomic_load_explicit(&b->seq, memory_order_acquire);
        if (seq == 0) return 0;
        for (int i = 0; i < WORDS(cpu->n); i++)
            v->members[i] = atomic_load_explicit(&b->members[i], memory_order_relaxed);
        v->channel = atomic_load_explicit(&b->channel, memory_order_relaxed);
        v->epoch = atomic_load_explicit(&b->epoch, memory_order_relaxed);
        v->call.what = atomic_load_explicit(&b->what, memory_order_relaxed);
        v->call.count = atomic_load_explicit(&b->count, memory_order_relaxed);
        /* acquire fence: the fields are read before seq is read again; pairs
         * with the release fence in publish */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&b->seq, memory_order_relaxed) != seq) continue;
        v->pe = pe;
        v->seq = seq;
        v->next = 0;
        return v->channel >= 0 && v->channel < CPU_BARRIER_CHANNELS;
    }
    return 0; /* rewritten as we read: it has moved on */
}

/* The next PE (after those looked at) in x's team, or -1. */
static int next_member(const cpu_t *cpu, node_t *x)
{
    while (x->next < cpu->n) {
        int pe = x->next++;
        if (pe != x->pe && (x->members[pe / 64] >> (pe % 64) & 1)) return pe;
    }
    return -1;
}

/* Whether x waits for PE pe (a member of its team; read after pe's record). */
static int behind(cpu_t *cpu, int pe, const node_t *x)
{
    /* acquire pairs with the release store of pe's epoch in its barrier */
    return atomic_load_explicit(&cpu->ctl->slots[pe].channel[x->channel].epoch,
                                memory_order_acquire) < x->epoch;
}

/* The mismatch error for the PEs of nodes[0..count) marked in cycle
 * (nodes[0] is this PE), in order of PE so that each of them says the same;
 * they are kept for settle, our arrival is taken back and our record
 * marked raised. */
__attribute__((cold)) static symmem_status_t raise_cycle(cpu_t *cpu, const char *call,
                                                         const node_t *nodes, int count,
                                                         const char *cycle)
{
    symmem_call_t calls[count];
    int pes[count], len = 0;
    cpu->ncrossed = 0;
    for (int i = 0; i < count; i++) {
        if (!cycle[i]) continue;
        int j = len++;
        for (; j > 0 && pes[j - 1] > nodes[i].pe; j--) { /* insertion by PE */
            pes[j] = pes[j - 1];
            calls[j] = calls[j - 1];
        }
        pes[j] = nodes[i].pe;
        calls[j] = nodes[i].call;
        if (i > 0) {
            cpu->crossed_pes[cpu->ncrossed] = nodes[i].pe;
            cpu->crossed_seqs[cpu->ncrossed++] = nodes[i].seq;
        }
    }
    char text[768];
    symmem__calls_group(calls, pes, len, text, sizeof(text));
    /* No member can have passed our barrier (the PE we wait for in the cycle
     * has not arrived), so our arrival is taken back, before the mark: a PE
     * of the cycle that has seen the mark and goes on to its next
     * collective on this channel must not find us there already. */
    cpu_pe_slot_t *mine = &cpu->ctl->slots[cpu->me];
    atomic_store_explicit(&mine->channel[nodes[0].channel].epoch, nodes[0].epoch - 1,
                          memory_order_release);
    /* release: the arrival taken back before the mark; pairs with the
     * acquire load of raised in settled() */
    atomic_store_explicit(&mine->blocked.raised, nodes[0].seq, memory_order_release);
    for (int i = 0; i < cpu->ncrossed; i++)
        symmem__cpu_ring(cpu, cpu->crossed_pes[i], CPU_WAIT_PEERS);
    return symmem__error(SYMMEM_ERR_MISMATCH,
                         "%s: PEs disagree: %s (every PE must make the same collective "
                         "calls, with the same arguments, in the same order)",
                         call, text);
}

symmem_status_t symmem__cpu_crossed_check(cpu_t *cpu, const char *call, int polls)
{
    int n = cpu->n, me = cpu->me;
    if (n > CPU_CROSSED_MAX_PES) return SYMMEM_OK;
    if (cpu->crossed_pes == NULL) {
        cpu->crossed_pes = calloc((size_t)n, sizeof(int));
        cpu->crossed_seqs = calloc((size_t)n, sizeof(uint64_t));
    }
    node_t *nodes = malloc((size_t)n * sizeof(node_t));
    int *index = malloc((size_t)n * sizeof(int)); /* PE -> node; -1 unseen, -2 no record */
    char *cycle = calloc((size_t)n, 1);
    symmem_status_t status = SYMMEM_OK;
    int count = 0, back = 0;
    /* Out of memory: no check this poll (the wait's other checks go on). */
    if (nodes == NULL || index == NULL || cycle == NULL || cpu->crossed_pes == NULL ||
        cpu->crossed_seqs == NULL || !read_record(cpu, me, &nodes[0]))
        goto done;
    for (int pe = 0; pe < n; pe++) index[pe] = -1;
    index[me] = 0;
    count = 1;
    /* The PEs this one waits for, directly or through others with records
     * up, in breadth-first order; back: one of them waits for this one. */
    for (int q = 0; q < count; q++) {
        for (int pe; (pe = next_member(cpu, &nodes[q])) >= 0;) {
            if (pe == me) {
                back |= behind(cpu, me, &nodes[q]);
            } else if (index[pe] == -1) {
                if (!read_record(cpu, pe, &nodes[count]))
                    index[pe] = -2;
                else if (behind(cpu, pe, &nodes[q]))
                    index[pe] = count++;
            }
        }
    }
    if (!back) goto done;
    /* A deadlock: its PEs are those of them that also wait for this one. */
    cycle[0] = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 1; i < count; i++) {
            nodes[i].next = 0;
            for (int pe; !cycle[i] && (pe = next_member(cpu, &nodes[i])) >= 0;)
                if (index[pe] >= 0 && cycle[index[pe]] && behind(cpu, pe, &nodes[i]))
                    cycle[i] = changed = 1;
        }
    }
    /* Reported only once complete: each of them waits for none but the
     * others (a PE they wait for that is busy, or not yet in its barrier,
     * may still join). Then nothing can change it until all have raised,
     * and every one of them reports the same PEs. */
    for (int i = 0; i < count && polls < PATIENCE; i++) {
        nodes[i].next = 0;
        for (int pe; cycle[i] && (pe = next_member(cpu, &nodes[i])) >= 0;)
            if ((index[pe] < 0 || !cycle[index[pe]]) && behind(cpu, pe, &nodes[i])) goto done;
    }
    status = raise_cycle(cpu, call, nodes, count, cycle);
done:
    free(nodes);
    free(index);
    free(cycle);
    return status;
}

/* ---- after a crossed mismatch ---- */

/* Every other PE of the cycle has raised too, or left the wait we saw. */
static int settled(void *arg)
{
    cpu_t *cpu = arg;
    for (int i = 0; i < cpu->ncrossed; i++) {
        const cpu_blocked_t *b = &cpu->ctl->slots[cpu->crossed_pes[i]].blocked;
        uint64_t seq = cpu->crossed_seqs[i];
        /* acquire pairs with the release stores of seq (publish, clear) and
         * of raised (raise_cycle) */
        if (atomic_load_explicit(&b->seq, memory_order_acquire) == seq &&
            atomic_load_explicit(&b->raised, memory_order_acquire) != seq)
            return 0;
    }
    return 1;
}

static void not_settled(void *arg, char *out, size_t size)
{
    cpu_t *cpu = arg;
    int n = snprintf(out, size, "PEs that have not yet raised the crossed collectives' mismatch:");
    for (int i = 0; i < cpu->ncrossed && n < (int)size; i++) {
        const cpu_blocked_t *b = &cpu->ctl->slots[cpu->crossed_pes[i]].blocked;
        uint64_t seq = cpu->crossed_seqs[i];
        if (atomic_load_explicit(&b->seq, memory_order_acquire) == seq &&
            atomic_load_explicit(&b->raised, memory_order_acquire) != seq)
            n += snprintf(out + n, size - (size_t)n, " %d", cpu->crossed_pes[i]);
    }
}

symmem_status_t symmem__cpu_crossed_settle(cpu_t *cpu, const char *call)
{
    if (cpu->ncrossed == 0) return SYMMEM_OK;
    /* Tried once: after an error here (a dead peer, a timeout, Ctrl-C) the
     * record comes down anyway, so that the job can still finalize. */
    symmem_status_t status =
        symmem__cpu_wait(cpu, call, CPU_WAIT_PEERS, settled, not_settled, NULL, cpu, 0);
    cpu->ncrossed = 0;
    symmem__cpu_blocked_clear(cpu);
    return status;
}

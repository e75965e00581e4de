/* Barriers: each PE bumps its own epoch for the channel, rings the members,
 * and waits until every member's epoch has caught up. Agreement rides on a
 * world barrier: publish, barrier, read everyone's slot. */
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
} barrier_wait_t;


static int barrier_ready(void *arg)
{
    barrier_wait_t *w = arg;
    for (int i = 0; i < w->count; i++) {
        cpu_pe_slot_t *slot = &w->cpu->ctl->slots[w->members[i]];
        /* acquire pairs with the member's release in symmem__cpu_barrier: what it
         * stored before arriving is visible once we see its epoch. */
        if (atomic_load_explicit(&slot->epoch[w->channel], memory_order_acquire) < w->epoch)
            return 0;
    }
    return 1;
}

static void barrier_pending(void *arg, char *out, size_t size)
{
    barrier_wait_t *w = arg;
    int n = snprintf(out, size, "PEs not arrived:");
    for (int i = 0; i < w->count && n < (int)size; i++) {
        cpu_pe_slot_t *slot = &w->cpu->ctl->slots[w->members[i]];
        if (atomic_load_explicit(&slot->epoch[w->channel], memory_order_acquire) < w->epoch)
            n += snprintf(out + n, size - (size_t)n, " %d", w->members[i]);
    }
}

symmem_status_t symmem__cpu_barrier(cpu_t *cpu, const char *call, const symmem_team_view_t *team)
{
    if (team->n == 1) return SYMMEM_OK; /* nobody to wait for */
    int channel = cpu_channel(team);
    barrier_wait_t w = {cpu, channel, team->members, team->n, ++cpu->epoch[channel]};
    atomic_store_explicit(&cpu->ctl->slots[cpu->me].epoch[channel], w.epoch,
                          memory_order_release);
    for (int i = 0; i < team->n; i++)
        if (team->members[i] != cpu->me) symmem__cpu_ring(cpu, team->members[i], CPU_WAIT_PEERS);
    symmem_status_t status =
        symmem__cpu_wait(cpu, call, CPU_WAIT_PEERS, barrier_ready, barrier_pending, &w, 0);
    if (status != SYMMEM_OK) --cpu->epoch[channel]; /* stays consistent for messages */
    return status;
}

symmem_status_t symmem__cpu_barrier_world(cpu_t *cpu, const char *call)
{
    return symmem__cpu_barrier(cpu, call, &cpu->world);
}

symmem_status_t symmem__cpu_agree(cpu_t *cpu, const char *call, const symmem_team_view_t *team,
                          uint64_t what, uint64_t value, uint64_t *values_p)
{
    int channel = cpu_channel(team);
    uint64_t seq = ++cpu->agree_seq[channel];
    cpu_agree_t *mine = &cpu->ctl->slots[cpu->me].agree[channel][seq % 2];
    mine->seq = seq;
    mine->what = what;
    mine->value = value;
    /* The barrier's release/acquire publishes these stores to every member;
     * the next agreement on this channel writes the other half, and cannot
     * reach this half again before every member has passed the next
     * barrier, i.e. finished reading. */
    SYMMEM_CHECK(symmem__cpu_barrier(cpu, call, team));
    for (int i = 0; i < team->n; i++) {
        int pe = team->members[i];
        cpu_agree_t *theirs = &cpu->ctl->slots[pe].agree[channel][seq % 2];
        if (theirs->seq != seq || theirs->what != what)
            return symmem__error(SYMMEM_ERR_MISMATCH,
                                 "%s: PE %d is not in %s but in another collective "
                                 "(collectives must be called in the same order on "
                                 "every PE)",
                                 call, pe, call);
        values_p[i] = theirs->value;
    }
    return SYMMEM_OK;
}

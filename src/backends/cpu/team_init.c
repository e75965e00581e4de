/* team_init: PEs that pass the same key meet in the control segment. Each
 * publishes a request (its index, its free channels, its largest barrier and
 * agreement counts), waits until the team's npes requests are all there, and
 * derives from them what every member derives: the members in index order, a
 * channel free on all of them, and counts to start that channel from (the
 * largest any member has, so no member's barrier can already be past them).
 * A request stays up until every member has read it. */
#include <stdio.h>

#include "../../core/error.h"
#include "cpu.h"

typedef struct {
    cpu_t *cpu;
    uint64_t key;
    int npes;
    int *members;       /* out: world PE of each index */
    uint64_t *seen;     /* out: each member's init_done at request time */
    const char *problem; /* a conflicting request, for the error */
} gather_t;

/* All npes requests with our key are up, one per index. */
static int requests_complete(void *arg)
{
    gather_t *g = arg;
    int found = 0;
    for (int i = 0; i < g->npes; i++) g->members[i] = -1;
    for (int pe = 0; pe < g->cpu->n; pe++) {
        cpu_pe_slot_t *slot = &g->cpu->ctl->slots[pe];
        /* acquire pairs with the release that published the key */
        if (atomic_load_explicit(&slot->init_key, memory_order_acquire) != g->key) continue;
        if (slot->init_npes != g->npes || slot->init_index < 0 || slot->init_index >= g->npes ||
            g->members[slot->init_index] >= 0) {
            g->problem = "PEs with the same key disagree on npes, or two take the same index";
            return 1;
        }
        g->members[slot->init_index] = pe;
        g->seen[slot->init_index] = slot->init_done_before;
        found++;
    }
    return found == g->npes;
}

static void requests_pending(void *arg, char *out, size_t size)
{
    gather_t *g = arg;
    int n = snprintf(out, size, "team indices nobody has claimed yet:");
    for (int i = 0; i < g->npes && n < (int)size; i++)
        if (g->members[i] < 0) n += snprintf(out + n, size - (size_t)n, " %d", i);
}

/* Every member has finished reading the requests. */
static int members_done(void *arg)
{
    gather_t *g = arg;
    for (int i = 0; i < g->npes; i++)
        if (atomic_load_explicit(&g->cpu->ctl->slots[g->members[i]].init_done,
                                 memory_order_acquire) <= g->seen[i])
            return 0;
    return 1;
}

static uint64_t largest(const uint64_t *values, size_t n)
{
    uint64_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (values[i] > max) max = values[i];
    return max;
}

symmem_status_t symmem__cpu_team_init(cpu_t *cpu, uint64_t key, int npes, int index, int *members,
                              int *handle_p)
{
    const char *call = "team_init";
    cpu_pe_slot_t *mine = &cpu->ctl->slots[cpu->me];
    mine->init_npes = npes;
    mine->init_index = index;
    mine->init_done_before = atomic_load_explicit(&mine->init_done, memory_order_relaxed);
    mine->init_channels = cpu->channels_in_use;
    mine->init_max_epoch = largest(cpu->epoch, CPU_BARRIER_CHANNELS);
    mine->init_max_seq = largest(cpu->agree_seq, CPU_BARRIER_CHANNELS);
    atomic_store_explicit(&mine->init_key, key, memory_order_release);
    for (int pe = 0; pe < cpu->n; pe++)
        if (pe != cpu->me) symmem__cpu_ring(cpu, pe, CPU_WAIT_PEERS);

    uint64_t seen[npes];
    gather_t g = {cpu, key, npes, members, seen, NULL};
    symmem_status_t status =
        symmem__cpu_wait(cpu, call, CPU_WAIT_PEERS, requests_complete, requests_pending, &g, 0);
    if (status == SYMMEM_OK && g.problem != NULL)
        status = symmem__error(SYMMEM_ERR_MISMATCH, "%s: %s", call, g.problem);
    if (status != SYMMEM_OK) {
        atomic_store_explicit(&mine->init_key, 0, memory_order_release);
        return status;
    }

    uint64_t busy = 0, epoch = 0, seq = 0;
    for (int i = 0; i < npes; i++) {
        cpu_pe_slot_t *slot = &cpu->ctl->slots[members[i]];
        busy |= slot->init_channels;
        if (slot->init_max_epoch > epoch) epoch = slot->init_max_epoch;
        if (slot->init_max_seq > seq) seq = slot->init_max_seq;
    }
    int channel = 0;
    while (channel < CPU_BARRIER_CHANNELS && (busy >> channel & 1)) channel++;

    /* Tell the others we have read their requests, and wait until they have
     * read ours: only then may any request be taken down. */
    atomic_fetch_add_explicit(&mine->init_done, 1, memory_order_release);
    for (int i = 0; i < npes; i++)
        if (members[i] != cpu->me) symmem__cpu_ring(cpu, members[i], CPU_WAIT_PEERS);
    status = symmem__cpu_wait(cpu, call, CPU_WAIT_PEERS, members_done, NULL, &g, 0);
    atomic_store_explicit(&mine->init_key, 0, memory_order_release);
    if (status != SYMMEM_OK) return status;
    if (channel == CPU_BARRIER_CHANNELS)
        return symmem__error(SYMMEM_ERR_NO_MEMORY,
                             "%s: too many teams: no team slot is free on every member "
                             "(destroy teams with team_destroy)",
                             call);
    cpu->epoch[channel] = epoch;
    atomic_store_explicit(&mine->channel[channel].epoch, epoch, memory_order_release);
    cpu->agree_seq[channel] = seq;
    cpu->channels_in_use |= 1ULL << channel;
    *handle_p = channel;
    return SYMMEM_OK;
}

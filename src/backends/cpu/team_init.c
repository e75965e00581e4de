/* team_init: PEs that pass the same key meet in the control segment. Each
 * publishes a request (its index, its free channels, its largest barrier and
 * agreement counts), waits until the team's npes requests are all there, and
 * derives from them what every member derives: the members in index order, a
 * channel free on all of them, and counts to start that channel from (the
 * largest any member has, so no member's barrier can already be past them).
 * A request stays up until every member has read it.
 * A team that can never gather its npes PEs (the others have entered
 * finalize(), or wait in a world barrier for us) fails at once instead of
 * hanging: in the second case we join that barrier with team_init's
 * fingerprint, so that it fails on every PE in it as a mismatch. */
#include <stdio.h>

#include "../../core/error.h"
#include "cpu.h"

typedef struct {
    cpu_t *cpu;
    uint64_t key;
    int npes;
    int *members;        /* out: world PE of each index */
    uint64_t *seen;      /* out: each member's init_done at request time */
    const char *problem; /* a conflicting request, for the error */
    int stuck;           /* 1: npes PEs can never gather */
    int left;            /* a PE that cannot join because it entered finalize(), or -1 */
    int blocked;         /* a PE that cannot join because it waits for us, or -1 */
} gather_t;

/* Whether PE pe, which has not posted our key, can never post it while we
 * wait: it has entered finalize(), or it has arrived at a world barrier we
 * have not (epoch), which it cannot leave before we arrive. Both last. */
static int cannot_join(gather_t *g, int pe, uint64_t epoch)
{
    cpu_pe_slot_t *slot = &g->cpu->ctl->slots[pe];
    if (atomic_load_explicit(&slot->state, memory_order_acquire) == PE_FINALIZED) {
        if (g->left < 0) g->left = pe;
        return 1;
    }
    if (atomic_load_explicit(&slot->channel[0].epoch, memory_order_acquire) > epoch) {
        if (g->blocked < 0) g->blocked = pe;
        return 1;
    }
    return 0;
}

/* All npes requests with our key are up, one per index. */
static int requests_complete(void *arg)
{
    gather_t *g = arg;
    int found = 0, absent = 0;
    uint64_t epoch = atomic_load_explicit(&g->cpu->ctl->slots[g->cpu->me].channel[0].epoch,
                                          memory_order_relaxed);
    for (int i = 0; i < g->npes; i++) g->members[i] = -1;
    g->left = g->blocked = -1;
    for (int pe = 0; pe < g->cpu->n; pe++) {
        cpu_pe_slot_t *slot = &g->cpu->ctl->slots[pe];
        /* acquire pairs with the release that published the key */
        if (atomic_load_explicit(&slot->init_key, memory_order_acquire) != g->key) {
            absent += cannot_join(g, pe, epoch);
            continue;
        }
        if (slot->init_npes != g->npes || slot->init_index < 0 || slot->init_index >= g->npes ||
            g->members[slot->init_index] >= 0) {
            g->problem = "PEs with the same key disagree on npes, or two take the same index";
            return 1;
        }
        g->members[slot->init_index] = pe;
        g->seen[slot->init_index] = slot->init_done_before;
        found++;
    }
    g->stuck = found < g->npes && g->cpu->n - absent < g->npes;
    return found == g->npes || g->stuck;
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

/* The error for a team that can never gather (g->stuck). */
static symmem_status_t cannot_gather(cpu_t *cpu, gather_t *g)
{
    if (g->blocked >= 0) {
        /* PE g->blocked waits for us in a world barrier: arrive there as
         * team_init, and the barrier fails on every PE in it as a mismatch. */
        symmem_call_t call =
            cpu_call(SYMMEM_CALL_TEAM_INIT, &cpu->world, (uint64_t)g->npes, 0, 0, 0);
        SYMMEM_CHECK(symmem__cpu_barrier(cpu, &cpu->world, call));
    }
    if (g->left >= 0)
        return symmem__error(SYMMEM_ERR_PEER_DEAD,
                             "team_init: PE %d has called finalize() and left the job, and "
                             "without it fewer than npes=%d PEs can join",
                             g->left, g->npes);
    return symmem__error(SYMMEM_ERR_MISMATCH,
                         "team_init: PE %d is in another collective, and without it fewer "
                         "than npes=%d PEs can join",
                         g->blocked, g->npes);
}

symmem_status_t symmem__cpu_team_init(cpu_t *cpu, uint64_t key, int npes, int index, int *members,
                                      int *handle_p)
{
    const char *call = "team_init";
    SYMMEM_CHECK(symmem__cpu_crossed_settle(cpu, call)); /* after a crossed mismatch */
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
    gather_t g = {cpu, key, npes, members, seen, NULL, 0, -1, -1};
    symmem_status_t status = symmem__cpu_wait(cpu, call, CPU_WAIT_PEERS, requests_complete,
                                              requests_pending, NULL, &g, 0);
    if (status == SYMMEM_OK && g.problem != NULL)
        status = symmem__error(SYMMEM_ERR_MISMATCH, "%s: %s", call, g.problem);
    if (status != SYMMEM_OK || g.stuck) {
        atomic_store_explicit(&mine->init_key, 0, memory_order_release);
        if (status == SYMMEM_OK) status = cannot_gather(cpu, &g);
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
    status = symmem__cpu_wait(cpu, call, CPU_WAIT_PEERS, members_done, NULL, NULL, &g, 0);
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

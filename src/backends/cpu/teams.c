/* Team channels: a new team synchronises on a channel that is free on every
 * parent member, with its epochs raised to a common base. */
#include <stdio.h>

#include "../../core/error.h"
#include "cpu.h"

enum { AGREE_TEAM_ARGS = 11, AGREE_TEAM_CHANNELS, AGREE_TEAM_EPOCH, AGREE_TEAM_DESTROY };

symmem_status_t cpu_team_create(cpu_t *cpu, const symmem_team_view_t *parent,
                                uint64_t args_hash, int in_team, int *channel_p)
{
    const char *call = "team_split";
    uint64_t values[parent->n];
    SYMMEM_CHECK(cpu_agree(cpu, call, parent, AGREE_TEAM_ARGS, args_hash, values));
    for (int i = 0; i < parent->n; i++)
        if (values[i] != args_hash)
            return symmem__error(SYMMEM_ERR_MISMATCH,
                                 "%s: PE %d passed different arguments (every PE of the "
                                 "parent team must pass the same)",
                                 call, parent->members[i]);

    SYMMEM_CHECK(cpu_agree(cpu, call, parent, AGREE_TEAM_CHANNELS, cpu->channels_in_use, values));
    uint64_t busy = 0;
    for (int i = 0; i < parent->n; i++) busy |= values[i];
    int channel = 0;
    while (channel < CPU_BARRIER_CHANNELS && (busy >> channel & 1)) channel++;
    if (channel == CPU_BARRIER_CHANNELS)
        return symmem__error(SYMMEM_ERR_NO_MEMORY,
                             "%s: too many teams: all %d team slots are in use on some PE "
                             "(destroy teams with team_destroy)",
                             call, CPU_BARRIER_CHANNELS - SYMMEM_TEAM_FIRST_USER);

    /* The channel may have served other teams: start every member's
     * barrier count at the largest count any parent member has. */
    SYMMEM_CHECK(cpu_agree(cpu, call, parent, AGREE_TEAM_EPOCH, cpu->epoch[channel], values));
    uint64_t base = 0;
    for (int i = 0; i < parent->n; i++)
        if (values[i] > base) base = values[i];
    cpu->epoch[channel] = base;
    atomic_store_explicit(&cpu->ctl->slots[cpu->me].epoch[channel], base, memory_order_release);
    if (in_team) cpu->channels_in_use |= 1ULL << channel;
    *channel_p = channel;
    return SYMMEM_OK;
}

symmem_status_t cpu_team_destroy(cpu_t *cpu, const symmem_team_view_t *team)
{
    /* Nobody may still be inside a collective of the team. */
    SYMMEM_CHECK(cpu_barrier(cpu, "team_destroy", team));
    cpu->channels_in_use &= ~(1ULL << team->channel);
    return SYMMEM_OK;
}

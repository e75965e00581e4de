/* Team channels: a new team synchronises on a channel that is free on every
 * parent member, with its epochs raised to a common base. */
#include <stdio.h>

#include "../../core/error.h"
#include "cpu.h"

/* The steps of a split's agreement. */
enum { AGREE_TEAM_ARGS = 1, AGREE_TEAM_CHANNELS, AGREE_TEAM_EPOCH, AGREE_TEAM_SEQ };

/* symmem__cpu_agree over the parent. A parent of one PE (TEAM_SAME_MYPE_NODE, a
 * split of size 1) has nobody to agree with, and its channel (-1, or one
 * other PEs may share) must not see this PE's agreement sequence move. */
static symmem_status_t agree(cpu_t *cpu, const symmem_team_view_t *parent, int step, uint64_t value,
                             uint64_t *values_p)
{
    if (parent->n == 1) {
        values_p[0] = value;
        return SYMMEM_OK;
    }
    return symmem__cpu_agree(cpu, SYMMEM_CALL_TEAM_SPLIT, step, parent, value, values_p);
}

/* FNV-1a over a split's arguments: every parent member must pass the same. */
static uint64_t hash_args(const int *args, int count)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < count; i++) h = (h ^ (uint32_t)args[i]) * 1099511628211ULL;
    return h;
}

/* Agrees on the arguments and on a channel free on every parent member. */
static symmem_status_t team_create(cpu_t *cpu, const symmem_team_view_t *parent, uint64_t args_hash,
                                   int in_team, int *channel_p)
{
    const char *call = "team_split";
    uint64_t values[parent->n];
    SYMMEM_CHECK(agree(cpu, parent, AGREE_TEAM_ARGS, args_hash, values));
    for (int i = 0; i < parent->n; i++)
        if (values[i] != args_hash)
            return symmem__error(SYMMEM_ERR_MISMATCH,
                                 "%s: PE %d passed different arguments (every PE of the "
                                 "parent team must pass the same)",
                                 call, parent->members[i]);

    SYMMEM_CHECK(agree(cpu, parent, AGREE_TEAM_CHANNELS, cpu->channels_in_use, values));
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
    SYMMEM_CHECK(agree(cpu, parent, AGREE_TEAM_EPOCH, cpu->epoch[channel], values));
    uint64_t base = 0;
    for (int i = 0; i < parent->n; i++)
        if (values[i] > base) base = values[i];
    cpu->epoch[channel] = base;
    atomic_store_explicit(&cpu->ctl->slots[cpu->me].channel[channel].epoch, base,
                          memory_order_release);

    /* Likewise the channel's agreement sequence (splits of the new team
     * agree on it): members that split an earlier team on this channel
     * have counted further than the others. */
    SYMMEM_CHECK(agree(cpu, parent, AGREE_TEAM_SEQ, cpu->agree_seq[channel], values));
    uint64_t seq = 0;
    for (int i = 0; i < parent->n; i++)
        if (values[i] > seq) seq = values[i];
    cpu->agree_seq[channel] = seq;
    if (in_team) cpu->channels_in_use |= 1ULL << channel;
    *channel_p = channel;
    return SYMMEM_OK;
}

symmem_status_t symmem__cpu_team_split_strided(cpu_t *cpu, const symmem_team_view_t *parent,
                                               int start, int stride, int size, int in_team,
                                               int *handle_p)
{
    int args[] = {1, start, stride, size};
    int channel;
    SYMMEM_CHECK(team_create(cpu, parent, hash_args(args, 4), in_team, &channel));
    *handle_p = in_team ? channel : SYMMEM_TEAM_INVALID;
    return SYMMEM_OK;
}

symmem_status_t symmem__cpu_team_split_2d(cpu_t *cpu, const symmem_team_view_t *parent, int xrange,
                                          int *xhandle_p, int *yhandle_p)
{
    /* Every parent member is in exactly one x team and one y team; teams of
     * one axis are disjoint, so they can share a channel. */
    int args[] = {2, xrange};
    uint64_t h = hash_args(args, 2);
    SYMMEM_CHECK(team_create(cpu, parent, h, 1, xhandle_p));
    symmem_status_t status = team_create(cpu, parent, h + 1, 1, yhandle_p);
    if (status != SYMMEM_OK) cpu->channels_in_use &= ~(1ULL << *xhandle_p);
    return status;
}

symmem_status_t symmem__cpu_team_destroy(cpu_t *cpu, const symmem_team_view_t *team)
{
    /* Nobody may still be inside a collective of the team. */
    SYMMEM_CHECK(
        symmem__cpu_barrier(cpu, team, cpu_call(SYMMEM_CALL_TEAM_DESTROY, team, 0, 0, 0, 0)));
    cpu->channels_in_use &= ~(1ULL << team->channel);
    return SYMMEM_OK;
}

/* A barrier's fingerprint (cpu_call_t) in words, for the messages that say
 * which PE called what when PEs disagree. */
#include <stdio.h>

#include "cpu.h"

const char *const symmem__cpu_call_names[CPU_CALL_COUNT] = {
    [CPU_CALL_INIT] = "init",
    [CPU_CALL_BARRIER_ALL] = "barrier_all",
    [CPU_CALL_SYNC_ALL] = "sync_all",
    [CPU_CALL_BARRIER] = "barrier",
    [CPU_CALL_SYNC] = "sync",
    [CPU_CALL_REDUCE] = "reduce",
    [CPU_CALL_REDUCESCATTER] = "reducescatter",
    [CPU_CALL_BROADCAST] = "broadcast",
    [CPU_CALL_ALLTOALL] = "alltoall",
    [CPU_CALL_FCOLLECT] = "fcollect",
    [CPU_CALL_MALLOC] = "malloc",
    [CPU_CALL_FREE] = "free",
    [CPU_CALL_TEAM_SPLIT] = "team_split",
    [CPU_CALL_TEAM_DESTROY] = "team_destroy",
    [CPU_CALL_TEAM_INIT] = "team_init",
};

static const char *const team_names[SYMMEM_TEAM_FIRST_USER] = {
    [SYMMEM_TEAM_WORLD] = "WORLD",
    [SYMMEM_TEAM_SHARED] = "SHARED",
    [SYMMEM_TEAM_NODE] = "NODE",
    [SYMMEM_TEAM_SAME_MYPE_NODE] = "SAME_MYPE_NODE",
    [SYMMEM_TEAM_SAME_GPU] = "SAME_GPU",
    [SYMMEM_TEAM_GPU_LEADERS] = "GPU_LEADERS",
};

void symmem__cpu_call_describe(cpu_call_t call, char *out, size_t size)
{
    unsigned kind = (unsigned)(call.what & 0xff);
    int team = (int)(call.what >> 8 & 0xff);
    symmem_dtype_t dtype = (symmem_dtype_t)(call.what >> 16 & 0xff);
    symmem_reduce_op_t op = (symmem_reduce_op_t)(call.what >> 24 & 0xff);
    unsigned root = (unsigned)(call.what >> 32);
    unsigned long long count = (unsigned long long)call.count;
    char team_text[32];
    if (team < SYMMEM_TEAM_FIRST_USER)
        snprintf(team_text, sizeof(team_text), "team %s", team_names[team]);
    else
        snprintf(team_text, sizeof(team_text), "team %d", team);
    const char *name = symmem__cpu_call_name(call);
    switch (kind) {
    case CPU_CALL_REDUCE: case CPU_CALL_REDUCESCATTER:
        snprintf(out, size, "%s(%s, %s, %llu element%s, %s)", name, symmem_reduce_op_name(op),
                 symmem_dtype_name(dtype), count, count == 1 ? "" : "s", team_text);
        break;
    case CPU_CALL_BROADCAST:
        snprintf(out, size, "%s(%llu byte%s, root %u, %s)", name, count, count == 1 ? "" : "s",
                 root, team_text);
        break;
    case CPU_CALL_ALLTOALL: case CPU_CALL_FCOLLECT:
        snprintf(out, size, "%s(%llu byte%s, %s)", name, count, count == 1 ? "" : "s", team_text);
        break;
    case CPU_CALL_BARRIER: case CPU_CALL_SYNC: case CPU_CALL_TEAM_DESTROY:
        snprintf(out, size, "%s(%s)", name, team_text);
        break;
    case CPU_CALL_TEAM_INIT:
        snprintf(out, size, "%s(%llu PEs)", name, count);
        break;
    case CPU_CALL_TEAM_SPLIT:
        snprintf(out, size, "%s(of %s)", name, team_text);
        break;
    default: /* init, barrier_all, sync_all, malloc, free */
        snprintf(out, size, "%s", name);
    }
}

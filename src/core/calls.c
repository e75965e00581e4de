/* A collective's fingerprint (calls.h) in words, for the messages that say
 * which PE called what when PEs disagree: both backends' words. */
#include <stdio.h>

#include "calls.h"

const char *const symmem__call_names[SYMMEM_CALL_COUNT] = {
    [SYMMEM_CALL_INIT] = "init",
    [SYMMEM_CALL_BARRIER_ALL] = "barrier_all",
    [SYMMEM_CALL_SYNC_ALL] = "sync_all",
    [SYMMEM_CALL_BARRIER] = "barrier",
    [SYMMEM_CALL_SYNC] = "sync",
    [SYMMEM_CALL_REDUCE] = "reduce",
    [SYMMEM_CALL_REDUCESCATTER] = "reducescatter",
    [SYMMEM_CALL_BROADCAST] = "broadcast",
    [SYMMEM_CALL_ALLTOALL] = "alltoall",
    [SYMMEM_CALL_FCOLLECT] = "fcollect",
    [SYMMEM_CALL_MALLOC] = "malloc",
    [SYMMEM_CALL_FREE] = "free",
    [SYMMEM_CALL_TEAM_SPLIT] = "team_split",
    [SYMMEM_CALL_TEAM_DESTROY] = "team_destroy",
    [SYMMEM_CALL_TEAM_INIT] = "team_init",
};

static const char *const team_names[SYMMEM_TEAM_FIRST_USER] = {
    [SYMMEM_TEAM_WORLD] = "WORLD",
    [SYMMEM_TEAM_SHARED] = "SHARED",
    [SYMMEM_TEAM_NODE] = "NODE",
    [SYMMEM_TEAM_SAME_MYPE_NODE] = "SAME_MYPE_NODE",
    [SYMMEM_TEAM_SAME_GPU] = "SAME_GPU",
    [SYMMEM_TEAM_GPU_LEADERS] = "GPU_LEADERS",
};

void symmem__call_describe(symmem_call_t call, char *out, size_t size)
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
    const char *name = symmem__call_name(call);
    switch (kind) {
    case SYMMEM_CALL_REDUCE: case SYMMEM_CALL_REDUCESCATTER:
        snprintf(out, size, "%s(%s, %s, %llu element%s, %s)", name, symmem_reduce_op_name(op),
                 symmem_dtype_name(dtype), count, count == 1 ? "" : "s", team_text);
        break;
    case SYMMEM_CALL_BROADCAST:
        snprintf(out, size, "%s(%llu byte%s, root %u, %s)", name, count, count == 1 ? "" : "s",
                 root, team_text);
        break;
    case SYMMEM_CALL_ALLTOALL: case SYMMEM_CALL_FCOLLECT:
        snprintf(out, size, "%s(%llu byte%s, %s)", name, count, count == 1 ? "" : "s", team_text);
        break;
    case SYMMEM_CALL_BARRIER: case SYMMEM_CALL_SYNC: case SYMMEM_CALL_TEAM_DESTROY:
        snprintf(out, size, "%s(%s)", name, team_text);
        break;
    case SYMMEM_CALL_TEAM_INIT:
        snprintf(out, size, "%s(%llu PEs)", name, count);
        break;
    case SYMMEM_CALL_TEAM_SPLIT:
        snprintf(out, size, "%s(of %s)", name, team_text);
        break;
    default: /* init, barrier_all, sync_all, malloc, free */
        snprintf(out, size, "%s", name);
    }
}

void symmem__calls_group(const symmem_call_t *calls, const int *pes, int n, char *out,
                         size_t size)
{
    char call[160];
    int done[n > 0 ? n : 1];
    int used = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) done[i] = 0;
    for (int i = 0; i < n && used < (int)size; i++) {
        if (done[i]) continue;
        int same = 0;
        for (int j = i; j < n; j++) same += symmem__call_same(&calls[i], &calls[j]);
        used += snprintf(out + used, size - (size_t)used, "%s%s", used ? ", " : "",
                         same > 1 ? "PEs" : "PE");
        for (int j = i, k = 0; j < n && used < (int)size; j++) {
            if (done[j] || !symmem__call_same(&calls[i], &calls[j])) continue;
            done[j] = 1;
            used += snprintf(out + used, size - (size_t)used, "%s %d", k++ ? "," : "", pes[j]);
        }
        symmem__call_describe(calls[i], call, sizeof(call));
        if (used < (int)size)
            used += snprintf(out + used, size - (size_t)used, " called %s", call);
    }
}

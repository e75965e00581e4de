/* A collective's fingerprint (calls.h) in words, for the messages that say
 * which PE called what when PEs disagree: both backends' words. */
#include <stdio.h>

#include "calls.h"

#define CALL_NAME(NAME, name, code, shape, moves_data) [SYMMEM_CALL_##NAME] = name,
const char *const symmem__call_names[SYMMEM_CALL_COUNT] = {SYMMEM_CALL_KINDS(CALL_NAME)};
#undef CALL_NAME

/* What a fingerprint's words hold, by the kind's SHAPE (vocabulary.h). */
typedef enum { PLAIN, REDUCTION, ROOTED, BYTES, TEAM, PES, OF_TEAM } shape_t;
#define CALL_SHAPE(NAME, name, code, shape, moves_data) [SYMMEM_CALL_##NAME] = shape,
static const shape_t shapes[SYMMEM_CALL_COUNT] = {SYMMEM_CALL_KINDS(CALL_SHAPE)};
#undef CALL_SHAPE

static const char *const team_names[SYMMEM_TEAM_FIRST_USER] = {
    [SYMMEM_TEAM_WORLD] = "WORLD",       [SYMMEM_TEAM_SHARED] = "SHARED",
    [SYMMEM_TEAM_NODE] = "NODE",         [SYMMEM_TEAM_SAME_MYPE_NODE] = "SAME_MYPE_NODE",
    [SYMMEM_TEAM_SAME_GPU] = "SAME_GPU", [SYMMEM_TEAM_GPU_LEADERS] = "GPU_LEADERS",
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
    switch (kind > 0 && kind < SYMMEM_CALL_COUNT ? shapes[kind] : PLAIN) {
    case REDUCTION:
        snprintf(out, size, "%s(%s, %s, %llu element%s, %s)", name, symmem_reduce_op_name(op),
                 symmem_dtype_name(dtype), count, count == 1 ? "" : "s", team_text);
        break;
    case ROOTED:
        snprintf(out, size, "%s(%llu byte%s, root %u, %s)", name, count, count == 1 ? "" : "s",
                 root, team_text);
        break;
    case BYTES:
        snprintf(out, size, "%s(%llu byte%s, %s)", name, count, count == 1 ? "" : "s", team_text);
        break;
    case TEAM: snprintf(out, size, "%s(%s)", name, team_text); break;
    case PES: snprintf(out, size, "%s(%llu PEs)", name, count); break;
    case OF_TEAM: snprintf(out, size, "%s(of %s)", name, team_text); break;
    case PLAIN: /* init, barrier_all, sync_all, malloc, free */ snprintf(out, size, "%s", name);
    }
}

void symmem__calls_group(const symmem_call_t *calls, const int *pes, int n, char *out, size_t size)
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
        if (used < (int)size) used += snprintf(out + used, size - (size_t)used, " called %s", call);
    }
}

/* A collective's fingerprint: which collective a PE is in and its arguments,
 * exactly (two words, no hash, so that a mismatch can be described). Both
 * backends compare them between PEs (the cpu engine in its barriers, the gpu
 * backend through its call pages) and describe them with the same words. */
#ifndef SYMMEM_CORE_CALLS_H
#define SYMMEM_CORE_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "symmem/symmem.h"

/* The collectives, as a fingerprint names them (symmem/vocabulary.h's
 * SYMMEM_CALL_KINDS); NONE: no collective (a one-sided call). */
#define SYMMEM__CALL_KIND(NAME, name, code, shape, moves_data) SYMMEM_CALL_##NAME = code,
typedef enum {
    SYMMEM_CALL_NONE = 0,
    SYMMEM_CALL_KINDS(SYMMEM__CALL_KIND) SYMMEM_CALL_COUNT
} symmem_call_kind_t;
#undef SYMMEM__CALL_KIND

/* Whether a collective of kind moves data (NVSHMEM runs those on NCCL). */
static inline int symmem__call_moves_data(symmem_call_kind_t kind)
{
    switch (kind) {
#define SYMMEM__CALL_MOVES(NAME, name, code, shape, moves_data)                                    \
    case SYMMEM_CALL_##NAME: return moves_data;
        SYMMEM_CALL_KINDS(SYMMEM__CALL_MOVES)
#undef SYMMEM__CALL_MOVES
    default: return 0;
    }
}

/* Every member of a collective must make it with the same one. */
typedef struct {
    uint64_t what;  /* kind | team << 8 | dtype << 16 | op << 24 | root << 32 */
    uint64_t count; /* elements (reductions) or bytes; an agreement's step */
} symmem_call_t;

/* The fingerprint of a collective on the team whose handle (or channel) is
 * team (dtype, op, root: 0 where the call has none). */
static inline symmem_call_t symmem__call(symmem_call_kind_t kind, int team, uint64_t count,
                                         int dtype, int op, int root)
{
    symmem_call_t call = {(uint64_t)kind | (uint64_t)(uint8_t)team << 8 |
                              (uint64_t)(uint8_t)dtype << 16 | (uint64_t)(uint8_t)op << 24 |
                              (uint64_t)(uint32_t)root << 32,
                          count};
    return call;
}

static inline int symmem__call_same(const symmem_call_t *a, const symmem_call_t *b)
{
    return a->what == b->what && a->count == b->count;
}

extern const char *const symmem__call_names[SYMMEM_CALL_COUNT];
/* "reduce"; "a collective" for a kind out of range (a fingerprint read from
 * another process is never trusted). */
static inline const char *symmem__call_name(symmem_call_t call)
{
    unsigned kind = (unsigned)(call.what & 0xff);
    return kind > 0 && kind < SYMMEM_CALL_COUNT ? symmem__call_names[kind] : "a collective";
}
/* "reduce(sum, float32, 1024 elements, team WORLD)" */
void symmem__call_describe(symmem_call_t call, char *out, size_t size);
/* "PEs 0, 2 called barrier_all, PE 1 called reduce(...)": calls[i] is what
 * PE pes[i] called, grouped by call in the order first seen. */
void symmem__calls_group(const symmem_call_t *calls, const int *pes, int n, char *out, size_t size);

#endif

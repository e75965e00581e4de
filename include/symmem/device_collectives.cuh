/* symmem's device library (device.cuh): team syncs and barriers over the
 * sync area (device_layout.h's), and the collectives, which move data
 * between two syncs. */
#ifndef SYMMEM_DEVICE_COLLECTIVES_CUH
#define SYMMEM_DEVICE_COLLECTIVES_CUH

#include "device_rma.cuh"

/* ---- teams: sync and barrier ---- */

/* Team team's entry, or 0 where it is no team of this PE. */
static __device__ __forceinline__ const symmem_device_team *symmem__team_or_0(symmem_u64 st,
                                                                              int team)
{
    const symmem_device_team *teams = SYMMEM__RO(st, teams);
    if (team < 0 || team >= SYMMEM_DEV_MAX_TEAMS || teams == 0) return 0;
    return symmem__ro(&teams[team].n) > 0 ? &teams[team] : 0;
}

/* Team team's entry; a handle that is no team of this PE fails. */
static __device__ __forceinline__ const symmem_device_team *symmem__team(symmem_u64 st,
                                                                         const char *call, int team)
{
    int me = SYMMEM__RO(st, my_pe);
    symmem__check_pe(st, call, me);
    const symmem_device_team *t = symmem__team_or_0(st, team);
    if (t == 0 || symmem__ro(&t->me) < 0)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_TEAM, me, 0, (symmem_u64)(long long)team);
    return t;
}

/* A sync of team over its part of the sync area (device_layout.h: word 0
 * is how many syncs this PE finished on the team, written only by its
 * syncing thread; word 1 + i the last epoch team PE i announced here). One
 * thread calls it. */
static __device__ __noinline__ void symmem__team_sync(symmem_u64 st, const char *call, int team)
{
    const symmem_device_consts_t *c = &symmem_device_consts;
    /* The world from the constant state: no load before the arrivals waits
     * for L2 (the caller's fence emptied L1). */
    int world = team == 0 && c->magic == SYMMEM_DEVICE_STATE_MAGIC && c->peers == c->n_pes;
    const symmem_device_team *t = world ? 0 : symmem__team(st, call, team);
    int n = world ? c->n_pes : symmem__ro(&t->n);
    symmem_u64 area =
        world ? c->sync_base
              : SYMMEM__RO(st, sync_base) +
                    SYMMEM_DEVICE_TEAM_SYNC_BYTES(SYMMEM__RO(st, n_pes)) * (symmem_u64)team;
    symmem_u64 *mine = (symmem_u64 *)area;
    symmem_u64 epoch = mine[0] + 1;
    mine[0] = epoch;
    symmem__fence_acq_rel_sys(); /* this PE's earlier stores before its arrival */
    symmem_u64 slot = area + 8ull * (symmem_u64)(1 + (world ? c->my_pe : symmem__ro(&t->me)));
    for (int i = 0; i < n; i++) {
        symmem_u64 to;
        if (world) {
            symmem_u64 delta = c->delta[i];
            if (delta & 1) symmem__dev_fail(st, call, SYMMEM_DEV_ERR_UNREACHABLE, i, -1, 0);
            to = slot + delta;
        } else {
            int pe = symmem__ro(&symmem__ro(&t->members)[i]);
            to = symmem__peer_base(st, call, pe) + (slot - SYMMEM__RO(st, heap_base));
        }
        symmem__st_relaxed_u64(to, epoch);
    }
    symmem_u64 t0 = symmem__globaltimer();
    for (int i = 0; i < n; i++) {
        symmem_u64 at = area + 8ull * (symmem_u64)(1 + i);
        /* acquire: pairs with team PE i's fence before its arrival store */
        for (unsigned int spin = 1; symmem__ld_acquire_u64(at) < epoch; spin++)
            if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, call, t0);
    }
}

static __device__ __forceinline__ void symmem__team_barrier(symmem_u64 st, const char *call,
                                                            int scope, int team, int quiet)
{
    symmem__scope_sync(scope); /* every lane's stores before the leader's fence */
    if (symmem__lane(scope) == 0) {
        if (quiet) symmem__fence_sc_sys();
        symmem__team_sync(st, call, team);
    }
    symmem__scope_sync(scope); /* every lane after the leader's acquires */
}

#define SYMMEM__SYNC_API(name, scope, quiet)                                                       \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st)                                         \
    {                                                                                              \
        symmem__team_barrier(st, #name, scope, 0, quiet);                                          \
        return 0;                                                                                  \
    }

SYMMEM__SYNC_API(barrier_all, SYMMEM__THREAD, 1)
SYMMEM__SYNC_API(barrier_all_warp, SYMMEM__WARP, 1)
SYMMEM__SYNC_API(barrier_all_block, SYMMEM__BLOCK, 1)
SYMMEM__SYNC_API(sync_all, SYMMEM__THREAD, 0)
SYMMEM__SYNC_API(sync_all_warp, SYMMEM__WARP, 0)
SYMMEM__SYNC_API(sync_all_block, SYMMEM__BLOCK, 0)

#define SYMMEM__TEAM_SYNC_API(name, scope, quiet)                                                  \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, int team)                               \
    {                                                                                              \
        symmem__team_barrier(st, #name, scope, team, quiet);                                       \
        return 0;                                                                                  \
    }

SYMMEM__TEAM_SYNC_API(barrier, SYMMEM__THREAD, 1)
SYMMEM__TEAM_SYNC_API(barrier_warp, SYMMEM__WARP, 1)
SYMMEM__TEAM_SYNC_API(barrier_block, SYMMEM__BLOCK, 1)
SYMMEM__TEAM_SYNC_API(sync, SYMMEM__THREAD, 0)
SYMMEM__TEAM_SYNC_API(sync_warp, SYMMEM__WARP, 0)
SYMMEM__TEAM_SYNC_API(sync_block, SYMMEM__BLOCK, 0)

/* -1 where team is no team of this PE, as NVSHMEM's. */
SYMMEM_DEVICE_API int symmem_dev_team_my_pe(symmem_u64 st, int team)
{
    const symmem_device_team *t = symmem__team_or_0(st, team);
    return t != 0 ? symmem__ro(&t->me) : -1;
}

SYMMEM_DEVICE_API int symmem_dev_team_n_pes(symmem_u64 st, int team)
{
    const symmem_device_team *t = symmem__team_or_0(st, team);
    return t != 0 ? symmem__ro(&t->n) : -1;
}

/* The number in dest_team of src_team's PE src_pe: -1 where either is no
 * team of this PE, src_pe is not in src_team or not in dest_team, as
 * NVSHMEM's. */
SYMMEM_DEVICE_API int symmem_dev_team_translate_pe(symmem_u64 st, int src_team, int src_pe,
                                                   int dest_team)
{
    const symmem_device_team *from = symmem__team_or_0(st, src_team);
    const symmem_device_team *to = symmem__team_or_0(st, dest_team);
    if (from == 0 || to == 0 || src_pe < 0 || src_pe >= symmem__ro(&from->n)) return -1;
    int world = symmem__ro(&symmem__ro(&from->members)[src_pe]);
    for (int i = 0, n = symmem__ro(&to->n); i < n; i++)
        if (symmem__ro(&symmem__ro(&to->members)[i]) == world) return i;
    return -1;
}

/* ---- collectives that move bytes: push into the members' dst ---- */

/* kind: which of the three, by its code in vocabulary.h's call kinds
 * (SYMMEM__CALL_FCOLLECT, _ALLTOALL, _BROADCAST). Every lane of the scope
 * calls it. */
#define SYMMEM__CALL_CODE(NAME, name, code, shape, moves_data) SYMMEM__CALL_##NAME = code,
enum { SYMMEM_CALL_KINDS(SYMMEM__CALL_CODE) };
#undef SYMMEM__CALL_CODE

static __device__ __forceinline__ void symmem__push(symmem_u64 st, const char *call, int scope,
                                                    int kind, int team, symmem_u64 dst,
                                                    symmem_u64 src, symmem_u64 nbytes, int root)
{
    const symmem_device_team *t = symmem__team(st, call, team);
    int n = symmem__ro(&t->n), me = symmem__ro(&t->me);
    const int *members = symmem__ro(&t->members);
    if (kind == SYMMEM__CALL_BROADCAST && (root < 0 || root >= n))
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_ROOT, n, 3, (symmem_u64)(long long)root);
    symmem_u64 span = kind == SYMMEM__CALL_BROADCAST ? nbytes : nbytes * (symmem_u64)n;
    symmem__remote(st, call, 1, dst, span, SYMMEM__RO(st, my_pe)); /* dst is symmetric */
    symmem__team_barrier(st, call, scope, team, 0);                /* every member's dst is free */
    unsigned int lane = symmem__lane(scope), lanes = symmem__lanes(scope);
    if (kind != SYMMEM__CALL_BROADCAST || me == root) {
        for (int k = 0; k < n; k++) {
            int i = (me + k) % n; /* members start at different peers */
            symmem_u64 at = dst, from = src;
            if (kind == SYMMEM__CALL_FCOLLECT) at += nbytes * (symmem_u64)me;
            if (kind == SYMMEM__CALL_ALLTOALL) {
                at += nbytes * (symmem_u64)me;
                from += nbytes * (symmem_u64)i;
            }
            symmem_u64 remote = symmem__remote(st, call, 1, at, nbytes, members[i]);
            symmem__copy_small(remote, from, nbytes, lane, lanes);
        }
    }
    symmem__team_barrier(st, call, scope, team, 1); /* every copy is visible */
}

#define SYMMEM__PUSH_API(name, kind, scope)                                                        \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, int team, symmem_u64 dst,               \
                                            symmem_u64 src, symmem_u64 nbytes, int root)           \
    {                                                                                              \
        symmem__push(st, #name, scope, kind, team, dst, src, nbytes, root);                        \
        return 0;                                                                                  \
    }

SYMMEM__PUSH_API(fcollect, SYMMEM__CALL_FCOLLECT, SYMMEM__THREAD)
SYMMEM__PUSH_API(fcollect_warp, SYMMEM__CALL_FCOLLECT, SYMMEM__WARP)
SYMMEM__PUSH_API(fcollect_block, SYMMEM__CALL_FCOLLECT, SYMMEM__BLOCK)
SYMMEM__PUSH_API(alltoall, SYMMEM__CALL_ALLTOALL, SYMMEM__THREAD)
SYMMEM__PUSH_API(alltoall_warp, SYMMEM__CALL_ALLTOALL, SYMMEM__WARP)
SYMMEM__PUSH_API(alltoall_block, SYMMEM__CALL_ALLTOALL, SYMMEM__BLOCK)
SYMMEM__PUSH_API(broadcast, SYMMEM__CALL_BROADCAST, SYMMEM__THREAD)
SYMMEM__PUSH_API(broadcast_warp, SYMMEM__CALL_BROADCAST, SYMMEM__WARP)
SYMMEM__PUSH_API(broadcast_block, SYMMEM__CALL_BROADCAST, SYMMEM__BLOCK)

/* ---- reductions: pull every member's src, combine in member order ----
 * (member 0 first, the 16-bit floats in float, rounded once: the order of
 * docs/reproducibility.md, the same as the host's and the kernels') */

/* How an element type is combined: in A (float for the 16-bit floats). */
template <typename T>
struct symmem__num {
    typedef T A;
    static __device__ __forceinline__ A widen(T v)
    {
        return v;
    }
    static __device__ __forceinline__ T narrow(A a)
    {
        return a;
    }
};
struct symmem__half {
    unsigned short bits;
};
struct symmem__bhalf {
    unsigned short bits;
};
template <>
struct symmem__num<symmem__half> {
    typedef float A;
    static __device__ __forceinline__ A widen(symmem__half v)
    {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.bits));
        return f;
    }
    static __device__ __forceinline__ symmem__half narrow(A a)
    {
        symmem__half v;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v.bits) : "f"(a));
        return v;
    }
};
template <>
struct symmem__num<symmem__bhalf> {
    typedef float A;
    static __device__ __forceinline__ A widen(symmem__bhalf v)
    {
        return __uint_as_float((unsigned int)v.bits << 16); /* exact */
    }
    static __device__ __forceinline__ symmem__bhalf narrow(A a)
    {
        symmem__bhalf v;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(v.bits) : "f"(a));
        return v;
    }
};

/* op: a symmem_reduce_op_t, combined as vocabulary.h's row for it says. */
#define SYMMEM__DEV_COMBINE(NAME, name, code, bitwise, combine)                                    \
    case code: return combine;
template <typename A>
static __device__ __forceinline__ A symmem__combine(int op, A a, A b)
{
    switch (op) {
        SYMMEM_REDUCE_OPS(SYMMEM__DEV_COMBINE)
    default: return a ^ b;
    }
}
/* the bitwise ops take integers only: floats combine by the other rows */
#define SYMMEM__DEV_COMBINE_FLOAT(NAME, name, code, bitwise, combine)                              \
    SYMMEM__DEV_COMBINE_IF_##bitwise(code, combine)
#define SYMMEM__DEV_COMBINE_IF_0(code, combine)                                                    \
    case code: return combine;
#define SYMMEM__DEV_COMBINE_IF_1(code, combine)
template <typename A>
static __device__ __forceinline__ A symmem__combine_float(int op, A a, A b)
{
    switch (op) {
        SYMMEM_REDUCE_OPS(SYMMEM__DEV_COMBINE_FLOAT)
    default: return a * b;
    }
}
template <>
__device__ __forceinline__ float symmem__combine<float>(int op, float a, float b)
{
    return symmem__combine_float<float>(op, a, b);
}
template <>
__device__ __forceinline__ double symmem__combine<double>(int op, double a, double b)
{
    return symmem__combine_float<double>(op, a, b);
}

/* Element i of the reduction over every member's copy of from (symmetric). */
template <typename T>
static __device__ __forceinline__ typename symmem__num<T>::A symmem__reduced(
    symmem_u64 st, const symmem_device_team *t, symmem_u64 offset, symmem_u64 i, int op)
{
    typedef symmem__num<T> N;
    const int *members = symmem__ro(&t->members);
    typename N::A acc =
        N::widen(((const T *)(symmem__mapped(st, symmem__ro(&members[0])) + offset))[i]);
    for (int r = 1, n = symmem__ro(&t->n); r < n; r++)
        acc = symmem__combine(
            op, acc,
            N::widen(((const T *)(symmem__mapped(st, symmem__ro(&members[r])) + offset))[i]));
    return acc;
}

/* dst[i] = the reduction over every member's copy of from[i], for first <=
 * i < first + count (dst and from: element addresses of the same index). */
template <typename T>
static __device__ __noinline__ void symmem__reduce_typed(symmem_u64 st, const symmem_device_team *t,
                                                         symmem_u64 dst, symmem_u64 from,
                                                         symmem_u64 first, symmem_u64 count, int op,
                                                         unsigned int lane, unsigned int lanes)
{
    typedef symmem__num<T> N;
    symmem_u64 offset = from - SYMMEM__RO(st, heap_base);
    T *out = (T *)dst;
    for (symmem_u64 i = first + lane; i < first + count; i += lanes)
        out[i] = N::narrow(symmem__reduced<T>(st, t, offset, i, op));
}

static __device__ __forceinline__ void symmem__reduce_range(symmem_u64 st,
                                                            const symmem_device_team *t, int dtype,
                                                            symmem_u64 dst, symmem_u64 from,
                                                            symmem_u64 first, symmem_u64 count,
                                                            int op, int scope)
{
    unsigned int lane = symmem__lane(scope), lanes = symmem__lanes(scope);
#define SYMMEM__REDUCE_AS(T)                                                                       \
    symmem__reduce_typed<T>(st, t, dst, from, first, count, op, lane, lanes)
    switch (dtype) {
    case SYMMEM_DTYPE_BOOL:
    case SYMMEM_DTYPE_UINT8: SYMMEM__REDUCE_AS(unsigned char); break;
    case SYMMEM_DTYPE_INT8: SYMMEM__REDUCE_AS(signed char); break;
    case SYMMEM_DTYPE_INT16: SYMMEM__REDUCE_AS(short); break;
    case SYMMEM_DTYPE_UINT16: SYMMEM__REDUCE_AS(unsigned short); break;
    case SYMMEM_DTYPE_INT32: SYMMEM__REDUCE_AS(int); break;
    case SYMMEM_DTYPE_UINT32: SYMMEM__REDUCE_AS(unsigned int); break;
    case SYMMEM_DTYPE_INT64: SYMMEM__REDUCE_AS(long long); break;
    case SYMMEM_DTYPE_UINT64: SYMMEM__REDUCE_AS(symmem_u64); break;
    case SYMMEM_DTYPE_FLOAT16: SYMMEM__REDUCE_AS(symmem__half); break;
    case SYMMEM_DTYPE_BFLOAT16: SYMMEM__REDUCE_AS(symmem__bhalf); break;
    case SYMMEM_DTYPE_FLOAT32: SYMMEM__REDUCE_AS(float); break;
    default: SYMMEM__REDUCE_AS(double);
    }
#undef SYMMEM__REDUCE_AS
}

/* reduce (scatter 0): dst[i] = op over members of src[i], i < nelems;
 * reducescatter (scatter 1): the same of src[me * nelems + i]. In place
 * (reduce with dst == src), every member first reduces its own share of the
 * elements into its array (only it reads that share), then, after a sync,
 * copies the others' shares from their arrays: nobody overwrites what
 * another member has yet to read. */
static __device__ __noinline__ void symmem__reduce(symmem_u64 st, const char *call, int scope,
                                                   int team, symmem_u64 dst, symmem_u64 src,
                                                   symmem_u64 nelems, int dtype, int op,
                                                   int scatter)
{
    const symmem_device_team *t = symmem__team(st, call, team);
    int me = SYMMEM__ST(st)->my_pe;
    symmem_u64 size = symmem__dtype_size(dtype);
    if (size == 0) symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_ARG, me, 5, (symmem_u64)dtype);
    if (op < 0 || op > 6 || (op > 3 && dtype >= 9))
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_ARG, me, 6, (symmem_u64)(long long)op);
    symmem_u64 bytes = nelems * size, read = bytes * (symmem_u64)(scatter ? t->n : 1);
    symmem__remote(st, call, 2, src, read, me); /* src is symmetric */
    for (int i = 0; i < t->n; i++) symmem__peer_base(st, call, t->members[i]);
    symmem_u64 from = src + (scatter ? bytes * (symmem_u64)t->me : 0);
    int overlap = dst < src + read && src < dst + bytes;
    /* Allowed overlaps: reduce exactly in place; reducescatter into this
     * member's own part of src (nobody else reads it). */
    if (overlap && dst != from) symmem__dev_fail(st, call, SYMMEM_DEV_ERR_OVERLAP, me, 1, dst);
    if (dtype == 0) op = op == 0 || op == 2 ? 5 : op == 1 || op == 3 ? 4 : op; /* bool: or, and */
    symmem__team_barrier(st, call, scope, team, 0); /* every member's src is complete */
    if (!overlap || scatter) {
        symmem__reduce_range(st, t, dtype, dst, from, 0, nelems, op, scope);
    } else {
        symmem_u64 share = (nelems + (symmem_u64)t->n - 1) / (symmem_u64)t->n;
        symmem_u64 first = share * (symmem_u64)t->me;
        symmem_u64 count = first < nelems ? (nelems - first < share ? nelems - first : share) : 0;
        symmem__reduce_range(st, t, dtype, dst, from, first, count, op, scope);
        symmem__team_barrier(st, call, scope, team, 0); /* every share is final */
        unsigned int lane = symmem__lane(scope), lanes = symmem__lanes(scope);
        for (int k = 1; k < t->n; k++) {
            int i = (t->me + k) % t->n;
            symmem_u64 at = share * (symmem_u64)i, n = at < nelems ? nelems - at : 0;
            n = (n < share ? n : share) * size;
            symmem_u64 theirs = symmem__remote(st, call, 1, dst + at * size, n, t->members[i]);
            symmem__copy_small(dst + at * size, theirs, n, lane, lanes);
        }
    }
    symmem__team_barrier(st, call, scope, team, 0); /* nobody reads src any more */
}

#define SYMMEM__REDUCE_API(name, scope, scatter)                                                   \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, int team, symmem_u64 dst,               \
                                            symmem_u64 src, symmem_u64 nelems, int dtype, int op)  \
    {                                                                                              \
        symmem__reduce(st, #name, scope, team, dst, src, nelems, dtype, op, scatter);              \
        return 0;                                                                                  \
    }

SYMMEM__REDUCE_API(reduce, SYMMEM__THREAD, 0)
SYMMEM__REDUCE_API(reduce_warp, SYMMEM__WARP, 0)
SYMMEM__REDUCE_API(reduce_block, SYMMEM__BLOCK, 0)
SYMMEM__REDUCE_API(reducescatter, SYMMEM__THREAD, 1)
SYMMEM__REDUCE_API(reducescatter_warp, SYMMEM__WARP, 1)
SYMMEM__REDUCE_API(reducescatter_block, SYMMEM__BLOCK, 1)

#endif

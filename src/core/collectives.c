/* Team barriers and collectives: argument checks, then the backend. */
#include "error.h"
#include "checks.h"
#include "state.h"
#include "teams.h"
#include "vocab.h"

#define RT (&symmem__rt)

const char *symmem_reduce_op_name(symmem_reduce_op_t op)
{
    return symmem__reduce_op_word(op);
}

/* The team, with this PE a member. */
static symmem_status_t member_of(const char *call, symmem_team_t team,
                                 const symmem_team_view_t **view_p)
{
    SYMMEM_CHECK(symmem__team_lookup(call, team, view_p));
    if ((*view_p)->me < 0)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: this PE is not a member of team=%d", call,
                             (int)team);
    return SYMMEM_OK;
}

/* Both on the symmetric heap, and apart: the backend reads src while it
 * writes dst (on this PE and on peers). in_place_ok: dst == src of the same
 * size is allowed (reduce and broadcast run in place). */
static symmem_status_t check_buffers(const char *call, const void *dst, size_t dst_bytes,
                                     const void *src, size_t src_bytes, int in_place_ok)
{
    if (dst_bytes == 0 && src_bytes == 0) return SYMMEM_OK;
    SYMMEM_CHECK(symmem__check_symmetric(call, "dst", dst, dst_bytes));
    SYMMEM_CHECK(symmem__check_symmetric(call, "src", src, src_bytes));
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    int in_place = in_place_ok && d == s && dst_bytes == src_bytes;
    if (dst_bytes && src_bytes && d < s + src_bytes && s < d + dst_bytes && !in_place)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: dst [%p, +%zu) and src [%p, +%zu) overlap (only reduce and "
                             "broadcast may have dst and src the same memory, in place)",
                             call, dst, dst_bytes, src, src_bytes);
    return SYMMEM_OK;
}

/* value * times (what times counts) in *product_p, or SYMMEM_ERR_INVALID
 * where it passes 2**64: a product that wrapped around would pass the
 * buffer checks with a few bytes while the backend moved the full count. */
static symmem_status_t checked_product(const char *call, const char *arg, size_t value,
                                       size_t times, const char *what, size_t *product_p)
{
    if (!__builtin_mul_overflow(value, times, product_p)) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_INVALID, "%s: %s=%zu times %zu (%s) is more than 2**64 bytes",
                         call, arg, value, times, what);
}

static symmem_status_t check_reduction(const char *call, symmem_dtype_t dtype,
                                       symmem_reduce_op_t op)
{
    if ((unsigned)dtype >= SYMMEM_DTYPE_COUNT)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: dtype=%d is not a symmem dtype", call,
                             (int)dtype);
    if ((unsigned)op >= SYMMEM_OP_COUNT)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: op=%d is not one of sum, min, max, prod, and, or, xor", call,
                             (int)op);
    if (symmem__dtype_is_float(dtype) && symmem__op_is_bitwise(op))
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: op='%s' is bitwise and needs an integer or bool dtype, not %s",
                             call, symmem__reduce_op_word(op), symmem_dtype_name(dtype));
    return SYMMEM_OK;
}

symmem_status_t symmem_team_barrier(symmem_team_t team, symmem_stream_t stream)
{
    const symmem_team_view_t *t;
    SYMMEM_CHECK(member_of("barrier", team, &t));
    return RT->ops->barrier(RT->be, t, stream);
}

symmem_status_t symmem_team_sync(symmem_team_t team, symmem_stream_t stream)
{
    const symmem_team_view_t *t;
    SYMMEM_CHECK(member_of("sync", team, &t));
    return RT->ops->sync(RT->be, t, stream);
}

symmem_status_t symmem_reduce(symmem_team_t team, void *dst, const void *src, size_t nelems,
                              symmem_dtype_t dtype, symmem_reduce_op_t op, symmem_stream_t stream)
{
    const symmem_team_view_t *t;
    SYMMEM_CHECK(member_of("reduce", team, &t));
    SYMMEM_CHECK(check_reduction("reduce", dtype, op));
    size_t nbytes;
    SYMMEM_CHECK(checked_product("reduce", "nelems", nelems, symmem_dtype_size(dtype),
                                 "bytes per element", &nbytes));
    SYMMEM_CHECK(check_buffers("reduce", dst, nbytes, src, nbytes, 1));
    return RT->ops->reduce(RT->be, t, dst, src, nelems, dtype, op, stream);
}

symmem_status_t symmem_reducescatter(symmem_team_t team, void *dst, const void *src, size_t nelems,
                                     symmem_dtype_t dtype, symmem_reduce_op_t op,
                                     symmem_stream_t stream)
{
    const symmem_team_view_t *t;
    SYMMEM_CHECK(member_of("reducescatter", team, &t));
    SYMMEM_CHECK(check_reduction("reducescatter", dtype, op));
    size_t nbytes, total;
    SYMMEM_CHECK(checked_product("reducescatter", "nelems", nelems, symmem_dtype_size(dtype),
                                 "bytes per element", &nbytes));
    SYMMEM_CHECK(checked_product("reducescatter", "nelems", nelems,
                                 symmem_dtype_size(dtype) * (size_t)t->n,
                                 "bytes per element for each of the team's PEs", &total));
    SYMMEM_CHECK(check_buffers("reducescatter", dst, nbytes, src, total, 0));
    return RT->ops->reducescatter(RT->be, t, dst, src, nelems, dtype, op, stream);
}

symmem_status_t symmem_alltoall(symmem_team_t team, void *dst, const void *src, size_t nbytes,
                                symmem_stream_t stream)
{
    const symmem_team_view_t *t;
    SYMMEM_CHECK(member_of("alltoall", team, &t));
    size_t total;
    SYMMEM_CHECK(
        checked_product("alltoall", "nbytes", nbytes, (size_t)t->n, "PEs in the team", &total));
    SYMMEM_CHECK(check_buffers("alltoall", dst, total, src, total, 0));
    return RT->ops->alltoall(RT->be, t, dst, src, nbytes, stream);
}

symmem_status_t symmem_fcollect(symmem_team_t team, void *dst, const void *src, size_t nbytes,
                                symmem_stream_t stream)
{
    const symmem_team_view_t *t;
    SYMMEM_CHECK(member_of("fcollect", team, &t));
    size_t total;
    SYMMEM_CHECK(
        checked_product("fcollect", "nbytes", nbytes, (size_t)t->n, "PEs in the team", &total));
    SYMMEM_CHECK(check_buffers("fcollect", dst, total, src, nbytes, 0));
    return RT->ops->fcollect(RT->be, t, dst, src, nbytes, stream);
}

symmem_status_t symmem_broadcast(symmem_team_t team, void *dst, const void *src, size_t nbytes,
                                 int root, symmem_stream_t stream)
{
    const symmem_team_view_t *t;
    SYMMEM_CHECK(member_of("broadcast", team, &t));
    if (root < 0 || root >= t->n)
        return symmem__error(SYMMEM_ERR_INVALID, "broadcast: root=%d is outside the team's [0, %d)",
                             root, t->n);
    SYMMEM_CHECK(check_buffers("broadcast", dst, nbytes, src, nbytes, 1));
    return RT->ops->broadcast(RT->be, t, dst, src, nbytes, root, stream);
}

/* One-sided calls, signals and synchronisation: argument checks, then the
 * backend's slot. */
#include <string.h>

#include "error.h"
#include "checks.h"
#include "state.h"
#include "vocab.h"

#define RT (&symmem__rt)

size_t symmem_dtype_size(symmem_dtype_t dtype)
{
    return symmem__dtype_bytes(dtype);
}

const char *symmem_dtype_name(symmem_dtype_t dtype)
{
    return symmem__dtype_valid(dtype) ? symmem__dtype_info[dtype].name : "unknown";
}

/* Checks shared by put and get: symmetric side, private side, PE. */
static symmem_status_t check_rma(const char *call, const char *sym_arg, const void *sym,
                                 const char *other_arg, const void *other, size_t nbytes, int pe)
{
    SYMMEM_CHECK(symmem__check_initialized(call));
    SYMMEM_CHECK(symmem__check_pe(call, "pe", pe));
    if (nbytes == 0) return SYMMEM_OK;
    if (other == NULL) return symmem__error(SYMMEM_ERR_INVALID, "%s: %s is NULL", call, other_arg);
    SYMMEM_CHECK(symmem__check_private(call, other_arg, other, nbytes));
    return symmem__check_symmetric(call, sym_arg, sym, nbytes);
}

/* put, get and their nbi forms: the checks, then the slot kind names. */
typedef enum { RMA_PUT, RMA_GET, RMA_PUT_NBI, RMA_GET_NBI } rma_kind_t;

static symmem_status_t rma(rma_kind_t kind, void *dst, const void *src, size_t nbytes, int pe,
                           symmem_stream_t stream)
{
    static const char *const calls[] = {"put", "get", "put_nbi", "get_nbi"};
    int is_put = kind == RMA_PUT || kind == RMA_PUT_NBI;
    SYMMEM_CHECK(is_put ? check_rma(calls[kind], "dst", dst, "src", src, nbytes, pe)
                        : check_rma(calls[kind], "src", src, "dst", dst, nbytes, pe));
    if (nbytes == 0) return SYMMEM_OK;
    const symmem_backend_ops_t *ops = RT->ops;
    switch (kind) {
    case RMA_PUT: return ops->put(RT->be, dst, src, nbytes, pe, stream);
    case RMA_GET: return ops->get(RT->be, dst, src, nbytes, pe, stream);
    case RMA_PUT_NBI: return ops->put_nbi(RT->be, dst, src, nbytes, pe, stream);
    default: return ops->get_nbi(RT->be, dst, src, nbytes, pe, stream);
    }
}

symmem_status_t symmem_put(void *dst, const void *src, size_t nbytes, int pe,
                           symmem_stream_t stream)
{
    return rma(RMA_PUT, dst, src, nbytes, pe, stream);
}

symmem_status_t symmem_get(void *dst, const void *src, size_t nbytes, int pe,
                           symmem_stream_t stream)
{
    return rma(RMA_GET, dst, src, nbytes, pe, stream);
}

symmem_status_t symmem_put_nbi(void *dst, const void *src, size_t nbytes, int pe,
                               symmem_stream_t stream)
{
    return rma(RMA_PUT_NBI, dst, src, nbytes, pe, stream);
}

symmem_status_t symmem_get_nbi(void *dst, const void *src, size_t nbytes, int pe,
                               symmem_stream_t stream)
{
    return rma(RMA_GET_NBI, dst, src, nbytes, pe, stream);
}

symmem_status_t symmem_quiet(symmem_stream_t stream)
{
    SYMMEM_CHECK(symmem__check_initialized("quiet"));
    return RT->ops->quiet(RT->be, stream);
}

symmem_status_t symmem_fence(void)
{
    return symmem_fence_on_stream(SYMMEM_STREAM_NONE);
}

symmem_status_t symmem_fence_on_stream(symmem_stream_t stream)
{
    SYMMEM_CHECK(symmem__check_initialized("fence"));
    return RT->ops->fence(RT->be, stream);
}

/* A signal word: a symmetric, 8-byte aligned uint64. */
static symmem_status_t check_signal(const char *call, const uint64_t *sig)
{
    SYMMEM_CHECK(symmem__check_symmetric(call, "signal_var", sig, sizeof(*sig)));
    if ((uintptr_t)sig % sizeof(*sig) != 0)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: signal_var %p is not 8-byte aligned", call,
                             (void *)sig);
    return SYMMEM_OK;
}

static symmem_status_t check_signal_op(const char *call, symmem_signal_op_t op)
{
    if (symmem__signal_op_valid(op)) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_INVALID,
                         "%s: signal_op=%d is not SIGNAL_SET (9) or SIGNAL_ADD (10)", call,
                         (int)op);
}

static symmem_status_t check_cmp(const char *call, symmem_cmp_t cmp)
{
    if ((unsigned)cmp < SYMMEM_CMP_COUNT) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_INVALID,
                         "%s: cmp=%d is not a ComparisonType (CMP_EQ=0 .. CMP_GE=5)", call,
                         (int)cmp);
}

static symmem_status_t put_signal(const char *call, void *dst, const void *src, size_t nbytes,
                                  uint64_t *sig, uint64_t value, symmem_signal_op_t op, int pe,
                                  int nbi, symmem_stream_t stream)
{
    SYMMEM_CHECK(check_rma(call, "dst", dst, "src", src, nbytes, pe));
    SYMMEM_CHECK(check_signal(call, sig));
    SYMMEM_CHECK(check_signal_op(call, op));
    return RT->ops->put_signal(RT->be, dst, src, nbytes, sig, value, op, pe, nbi, stream);
}

symmem_status_t symmem_put_signal(void *dst, const void *src, size_t nbytes, uint64_t *sig,
                                  uint64_t value, symmem_signal_op_t op, int pe,
                                  symmem_stream_t stream)
{
    return put_signal("put_signal", dst, src, nbytes, sig, value, op, pe, 0, stream);
}

symmem_status_t symmem_put_signal_nbi(void *dst, const void *src, size_t nbytes, uint64_t *sig,
                                      uint64_t value, symmem_signal_op_t op, int pe,
                                      symmem_stream_t stream)
{
    return put_signal("put_signal_nbi", dst, src, nbytes, sig, value, op, pe, 1, stream);
}

symmem_status_t symmem_signal_op(uint64_t *sig, uint64_t value, symmem_signal_op_t op, int pe,
                                 symmem_stream_t stream)
{
    static const char zero = 0;
    return put_signal("signal_op", NULL, &zero, 0, sig, value, op, pe, 0, stream);
}

symmem_status_t symmem_signal_wait_until(uint64_t *sig, symmem_cmp_t cmp, uint64_t value,
                                         symmem_stream_t stream, uint64_t *value_p)
{
    SYMMEM_CHECK(symmem__check_initialized("signal_wait"));
    SYMMEM_CHECK(check_signal("signal_wait", sig));
    SYMMEM_CHECK(check_cmp("signal_wait", cmp));
    return RT->ops->signal_wait_until(RT->be, sig, cmp, value, stream, value_p);
}

symmem_status_t symmem_signal_fetch(const uint64_t *sig, uint64_t *value_p)
{
    SYMMEM_CHECK(symmem__check_initialized("signal_fetch"));
    SYMMEM_CHECK(check_signal("signal_fetch", sig));
    return RT->ops->signal_fetch(RT->be, sig, value_p);
}

/* wait_until/test take integer elements, naturally aligned. */
static symmem_status_t check_ivar(const char *call, const void *ivar, symmem_dtype_t dtype,
                                  symmem_cmp_t cmp)
{
    SYMMEM_CHECK(symmem__check_initialized(call));
    if (!symmem__dtype_is_integer(dtype))
        return symmem__error(SYMMEM_ERR_INVALID,
                             "%s: ivar dtype %s is not an integer type (int8..uint64)", call,
                             symmem_dtype_name(dtype));
    size_t size = symmem_dtype_size(dtype);
    SYMMEM_CHECK(symmem__check_symmetric(call, "ivar", ivar, size));
    if ((uintptr_t)ivar % size != 0)
        return symmem__error(SYMMEM_ERR_INVALID, "%s: ivar %p is not %zu-byte aligned", call, ivar,
                             size);
    return check_cmp(call, cmp);
}

symmem_status_t symmem_wait_until(void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp, int64_t value)
{
    SYMMEM_CHECK(check_ivar("wait_until", ivar, dtype, cmp));
    return RT->ops->wait_until(RT->be, ivar, dtype, cmp, value);
}

symmem_status_t symmem_test(void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp, int64_t value,
                            int *result_p)
{
    SYMMEM_CHECK(check_ivar("test", ivar, dtype, cmp));
    return RT->ops->test(RT->be, ivar, dtype, cmp, value, result_p);
}

symmem_status_t symmem_barrier_all(symmem_stream_t stream)
{
    SYMMEM_CHECK(symmem__check_initialized("barrier_all"));
    return RT->ops->barrier_all(RT->be, stream);
}

symmem_status_t symmem_sync_all(symmem_stream_t stream)
{
    SYMMEM_CHECK(symmem__check_initialized("sync_all"));
    return RT->ops->sync_all(RT->be, stream);
}

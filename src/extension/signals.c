/* Signals: put_signal (and _nbi), signal_op, signal_wait and signal_fetch
 * on a uint64 signal word, and the SignalOp table the package's enum is
 * built from. */
#include "args.h"
#include "concepts.h"
#include "dtypes.h"
#include "errors.h"
#include "resolve.h"

/* A signal word: a symmetric uint64 array (its first element) or a Buffer;
 * writable where the call updates it. */
static int resolve_signal(module_state_t *st, PyObject *obj, int writable, const char *call,
                          memory_t *mem)
{
    if (symmem__ext_memory_resolve(st, obj, writable, call, "signal_var", mem) < 0) return -1;
    int dtype = symmem__ext_memory_dtype(mem);
    int raw_bytes = Py_IS_TYPE(obj, st->buffer_type);
    if (!raw_bytes && dtype != SYMMEM_DTYPE_UINT64)
        symmem__ext_raise_invalid(st, "%s: signal_var has element format '%s' (%s); signals are "
                                      "uint64", call, mem->format,
                                  dtype >= 0 ? symmem_dtype_name(dtype) : "unknown");
    else if (mem->nbytes < 8)
        symmem__ext_raise_invalid(st, "%s: signal_var has %zd bytes; a signal needs 8", call,
                                  mem->nbytes);
    else
        return 0;
    symmem__ext_memory_release(mem);
    return -1;
}

typedef symmem_status_t (*put_signal_func_t)(void *, const void *, size_t, uint64_t *, uint64_t,
                                             symmem_signal_op_t, int, symmem_stream_t);

static PyObject *put_signal_impl(module_state_t *st, put_signal_func_t func, const memory_t *dst,
                                 const memory_t *src, const memory_t *sig, uint64_t value,
                                 symmem_signal_op_t op, int pe, symmem_stream_t stream)
{
    size_t nbytes = (size_t)(dst->nbytes < src->nbytes ? dst->nbytes : src->nbytes);
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil(nbytes),
                     status = func(dst->ptr, src->ptr, nbytes, (uint64_t *)sig->ptr, value, op,
                                   pe, stream));
    return symmem__ext_done(st, status);
}

static PyObject *put_signal_call(PyObject *module, const char *call, put_signal_func_t func,
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dst", "src", "signal_var", "signal_val", "signal_op",
                                        "remote_pe", "stream", NULL};
    module_state_t *st = symmem__ext_state(module);
    const symmem__ext_params_t params = {call, names, 6, 7};
    PyObject *v[7];
    int pe = 0;
    symmem_signal_op_t op = SYMMEM_SIGNAL_SET; /* required: parse fills it */
    uint64_t value = 0;
    symmem_stream_t stream;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_pe(st, v[5], call, "remote_pe", &pe) < 0 ||
        symmem__ext_as_u64(st, v[3], call, "signal_val", &value) < 0 ||
        symmem__ext_as_signal_op(st, v[4], call, &op) < 0 ||
        symmem__ext_stream_resolve(st, v[6], call, &stream) < 0)
        return NULL;
    memory_t dst, src, sig;
    PyObject *result = NULL;
    if (symmem__ext_memory_resolve(st, v[0], 1, call, "dst", &dst) < 0) return NULL;
    if (symmem__ext_memory_resolve(st, v[1], 0, call, "src", &src) < 0) goto release_dst;
    if (resolve_signal(st, v[2], 1, call, &sig) < 0) goto release_src;
    result = put_signal_impl(st, func, &dst, &src, &sig, value, op, pe, stream);
    symmem__ext_memory_release(&sig);
release_src:
    symmem__ext_memory_release(&src);
release_dst:
    symmem__ext_memory_release(&dst);
    return result;
}

static PyObject *put_signal(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return put_signal_call(m, "put_signal", symmem_put_signal, a, n, k);
}
static PyObject *put_signal_nbi(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return put_signal_call(m, "put_signal_nbi", symmem_put_signal_nbi, a, n, k);
}

static PyObject *signal_op(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"signal_var", "signal_val", "signal_op", "remote_pe",
                                        "stream", NULL};
    static const symmem__ext_params_t params = {"signal_op", names, 4, 5};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[5];
    int pe = 0;
    symmem_signal_op_t op = SYMMEM_SIGNAL_SET; /* required: parse fills it */
    uint64_t value = 0;
    symmem_stream_t stream;
    memory_t sig;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_pe(st, v[3], "signal_op", "remote_pe", &pe) < 0 ||
        symmem__ext_as_u64(st, v[1], "signal_op", "signal_val", &value) < 0 ||
        symmem__ext_as_signal_op(st, v[2], "signal_op", &op) < 0 ||
        symmem__ext_stream_resolve(st, v[4], "signal_op", &stream) < 0 ||
        resolve_signal(st, v[0], 1, "signal_op", &sig) < 0)
        return NULL;
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil(sizeof(uint64_t)),
                     status = symmem_signal_op((uint64_t *)sig.ptr, value, op, pe, stream));
    symmem__ext_memory_release(&sig);
    return symmem__ext_done(st, status);
}

/* NVSHMEM4Py's order, value before comparison; the comparison is signal_op
 * (NVSHMEM4Py's name) or cmp=. A wait: always without the GIL. */
static PyObject *signal_wait(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"signal_var", "signal_val", "signal_op", "stream", "cmp",
                                        NULL};
    static const symmem__ext_params_t params = {"signal_wait", names, 2, 4};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[5];
    symmem_cmp_t cmp;
    uint64_t value = 0;
    symmem_stream_t stream;
    memory_t sig;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0) return NULL;
    if (v[2] && v[4])
        return symmem__ext_raise_invalid(st, "signal_wait: give signal_op= or cmp=, not both");
    if (symmem__ext_as_u64(st, v[1], "signal_wait", "signal_val", &value) < 0 ||
        symmem__ext_as_cmp(st, v[2] ? v[2] : v[4], "signal_wait", &cmp) < 0 ||
        symmem__ext_stream_resolve(st, v[3], "signal_wait", &stream) < 0 ||
        resolve_signal(st, v[0], 0, "signal_wait", &sig) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_signal_wait_until((uint64_t *)sig.ptr, cmp, value, stream, NULL);
    Py_END_ALLOW_THREADS
    symmem__ext_memory_release(&sig);
    return symmem__ext_done(st, status);
}

static PyObject *signal_fetch(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"signal_var", "stream", NULL};
    static const symmem__ext_params_t params = {"signal_fetch", names, 1, 2};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[2];
    memory_t sig;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        resolve_signal(st, v[0], 0, "signal_fetch", &sig) < 0)
        return NULL;
    uint64_t value = 0;
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil(sizeof(uint64_t)),
                     status = symmem_signal_fetch((uint64_t *)sig.ptr, &value));
    symmem__ext_memory_release(&sig);
    if (status != SYMMEM_OK) return symmem__ext_raise_status(st, status);
    return PyLong_FromUnsignedLongLong(value);
}

#define PUT_SIGNAL_SIGNATURE \
    "($module, dst, src, signal_var, signal_val, signal_op, remote_pe, stream=None)\n--\n\n"

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("put_signal", put_signal,
        "put_signal" PUT_SIGNAL_SIGNATURE
        "Copy src into PE remote_pe's dst, then update its signal_var with signal_op\n"
        "(SIGNAL_SET or SIGNAL_ADD) and signal_val: a PE that sees the signal sees the data."),
    SYMMEM__EXT_METHOD("put_signal_nbi", put_signal_nbi,
        "put_signal_nbi" PUT_SIGNAL_SIGNATURE "Non-blocking put_signal."),
    SYMMEM__EXT_METHOD("signal_op", signal_op,
        "signal_op($module, signal_var, signal_val, signal_op, remote_pe, stream=None)\n--\n\n"
        "Update PE remote_pe's signal_var: SIGNAL_SET or SIGNAL_ADD signal_val."),
    SYMMEM__EXT_METHOD("signal_wait", signal_wait,
        "signal_wait($module, signal_var, signal_val, signal_op=None, stream=None, *, cmp=None)\n"
        "--\n\nWait until this PE's signal_var <signal_op> signal_val holds; signal_op is a\n"
        "ComparisonType (NVSHMEM4Py's name for it; cmp= is the other)."),
    SYMMEM__EXT_METHOD("signal_fetch", signal_fetch,
        "signal_fetch($module, signal_var, stream=None)\n--\n\n"
        "The value of this PE's signal_var (an int)."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_signals_exec(PyObject *module)
{
    PyObject *ops = Py_BuildValue("{s:i,s:i}", "SIGNAL_SET", SYMMEM_SIGNAL_SET, "SIGNAL_ADD",
                                  SYMMEM_SIGNAL_ADD);
    int rc = ops ? PyModule_AddObjectRef(module, "SIGNAL_OPS", ops) : -1;
    Py_XDECREF(ops);
    return rc < 0 ? -1 : PyModule_AddFunctions(module, methods);
}

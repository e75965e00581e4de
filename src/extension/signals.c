/* Signals: put_signal (and _nbi), signal_op, signal_wait and signal_fetch
 * on a uint64 signal word, and the SignalOp table the package's enum is
 * built from. */
#include "args.h"
#include "concepts.h"
#include "doc_parts.h"
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
        symmem__ext_raise_invalid(st,
                                  "%s: signal_var has element format '%s' (%s); signals are "
                                  "uint64",
                                  call, mem->format,
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
    SYMMEM__EXT_CALL(
        symmem__ext_keep_gil(nbytes),
        status = func(dst->ptr, src->ptr, nbytes, (uint64_t *)sig->ptr, value, op, pe, stream));
    return symmem__ext_done(st, status);
}

static PyObject *put_signal_call(PyObject *module, const char *call, put_signal_func_t func,
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dst",       "src",       "signal_var", "signal_val",
                                        "signal_op", "remote_pe", "stream",     NULL};
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
    if (symmem__ext_check_same_elements(st, &dst, &src, call) < 0 ||
        symmem__ext_check_same_order(st, &dst, &src, call) < 0)
        goto release_src;
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
    static const char *const names[] = {"signal_var", "signal_val", "signal_op",
                                        "remote_pe",  "stream",     NULL};
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
    static const char *const names[] = {"signal_var", "signal_val", "signal_op",
                                        "stream",     "cmp",        NULL};
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

/* ---- docstrings ---- */

#define SIGNAL_VAR_ARG(whose)                                                                      \
    "    signal_var: " whose " signal word: a symmetric uint64 array (its first\n"                 \
    "        element is the signal) or a Buffer of 8 bytes or more.\n"

#define PUT_SIGNAL_DOC(name, summary, completion, example)                                         \
    name                                                                                           \
        "($module, dst, src, signal_var, signal_val, signal_op, remote_pe, stream=None)\n"         \
        "--\n\n" summary "\n\n"                                                                    \
        "The signal is updated after the data is in place: a PE that sees the new\n"               \
        "signal value sees the data. As many bytes as dst and src both hold move.\n" completion    \
        "\n\n"                                                                                     \
        "Args:\n"                                                                                  \
        "    dst: symmetric memory: PE remote_pe's copy is written.\n"                             \
        "    src: local memory to read (any contiguous array, tensor or "                          \
        "Buffer).\n" SIGNAL_VAR_ARG(                                                               \
            "the symmetric") "    signal_val: the value to set or add (an int, as a uint64).\n"    \
                             "    signal_op: SignalOp.SIGNAL_SET or SignalOp.SIGNAL_ADD (or 9, "   \
                             "10).\n"                                                              \
                             "    remote_pe: the PE to write to, in [0, "                          \
                             "n_pes()).\n" SYMMEM__DOC_STREAM "\n" SYMMEM__DOC_INVALID(            \
                                 "remote_pe is outside [0, n_pes()); signal_op is not\n"           \
                                 "        a SignalOp; signal_val does not fit in 64 bits; dst, "   \
                                 "src or\n"                                                        \
                                 "        signal_var is not contiguous memory, dst or "            \
                                 "signal_var is\n"                                                 \
                                 "        read-only or not on the symmetric heap; dst and src "    \
                                 "are typed\n"                                                     \
                                 "        arrays of different dtypes, or one in C order and the\n" \
                                 "        other in Fortran order; signal_var is not uint64\n"      \
                                 "        (or a Buffer), has fewer than 8 bytes, or is not "       \
                                 "8-byte aligned.") SYMMEM__DOC_RAISES_BACKEND                     \
        "\nExample:\n" example

PyDoc_STRVAR(
    put_signal_doc,
    PUT_SIGNAL_DOC("put_signal", "Copy src into PE remote_pe's dst, then update its signal_var.",
                   "When it returns, src may be reused.",
                   "    >>> me, n = symmem.my_pe(), symmem.n_pes()\n"
                   "    >>> dst = symmem.array(4, dtype=\"float32\")\n"
                   "    >>> sig = symmem.array(1, dtype=\"uint64\")\n"
                   "    >>> sig[0] = 0\n"
                   "    >>> symmem.barrier_all()  # every signal is 0 before any PE sets one\n"
                   "    >>> symmem.put_signal(dst, np.full(4, me, dtype=np.float32), sig, 1,\n"
                   "    ...                   symmem.SignalOp.SIGNAL_SET, (me + 1) % n)\n"
                   "    >>> symmem.signal_wait(sig, 1, symmem.ComparisonType.CMP_EQ)\n"
                   "    >>> bool((dst == (me - 1) % n).all())  # the data came with the signal\n"
                   "    True\n"
                   "    >>> symmem.barrier_all()\n"
                   "    >>> symmem.free_array(dst); symmem.free_array(sig)\n"));

PyDoc_STRVAR(
    put_signal_nbi_doc,
    PUT_SIGNAL_DOC("put_signal_nbi",
                   "Start put_signal: copy src into PE remote_pe's dst, then signal it.",
                   "src must not change until this PE's next quiet().",
                   "    >>> me, n = symmem.my_pe(), symmem.n_pes()\n"
                   "    >>> dst = symmem.array(4, dtype=\"int32\")\n"
                   "    >>> sig = symmem.array(1, dtype=\"uint64\")\n"
                   "    >>> sig[0] = 0\n"
                   "    >>> symmem.barrier_all()\n"
                   "    >>> symmem.put_signal_nbi(dst, np.arange(4, dtype=np.int32), sig, 1,\n"
                   "    ...                       symmem.SignalOp.SIGNAL_ADD, (me + 1) % n)\n"
                   "    >>> symmem.quiet()\n"
                   "    >>> symmem.signal_wait(sig, 1, symmem.ComparisonType.CMP_GE)\n"
                   "    >>> dst.tolist()\n"
                   "    [0, 1, 2, 3]\n"
                   "    >>> symmem.barrier_all()\n"
                   "    >>> symmem.free_array(dst); symmem.free_array(sig)\n"));

PyDoc_STRVAR(
    signal_op_doc,
    "signal_op($module, signal_var, signal_val, signal_op, remote_pe, stream=None)\n--\n\n"
    "Set or add to PE remote_pe's copy of the signal word signal_var.\n\n"
    "Args:\n" SIGNAL_VAR_ARG(
        "the symmetric") "    signal_val: the value to set or add (an int, as a uint64).\n"
                         "    signal_op: SignalOp.SIGNAL_SET or SignalOp.SIGNAL_ADD (or 9, 10).\n"
                         "    remote_pe: the PE whose signal changes, in [0, "
                         "n_pes()).\n" SYMMEM__DOC_STREAM "\n" SYMMEM__DOC_INVALID(
                             "remote_pe is outside [0, n_pes()); signal_op is not\n"
                             "        a SignalOp; signal_val does not fit in 64 bits; signal_var "
                             "is\n"
                             "        read-only, not on the symmetric heap, not uint64 (or a "
                             "Buffer),\n"
                             "        has fewer than 8 bytes, or is not 8-byte aligned.")
                             SYMMEM__DOC_RAISES_BACKEND
    "\nExample:\n"
    "    >>> sig = symmem.array(1, dtype=\"uint64\")\n"
    "    >>> sig[0] = 0\n"
    "    >>> symmem.barrier_all()\n"
    "    >>> symmem.signal_op(sig, 1, symmem.SignalOp.SIGNAL_ADD, 0)  # one each\n"
    "    >>> symmem.barrier_all()\n"
    "    >>> symmem.signal_fetch(sig) == (symmem.n_pes() if symmem.my_pe() == 0 else 0)\n"
    "    True\n"
    "    >>> symmem.free_array(sig)\n");

PyDoc_STRVAR(
    signal_wait_doc,
    "signal_wait($module, signal_var, signal_val, signal_op=None, stream=None, *, cmp=None)\n"
    "--\n\n"
    "Wait until this PE's signal_var compares to signal_val as asked.\n\n"
    "NVSHMEM4Py's argument order: the value, then the comparison, which is a\n"
    "ComparisonType passed as signal_op (NVSHMEM4Py's name) or cmp=.\n\n"
    "Args:\n" SIGNAL_VAR_ARG(
        "this PE's") "    signal_val: the value to compare with (an int, as a uint64).\n"
                     "    signal_op: the comparison: a ComparisonType (CMP_EQ, CMP_NE, CMP_GT,\n"
                     "        CMP_LE, CMP_LT, CMP_GE) or its int value.\n" SYMMEM__DOC_STREAM
                     "    cmp: the comparison, when signal_op is not given.\n"
                     "\n" SYMMEM__DOC_INVALID(
                         "neither or both of signal_op and cmp are given, or\n"
                         "        the comparison is not a ComparisonType; signal_val does not fit\n"
                         "        in 64 bits; signal_var is not on the symmetric heap, not uint64\n"
                         "        (or a Buffer), has fewer than 8 bytes, or is not 8-byte aligned.")
                         SYMMEM__DOC_RAISES_WAIT
    "\nExample:\n"
    "    >>> sig = symmem.array(1, dtype=\"uint64\")\n"
    "    >>> sig[0] = 0\n"
    "    >>> symmem.barrier_all()\n"
    "    >>> symmem.signal_op(sig, 7, symmem.SignalOp.SIGNAL_SET,\n"
    "    ...                  (symmem.my_pe() + 1) % symmem.n_pes())\n"
    "    >>> symmem.signal_wait(sig, 7, symmem.ComparisonType.CMP_EQ)\n"
    "    >>> symmem.signal_wait(sig, 5, cmp=symmem.ComparisonType.CMP_GT)  # holds\n"
    "    >>> symmem.barrier_all()\n"
    "    >>> symmem.free_array(sig)\n");

PyDoc_STRVAR(
    signal_fetch_doc,
    "signal_fetch($module, signal_var, stream=None)\n--\n\n"
    "Read this PE's signal word signal_var.\n\n"
    "Args:\n" SIGNAL_VAR_ARG(
        "this PE's") "    stream: accepted as NVSHMEM4Py passes it; the read does not wait for\n"
                     "        the stream.\n"
                     "\nReturns:\n"
                     "    The signal's value, an int.\n"
                     "\n" SYMMEM__DOC_INVALID(
                         "signal_var is not on the symmetric heap, not uint64\n"
                         "        (or a Buffer), has fewer than 8 bytes, or is not 8-byte aligned.")
                         SYMMEM__DOC_RAISES_BACKEND
    "\nExample:\n"
    "    >>> sig = symmem.array(1, dtype=\"uint64\")\n"
    "    >>> sig[0] = 3\n"
    "    >>> symmem.signal_fetch(sig)\n"
    "    3\n"
    "    >>> symmem.free_array(sig)\n");

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("put_signal", put_signal, put_signal_doc),
    SYMMEM__EXT_METHOD("put_signal_nbi", put_signal_nbi, put_signal_nbi_doc),
    SYMMEM__EXT_METHOD("signal_op", signal_op, signal_op_doc),
    SYMMEM__EXT_METHOD("signal_wait", signal_wait, signal_wait_doc),
    SYMMEM__EXT_METHOD("signal_fetch", signal_fetch, signal_fetch_doc),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_signals_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

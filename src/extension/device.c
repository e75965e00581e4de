/* The device state block and the C engine's entry points for device code
 * (symmem.device.numba on the cpu backend): the block's address and layout,
 * and the waits and barriers as plain C functions whose addresses njit code
 * calls. They return a status; on failure the njit code raises a
 * symmem.device exception whose message device_last_error() gives: the
 * core's own, naming the call, the dead PE or the timeout. */
#include <stddef.h>

#include "concepts.h"
#include "../core/internal.h"
#include "errors.h"
#include "owner_search.h"

/* The status of this thread's last failed device call (its message is
 * symmem_last_error(), per thread too). */
static _Thread_local symmem_status_t last_status = SYMMEM_OK;

/* Waits run without the GIL where the njit caller holds it (the default),
 * so other threads run; a nogil caller holds none. */
static PyThreadState *drop_gil(void)
{
    return PyGILState_Check() ? PyEval_SaveThread() : NULL;
}

static int32_t finish(PyThreadState *saved, symmem_status_t status)
{
    if (saved != NULL) PyEval_RestoreThread(saved);
    if (status == SYMMEM_OK) return 0;
    if (status == SYMMEM_ERR_INTERRUPTED) {
        /* The signal handler's exception (KeyboardInterrupt) is pending on
         * this thread; njit code raises KeyboardInterrupt itself, and must
         * not run on with an exception set. */
        PyGILState_STATE gil = PyGILState_Ensure();
        PyErr_Clear();
        PyGILState_Release(gil);
    }
    if (status == SYMMEM_ERR_PEER_DEAD) symmem__device_state_abort(-1);
    last_status = status;
    return (int32_t)status;
}

static int32_t device_signal_wait(uint64_t *sig, int32_t cmp, uint64_t value)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_signal_wait_until(sig, (symmem_cmp_t)cmp, value, 0, NULL));
}

static int32_t device_wait_until(void *ivar, int32_t dtype, int32_t cmp, int64_t value)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_wait_until(ivar, (symmem_dtype_t)dtype, (symmem_cmp_t)cmp, value));
}

static int32_t device_barrier_all(void)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_barrier_all(0));
}

static int32_t device_sync_all(void)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_sync_all(0));
}

/* Team barriers and collectives for njit code: the C engine's, so they keep
 * its fingerprints, timeouts and dead-peer errors. */
static int32_t device_team_barrier(int32_t team)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_team_barrier(team, 0));
}

static int32_t device_team_sync(int32_t team)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_team_sync(team, 0));
}

static int32_t device_reduce(int32_t team, void *dst, const void *src, uint64_t nelems,
                             int32_t dtype, int32_t op)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_reduce(team, dst, src, nelems, (symmem_dtype_t)dtype,
                                       (symmem_reduce_op_t)op, 0));
}

static int32_t device_reducescatter(int32_t team, void *dst, const void *src, uint64_t nelems,
                                    int32_t dtype, int32_t op)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_reducescatter(team, dst, src, nelems, (symmem_dtype_t)dtype,
                                              (symmem_reduce_op_t)op, 0));
}

static int32_t device_fcollect(int32_t team, void *dst, const void *src, uint64_t nbytes)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_fcollect(team, dst, src, nbytes, 0));
}

static int32_t device_alltoall(int32_t team, void *dst, const void *src, uint64_t nbytes)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_alltoall(team, dst, src, nbytes, 0));
}

static int32_t device_broadcast(int32_t team, void *dst, const void *src, uint64_t nbytes,
                                int32_t root)
{
    PyThreadState *saved = drop_gil();
    return finish(saved, symmem_broadcast(team, dst, src, nbytes, root, 0));
}

static int32_t device_team_my_pe(int32_t team)
{
    return symmem_team_my_pe(team);
}
static int32_t device_team_n_pes(int32_t team)
{
    return symmem_team_n_pes(team);
}

/* The module state device_freed reads: njit code calls it with no module
 * at hand, so, like the state block, it serves the whole process: the first
 * module's, which device_exec keeps alive for the process's life. */
static module_state_t *owner_state;

/* For njit code: 1 if obj, the NumPy array numba unboxed an array argument
 * from (its "parent", which every view numba makes keeps), was made over a
 * Buffer whose allocation was freed (the host calls' check, owner.h: the
 * address may already belong to a newer allocation); 2 if its chain of bases
 * leaves NumPy's and addr, the symmetric address the call touches through it,
 * leads to no Buffer (owner_search.c: refused, as the host calls refuse it);
 * 0 if its allocation is live or it leads to private memory. njit code reads
 * the common chain itself (an array whose .base is a Buffer or nothing:
 * _checks.py) and calls this for any other, so the walk takes the GIL, which
 * an njit function holds unless it is nogil, and may call into Python. */
static int32_t device_freed(PyObject *obj, uint64_t addr)
{
    module_state_t *st = owner_state;
    if (st == NULL || obj == NULL) return 0;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *end;
    buffer_object_t *buf = symmem__ext_owner_walk(st, obj, &end);
    int32_t freed = buf != NULL && !symmem__ext_buffer_usable(buf);
    if (buf == NULL && end != NULL) {
        int answer = symmem__ext_owner_search(st, obj, end, (const void *)(uintptr_t)addr, 1, &buf);
        freed = answer == SYMMEM__EXT_OWNER_FREED      ? 1
                : answer == SYMMEM__EXT_OWNER_UNTRACED ? 2
                                                       : 0;
    }
    PyGILState_Release(gil);
    return freed;
}

/* device_owner_layout() -> dict: what njit code needs to run device_freed's
 * common case inline (python/symmem/device/numba/_checks.py): the offset of
 * an ndarray's base (-1 where NumPy's struct is not the one owner.h reads),
 * the Buffer type's address, the offsets of a Buffer's base and generation,
 * and the address of the registry's first live generation. All fixed for
 * the process once the package has named numpy.ndarray (_set_resolver). */
static PyObject *device_owner_layout(PyObject *module, PyObject *unused)
{
    (void)unused;
    module_state_t *st = symmem__ext_state(module);
    return Py_BuildValue(
        "{s:n,s:n,s:K,s:n,s:n,s:K}", "ndarray_base",
        st->ndarray_base_in_c ? (Py_ssize_t)offsetof(symmem__ext_ndarray_head_t, base) : -1,
        "ob_type", (Py_ssize_t)offsetof(PyObject, ob_type), "buffer_type",
        (unsigned long long)(uintptr_t)st->buffer_type, "buffer_base",
        (Py_ssize_t)offsetof(buffer_object_t, base), "buffer_generation",
        (Py_ssize_t)offsetof(buffer_object_t, generation), "first_live",
        (unsigned long long)(uintptr_t)&symmem__registry_first_live);
}

static PyObject *device_state(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyLong_FromVoidPtr(symmem__device_state());
}

static PyObject *device_state_gpu(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyLong_FromUnsignedLongLong(symmem__device_state_gpu());
}

/* cuda_module(library, handle, op) -> whether it links NVSHMEM's device
 * library (NVSHMEM4Py's module_init and friends, _device_host.py). */
static PyObject *cuda_module(PyObject *module, PyObject *args)
{
    int library = 0, op = 0;
    unsigned long long handle = 0;
    if (!PyArg_ParseTuple(args, "pKi:cuda_module", &library, &handle, &op)) return NULL;
    int links = 0;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem__cuda_module(library, (uint64_t)handle, op, &links);
    Py_END_ALLOW_THREADS
    if (status != SYMMEM_OK) return symmem__ext_raise_status(symmem__ext_state(module), status);
    return PyBool_FromLong(links);
}

static PyObject *device_last_error(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return Py_BuildValue("(is)", (int)last_status, symmem_last_error());
}

static PyMethodDef methods[] = {
    {"device_state", device_state, METH_NOARGS,
     "device_state($module)\n--\n\n"
     "The address of this process's device state block (fixed for the process's "
     "life; its contents are valid while symmem is initialised)."},
    {"cuda_module", cuda_module, METH_VARARGS,
     "cuda_module($module, library, handle, op, /)\n--\n\n"
     "What the backend makes of a loaded CUmodule (library False) or CUlibrary: True if "
     "it links NVSHMEM's device library, whose init (op 1) or finalize (op 2) then ran; "
     "op 0 only looks."},
    {"device_state_gpu", device_state_gpu, METH_NOARGS,
     "device_state_gpu($module)\n--\n\n"
     "The device address of the state block for kernels on the gpu backend's GPU "
     "(fixed for the process), or 0 where there is none (not initialised, cpu backend)."},
    {"device_owner_layout", device_owner_layout, METH_NOARGS,
     "device_owner_layout($module)\n--\n\n"
     "The offsets and addresses with which njit code tells a freed array's Buffer "
     "(ndarray_base is -1 where NumPy's array struct is not the one C reads)."},
    {"device_last_error", device_last_error, METH_NOARGS,
     "device_last_error($module)\n--\n\n"
     "(status, message) of this thread's last failed device wait or barrier."},
    {NULL, NULL, 0, NULL},
};

/* A dict of name -> int; 0 or -1. */
static int add_table(PyObject *module, const char *name, const char *const *keys,
                     const long long *values, size_t n)
{
    PyObject *table = PyDict_New();
    if (table == NULL) return -1;
    for (size_t i = 0; i < n; i++) {
        PyObject *value = PyLong_FromLongLong(values[i]);
        if (value == NULL || PyDict_SetItemString(table, keys[i], value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(table);
            return -1;
        }
        Py_DECREF(value);
    }
    int result = PyModule_AddObjectRef(module, name, table);
    Py_DECREF(table);
    return result;
}

/* DEVICE_LAYOUT: the rest of symmem/device_layout.h that code outside C
 * (symmem.device.triton's engine) reads: the team table's entries, the
 * error record and its codes, the team sync area, the spins between looks
 * at the abort word, symmem_dev_wait_set's modes. */
static int add_device_layout(PyObject *module)
{
    static const char *const keys[] = {
        "team_size",          "team_n",          "team_me",       "team_members",
        "max_teams",          "error_size",      "error_set",     "error_what",
        "error_pe",           "error_arg",       "error_value",   "error_call",
        "error_call_bytes",   "sync_word",       "spins",         "ERR_BAD_PE",
        "ERR_NOT_SYMMETRIC",  "ERR_PEER_DEAD",   "ERR_TIMEOUT",   "ERR_NOT_INITIALIZED",
        "ERR_NOT_CONTIGUOUS", "ERR_BAD_TEAM",    "ERR_TOO_SMALL", "ERR_BAD_ROOT",
        "ERR_BAD_ARG",        "ERR_UNREACHABLE", "ERR_OVERLAP",   "WAIT_ALL",
        "WAIT_ANY",           "WAIT_SOME",       "WAIT_TEST"};
    const long long values[] = {sizeof(symmem_device_team_t),
                                offsetof(symmem_device_team_t, n),
                                offsetof(symmem_device_team_t, me),
                                offsetof(symmem_device_team_t, members),
                                SYMMEM_DEV_MAX_TEAMS,
                                sizeof(symmem_device_error_t),
                                offsetof(symmem_device_error_t, set),
                                offsetof(symmem_device_error_t, what),
                                offsetof(symmem_device_error_t, pe),
                                offsetof(symmem_device_error_t, arg),
                                offsetof(symmem_device_error_t, value),
                                offsetof(symmem_device_error_t, call),
                                sizeof(((symmem_device_error_t *)0)->call),
                                SYMMEM_DEVICE_SYNC_WORD,
                                SYMMEM_DEV_SPINS,
                                SYMMEM_DEV_ERR_BAD_PE,
                                SYMMEM_DEV_ERR_NOT_SYMMETRIC,
                                SYMMEM_DEV_ERR_PEER_DEAD,
                                SYMMEM_DEV_ERR_TIMEOUT,
                                SYMMEM_DEV_ERR_NOT_INITIALIZED,
                                SYMMEM_DEV_ERR_NOT_CONTIGUOUS,
                                SYMMEM_DEV_ERR_BAD_TEAM,
                                SYMMEM_DEV_ERR_TOO_SMALL,
                                SYMMEM_DEV_ERR_BAD_ROOT,
                                SYMMEM_DEV_ERR_BAD_ARG,
                                SYMMEM_DEV_ERR_UNREACHABLE,
                                SYMMEM_DEV_ERR_OVERLAP,
                                SYMMEM_DEV_WAIT_ALL,
                                SYMMEM_DEV_WAIT_ANY,
                                SYMMEM_DEV_WAIT_SOME,
                                SYMMEM_DEV_WAIT_TEST};
    _Static_assert(sizeof(keys) / sizeof(keys[0]) == sizeof(values) / sizeof(values[0]),
                   "a name for every value");
    return add_table(module, "DEVICE_LAYOUT", keys, values, sizeof(values) / sizeof(values[0]));
}

int symmem__ext_device_exec(PyObject *module)
{
    static const char *const layout_keys[] = {
        "size",     "magic",       "version",   "flags",      "my_pe",
        "n_pes",    "heap_base",   "heap_size", "peer_base",  "abort_flag",
        "abort_pe", "abort_word",  "sync_base", "timeout_ns", "error",
        "teams",    "consts_copy", "MAGIC",     "VERSION",    "HOST_MAPPED"};
    const long long layout[] = {sizeof(symmem_device_state_t),
                                offsetof(symmem_device_state_t, magic),
                                offsetof(symmem_device_state_t, version),
                                offsetof(symmem_device_state_t, flags),
                                offsetof(symmem_device_state_t, my_pe),
                                offsetof(symmem_device_state_t, n_pes),
                                offsetof(symmem_device_state_t, heap_base),
                                offsetof(symmem_device_state_t, heap_size),
                                offsetof(symmem_device_state_t, peer_base),
                                offsetof(symmem_device_state_t, abort_flag),
                                offsetof(symmem_device_state_t, abort_pe),
                                offsetof(symmem_device_state_t, abort_word),
                                offsetof(symmem_device_state_t, sync_base),
                                offsetof(symmem_device_state_t, timeout_ns),
                                offsetof(symmem_device_state_t, error),
                                offsetof(symmem_device_state_t, teams),
                                SYMMEM_DEVICE_CONSTS_COPY_OFFSET,
                                (long long)SYMMEM_DEVICE_STATE_MAGIC,
                                SYMMEM_DEVICE_STATE_VERSION,
                                SYMMEM_DEVICE_HOST_MAPPED};
    static const char *const function_keys[] = {
        "signal_wait", "wait_until", "barrier_all", "sync_all",      "wake",
        "barrier",     "sync",       "reduce",      "reducescatter", "fcollect",
        "alltoall",    "broadcast",  "team_my_pe",  "team_n_pes",    "freed"};
    const long long functions[] = {
        (long long)(uintptr_t)device_signal_wait,   (long long)(uintptr_t)device_wait_until,
        (long long)(uintptr_t)device_barrier_all,   (long long)(uintptr_t)device_sync_all,
        (long long)(uintptr_t)symmem__device_wake,  (long long)(uintptr_t)device_team_barrier,
        (long long)(uintptr_t)device_team_sync,     (long long)(uintptr_t)device_reduce,
        (long long)(uintptr_t)device_reducescatter, (long long)(uintptr_t)device_fcollect,
        (long long)(uintptr_t)device_alltoall,      (long long)(uintptr_t)device_broadcast,
        (long long)(uintptr_t)device_team_my_pe,    (long long)(uintptr_t)device_team_n_pes,
        (long long)(uintptr_t)device_freed};
    if (PyModule_AddFunctions(module, methods) < 0) return -1;
    if (owner_state == NULL) owner_state = symmem__ext_state(Py_NewRef(module));
    static const char *const consts_keys[] = {"size",      "magic",    "my_pe",     "n_pes",
                                              "heap_base", "heap_end", "sync_base", "peers",
                                              "delta",     "PEERS"};
    const long long consts[] = {sizeof(symmem_device_consts_t),
                                offsetof(symmem_device_consts_t, magic),
                                offsetof(symmem_device_consts_t, my_pe),
                                offsetof(symmem_device_consts_t, n_pes),
                                offsetof(symmem_device_consts_t, heap_base),
                                offsetof(symmem_device_consts_t, heap_end),
                                offsetof(symmem_device_consts_t, sync_base),
                                offsetof(symmem_device_consts_t, peers),
                                offsetof(symmem_device_consts_t, delta),
                                SYMMEM_DEVICE_CONST_PEERS};
    if (add_table(module, "DEVICE_STATE_LAYOUT", layout_keys, layout,
                  sizeof(layout) / sizeof(layout[0])) < 0 ||
        add_table(module, "DEVICE_CONSTS_LAYOUT", consts_keys, consts,
                  sizeof(consts) / sizeof(consts[0])) < 0 ||
        add_device_layout(module) < 0)
        return -1;
    return add_table(module, "DEVICE_FUNCTIONS", function_keys, functions,
                     sizeof(functions) / sizeof(functions[0]));
}

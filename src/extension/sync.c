/* Point synchronisation (wait_until, test) and barriers (barrier_all,
 * sync_all, barrier and sync over a team), and the ComparisonType table the
 * package's enum is built from. Every wait and barrier runs without the GIL. */
#include "args.h"
#include "concepts.h"
#include "doc_parts.h"
#include "dtypes.h"
#include "elements.h"
#include "errors.h"
#include "resolve.h"

/* value as the core compares it, exactly: an int that fits ivar's dtype (an
 * int8 holding 0 never "equals" 256, and wait_until never waits for a value
 * the element cannot hold), sign- or zero-extended to 64 bits. A dtype that
 * is no integer the core refuses, naming it. */
static int comparison_value(module_state_t *st, const char *call, int dtype, PyObject *obj,
                            int64_t *value_p)
{
    if (dtype == SYMMEM_DTYPE_BOOL || dtype > SYMMEM_DTYPE_UINT64) {
        *value_p = 0;
        return 0;
    }
    union {
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        unsigned char bytes[8];
    } element = {.i64 = 0};
    if (symmem__ext_element_pack(st, call, "value", dtype, obj, element.bytes) < 0) return -1;
    switch (dtype) {
    case SYMMEM_DTYPE_INT8: *value_p = element.i8; break;
    case SYMMEM_DTYPE_INT16: *value_p = element.i16; break;
    case SYMMEM_DTYPE_INT32: *value_p = element.i32; break;
    case SYMMEM_DTYPE_UINT8: *value_p = element.u8; break;
    case SYMMEM_DTYPE_UINT16: *value_p = element.u16; break;
    case SYMMEM_DTYPE_UINT32: *value_p = element.u32; break;
    default: *value_p = element.i64; break; /* int64, and uint64's bits */
    }
    return 0;
}

static PyObject *wait_impl(module_state_t *st, const char *call, int test, const memory_t *ivar,
                           symmem_cmp_t cmp, PyObject *value_obj)
{
    int64_t value;
    int dtype = symmem__ext_first_element_type(st, ivar, call, "ivar");
    if (dtype < 0 || comparison_value(st, call, dtype, value_obj, &value) < 0) return NULL;
    symmem_status_t status;
    int holds = 0;
    if (test) {
        SYMMEM__EXT_CALL(symmem__ext_keep_gil(symmem_dtype_size(dtype)),
                         status = symmem_test(ivar->ptr, dtype, cmp, value, &holds));
    } else {
        Py_BEGIN_ALLOW_THREADS
        status = symmem_wait_until(ivar->ptr, dtype, cmp, value);
        Py_END_ALLOW_THREADS
    }
    if (status != SYMMEM_OK) return symmem__ext_raise_status(st, status);
    return test ? PyBool_FromLong(holds) : Py_NewRef(Py_None);
}

static PyObject *wait_call(PyObject *module, const char *call, int test, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"ivar", "cmp", "value", NULL};
    module_state_t *st = symmem__ext_state(module);
    const symmem__ext_params_t params = {call, names, 3, 3};
    PyObject *v[3];
    symmem_cmp_t cmp;
    memory_t ivar;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_cmp(st, v[1], call, &cmp) < 0)
        return NULL;
    /* value is converted once ivar's dtype is known (comparison_value). */
    if (PyBool_Check(v[2]) || (!PyLong_Check(v[2]) && !PyIndex_Check(v[2])))
        return symmem__ext_raise_invalid(st, "%s: value must be an int, got %s", call,
                                         Py_TYPE(v[2])->tp_name);
    if (symmem__ext_memory_resolve(st, v[0], 0, call, "ivar", &ivar) < 0) return NULL;
    PyObject *result = wait_impl(st, call, test, &ivar, cmp, v[2]);
    symmem__ext_memory_release(&ivar);
    return result;
}

static PyObject *wait_until(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return wait_call(m, "wait_until", 0, a, n, k);
}
static PyObject *test(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return wait_call(m, "test", 1, a, n, k);
}

/* ---- barriers ---- */

static PyObject *all_call(PyObject *module, const char *call,
                          symmem_status_t (*func)(symmem_stream_t), PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"stream", NULL};
    module_state_t *st = symmem__ext_state(module);
    const symmem__ext_params_t params = {call, names, 0, 1};
    PyObject *stream_obj;
    symmem_stream_t stream;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &stream_obj) < 0 ||
        symmem__ext_stream_resolve(st, stream_obj, call, &stream) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = func(stream);
    Py_END_ALLOW_THREADS
    return symmem__ext_done(st, status);
}

/* The core checks the team (that it exists and this PE is a member). */
static PyObject *team_call(PyObject *module, const char *call,
                           symmem_status_t (*func)(symmem_team_t, symmem_stream_t),
                           PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"team", "stream", NULL};
    module_state_t *st = symmem__ext_state(module);
    const symmem__ext_params_t params = {call, names, 1, 2};
    PyObject *v[2];
    symmem_team_t team = 0;
    symmem_stream_t stream;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_team(st, v[0], call, "team", &team) < 0 ||
        symmem__ext_stream_resolve(st, v[1], call, &stream) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = func(team, stream);
    Py_END_ALLOW_THREADS
    return symmem__ext_done(st, status);
}

static PyObject *barrier_all(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return all_call(m, "barrier_all", symmem_barrier_all, a, n, k);
}
static PyObject *sync_all(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return all_call(m, "sync_all", symmem_sync_all, a, n, k);
}
static PyObject *barrier_team(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return team_call(m, "barrier", symmem_team_barrier, a, n, k);
}
static PyObject *sync_team(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return team_call(m, "sync", symmem_team_sync, a, n, k);
}

/* ---- docstrings ---- */

#define WAIT_ARGS                                                                                  \
    "Args:\n"                                                                                      \
    "    ivar: this PE's copy of a symmetric integer array or tensor (its first\n"                 \
    "        element is compared), or a slice of one.\n"                                           \
    "    cmp: a ComparisonType (CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE)\n"                 \
    "        or its int value.\n"                                                                  \
    "    value: an int that fits ivar's dtype: it is compared exactly.\n"

#define WAIT_INVALID                                                                               \
    SYMMEM__DOC_INVALID(                                                                           \
        "cmp is not a ComparisonType; value is not an int or\n"                                    \
        "        does not fit ivar's dtype; ivar is empty, not of an integer dtype,\n"             \
        "        or not on the symmetric heap.")

PyDoc_STRVAR(wait_until_doc,
             "wait_until($module, ivar, cmp, value)\n--\n\n"
             "Wait until ivar's first element compares to value as cmp asks.\n\n"
             "Another PE changes the element, with put, p, an atomic or a signal.\n\n" WAIT_ARGS
             "\n" WAIT_INVALID SYMMEM__DOC_RAISES_WAIT "\nExample:\n"
             "    >>> flag = symmem.array(1, dtype=\"int64\")\n"
             "    >>> flag[0] = 0\n"
             "    >>> symmem.barrier_all()  # every flag is 0 before any PE sets one\n"
             "    >>> symmem.p(flag, 1, (symmem.my_pe() + 1) % symmem.n_pes())\n"
             "    >>> symmem.wait_until(flag, symmem.ComparisonType.CMP_EQ, 1)\n"
             "    >>> symmem.barrier_all()\n"
             "    >>> symmem.free_array(flag)\n");

PyDoc_STRVAR(test_doc, "test($module, ivar, cmp, value)\n--\n\n"
                       "Whether ivar's first element compares to value as cmp asks, now.\n\n"
                       "wait_until's check without the wait.\n\n" WAIT_ARGS "\nReturns:\n"
                       "    True where the comparison holds, else False.\n"
                       "\n" WAIT_INVALID SYMMEM__DOC_RAISES_BACKEND "\nExample:\n"
                       "    >>> flag = symmem.array(1, dtype=\"int32\")\n"
                       "    >>> flag[0] = 3\n"
                       "    >>> symmem.test(flag, symmem.ComparisonType.CMP_GE, 2)\n"
                       "    True\n"
                       "    >>> symmem.test(flag, symmem.ComparisonType.CMP_EQ, 2)\n"
                       "    False\n"
                       "    >>> symmem.free_array(flag)\n");

PyDoc_STRVAR(barrier_all_doc,
             "barrier_all($module, stream=None)\n--\n\n"
             "Complete this PE's puts (as quiet() does), then wait for every PE.\n\n"
             "Every PE calls it; when it returns, every PE's earlier puts are in\n"
             "place.\n\n"
             "Args:\n" SYMMEM__DOC_STREAM
             "\n" SYMMEM__DOC_INVALID("stream is not None or a stream; PEs made different\n"
                                      "        collective calls here (the cpu backend checks).")
                 SYMMEM__DOC_RAISES_WAIT
             "\nExample:\n"
             "    >>> x = symmem.array(1, dtype=\"int32\")\n"
             "    >>> symmem.p(x, symmem.my_pe(), (symmem.my_pe() + 1) % symmem.n_pes())\n"
             "    >>> symmem.barrier_all()  # every p has landed\n"
             "    >>> int(x[0]) == (symmem.my_pe() - 1) % symmem.n_pes()\n"
             "    True\n"
             "    >>> symmem.free_array(x)\n");

PyDoc_STRVAR(sync_all_doc,
             "sync_all($module, stream=None)\n--\n\n"
             "Wait for every PE, without completing this PE's puts.\n\n"
             "Every PE calls it. Use barrier_all() where the other PEs must see the\n"
             "puts made before it.\n\n"
             "Args:\n" SYMMEM__DOC_STREAM
             "\n" SYMMEM__DOC_INVALID("stream is not None or a stream; PEs made different\n"
                                      "        collective calls here (the cpu backend checks).")
                 SYMMEM__DOC_RAISES_WAIT
             "\nExample:\n"
             "    >>> x = symmem.array(1, dtype=\"int32\")\n"
             "    >>> x[0] = symmem.my_pe()  # a local store\n"
             "    >>> symmem.sync_all()  # every PE has stored its own\n"
             "    >>> symmem.g(x, 0)\n"
             "    0\n"
             "    >>> symmem.sync_all()\n"
             "    >>> symmem.free_array(x)\n");

PyDoc_STRVAR(barrier_doc,
             "barrier($module, team, stream=None)\n--\n\n"
             "Complete this PE's puts, then wait for every member of team.\n\n"
             "Every member of the team calls it.\n\n"
             "Args:\n" SYMMEM__DOC_TEAM SYMMEM__DOC_STREAM "\n" SYMMEM__DOC_INVALID(
                 "team is None (this PE was outside the split that made\n"
                 "        it), not a team, or this PE is not a member; stream is not None\n"
                 "        or a stream; members made different collective calls here (the\n"
                 "        cpu backend checks).") SYMMEM__DOC_RAISES_WAIT
             "\nExample:\n"
             "    >>> symmem.barrier(symmem.Teams.TEAM_WORLD)\n"
             "    >>> even = symmem.team_split_strided(symmem.Teams.TEAM_WORLD, 0, 2,\n"
             "    ...                                  (symmem.n_pes() + 1) // 2)\n"
             "    >>> if even is not None:  # None on the odd PEs\n"
             "    ...     symmem.barrier(even)\n"
             "    ...     symmem.team_destroy(even)\n");

PyDoc_STRVAR(sync_doc,
             "sync($module, team, stream=None)\n--\n\n"
             "Wait for every member of team, without completing this PE's puts.\n\n"
             "Every member of the team calls it.\n\n"
             "Args:\n" SYMMEM__DOC_TEAM SYMMEM__DOC_STREAM "\n" SYMMEM__DOC_INVALID(
                 "team is None (this PE was outside the split that made\n"
                 "        it), not a team, or this PE is not a member; stream is not None\n"
                 "        or a stream; members made different collective calls here (the\n"
                 "        cpu backend checks).") SYMMEM__DOC_RAISES_WAIT
             "\nExample:\n"
             "    >>> symmem.sync(symmem.Teams.TEAM_WORLD)\n");

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("wait_until", wait_until, wait_until_doc),
    SYMMEM__EXT_METHOD("test", test, test_doc),
    SYMMEM__EXT_METHOD("barrier_all", barrier_all, barrier_all_doc),
    SYMMEM__EXT_METHOD("sync_all", sync_all, sync_all_doc),
    SYMMEM__EXT_METHOD("barrier", barrier_team, barrier_doc),
    SYMMEM__EXT_METHOD("sync", sync_team, sync_doc),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_sync_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

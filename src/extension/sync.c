/* Point synchronisation (wait_until, test) and barriers (barrier_all,
 * sync_all, barrier and sync over a team), and the ComparisonType table the
 * package's enum is built from. Every wait and barrier runs without the GIL. */
#include "args.h"
#include "concepts.h"
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
    union { int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16;
            uint32_t u32; unsigned char bytes[8]; } element = {.i64 = 0};
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

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("wait_until", wait_until,
        "wait_until($module, ivar, cmp, value)\n--\n\n"
        "Wait until this PE's ivar (its first element, an integer) <cmp> value holds;\n"
        "value must fit ivar's dtype (NvshmemInvalid if not: it is compared exactly)."),
    SYMMEM__EXT_METHOD("test", test,
        "test($module, ivar, cmp, value)\n--\n\nWhether ivar <cmp> value holds now; value must\n"
        "fit ivar's dtype (NvshmemInvalid if not: it is compared exactly)."),
    SYMMEM__EXT_METHOD("barrier_all", barrier_all,
        "barrier_all($module, stream=None)\n--\n\n"
        "Complete this PE's puts, then wait for every PE."),
    SYMMEM__EXT_METHOD("sync_all", sync_all,
        "sync_all($module, stream=None)\n--\n\nWait for every PE (puts are not completed)."),
    SYMMEM__EXT_METHOD("barrier", barrier_team,
        "barrier($module, team, stream=None)\n--\n\n"
        "Complete this PE's puts, then wait for every member of the team."),
    SYMMEM__EXT_METHOD("sync", sync_team,
        "sync($module, team, stream=None)\n--\n\nWait for every member of the team."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_sync_exec(PyObject *module)
{
    PyObject *cmps = Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i}", "CMP_EQ", SYMMEM_CMP_EQ,
                                   "CMP_NE", SYMMEM_CMP_NE, "CMP_GT", SYMMEM_CMP_GT, "CMP_LE",
                                   SYMMEM_CMP_LE, "CMP_LT", SYMMEM_CMP_LT, "CMP_GE",
                                   SYMMEM_CMP_GE);
    int rc = cmps ? PyModule_AddObjectRef(module, "COMPARISONS", cmps) : -1;
    Py_XDECREF(cmps);
    return rc < 0 ? -1 : PyModule_AddFunctions(module, methods);
}

/* init and finalize, the queries about the running job, unique ids, the
 * environment table and the version constants. */
#include "args.h"
#include "capabilities.h"
#include "concepts.h"
#include "errors.h"
#include "../core/internal.h"

static PyObject *init_impl(module_state_t *st, const Py_buffer *uid, int rank, int nranks,
                           const char *backend, int device, PyObject *mpi_comm)
{
    symmem_init_attr_t attr;
    symmem_init_attr_default(&attr);
    attr.backend = backend;
    attr.device = device;
    if (mpi_comm != NULL && mpi_comm != Py_None) {
        unsigned long long handle =
            PyLong_Check(mpi_comm) ? PyLong_AsUnsignedLongLongMask(mpi_comm) : 0;
        if (!PyLong_Check(mpi_comm) || PyErr_Occurred())
            return symmem__ext_raise_invalid(st,
                                             "init: mpi_comm of type %s is not a "
                                             "communicator handle (an int)",
                                             Py_TYPE(mpi_comm)->tp_name);
        attr.method = SYMMEM_INIT_WITH_MPI_COMM;
        attr.mpi_comm = handle;
        attr.rank = rank;
        attr.nranks = nranks;
    } else if (uid != NULL) {
        if (uid->len != SYMMEM_UNIQUE_ID_SIZE)
            return symmem__ext_raise_invalid(
                st, "init: uid has %zd bytes, expected %d (from get_unique_id())", uid->len,
                SYMMEM_UNIQUE_ID_SIZE);
        memcpy(attr.uid.bytes, uid->buf, SYMMEM_UNIQUE_ID_SIZE);
        attr.method = SYMMEM_INIT_WITH_UID;
        attr.rank = rank;
        attr.nranks = nranks;
    }
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS status = symmem_init_attr(&attr);
    Py_END_ALLOW_THREADS return symmem__ext_done(st, status);
}

static PyObject *init(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"uid",    "rank",     "nranks", "backend",
                                        "device", "mpi_comm", NULL};
    static const symmem__ext_params_t params = {"init", names, 0, 6};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[6];
    int rank = -1, nranks = -1, device = -1;
    const char *backend = NULL;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_int(st, v[1], "init", "rank", &rank) < 0 ||
        symmem__ext_as_int(st, v[2], "init", "nranks", &nranks) < 0 ||
        symmem__ext_as_text(st, v[3], "init", "backend", 1, &backend) < 0 ||
        symmem__ext_as_int(st, v[4], "init", "device", &device) < 0)
        return NULL;
    if (v[0] == NULL || v[0] == Py_None)
        return init_impl(st, NULL, rank, nranks, backend, device, v[5]);
    Py_buffer uid;
    if (PyObject_GetBuffer(v[0], &uid, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        return symmem__ext_raise_invalid(st, "init: uid of type %s is not bytes",
                                         Py_TYPE(v[0])->tp_name);
    }
    PyObject *result = init_impl(st, &uid, rank, nranks, backend, device, v[5]);
    PyBuffer_Release(&uid);
    return result;
}

static PyObject *finalize(PyObject *module, PyObject *unused)
{
    (void)unused;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS status = symmem_finalize();
    Py_END_ALLOW_THREADS return symmem__ext_done(symmem__ext_state(module), status);
}

static PyObject *initialized(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyBool_FromLong(symmem_initialized());
}

/* A PE query's answer (-1 before init), or, in a child forked after init,
 * the error naming fork: the child is no PE (core/forked.h). */
static PyObject *pe_query(PyObject *module, const char *call, int value)
{
    symmem_status_t status = value < 0 ? symmem__check_not_forked(call) : SYMMEM_OK;
    if (status != SYMMEM_OK) return symmem__ext_raise_status(symmem__ext_state(module), status);
    return PyLong_FromLong(value);
}

static PyObject *my_pe(PyObject *module, PyObject *unused)
{
    (void)unused;
    return pe_query(module, "my_pe", symmem_my_pe());
}

static PyObject *n_pes(PyObject *module, PyObject *unused)
{
    (void)unused;
    return pe_query(module, "n_pes", symmem_n_pes());
}

static PyObject *backend_name(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    const char *name = symmem_backend_name();
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *engine_name(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyUnicode_FromString(symmem_engine_name());
}

static PyObject *library_version(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyUnicode_FromString(symmem_library_version());
}

static PyObject *get_unique_id(PyObject *module, PyObject *unused)
{
    (void)unused;
    symmem_unique_id_t uid;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS /* may load the gpu backend to ask it */
        status = symmem_get_unique_id(&uid);
    Py_END_ALLOW_THREADS if (status != SYMMEM_OK) return symmem__ext_raise_status(
        symmem__ext_state(module), status);
    return PyBytes_FromStringAndSize((const char *)uid.bytes, SYMMEM_UNIQUE_ID_SIZE);
}

static PyObject *launcher(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    static const char *const names[] = {"backend", NULL};
    static const symmem__ext_params_t params = {"launcher", names, 0, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[1];
    const char *backend = NULL;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_text(st, v[0], "init", "backend", 1, &backend) < 0)
        return NULL;
    symmem_bootstrap_t boot;
    symmem_job_identity_t id;
    const char *chosen = NULL;
    uint32_t capabilities = 0;
    symmem_engine_choice_t engine;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS /* may load the gpu backend to ask it */
        status = symmem__init_preview(backend, &boot, &id, &chosen, &capabilities, &engine);
    Py_END_ALLOW_THREADS if (status != SYMMEM_OK) return symmem__ext_raise_status(st, status);
    PyObject *can = symmem__ext_capability_names(capabilities);
    if (can == NULL) return NULL;
    return Py_BuildValue("{s:s,s:i,s:i,s:i,s:i,s:s,s:s,s:s,s:s,s:N,s:s,s:s}", "launcher",
                         id.launcher, "rank", boot.rank, "nranks", boot.nranks, "local_rank",
                         boot.local_rank, "local_size", boot.local_size, "job", boot.job, "host",
                         boot.host, "spans_hosts", boot.spans_hosts, "backend", chosen,
                         "capabilities", can, "engine", engine.name, "engine_reason", engine.why);
}

static PyObject *env_table(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    PyObject *list = PyList_New(0);
    for (const symmem_env_var_t *v = symmem__env_table(); list && v->name; v++) {
        PyObject *row = Py_BuildValue("(ssss)", v->name, v->default_value, v->applies_to, v->help);
        if (row == NULL || PyList_Append(list, row) != 0) Py_CLEAR(list);
        Py_XDECREF(row);
    }
    return list;
}

/* The value of a variable of the table, read as its kind says. */
static PyObject *env_impl(const symmem_env_var_t *var)
{
    int count;
    switch (var->kind) {
    case SYMMEM_ENV_SIZE: return PyLong_FromSize_t(symmem__env_size(var->name));
    case SYMMEM_ENV_NUMBER:
    case SYMMEM_ENV_DURATION: return PyFloat_FromDouble(symmem__env_number(var->name));
    case SYMMEM_ENV_FLAG: return PyBool_FromLong(symmem__env_flag(var->name));
    case SYMMEM_ENV_COUNT:
        if (!symmem__env_count(var->name, &count)) Py_RETURN_NONE;
        return PyLong_FromLong(count);
    default: return PyUnicode_FromString(symmem__env_string(var->name));
    }
}

static PyObject *env(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"name", NULL};
    static const symmem__ext_params_t params = {"env", names, 1, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *name;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &name) < 0) return NULL;
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    for (const symmem_env_var_t *v = symmem__env_table(); text && v->name; v++)
        if (strcmp(v->name, text) == 0) return env_impl(v);
    PyErr_Clear();
    PyObject *repr = PyObject_Repr(name);
    symmem__ext_raise_invalid(st,
                              "env: %s is not a variable symmem reads (python -m symmem "
                              "info lists them)",
                              repr ? PyUnicode_AsUTF8(repr) : "?");
    Py_XDECREF(repr);
    return NULL;
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD(
        "init", init,
        "init($module, uid=None, rank=-1, nranks=-1, backend=None, device=-1, mpi_comm=None)\n"
        "--\n\n"
        "Collective: start the runtime; from the environment, with uid (the bytes of\n"
        "get_unique_id()) as PE rank of nranks, or on the mpi backend with mpi_comm (an\n"
        "MPI_Comm handle, mpi4py's comm.handle) as PE rank of nranks. backend: 'cpu', 'gpu',\n"
        "'mpi', 'auto' or None (SYMMEM_BACKEND); device: the CUDA ordinal, -1 for\n"
        "LOCAL_RANK % devices."),
    SYMMEM__EXT_NOARGS("finalize", finalize,
                       "finalize($module, /)\n--\n\nCollective: end the runtime."),
    SYMMEM__EXT_NOARGS("initialized", initialized,
                       "initialized($module, /)\n--\n\nTrue between init and finalize."),
    SYMMEM__EXT_NOARGS(
        "my_pe", my_pe,
        "my_pe($module, /)\n--\n\n"
        "This PE's number (-1 before init; NvshmemError in a child forked after init)."),
    SYMMEM__EXT_NOARGS(
        "n_pes", n_pes,
        "n_pes($module, /)\n--\n\nThe number of PEs (-1 before init; NvshmemError in a child\n"
        "forked after init)."),
    SYMMEM__EXT_NOARGS("backend_name", backend_name,
                       "backend_name($module, /)\n--\n\n'cpu', 'gpu', 'mpi', or None before init."),
    SYMMEM__EXT_NOARGS("engine_name", engine_name,
                       "engine_name($module, /)\n--\n\nThe gpu backend's engine, 'nvshmem' or "
                       "'symmem'; '' on the other backends and before init."),
    SYMMEM__EXT_NOARGS(
        "library_version", library_version,
        "library_version($module, /)\n--\n\n"
        "The backend library's version ('3.4.5' for NVSHMEM); '' on cpu and before init."),
    SYMMEM__EXT_NOARGS(
        "get_unique_id", get_unique_id,
        "get_unique_id($module, /)\n--\n\nFresh unique id bytes (UNIQUE_ID_SIZE of them)."),
    SYMMEM__EXT_METHOD(
        "launcher", launcher,
        "launcher($module, backend=None)\n--\n\n"
        "What init would find, starting nothing: {launcher, rank, nranks, local_rank,\n"
        "local_size, job, host, spans_hosts, backend, capabilities} ('' spans_hosts: one\n"
        "host; capabilities: the chosen backend's, as capabilities() names them)."),
    SYMMEM__EXT_NOARGS("env_table", env_table,
                       "env_table($module, /)\n--\n\n"
                       "[(name, default, applies_to, help)] of every variable symmem reads."),
    SYMMEM__EXT_METHOD(
        "env", env,
        "env($module, name)\n--\n\n"
        "The variable's value as the library reads it (its default where unset): a str,\n"
        "an int for sizes and counts (None for an unset count), a float (durations in seconds),\n"
        "or a bool for flags."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_lifecycle_exec(PyObject *module)
{
    if (PyModule_AddIntConstant(module, "UNIQUE_ID_SIZE", SYMMEM_UNIQUE_ID_SIZE) < 0 ||
        PyModule_AddStringConstant(module, "VERSION", SYMMEM_VERSION_STRING) < 0 ||
        PyModule_AddStringConstant(module, "OPENSHMEM_SPEC_VERSION",
                                   SYMMEM_OPENSHMEM_SPEC_VERSION) < 0)
        return -1;
    return PyModule_AddFunctions(module, methods);
}

/* symmem._symmem: the CPython extension module over the C library.
 * Multi-phase init; the exceptions and the Buffer type live in module state. */
#include <stdarg.h>
#include <string.h>

#include "symmem_python.h"
#include "../core/env.h"

/* Which Python exception a status becomes. */
static PyObject *exception_for(module_state_t *st, symmem_status_t status)
{
    switch (status) {
    case SYMMEM_ERR_INVALID:
    case SYMMEM_ERR_NOT_INITIALIZED:
    case SYMMEM_ERR_NOT_SYMMETRIC:
    case SYMMEM_ERR_MISMATCH: return st->invalid_type;
    case SYMMEM_ERR_UNSUPPORTED: return PyExc_NotImplementedError;
    default: return st->error_type;
    }
}

static PyObject *raise_with(PyObject *type, const char *msg, int status)
{
    PyObject *exc = PyObject_CallFunction(type, "s", msg);
    if (exc == NULL) return NULL;
    PyObject *text = PyUnicode_FromString(msg);
    PyObject *code = PyLong_FromLong(status);
    if (text && code && PyObject_SetAttrString(exc, "msg", text) == 0 &&
        PyObject_SetAttrString(exc, "status", code) == 0)
        PyErr_SetObject(type, exc);
    Py_XDECREF(text);
    Py_XDECREF(code);
    Py_DECREF(exc);
    return NULL;
}

PyObject *raise_status(module_state_t *st, symmem_status_t status)
{
    const char *msg = symmem_last_error();
    return raise_with(exception_for(st, status), msg[0] ? msg : symmem_status_string(status),
                      (int)status);
}

PyObject *raise_status_as(module_state_t *st, symmem_status_t status, const char *inner,
                          const char *outer)
{
    const char *msg = symmem_last_error();
    if (!msg[0]) msg = symmem_status_string(status);
    char pattern[64], text[1200];
    snprintf(pattern, sizeof(pattern), "%s: ", inner);
    const char *at = strstr(msg, pattern);
    if (at == NULL) return raise_with(exception_for(st, status), msg, (int)status);
    snprintf(text, sizeof(text), "%.*s%s: %s", (int)(at - msg), msg, outer, at + strlen(pattern));
    return raise_with(exception_for(st, status), text, (int)status);
}

PyObject *raise_invalid(module_state_t *st, const char *fmt, ...)
{
    char msg[1024];
    int n = 0;
    if (symmem_my_pe() >= 0) n = snprintf(msg, sizeof(msg), "[pe %d] ", symmem_my_pe());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    va_end(ap);
    return raise_with(st->invalid_type, msg, SYMMEM_ERR_INVALID);
}

/* ---- lifecycle and queries ---- */

static PyObject *py_init(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"uid", "rank", "nranks", "backend", "device", NULL};
    Py_buffer uid = {0};
    int rank = -1, nranks = -1, device = -1;
    const char *backend = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|z*iizi:init", keywords, &uid, &rank,
                                     &nranks, &backend, &device))
        return NULL;
    symmem_init_attr_t attr;
    symmem_init_attr_default(&attr);
    attr.backend = backend;
    attr.device = device;
    if (uid.buf != NULL) {
        if (uid.len != SYMMEM_UNIQUE_ID_SIZE) {
            PyBuffer_Release(&uid);
            return raise_invalid(module_state(module),
                                 "init: uid has %zd bytes, expected %d (from get_unique_id())",
                                 uid.len, SYMMEM_UNIQUE_ID_SIZE);
        }
        memcpy(attr.uid.bytes, uid.buf, SYMMEM_UNIQUE_ID_SIZE);
        attr.method = SYMMEM_INIT_WITH_UID;
        attr.rank = rank;
        attr.nranks = nranks;
        PyBuffer_Release(&uid);
    }
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_init_attr(&attr);
    Py_END_ALLOW_THREADS
    if (status != SYMMEM_OK) return raise_status(module_state(module), status);
    Py_RETURN_NONE;
}

static PyObject *py_finalize(PyObject *module, PyObject *unused)
{
    (void)unused;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_finalize();
    Py_END_ALLOW_THREADS
    if (status != SYMMEM_OK) return raise_status(module_state(module), status);
    Py_RETURN_NONE;
}

static PyObject *py_initialized(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyBool_FromLong(symmem_initialized());
}

static PyObject *py_my_pe(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyLong_FromLong(symmem_my_pe());
}

static PyObject *py_n_pes(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyLong_FromLong(symmem_n_pes());
}

static PyObject *py_backend_name(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    const char *name = symmem_backend_name();
    if (name == NULL) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *py_library_version(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return PyUnicode_FromString(symmem_library_version());
}

static PyObject *py_get_unique_id(PyObject *module, PyObject *unused)
{
    (void)unused;
    symmem_unique_id_t uid;
    symmem_status_t status = symmem_get_unique_id(&uid);
    if (status != SYMMEM_OK) return raise_status(module_state(module), status);
    return PyBytes_FromStringAndSize((const char *)uid.bytes, SYMMEM_UNIQUE_ID_SIZE);
}

static PyObject *py_env_table(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    PyObject *list = PyList_New(0);
    for (const symmem_env_var_t *v = symmem__env_table(); list && v->name; v++) {
        PyObject *row = Py_BuildValue("(ssss)", v->name, v->default_value, v->applies_to,
                                      v->help);
        if (row == NULL || PyList_Append(list, row) != 0) Py_CLEAR(list);
        Py_XDECREF(row);
    }
    return list;
}

/* ---- memory ---- */

static PyObject *py_malloc(PyObject *module, PyObject *arg)
{
    module_state_t *st = module_state(module);
    Py_ssize_t size = PyLong_AsSsize_t(arg);
    if (size == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return raise_invalid(st, "buffer: size must be an int >= 0");
    }
    if (size < 0) return raise_invalid(st, "buffer: size=%zd must be >= 0", size);
    void *ptr = NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_malloc((size_t)size, &ptr);
    Py_END_ALLOW_THREADS
    if (status != SYMMEM_OK) return raise_status(st, status);
    return buffer_new(st, ptr, size, symmem_my_pe(), 1, NULL);
}

/* Collective: ends the Buffer arg with end (symmem_free or
 * symmem_unregister_external); done names what that did, for the error
 * when it is done twice. */
static PyObject *end_buffer(PyObject *module, PyObject *arg, const char *call, const char *done,
                            symmem_status_t (*end)(void *))
{
    module_state_t *st = module_state(module);
    if (!PyObject_TypeCheck(arg, st->buffer_type))
        return raise_invalid(st, "%s: expected a symmem Buffer, got %s", call,
                             Py_TYPE(arg)->tp_name);
    buffer_object_t *buf = (buffer_object_t *)arg;
    if (!buf->owner)
        return raise_invalid(st, "%s: this Buffer is a view of PE %d's memory; pass the "
                                 "Buffer it came from", call, buf->pe);
    if (buf->freed)
        return raise_invalid(st, "%s: Buffer at 0x%llx (%zd bytes) was already %s", call,
                             (unsigned long long)(uintptr_t)buf->ptr, buf->size, done);
    if (buf->ptr != NULL) {
        symmem_status_t status;
        Py_BEGIN_ALLOW_THREADS
        status = end(buf->ptr);
        Py_END_ALLOW_THREADS
        if (status != SYMMEM_OK) return raise_status(st, status);
    }
    buf->freed = 1;
    Py_RETURN_NONE;
}

static PyObject *py_free(PyObject *module, PyObject *arg)
{
    return end_buffer(module, arg, "free", "freed", symmem_free);
}

/* register_external(address, size) -> Buffer over the symmetric address. */
static PyObject *py_register_external(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    module_state_t *st = module_state(module);
    if (nargs != 2) return raise_invalid(st, "register_external: expected (address, size)");
    unsigned long long address = PyLong_AsUnsignedLongLong(args[0]);
    Py_ssize_t size = PyLong_AsSsize_t(args[1]);
    if (PyErr_Occurred()) return NULL;
    void *sym = NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_register_external((void *)(uintptr_t)address, (size_t)size, &sym);
    Py_END_ALLOW_THREADS
    if (status != SYMMEM_OK) return raise_status(st, status);
    return buffer_new(st, sym, size, symmem_my_pe(), 1, NULL);
}

static PyObject *py_unregister_external(PyObject *module, PyObject *arg)
{
    return end_buffer(module, arg, "unregister_external", "unregistered",
                      symmem_unregister_external);
}

/* peer_buffer(buffer, pe): a Buffer over PE pe's copy of buffer's memory. */
static PyObject *py_peer_buffer(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    module_state_t *st = module_state(module);
    if (nargs != 2 || !PyObject_TypeCheck(args[0], st->buffer_type))
        return raise_invalid(st, "get_peer_buffer: expected (Buffer, pe)");
    buffer_object_t *buf = (buffer_object_t *)args[0];
    long pe = PyLong_AsLong(args[1]);
    if (pe == -1 && PyErr_Occurred()) return NULL;
    if (buf->freed) return raise_invalid(st, "get_peer_buffer: the Buffer was freed");
    if (pe < 0 || pe >= symmem_n_pes())
        return raise_invalid(st, "get_peer_buffer: pe=%ld is outside [0, %d)", pe,
                             symmem_n_pes());
    char *peer = symmem_ptr(buf->ptr, pe);
    if (peer == NULL)
        return raise_status(st, symmem_initialized() ? SYMMEM_ERR_UNSUPPORTED
                                                     : SYMMEM_ERR_NOT_INITIALIZED);
    return buffer_new(st, peer, buf->size, (int)pe, 0, args[0]);
}

/* find_allocation(address) -> (start, size) or None */
static PyObject *py_find_allocation(PyObject *module, PyObject *arg)
{
    (void)module;
    unsigned long long address = PyLong_AsUnsignedLongLong(arg);
    if (PyErr_Occurred()) return NULL;
    void *start;
    size_t size;
    if (symmem_find_allocation((void *)(uintptr_t)address, 1, &start, &size) != SYMMEM_OK)
        Py_RETURN_NONE;
    return Py_BuildValue("(KK)", (unsigned long long)(uintptr_t)start,
                         (unsigned long long)size);
}

static PyObject *py_set_resolver(PyObject *module, PyObject *arg)
{
    module_state_t *st = module_state(module);
    Py_XSETREF(st->resolver, Py_NewRef(arg));
    Py_RETURN_NONE;
}

static PyMethodDef core_methods[] = {
    {"init", (PyCFunction)(void (*)(void))py_init, METH_VARARGS | METH_KEYWORDS,
     "init(uid=None, rank=-1, nranks=-1, backend=None, device=-1)"},
    {"finalize", py_finalize, METH_NOARGS, "Collective: end the runtime."},
    {"initialized", py_initialized, METH_NOARGS, "True between init and finalize."},
    {"my_pe", py_my_pe, METH_NOARGS, "This PE's number (-1 before init)."},
    {"n_pes", py_n_pes, METH_NOARGS, "The number of PEs (-1 before init)."},
    {"backend_name", py_backend_name, METH_NOARGS, "'cpu', 'gpu' or None."},
    {"library_version", py_library_version, METH_NOARGS,
     "The backend library's version ('3.4.5' for NVSHMEM); '' on cpu and before init."},
    {"get_unique_id", py_get_unique_id, METH_NOARGS, "Fresh unique id bytes."},
    {"env_table", py_env_table, METH_NOARGS, "[(name, default, applies_to, help)] of every variable symmem reads."},
    {"malloc", py_malloc, METH_O, "Collective: a Buffer of size bytes."},
    {"free", py_free, METH_O, "Collective: free a Buffer."},
    {"register_external", (PyCFunction)(void (*)(void))py_register_external, METH_FASTCALL,
     "Collective: (address, size) of external memory -> Buffer on the symmetric heap."},
    {"unregister_external", py_unregister_external, METH_O,
     "Collective: undo register_external for its Buffer."},
    {"peer_buffer", (PyCFunction)(void (*)(void))py_peer_buffer, METH_FASTCALL,
     "peer_buffer(buffer, pe)"},
    {"find_allocation", py_find_allocation, METH_O, "(start, size) of the allocation at an address."},
    {"_set_resolver", py_set_resolver, METH_O, "Set the fallback memory resolver."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module)
{
    module_state_t *st = module_state(module);
    PyObject *bases = PyTuple_Pack(1, PyExc_RuntimeError);
    st->error_type = PyErr_NewExceptionWithDoc(
        "symmem.NvshmemError", "The backend failed (allocation, bootstrap, a dead peer, a timeout).",
        bases, NULL);
    Py_XDECREF(bases);
    bases = PyTuple_Pack(1, PyExc_ValueError);
    st->invalid_type = PyErr_NewExceptionWithDoc(
        "symmem.NvshmemInvalid", "Misuse: not initialised, wrong type, bad PE, dtype, op or memory.",
        bases, NULL);
    Py_XDECREF(bases);
    st->buffer_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, buffer_type_spec(), NULL);
    if (st->error_type == NULL || st->invalid_type == NULL || st->buffer_type == NULL) return -1;
    if (PyModule_AddObjectRef(module, "NvshmemError", st->error_type) < 0 ||
        PyModule_AddObjectRef(module, "NvshmemInvalid", st->invalid_type) < 0 ||
        PyModule_AddObjectRef(module, "Buffer", (PyObject *)st->buffer_type) < 0 ||
        PyModule_AddIntConstant(module, "UNIQUE_ID_SIZE", SYMMEM_UNIQUE_ID_SIZE) < 0 ||
        PyModule_AddStringConstant(module, "VERSION", SYMMEM_VERSION_STRING) < 0 ||
        PyModule_AddStringConstant(module, "OPENSHMEM_SPEC_VERSION",
                                   SYMMEM_OPENSHMEM_SPEC_VERSION) < 0 ||
        PyModule_AddFunctions(module, rma_methods) < 0 ||
        PyModule_AddFunctions(module, collective_methods) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state_t *st = module_state(module);
    Py_VISIT(st->error_type);
    Py_VISIT(st->invalid_type);
    Py_VISIT(st->buffer_type);
    Py_VISIT(st->resolver);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state_t *st = module_state(module);
    Py_CLEAR(st->error_type);
    Py_CLEAR(st->invalid_type);
    Py_CLEAR(st->buffer_type);
    Py_CLEAR(st->resolver);
    object_cache_clear(&st->arrays);
    object_cache_clear(&st->streams);
    return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

PyModuleDef symmem_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "symmem._symmem",
    .m_doc = "The C core of symmem: symmetric memory, one-sided operations, signals.",
    .m_size = sizeof(module_state_t),
    .m_methods = core_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__symmem(void) { return PyModuleDef_Init(&symmem_module_def); }

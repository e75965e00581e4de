/* What the Python package builds its exceptions with: invalid(),
 * exception() and require_initialized(), so that the "[pe N] " prefix,
 * .msg, .status and the status-to-type mapping are errors.c's alone. */
#include "args.h"
#include "concepts.h"
#include "errors.h"

/* The exception, once message is known to be a str. */
static PyObject *exception_impl(module_state_t *st, const char *call, int status, PyObject *message)
{
    const char *text;
    if (symmem__ext_as_text(st, message, call, "message", 0, &text) < 0) return NULL;
    return symmem__ext_exception(st, (symmem_status_t)status, message);
}

static PyObject *exception(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"status", "message", NULL};
    static const symmem__ext_params_t params = {"exception", names, 2, 2};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[2];
    int status;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_int(st, v[0], "exception", "status", &status) < 0)
        return NULL;
    return exception_impl(st, "exception", status, v[1]);
}

static PyObject *invalid(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    static const char *const names[] = {"message", NULL};
    static const symmem__ext_params_t params = {"invalid", names, 1, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *message;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &message) < 0) return NULL;
    return exception_impl(st, "invalid", SYMMEM_ERR_INVALID, message);
}

static PyObject *require_initialized(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    static const char *const names[] = {"call", NULL};
    static const symmem__ext_params_t params = {"require_initialized", names, 1, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *obj;
    const char *call = "require_initialized";
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &obj) < 0 ||
        symmem__ext_as_text(st, obj, call, "call", 0, &call) < 0 ||
        symmem__ext_require_initialized(st, call) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD(
        "exception", exception,
        "exception($module, status, message)\n--\n\n"
        "The exception status maps to (ERR_INVALID: NvshmemInvalid, ERR_UNSUPPORTED:\n"
        "NotImplementedError, others NvshmemError), its message prefixed with\n"
        "'[pe N] ', with .msg and .status set. Returned, not raised."),
    SYMMEM__EXT_METHOD(
        "invalid", invalid,
        "invalid($module, message)\n--\n\nexception(ERR_INVALID, message): an NvshmemInvalid."),
    SYMMEM__EXT_METHOD("require_initialized", require_initialized,
                       "require_initialized($module, call)\n--\n\n"
                       "Raise NvshmemInvalid naming call unless symmem is initialized."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_exceptions_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

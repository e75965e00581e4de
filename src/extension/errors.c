/* Statuses to exceptions: the exception types (NvshmemError,
 * NvshmemInvalid), the status constants (ERR_*), and the one function that
 * turns a status and a message into the right exception. */
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "concepts.h"
#include "errors.h"
#include "../core/internal.h"

static const struct {
    const char *name;
    symmem_status_t status;
} statuses[] = {
    {"OK", SYMMEM_OK},
    {"ERR_INVALID", SYMMEM_ERR_INVALID},
    {"ERR_NOT_INITIALIZED", SYMMEM_ERR_NOT_INITIALIZED},
    {"ERR_NOT_SYMMETRIC", SYMMEM_ERR_NOT_SYMMETRIC},
    {"ERR_MISMATCH", SYMMEM_ERR_MISMATCH},
    {"ERR_NO_MEMORY", SYMMEM_ERR_NO_MEMORY},
    {"ERR_SYSTEM", SYMMEM_ERR_SYSTEM},
    {"ERR_BOOTSTRAP", SYMMEM_ERR_BOOTSTRAP},
    {"ERR_PEER_DEAD", SYMMEM_ERR_PEER_DEAD},
    {"ERR_TIMEOUT", SYMMEM_ERR_TIMEOUT},
    {"ERR_UNSUPPORTED", SYMMEM_ERR_UNSUPPORTED},
    {"ERR_BACKEND", SYMMEM_ERR_BACKEND},
    {"ERR_INTERRUPTED", SYMMEM_ERR_INTERRUPTED},
    {"ERR_FORKED", SYMMEM_ERR_FORKED},
};

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

/* The exception for status whose message (and .msg) is text, as it is. */
static PyObject *build(module_state_t *st, symmem_status_t status, PyObject *text)
{
    PyObject *exc = PyObject_CallOneArg(exception_for(st, status), text);
    if (exc == NULL) return NULL;
    PyObject *code = PyLong_FromLong((long)status);
    if (code == NULL || PyObject_SetAttrString(exc, "msg", text) < 0 ||
        PyObject_SetAttrString(exc, "status", code) < 0)
        Py_CLEAR(exc);
    Py_XDECREF(code);
    return exc;
}

/* The one place the extension writes the "[pe N] " prefix (the core
 * writes it into its own messages): none before init, and none on a message
 * that has one (the text of an exception raised again). Under SYMMEM_DEBUG
 * it prints what it builds, as the core prints its own errors (error.c):
 * every error found above the core, by the extension or the package, passes
 * here; a text raised again is not printed again. */
PyObject *symmem__ext_exception(module_state_t *st, symmem_status_t status, PyObject *message)
{
    const char *text = PyUnicode_AsUTF8(message);
    if (text == NULL) return NULL;
    if (strncmp(text, "[pe ", 4) == 0) return build(st, status, message);
    PyObject *prefixed = symmem_my_pe() < 0
                             ? Py_NewRef(message)
                             : PyUnicode_FromFormat("[pe %d] %U", symmem_my_pe(), message);
    PyObject *exc = prefixed ? build(st, status, prefixed) : NULL;
    if (exc != NULL && symmem__env_flag("SYMMEM_DEBUG"))
        fprintf(stderr, "symmem: %s\n", PyUnicode_AsUTF8(prefixed));
    Py_XDECREF(prefixed);
    return exc;
}

static PyObject *raise_exc(PyObject *exc)
{
    if (exc != NULL) PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_XDECREF(exc);
    return NULL;
}

/* Raises the core's message text (which has its prefix already). An
 * interrupted wait keeps the exception its signal handler raised
 * (KeyboardInterrupt), unchanged. */
static PyObject *raise_core_text(module_state_t *st, symmem_status_t status, const char *text)
{
    if (status == SYMMEM_ERR_INTERRUPTED && PyErr_Occurred()) return NULL;
    PyObject *message = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    PyObject *exc = message ? build(st, status, message) : NULL;
    Py_XDECREF(message);
    return raise_exc(exc);
}

PyObject *symmem__ext_raise_status(module_state_t *st, symmem_status_t status)
{
    const char *msg = symmem_last_error();
    return raise_core_text(st, status, msg[0] ? msg : symmem_status_string(status));
}

PyObject *symmem__ext_raise_status_as(module_state_t *st, symmem_status_t status, const char *inner,
                                      const char *outer)
{
    const char *msg = symmem_last_error();
    if (!msg[0]) msg = symmem_status_string(status);
    char pattern[64], text[1200];
    snprintf(pattern, sizeof(pattern), "%s: ", inner);
    const char *at = strstr(msg, pattern);
    if (at == NULL) return raise_core_text(st, status, msg);
    snprintf(text, sizeof(text), "%.*s%s: %s", (int)(at - msg), msg, outer, at + strlen(pattern));
    return raise_core_text(st, status, text);
}

PyObject *symmem__ext_raise_invalid(module_state_t *st, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    PyObject *message = PyUnicode_DecodeUTF8(text, (Py_ssize_t)strlen(text), "replace");
    PyObject *exc = message ? symmem__ext_exception(st, SYMMEM_ERR_INVALID, message) : NULL;
    Py_XDECREF(message);
    return raise_exc(exc);
}

int symmem__ext_require_initialized(module_state_t *st, const char *call)
{
    symmem_status_t status = symmem__check_initialized(call);
    if (status == SYMMEM_OK) return 0;
    symmem__ext_raise_status(st, status);
    return -1;
}

PyObject *symmem__ext_done(module_state_t *st, symmem_status_t status)
{
    return status == SYMMEM_OK ? Py_NewRef(Py_None) : symmem__ext_raise_status(st, status);
}

/* The exception types' docstrings. */
static const char error_doc[] =
    "The backend failed: allocation, bootstrap, a dead peer, a timeout.\n\n"
    "A RuntimeError. .msg is the message, which starts with \"[pe N] \" and\n"
    "names the call; .status is the C library's status code (symmem._symmem's\n"
    "ERR_NO_MEMORY, ERR_PEER_DEAD, ERR_TIMEOUT, ERR_BACKEND, ...). A wait or a\n"
    "collective whose peer died raises it naming that PE, and so does any\n"
    "blocking call that outlives SYMMEM_TIMEOUT seconds.\n\n"
    "Example:\n"
    "    >>> try:\n"
    "    ...     symmem.barrier_all()\n"
    "    ... except symmem.NvshmemError as error:  # a PE died, or a timeout\n"
    "    ...     print(error.msg)\n"
    "    ...     raise\n";

static const char invalid_doc[] =
    "Misuse: not initialised, a wrong type, a bad PE, dtype, op or memory.\n\n"
    "A ValueError. .msg is the message, which starts with \"[pe N] \" and\n"
    "names the call, the argument and its value; .status is the C library's\n"
    "status code (symmem._symmem's ERR_INVALID, ERR_NOT_INITIALIZED,\n"
    "ERR_NOT_SYMMETRIC or ERR_MISMATCH).\n\n"
    "Example:\n"
    "    >>> x = symmem.array(1, dtype=\"float32\")\n"
    "    >>> try:\n"
    "    ...     symmem.p(x, 1.0, symmem.n_pes())  # there is no such PE\n"
    "    ... except symmem.NvshmemInvalid as error:\n"
    "    ...     print(\"p: pe=\" in error.msg, isinstance(error, ValueError))\n"
    "    True True\n"
    "    >>> symmem.free_array(x)\n";

/* A heap exception type whose tp_doc carries a text signature (for
 * inspect.signature) and whose __doc__ is the plain text. */
static PyObject *exception_type(const char *name, const char *signature, const char *doc,
                                PyObject *base)
{
    char text[2048];
    snprintf(text, sizeof(text), "%s\n--\n\n%s", signature, doc);
    PyObject *type = PyErr_NewExceptionWithDoc(name, text, base, NULL);
    PyObject *plain = type ? PyUnicode_FromString(doc) : NULL;
    if (plain == NULL || PyObject_SetAttrString(type, "__doc__", plain) < 0) Py_CLEAR(type);
    Py_XDECREF(plain);
    return type;
}

/* The core's interrupt check (core/interrupt.h), called by a wait running
 * without the GIL. Python runs signal handlers on the main thread only (on
 * Linux, the thread whose id is the pid): there, take the GIL and run them;
 * a handler that raises interrupts the wait and its exception stays set. */
static int python_interrupted(void)
{
    if ((pid_t)syscall(SYS_gettid) != getpid()) return 0;
#if PY_VERSION_HEX >= 0x030D0000
    if (Py_IsFinalizing()) return 0;
#else
    if (_Py_IsFinalizing()) return 0;
#endif
    PyGILState_STATE gil = PyGILState_Ensure();
    int raised = PyErr_CheckSignals() < 0;
    PyGILState_Release(gil);
    return raised;
}

int symmem__ext_errors_exec(PyObject *module)
{
    symmem__interrupt_set_check(python_interrupted);
    module_state_t *st = symmem__ext_state(module);
    st->error_type =
        exception_type("symmem.NvshmemError", "NvshmemError(*args)", error_doc, PyExc_RuntimeError);
    st->invalid_type = exception_type("symmem.NvshmemInvalid", "NvshmemInvalid(*args)", invalid_doc,
                                      PyExc_ValueError);
    if (st->error_type == NULL || st->invalid_type == NULL ||
        PyModule_AddObjectRef(module, "NvshmemError", st->error_type) < 0 ||
        PyModule_AddObjectRef(module, "NvshmemInvalid", st->invalid_type) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
        if (PyModule_AddIntConstant(module, statuses[i].name, statuses[i].status) < 0) return -1;
    return 0;
}

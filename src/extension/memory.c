/* Symmetric memory: malloc and free of Buffers, registration of external
 * memory, views of a peer's copy, and the allocation an address lies in.
 * Each collective call runs without the GIL. The call= argument names the
 * package's function in messages (buffer, array, tensor, ...). */
#include "args.h"
#include "buffer.h"
#include "concepts.h"
#include "errors.h"

/* alignment 0: symmem_malloc's own */
static PyObject *malloc_impl(module_state_t *st, Py_ssize_t size, size_t alignment,
                             const char *call)
{
    void *ptr = NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status =
        alignment ? symmem_align(alignment, (size_t)size, &ptr) : symmem_malloc((size_t)size, &ptr);
    Py_END_ALLOW_THREADS
    if (status != SYMMEM_OK) return symmem__ext_raise_status_as(st, status, "malloc", call);
    return symmem__ext_buffer_new(st, ptr, size, symmem_my_pe(), 1, NULL);
}

static PyObject *py_malloc(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"size", "call", "alignment", NULL};
    static const symmem__ext_params_t params = {"malloc", names, 1, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    const char *call = "malloc";
    long long size = 0, alignment = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0) return NULL;
    int aligned = v[2] != NULL && v[2] != Py_None;
    if (symmem__ext_as_text(st, v[1], call, "call", 0, &call) < 0 ||
        symmem__ext_require_initialized(st, call) < 0 ||
        symmem__ext_as_long(st, v[0], call, "size", &size) < 0 ||
        (aligned && symmem__ext_as_long(st, v[2], call, "alignment", &alignment) < 0))
        return NULL;
    if (size < 0) return symmem__ext_raise_invalid(st, "%s: size=%lld must be >= 0", call, size);
    /* symmem_align refuses the rest that is no power of two */
    if (aligned && alignment <= 0)
        return symmem__ext_raise_invalid(st, "%s: alignment=%lld is not a power of two", call,
                                         alignment);
    return malloc_impl(st, (Py_ssize_t)size, (size_t)alignment, call);
}

/* What ends a Buffer: free or unregister_external, in words for errors. */
typedef struct {
    const char *name;  /* the call, as the core's messages name it */
    const char *doing; /* for another call doing it: "finalize: freeing ..." */
    const char *done;  /* for the error when it is done twice */
    symmem_status_t (*end)(void *);
} ending_t;

static const ending_t FREE = {"free", "freeing", "freed", symmem_free};
static const ending_t UNREGISTER = {"unregister_external", "unregistering", "unregistered",
                                    symmem_unregister_external};

/* Collective: ends buf as how says; call names the call in errors (finalize
 * ends what the program left: "finalize: freeing the Buffer at ...: timed
 * out", never a free the program did not make). */
static PyObject *end_impl(module_state_t *st, PyObject *obj, const char *call, const ending_t *how)
{
    if (symmem__ext_require_initialized(st, call) < 0) return NULL;
    if (!PyObject_TypeCheck(obj, st->buffer_type))
        return symmem__ext_raise_invalid(st, "%s: expected a symmem Buffer, got %s", call,
                                         Py_TYPE(obj)->tp_name);
    buffer_object_t *buf = (buffer_object_t *)obj;
    if (!buf->owner)
        return symmem__ext_raise_invalid(st,
                                         "%s: this Buffer is a view of PE %d's memory; pass "
                                         "the Buffer it came from",
                                         call, buf->pe);
    /* Not usable: freed through it, or its runtime ended (finalize); its
     * address may belong to a newer allocation by now. */
    if (buf->freed || !symmem__ext_buffer_usable(buf))
        return symmem__ext_raise_invalid(st, "%s: Buffer at 0x%llx (%zd bytes) was already %s",
                                         call, (unsigned long long)(uintptr_t)buf->ptr, buf->size,
                                         how->done);
    if (buf->ptr != NULL) {
        symmem_status_t status;
        Py_BEGIN_ALLOW_THREADS
        status = how->end(buf->ptr);
        Py_END_ALLOW_THREADS
        if (status != SYMMEM_OK && strcmp(call, how->name) == 0)
            return symmem__ext_raise_status(st, status);
        if (status != SYMMEM_OK) {
            char outer[192];
            snprintf(outer, sizeof(outer), "%s: %s the Buffer at 0x%llx (%zd bytes)", call,
                     how->doing, (unsigned long long)(uintptr_t)buf->ptr, buf->size);
            return symmem__ext_raise_status_as(st, status, how->name, outer);
        }
    }
    buf->freed = 1;
    buf->generation = 0; /* what every later use of it compares (buffer.h) */
    Py_RETURN_NONE;
}

/* free(buffer, call='free') and unregister_external(buffer, call=...). */
static PyObject *end_call(PyObject *module, const ending_t *how, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"buffer", "call", NULL};
    const symmem__ext_params_t params = {how->name, names, 1, 2};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[2];
    const char *call = how->name;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_text(st, v[1], how->name, "call", 0, &call) < 0)
        return NULL;
    return end_impl(st, v[0], call, how);
}

static PyObject *py_free(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    return end_call(module, &FREE, args, nargs, kwnames);
}

static PyObject *register_impl(module_state_t *st, uint64_t address, Py_ssize_t size,
                               const char *call)
{
    void *sym = NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_register_external((void *)(uintptr_t)address, (size_t)size, &sym);
    Py_END_ALLOW_THREADS
    if (status != SYMMEM_OK)
        return symmem__ext_raise_status_as(st, status, "register_external", call);
    return symmem__ext_buffer_new(st, sym, size, symmem_my_pe(), 1, NULL);
}

static PyObject *register_external(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    static const char *const names[] = {"address", "size", "call", NULL};
    static const symmem__ext_params_t params = {"register_external", names, 2, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    const char *call = "register_external";
    uint64_t address = 0;
    long long size = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_text(st, v[2], call, "call", 0, &call) < 0 ||
        symmem__ext_as_u64(st, v[0], call, "address", &address) < 0 ||
        symmem__ext_as_long(st, v[1], call, "size", &size) < 0)
        return NULL;
    if (size < 0) return symmem__ext_raise_invalid(st, "%s: size=%lld must be >= 0", call, size);
    return register_impl(st, address, (Py_ssize_t)size, call);
}

static PyObject *unregister_external(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    return end_call(module, &UNREGISTER, args, nargs, kwnames);
}

static PyObject *peer_buffer_impl(module_state_t *st, PyObject *obj, int pe, const char *call)
{
    buffer_object_t *buf = (buffer_object_t *)obj;
    /* Size 0 allocates nothing (no address): every PE's copy is empty alike. */
    if (buf->size == 0) return symmem__ext_buffer_new(st, NULL, 0, pe, 0, obj);
    char *peer = symmem_ptr(buf->ptr, pe);
    if (peer != NULL) return symmem__ext_buffer_new(st, peer, buf->size, pe, 0, obj);
    /* symmem_ptr sets no message: say here why (the last one is another call's). */
    PyObject *text = PyUnicode_FromFormat("%s: PE %d's copy cannot be reached with loads and "
                                          "stores from this PE on the %s backend",
                                          call, pe, symmem_backend_name());
    PyObject *exc = text ? symmem__ext_exception(st, SYMMEM_ERR_UNSUPPORTED, text) : NULL;
    Py_XDECREF(text);
    if (exc != NULL) PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_XDECREF(exc);
    return NULL;
}

static PyObject *peer_buffer(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    static const char *const names[] = {"buffer", "pe", "call", "arg", NULL};
    static const symmem__ext_params_t params = {"get_peer_buffer", names, 2, 4};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[4];
    const char *call = "get_peer_buffer", *arg = "pe";
    int pe = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_text(st, v[2], call, "call", 0, &call) < 0 ||
        symmem__ext_as_text(st, v[3], call, "arg", 0, &arg) < 0 ||
        symmem__ext_require_initialized(st, call) < 0)
        return NULL;
    if (!PyObject_TypeCheck(v[0], st->buffer_type))
        return symmem__ext_raise_invalid(st, "%s: expected a symmem Buffer, got %s", call,
                                         Py_TYPE(v[0])->tp_name);
    if (symmem__ext_as_pe(st, v[1], call, arg, &pe) < 0) return NULL;
    if (!symmem__ext_buffer_usable((buffer_object_t *)v[0]))
        return symmem__ext_raise_invalid(st, "%s: the Buffer was freed", call);
    return peer_buffer_impl(st, v[0], pe, call);
}

static PyObject *find_allocation(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"address", NULL};
    static const symmem__ext_params_t params = {"find_allocation", names, 1, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *obj;
    uint64_t address = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &obj) < 0 ||
        symmem__ext_as_u64(st, obj, "find_allocation", "address", &address) < 0)
        return NULL;
    void *start;
    size_t size;
    if (symmem_find_allocation((void *)(uintptr_t)address, 1, &start, &size) != SYMMEM_OK)
        Py_RETURN_NONE;
    return Py_BuildValue("(KK)", (unsigned long long)(uintptr_t)start, (unsigned long long)size);
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD(
        "malloc", py_malloc,
        "malloc($module, size, call='malloc', alignment=None)\n--\n\n"
        "Collective: a Buffer of size bytes on every PE's symmetric heap, at a multiple\n"
        "of alignment (a power of two) where one is given; errors name call."),
    SYMMEM__EXT_METHOD(
        "free", py_free,
        "free($module, buffer, call='free')\n--\n\n"
        "Collective: free a Buffer that malloc made; errors name call (finalize: \"finalize:\n"
        "freeing the Buffer at ...\")."),
    SYMMEM__EXT_METHOD(
        "register_external", register_external,
        "register_external($module, address, size, call='register_external')\n--\n\n"
        "Collective: external memory [address, address+size) as a Buffer on the symmetric\n"
        "heap (gpu: CUDA VMM memory); errors name call."),
    SYMMEM__EXT_METHOD(
        "unregister_external", unregister_external,
        "unregister_external($module, buffer, call='unregister_external')\n--\n\n"
        "Collective: undo register_external for the Buffer it returned; errors name call."),
    SYMMEM__EXT_METHOD("peer_buffer", peer_buffer,
                       "peer_buffer($module, buffer, pe, call='get_peer_buffer', arg='pe')\n--\n\n"
                       "A Buffer over PE pe's copy of buffer's memory; errors name call and arg."),
    SYMMEM__EXT_METHOD("find_allocation", find_allocation,
                       "find_allocation($module, address)\n--\n\n"
                       "(start, size) of the live allocation holding address, or None."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_memory_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

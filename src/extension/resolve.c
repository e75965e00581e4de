/* Python objects turned into memory, the way mpi4py does: our Buffer, then
 * the buffer protocol, then __cuda_array_interface__ read in C, then a
 * Python fallback (torch, __dlpack__) the package registers with
 * _set_resolver. */
#include <stdlib.h>

#include "args.h"
#include "buffer.h"
#include "concepts.h"
#include "errors.h"
#include "resolve.h"

static void set_format(memory_t *mem, const char *format)
{
    /* Byte order and alignment prefixes carry no dtype information here. */
    while (format && (*format == '@' || *format == '=' || *format == '<' || *format == '>' ||
                      *format == '!'))
        format++;
    if (format == NULL || *format == '\0') format = "B";
    /* A plain copy: snprintf would cost a quarter of a small put. */
    size_t n = strnlen(format, sizeof(mem->format) - 1);
    memcpy(mem->format, format, n);
    mem->format[n] = '\0';
}

static int not_contiguous(module_state_t *st, const char *call, const char *arg)
{
    symmem__ext_raise_invalid(st, "%s: %s is not contiguous (pass a contiguous array or slice)",
                              call, arg);
    return -1;
}

static int resolve_with_fallback(module_state_t *st, PyObject *obj, int writable,
                                 const char *call, const char *arg, memory_t *mem)
{
    if (st->resolver == NULL)
        goto unsupported;
    PyObject *result = PyObject_CallOneArg(st->resolver, obj);
    if (result == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
        PyErr_Clear();
        goto unsupported;
    }
    unsigned long long address;
    Py_ssize_t nbytes, itemsize;
    const char *format;
    int readonly;
    PyObject *keep;
    if (!PyArg_ParseTuple(result, "Knnsp|O", &address, &nbytes, &itemsize, &format, &readonly,
                          &keep)) {
        Py_DECREF(result);
        return -1;
    }
    if (writable && readonly) {
        Py_DECREF(result);
        symmem__ext_raise_invalid(st, "%s: %s (%s) is read-only", call, arg, Py_TYPE(obj)->tp_name);
        return -1;
    }
    mem->ptr = (char *)(uintptr_t)address;
    mem->nbytes = nbytes;
    mem->itemsize = itemsize;
    set_format(mem, format);
    mem->keep = result; /* holds whatever the resolver says keeps the memory alive */
    return 0;
unsupported:
    symmem__ext_raise_invalid(st,
                              "%s: %s of type %s is not memory symmem understands (expected a "
                              "symmem Buffer, an array, a tensor, or an object with the buffer "
                              "protocol, __cuda_array_interface__ or __dlpack__)",
                              call, arg, Py_TYPE(obj)->tp_name);
    return -1;
}

/* The struct-module code of a CUDA array interface typestr ("<f4" -> "f"). */
static const char *typestr_format(const char *typestr)
{
    if (typestr[0] == '\0' || typestr[1] == '\0') return NULL;
    char kind = typestr[1];
    int size = atoi(typestr + 2);
    switch (kind) {
    case 'b': return size == 1 ? "?" : NULL;
    case 'f': return size == 2 ? "e" : size == 4 ? "f" : size == 8 ? "d" : NULL;
    case 'i': return size == 1 ? "b" : size == 2 ? "h" : size == 4 ? "i" : size == 8 ? "q" : NULL;
    case 'u': return size == 1 ? "B" : size == 2 ? "H" : size == 4 ? "I" : size == 8 ? "Q" : NULL;
    default: return NULL;
    }
}

/* Whether strides (a tuple, or None) describe one block of memory, in C or
 * in Fortran order (as PyBuffer_IsContiguous(view, 'A') does). */
static int contiguous(PyObject *shape, PyObject *strides, Py_ssize_t itemsize)
{
    if (strides == NULL || strides == Py_None) return 1;
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != ndim) return 0;
    int c_order = 1, f_order = 1;
    Py_ssize_t c_expected = itemsize, f_expected = itemsize;
    for (Py_ssize_t i = 0; i < ndim; i++) {
        Py_ssize_t c_dim = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, ndim - 1 - i));
        Py_ssize_t f_dim = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (c_dim > 1 && PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, ndim - 1 - i)) != c_expected)
            c_order = 0;
        if (f_dim > 1 && PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i)) != f_expected)
            f_order = 0;
        c_expected *= c_dim;
        f_expected *= f_dim;
    }
    return !PyErr_Occurred() && (c_order || f_order);
}

/* A contiguous CUDA array interface, read in C (CuPy's arrays take this
 * path on every call, so it is kept short). 1 if taken, 0 to fall back,
 * -1 if the array is not contiguous. */
static int resolve_cuda_array_interface(module_state_t *st, PyObject *obj, memory_t *mem)
{
    PyObject *cai = PyObject_GetAttrString(obj, "__cuda_array_interface__");
    if (cai == NULL) {
        PyErr_Clear();
        return 0;
    }
    int taken = 0;
    PyObject *data = PyDict_Check(cai) ? PyDict_GetItemString(cai, "data") : NULL;
    PyObject *shape = PyDict_Check(cai) ? PyDict_GetItemString(cai, "shape") : NULL;
    PyObject *typestr = PyDict_Check(cai) ? PyDict_GetItemString(cai, "typestr") : NULL;
    PyObject *strides = PyDict_Check(cai) ? PyDict_GetItemString(cai, "strides") : NULL;
    const char *text = typestr && PyUnicode_Check(typestr) ? PyUnicode_AsUTF8(typestr) : NULL;
    const char *format = text ? typestr_format(text) : NULL;
    if (data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) == 2 && shape &&
        PyTuple_Check(shape) && format && !contiguous(shape, strides, atoi(text + 2))) {
        PyErr_Clear();
        taken = -1;
    } else if (data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) == 2 && shape &&
               PyTuple_Check(shape) && format) {
        Py_ssize_t count = 1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++)
            count *= PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        unsigned long long address = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
        if (!PyErr_Occurred()) {
            mem->ptr = (char *)(uintptr_t)address;
            mem->itemsize = atoi(text + 2);
            mem->nbytes = count * mem->itemsize;
            set_format(mem, format);
            mem->keep = Py_NewRef(obj);
            taken = 1;
            cache_entry_t entry = {NULL, mem->ptr, mem->nbytes, mem->itemsize, {0}};
            memcpy(entry.format, mem->format, sizeof(entry.format));
            symmem__ext_object_cache_store(&st->arrays, obj, &entry);
        }
        PyErr_Clear();
    }
    Py_DECREF(cai);
    return taken;
}

/* __cuda_array_interface__ in C, else the Python resolver. */
static int resolve_device_array(module_state_t *st, PyObject *obj, int writable,
                                const char *call, const char *arg, memory_t *mem)
{
    int found = resolve_cuda_array_interface(st, obj, mem);
    if (found > 0) return 0;
    if (found < 0) {
        return not_contiguous(st, call, arg);
    }
    return resolve_with_fallback(st, obj, writable, call, arg, mem);
}

int symmem__ext_memory_resolve(module_state_t *st, PyObject *obj, int writable, const char *call,
                   const char *arg, memory_t *mem)
{
    memset(mem, 0, sizeof(*mem));
    if (Py_IS_TYPE(obj, st->buffer_type)) {
        buffer_object_t *buf = (buffer_object_t *)obj;
        if (!symmem__ext_buffer_usable(buf)) {
            symmem__ext_raise_invalid(st, "%s: %s is a Buffer that was freed", call, arg);
            return -1;
        }
        mem->ptr = buf->ptr;
        mem->nbytes = buf->size;
        mem->itemsize = 1;
        set_format(mem, "B");
        return 0;
    }
    const cache_entry_t *known = symmem__ext_object_cache_find(&st->arrays, obj);
    if (known != NULL) {
        mem->ptr = known->ptr;
        mem->nbytes = known->nbytes;
        mem->itemsize = known->itemsize;
        memcpy(mem->format, known->format, sizeof(mem->format));
        mem->keep = Py_NewRef(obj);
        return 0;
    }
    if (PyObject_CheckBuffer(obj)) {
        int flags = PyBUF_STRIDES | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(obj, &mem->view, flags) != 0) {
            memset(&mem->view, 0, sizeof(mem->view));
            /* Device arrays (CuPy) refuse the buffer protocol: try the others. */
            if (PyObject_HasAttrString(obj, "__cuda_array_interface__") ||
                PyObject_HasAttrString(obj, "__dlpack__")) {
                PyErr_Clear();
                return resolve_device_array(st, obj, writable, call, arg, mem);
            }
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyObject *text = value ? PyObject_Str(value) : NULL;
            symmem__ext_raise_invalid(st, "%s: %s cannot be used: %s", call, arg,
                                      text ? PyUnicode_AsUTF8(text) : "buffer export failed");
            Py_XDECREF(text);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            return -1;
        }
        if (!PyBuffer_IsContiguous(&mem->view, 'A')) {
            symmem__ext_memory_release(mem);
            return not_contiguous(st, call, arg);
        }
        mem->ptr = mem->view.buf;
        mem->nbytes = mem->view.len;
        mem->itemsize = mem->view.itemsize;
        set_format(mem, mem->view.format);
        return 0;
    }
    return resolve_device_array(st, obj, writable, call, arg, mem);
}

void symmem__ext_memory_release(memory_t *mem)
{
    if (mem->view.obj != NULL) PyBuffer_Release(&mem->view);
    Py_CLEAR(mem->keep);
}

/* _set_resolver(resolver): the fallback for memory C does not read. */
static PyObject *set_resolver(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"resolver", NULL};
    static const symmem__ext_params_t params = {"_set_resolver", names, 1, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *resolver;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &resolver) < 0) return NULL;
    Py_XSETREF(st->resolver, Py_NewRef(resolver));
    Py_RETURN_NONE;
}

/* extent(obj, call, arg='array') -> (address, nbytes): the memory obj
 * names, read as put and get read it, for the package's own checks. */
static PyObject *extent(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    static const char *const names[] = {"obj", "call", "arg", NULL};
    static const symmem__ext_params_t params = {"extent", names, 2, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    const char *call = "extent", *arg = "array";
    memory_t mem;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_text(st, v[1], call, "call", 0, &call) < 0 ||
        symmem__ext_as_text(st, v[2], call, "arg", 0, &arg) < 0 ||
        symmem__ext_memory_resolve(st, v[0], 0, call, arg, &mem) < 0)
        return NULL;
    PyObject *result = Py_BuildValue("(Kn)", (unsigned long long)(uintptr_t)mem.ptr, mem.nbytes);
    symmem__ext_memory_release(&mem);
    return result;
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("_set_resolver", set_resolver,
        "_set_resolver($module, resolver)\n--\n\n"
        "resolver(obj) -> (address, nbytes, itemsize, format, readonly[, keep]) for memory\n"
        "without the buffer protocol or __cuda_array_interface__; TypeError if not memory."),
    SYMMEM__EXT_METHOD("extent", extent,
        "extent($module, obj, call, arg='array')\n--\n\n"
        "(address, nbytes) of the contiguous memory obj names; errors name call and arg."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_resolve_exec(PyObject *module) { return PyModule_AddFunctions(module, methods); }

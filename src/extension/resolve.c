/* Python objects turned into memory, the way mpi4py does: our Buffer, then
 * the buffer protocol (a plain NumPy array read from NumPy's structs instead,
 * ndarray_fast.h), then __cuda_array_interface__ read in C, then a Python
 * fallback (torch, __dlpack__) the package registers with _set_resolver. */
#include <stdlib.h>

#include "args.h"
#include "buffer.h"
#include "concepts.h"
#include "dtypes.h"
#include "errors.h"
#include "ndarray_fast.h"
#include "numpy_abi.h"
#include "owner_search.h"
#include "resolve.h"

static void set_format(memory_t *mem, const char *format)
{
    /* Byte order and alignment prefixes carry no dtype information here. */
    while (format &&
           (*format == '@' || *format == '=' || *format == '<' || *format == '>' || *format == '!'))
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

/* The text of the exception being handled, without a "[pe N] " prefix
 * (the exception this text goes into gets its own), into out. */
static void pending_error_text(char *out, size_t size)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    PyErr_Clear();
    if (utf8 != NULL && strncmp(utf8, "[pe ", 4) == 0 && strstr(utf8, "] ") != NULL)
        utf8 = strstr(utf8, "] ") + 2;
    snprintf(out, size, "%s%s%s", type ? ((PyTypeObject *)type)->tp_name : "error",
             utf8 && utf8[0] ? ": " : "", utf8 ? utf8 : "");
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

/* The exception being handled, as NvshmemInvalid naming call and arg (with
 * its text); a KeyboardInterrupt (any BaseException that is not an
 * Exception) passes through. */
static int resolver_failed(module_state_t *st, PyObject *obj, const char *call, const char *arg)
{
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return -1;
    char why[512];
    pending_error_text(why, sizeof(why));
    symmem__ext_raise_invalid(st, "%s: %s of type %s cannot be used as memory (%s)", call, arg,
                              Py_TYPE(obj)->tp_name, why);
    return -1;
}

static int unsupported(module_state_t *st, PyObject *obj, const char *call, const char *arg)
{
    symmem__ext_raise_invalid(st,
                              "%s: %s of type %s is not memory symmem understands (expected a "
                              "symmem Buffer, an array, a tensor, or an object with the buffer "
                              "protocol, __cuda_array_interface__ or __dlpack__)",
                              call, arg, Py_TYPE(obj)->tp_name);
    return -1;
}

/* The package's resolver (_resolver.py): (address, nbytes, itemsize,
 * format, readonly[, keep[, order]]), order "C", "F" or "A" (either, or not
 * known); a TypeError means "not memory". */
static int resolve_with_fallback(module_state_t *st, PyObject *obj, int writable, const char *call,
                                 const char *arg, memory_t *mem)
{
    if (st->resolver == NULL) return unsupported(st, obj, call, arg);
    PyObject *result = PyObject_CallOneArg(st->resolver, obj);
    if (result == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) return resolver_failed(st, obj, call, arg);
        PyErr_Clear();
        return unsupported(st, obj, call, arg);
    }
    unsigned long long address;
    Py_ssize_t nbytes, itemsize;
    const char *format;
    int readonly;
    PyObject *keep;
    const char *order = "A";
    if (!PyTuple_Check(result) || !PyArg_ParseTuple(result, "Knnsp|Os", &address, &nbytes,
                                                    &itemsize, &format, &readonly, &keep, &order)) {
        Py_DECREF(result);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "the resolver gave no tuple");
        return resolver_failed(st, obj, call, arg);
    }
    if (nbytes < 0 || itemsize <= 0 || symmem__ext_check_format(st, format, call, arg) < 0) {
        Py_DECREF(result);
        if (!PyErr_Occurred())
            symmem__ext_raise_invalid(st, "%s: %s of type %s has nbytes=%zd, itemsize=%zd", call,
                                      arg, Py_TYPE(obj)->tp_name, nbytes, itemsize);
        return -1;
    }
    if (writable && readonly) {
        Py_DECREF(result);
        symmem__ext_raise_invalid(st, "%s: %s (%s) is read-only, and the call writes it", call, arg,
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    mem->ptr = (char *)(uintptr_t)address;
    mem->nbytes = nbytes;
    mem->itemsize = itemsize;
    set_format(mem, format);
    mem->order = symmem__ext_order_of(order[0] == 'C', order[0] == 'F');
    mem->keep = result; /* holds whatever the resolver says keeps the memory alive */
    /* Whose memory it is: a NumPy array's chain in C (owner.h), else the
     * package's word, else what the object holds (owner_search.h). */
    PyObject *end, *asked = NULL;
    buffer_object_t *owner = symmem__ext_owner_walk(st, obj, &end);
    if (owner == NULL && symmem__ext_owner_ask(st, obj, &asked) < 0) {
        symmem__ext_memory_release(mem);
        return resolver_failed(st, obj, call, arg);
    }
    int rc = owner || asked || end == NULL
                 ? symmem__ext_owner_check(st, owner ? owner : (buffer_object_t *)asked, call, arg)
                 : symmem__ext_owner_search_check(st, NULL, end, mem->ptr, (size_t)nbytes, call,
                                                  arg, NULL);
    Py_XDECREF(asked);
    if (rc < 0) symmem__ext_memory_release(mem);
    return rc;
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

/* The order (SYMMEM__EXT_ORDER_*) in which strides (a tuple, or None: C
 * order) lay out one block of memory, or -1 where they leave gaps (as
 * PyBuffer_IsContiguous(view, 'A') is false). */
static int contiguous(PyObject *shape, PyObject *strides, Py_ssize_t itemsize)
{
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    int c_order = 1, f_order = 1;
    if (strides == NULL || strides == Py_None) {
        for (Py_ssize_t i = 0, long_dims = 0; i < ndim; i++)
            if (PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i)) > 1 && ++long_dims > 1) f_order = 0;
        return PyErr_Occurred() ? -1 : symmem__ext_order_of(c_order, f_order);
    }
    if (!PyTuple_Check(strides) || PyTuple_GET_SIZE(strides) != ndim) return -1;
    Py_ssize_t c_expected = itemsize, f_expected = itemsize;
    for (Py_ssize_t i = 0; i < ndim; i++) {
        Py_ssize_t c_dim = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, ndim - 1 - i));
        Py_ssize_t f_dim = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (c_dim > 1 && PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, ndim - 1 - i)) != c_expected)
            c_order = 0;
        if (f_dim > 1 && PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i)) != f_expected) f_order = 0;
        c_expected *= c_dim;
        f_expected *= f_dim;
    }
    return PyErr_Occurred() || !(c_order || f_order) ? -1 : symmem__ext_order_of(c_order, f_order);
}

/* The Buffer (a new reference in *owner_p, or NULL) behind a CUDA array
 * interface the package's owner_of knows nothing of, where owner_search
 * finds it (the cache keeps it for the next call); 0, or -1 with
 * NvshmemInvalid where it finds it freed or cannot trace the memory. */
static int traced_owner(module_state_t *st, PyObject *obj, unsigned long long address,
                        Py_ssize_t nbytes, const char *call, const char *arg, PyObject **owner_p)
{
    buffer_object_t *found = NULL;
    if (symmem__ext_owner_search_check(st, NULL, obj, (void *)(uintptr_t)address, (size_t)nbytes,
                                       call, arg, &found) < 0)
        return -1;
    *owner_p = found ? Py_NewRef((PyObject *)found) : NULL;
    return 0;
}

/* A contiguous CUDA array interface in native byte order, read in C (CuPy's
 * arrays take this path on every call, so it is kept short; the first call
 * also asks the package which Buffer the array is over, and the object cache
 * keeps the answer). 1 if taken, 0 to fall back, -1 with an exception set. */
static int resolve_cuda_array_interface(module_state_t *st, PyObject *obj, int writable,
                                        const char *call, const char *arg, memory_t *mem)
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
    /* Anything else (a swapped byte order, objects, ...) the resolver names. */
    const char *format = text && (text[0] == '<' || text[0] == '|') ? typestr_format(text) : NULL;
    Py_ssize_t itemsize = format ? atoi(text + 2) : 0;
    int order = -1;
    if (!(data && PyTuple_Check(data) && PyTuple_GET_SIZE(data) == 2 && shape &&
          PyTuple_Check(shape) && format)) {
        PyErr_Clear();
    } else if ((order = contiguous(shape, strides, itemsize)) < 0) {
        PyErr_Clear();
        taken = not_contiguous(st, call, arg);
    } else {
        Py_ssize_t count = 1;
        for (Py_ssize_t i = 0; count >= 0 && i < PyTuple_GET_SIZE(shape); i++) {
            Py_ssize_t dim = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
            count =
                dim < 0 || (dim > 0 && count > PY_SSIZE_T_MAX / itemsize / dim) ? -1 : count * dim;
        }
        unsigned long long address = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
        int readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
        PyObject *owner = NULL;
        if (PyErr_Occurred() || count < 0 || readonly < 0) {
            PyErr_Clear(); /* malformed: the resolver says what is wrong */
        } else if (writable && readonly) {
            symmem__ext_raise_invalid(st, "%s: %s (%s) is read-only, and the call writes it", call,
                                      arg, Py_TYPE(obj)->tp_name);
            taken = -1;
        } else if (symmem__ext_owner_ask(st, obj, &owner) < 0) {
            taken = resolver_failed(st, obj, call, arg);
        } else if (owner != NULL
                       ? symmem__ext_owner_check(st, (buffer_object_t *)owner, call, arg) < 0
                       : traced_owner(st, obj, address, count * itemsize, call, arg, &owner) < 0) {
            taken = -1;
        } else {
            mem->ptr = (char *)(uintptr_t)address;
            mem->itemsize = itemsize;
            mem->nbytes = count * itemsize;
            set_format(mem, format);
            mem->order = (unsigned char)order;
            mem->keep = Py_NewRef(obj);
            taken = 1;
            cache_entry_t entry = {.ptr = mem->ptr,
                                   .nbytes = mem->nbytes,
                                   .itemsize = mem->itemsize,
                                   .readonly = readonly,
                                   .order = mem->order,
                                   .owner = owner};
            memcpy(entry.format, mem->format, sizeof(mem->format));
            symmem__ext_object_cache_store(&st->arrays, obj, &entry);
        }
        Py_XDECREF(owner);
    }
    Py_DECREF(cai);
    return taken;
}

/* __cuda_array_interface__ in C, else the Python resolver. */
static int resolve_device_array(module_state_t *st, PyObject *obj, int writable, const char *call,
                                const char *arg, memory_t *mem)
{
    int found = resolve_cuda_array_interface(st, obj, writable, call, arg, mem);
    if (found != 0) return found > 0 ? 0 : -1;
    return resolve_with_fallback(st, obj, writable, call, arg, mem);
}

/* Why the exporter refused a contiguous (and, if asked, writable) buffer,
 * asked again with fewer demands: not contiguous, read-only, or a dtype the
 * buffer protocol cannot carry (NumPy's bfloat16 and datetimes: the
 * resolver names those); device arrays (CuPy) refuse it outright. 0 with
 * mem filled where another path takes obj, else -1 with NvshmemInvalid. */
static int export_refused(module_state_t *st, PyObject *obj, int writable, const char *call,
                          const char *arg, memory_t *mem)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb); /* the first refusal */
    Py_buffer probe;
    if (PyObject_GetBuffer(obj, &probe, PyBUF_STRIDES | PyBUF_FORMAT) == 0) {
        int contiguous = PyBuffer_IsContiguous(&probe, 'A');
        int read_only = writable && probe.readonly;
        PyBuffer_Release(&probe);
        if (contiguous && !read_only) {
            PyErr_Restore(type, value, tb); /* refused for its own reason: say it */
        } else {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            if (!contiguous) return not_contiguous(st, call, arg);
            symmem__ext_raise_invalid(st, "%s: %s (%s) is read-only, and the call writes it", call,
                                      arg, Py_TYPE(obj)->tp_name);
            return -1;
        }
    } else {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        if (PyObject_HasAttrString(obj, "__cuda_array_interface__") ||
            PyObject_HasAttrString(obj, "__dlpack__")) {
            PyErr_Clear();
            return resolve_device_array(st, obj, writable, call, arg, mem);
        }
    }
    return resolver_failed(st, obj, call, arg);
}

int symmem__ext_memory_resolve(module_state_t *st, PyObject *obj, int writable, const char *call,
                               const char *arg, memory_t *mem)
{
    memset(mem, 0, sizeof(*mem));
    if (Py_IS_TYPE(obj, st->buffer_type)) {
        buffer_object_t *buf = (buffer_object_t *)obj;
        if (symmem__ext_owner_check(st, buf, call, arg) < 0) return -1;
        mem->ptr = buf->ptr;
        mem->nbytes = buf->size;
        mem->itemsize = 1;
        set_format(mem, "B");
        return 0;
    }
    /* A plain NumPy array, read from NumPy's structs (ndarray_fast.h); anything
     * else about one (and every error) comes from its buffer export below. */
    if (Py_IS_TYPE(obj, st->ndarray_type) && st->ndarray_fast != NULL &&
        symmem__ext_ndarray_read(st, obj, writable, mem)) {
        if (symmem__ext_owner_verify(st, obj, mem->ptr, (size_t)mem->nbytes, call, arg) == 0)
            return 0;
        symmem__ext_memory_release(mem);
        return -1;
    }
    const cache_entry_t *known = symmem__ext_object_cache_find(&st->arrays, obj);
    if (known != NULL) {
        buffer_object_t *owner = (buffer_object_t *)symmem__ext_object_cache_owner(known);
        if (symmem__ext_owner_check(st, owner, call, arg) < 0) return -1;
        if (writable && known->readonly) {
            symmem__ext_raise_invalid(st, "%s: %s (%s) is read-only, and the call writes it", call,
                                      arg, Py_TYPE(obj)->tp_name);
            return -1;
        }
        mem->ptr = known->ptr;
        mem->nbytes = known->nbytes;
        mem->itemsize = known->itemsize;
        memcpy(mem->format, known->format, sizeof(mem->format));
        mem->order = known->order;
        mem->keep = Py_NewRef(obj);
        return 0;
    }
    if (PyObject_CheckBuffer(obj)) {
        /* Contiguous, in C or Fortran order: the exporter checks its own flags. */
        int flags = PyBUF_ANY_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(obj, &mem->view, flags) != 0) {
            memset(&mem->view, 0, sizeof(mem->view));
            return export_refused(st, obj, writable, call, arg, mem);
        }
        if ((!symmem__ext_format_is_plain_number(mem->view.format) &&
             symmem__ext_check_format(st, mem->view.format, call, arg) < 0) ||
            symmem__ext_owner_verify(st, obj, mem->view.buf, (size_t)mem->view.len, call, arg) <
                0) {
            symmem__ext_memory_release(mem);
            return -1;
        }
        mem->ptr = mem->view.buf;
        mem->nbytes = mem->view.len;
        mem->itemsize = mem->view.itemsize;
        set_format(mem, mem->view.format);
        mem->order = mem->view.ndim < 2
                         ? SYMMEM__EXT_ORDER_ANY
                         : symmem__ext_order_of(PyBuffer_IsContiguous(&mem->view, 'C'),
                                                PyBuffer_IsContiguous(&mem->view, 'F'));
        return 0;
    }
    return resolve_device_array(st, obj, writable, call, arg, mem);
}

void symmem__ext_memory_release(memory_t *mem)
{
    if (mem->view.obj != NULL) PyBuffer_Release(&mem->view);
    Py_CLEAR(mem->keep);
}

int symmem__ext_refuse_orders(module_state_t *st, const memory_t *dst, const memory_t *src,
                              const char *call)
{
    static const char *const names[] = {"", "C order (row-major)", "Fortran order (column-major)"};
    symmem__ext_raise_invalid(st,
                              "%s: dst is in %s but src is in %s: symmem copies bytes as they "
                              "lie, so the elements would land transposed; give both the same "
                              "order (copy one with np.ascontiguousarray or np.asfortranarray, "
                              "or torch's .contiguous())",
                              call, names[dst->order], names[src->order]);
    return -1;
}

/* _set_resolver(resolver, owner_of=None, ndarray=None): the package's
 * fallback for memory C does not read, its answer to which Buffer an object
 * was made over, and NumPy's array type (whose .base C walks itself). */
static PyObject *set_resolver(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    static const char *const names[] = {"resolver", "owner_of", "ndarray", NULL};
    static const symmem__ext_params_t params = {"_set_resolver", names, 1, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0) return NULL;
    if (v[2] != NULL && v[2] != Py_None && !PyType_Check(v[2]))
        return symmem__ext_raise_invalid(st, "_set_resolver: ndarray must be a type");
    Py_XSETREF(st->resolver, Py_NewRef(v[0]));
    Py_XSETREF(st->owner_of, v[1] != NULL && v[1] != Py_None ? Py_NewRef(v[1]) : NULL);
    symmem__ext_ndarray_set_type(st, v[2]); /* the walk's way through .base (owner.h) */
    symmem__ext_ndarray_probe(st);          /* ndarray_fast.h's read, where NumPy is as it reads */
    symmem__ext_owner_probe_dlpack(st);     /* the search's way through np.from_dlpack(a) */
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

/* _on_heap(address, nbytes) -> bool: whether [address, address+nbytes)
 * touches a symmetric heap this process maps, for the package's owner_of,
 * which looks for a Buffer by memory only there. */
static PyObject *on_heap(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    static const char *const names[] = {"address", "nbytes", NULL};
    static const symmem__ext_params_t params = {"_on_heap", names, 2, 2};
    PyObject *v[2];
    if (symmem__ext_parse(symmem__ext_state(module), &params, args, nargs, kwnames, v) < 0)
        return NULL;
    unsigned long long address = PyLong_AsUnsignedLongLong(v[0]);
    unsigned long long nbytes = PyErr_Occurred() ? 0 : PyLong_AsUnsignedLongLong(v[1]);
    if (PyErr_Occurred()) return NULL;
    return PyBool_FromLong(symmem__heap_mapped_at((const void *)(uintptr_t)address, nbytes));
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("_on_heap", on_heap,
                       "_on_heap($module, address, nbytes)\n--\n\n"
                       "Whether the memory touches a symmetric heap this process maps."),
    SYMMEM__EXT_METHOD(
        "_set_resolver", set_resolver,
        "_set_resolver($module, resolver, owner_of=None, ndarray=None)\n--\n\n"
        "resolver(obj) -> (address, nbytes, itemsize, format, readonly[, keep[, order]])\n"
        "for memory without the buffer protocol or __cuda_array_interface__ (order: 'C',\n"
        "'F' or 'A' for either); TypeError if not memory.\n"
        "owner_of(obj) -> the Buffer obj was made over, or None (for what C cannot walk).\n"
        "ndarray: numpy.ndarray, whose .base chain C walks to find an array's Buffer."),
    SYMMEM__EXT_METHOD(
        "extent", extent,
        "extent($module, obj, call, arg='array')\n--\n\n"
        "(address, nbytes) of the contiguous memory obj names; errors name call and arg."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_resolve_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

/* Python objects turned into CUDA stream handles: None, an int, or an
 * object with __cuda_stream__, .cuda_stream, .ptr or .handle (cuda.core,
 * CuPy, torch), remembered per object in the module's stream cache. */
#include "errors.h"
#include "resolve.h"

/* An int handle from an attribute or the __cuda_stream__ protocol. */
static int stream_from_object(PyObject *obj, PyObject **handle_p)
{
    if (PyObject_HasAttrString(obj, "__cuda_stream__")) {
        PyObject *pair = PyObject_CallMethod(obj, "__cuda_stream__", NULL);
        if (pair == NULL) return -1;
        if (PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2) {
            *handle_p = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
            Py_DECREF(pair);
            return 0;
        }
        Py_DECREF(pair);
        return 1;
    }
    static const char *const attributes[] = {"cuda_stream", "ptr", "handle", NULL};
    for (int i = 0; attributes[i]; i++) {
        if (!PyObject_HasAttrString(obj, attributes[i])) continue;
        *handle_p = PyObject_GetAttrString(obj, attributes[i]);
        return *handle_p == NULL ? -1 : 0;
    }
    return 1;
}

int symmem__ext_stream_resolve(module_state_t *st, PyObject *obj, const char *call,
                               symmem_stream_t *stream_p)
{
    if (obj == NULL || obj == Py_None) {
        *stream_p = SYMMEM_STREAM_NONE;
        return 0;
    }
    const cache_entry_t *known = symmem__ext_object_cache_find(&st->streams, obj);
    if (known != NULL) {
        *stream_p = (symmem_stream_t)known->ptr;
        return 0;
    }
    PyObject *handle = NULL;
    if (PyLong_Check(obj)) {
        handle = Py_NewRef(obj);
    } else {
        int rc = stream_from_object(obj, &handle);
        if (rc < 0 && PyErr_ExceptionMatches(PyExc_Exception)) {
            PyErr_Clear(); /* its __cuda_stream__ or attribute failed: not a stream we can use */
            rc = 1;
        }
        if (rc < 0) return -1;
        if (rc > 0 || !PyLong_Check(handle)) {
            Py_XDECREF(handle);
            symmem__ext_raise_invalid(st,
                                      "%s: stream of type %s is not a stream (expected None, an "
                                      "int handle, or an object with __cuda_stream__, "
                                      ".cuda_stream or .ptr)",
                                      call, Py_TYPE(obj)->tp_name);
            return -1;
        }
    }
    unsigned long long value = PyLong_AsUnsignedLongLong(handle);
    Py_DECREF(handle);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        symmem__ext_raise_invalid(st, "%s: stream handle is not a valid (unsigned) integer", call);
        return -1;
    }
    *stream_p = (symmem_stream_t)(uintptr_t)value;
    if (!PyLong_Check(obj)) {
        cache_entry_t entry = {NULL, (char *)(uintptr_t)value, 0, 0, {0}};
        symmem__ext_object_cache_store(&st->streams, obj, &entry);
    }
    return 0;
}

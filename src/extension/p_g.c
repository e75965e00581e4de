/* p and g: one element stored on or loaded from a PE, converted from and
 * to a Python number. Under the GIL rule they keep the GIL on the cpu
 * backend only; on the gpu backend they go to the device. */
#include "args.h"
#include "concepts.h"
#include "dtypes.h"
#include "elements.h"
#include "errors.h"
#include "resolve.h"

/* What p and g share: the PE, the stream, and the memory of the symmetric
 * side (arg; writable for p's dst), converted in this order. */
static int element_args(module_state_t *st, const char *call, const char *arg, int writable,
                        PyObject *obj, PyObject *pe_obj, PyObject *stream_obj, int *pe_p,
                        symmem_stream_t *stream_p, memory_t *mem)
{
    if (symmem__ext_as_pe(st, pe_obj, call, "pe", pe_p) < 0 ||
        symmem__ext_stream_resolve(st, stream_obj, call, stream_p) < 0)
        return -1;
    return symmem__ext_memory_resolve(st, obj, writable, call, arg, mem);
}

static PyObject *p_impl(module_state_t *st, const memory_t *dst, PyObject *value, int pe,
                        symmem_stream_t stream)
{
    unsigned char element[SYMMEM__EXT_ELEMENT_MAX];
    int dtype = symmem__ext_first_element_type(st, dst, "p", "dst");
    if (dtype < 0 || symmem__ext_element_pack(st, "p", "value", dtype, value, element) < 0)
        return NULL;
    size_t size = symmem_dtype_size(dtype);
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil(size),
                     status = symmem_put(dst->ptr, element, size, pe, stream));
    if (status != SYMMEM_OK) return symmem__ext_raise_status_as(st, status, "put", "p");
    Py_RETURN_NONE;
}

static PyObject *p(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dst", "value", "pe", "stream", NULL};
    static const symmem__ext_params_t params = {"p", names, 3, 4};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[4];
    int pe = 0;
    symmem_stream_t stream;
    memory_t dst;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        element_args(st, "p", "dst", 1, v[0], v[2], v[3], &pe, &stream, &dst) < 0)
        return NULL;
    PyObject *result = p_impl(st, &dst, v[1], pe, stream);
    symmem__ext_memory_release(&dst);
    return result;
}

static PyObject *g_impl(module_state_t *st, const memory_t *src, int pe, symmem_stream_t stream)
{
    unsigned char element[SYMMEM__EXT_ELEMENT_MAX];
    int dtype = symmem__ext_first_element_type(st, src, "g", "src");
    if (dtype < 0) return NULL;
    size_t size = symmem_dtype_size(dtype);
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil(size),
                     status = symmem_get(element, src->ptr, size, pe, stream));
    if (status != SYMMEM_OK) return symmem__ext_raise_status_as(st, status, "get", "g");
    return symmem__ext_element_unpack(dtype, element);
}

static PyObject *g(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"src", "pe", "stream", NULL};
    static const symmem__ext_params_t params = {"g", names, 2, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    int pe = 0;
    symmem_stream_t stream;
    memory_t src;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        element_args(st, "g", "src", 0, v[0], v[1], v[2], &pe, &stream, &src) < 0)
        return NULL;
    PyObject *result = g_impl(st, &src, pe, stream);
    symmem__ext_memory_release(&src);
    return result;
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("p", p,
        "p($module, dst, value, pe, stream=None)\n--\n\n"
        "Store value as the first element of PE pe's dst (symmetric), in dst's dtype."),
    SYMMEM__EXT_METHOD("g", g,
        "g($module, src, pe, stream=None)\n--\n\n"
        "The first element of PE pe's src (symmetric), as a Python number."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_p_g_exec(PyObject *module) { return PyModule_AddFunctions(module, methods); }

/* p and g: one element stored on or loaded from a PE, converted from and
 * to a Python number. Under the GIL rule they keep the GIL on the cpu
 * backend only; on the gpu backend they go to the device. */
#include "args.h"
#include "concepts.h"
#include "doc_parts.h"
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

PyDoc_STRVAR(p_doc, "p($module, dst, value, pe, stream=None)\n--\n\n"
                    "Store value as the first element of PE pe's copy of the symmetric dst.\n\n"
                    "The value is converted to dst's dtype first; PE pe is sure to see it\n"
                    "after this PE's quiet() or a barrier.\n\n"
                    "Args:\n"
                    "    dst: a symmetric array, tensor or slice of one (its dtype is the\n"
                    "        element's).\n"
                    "    value: a number that fits dst's dtype (an int for integer dtypes, a\n"
                    "        float for floating ones, any object for bool: its truth).\n"
                    "    pe: the PE to store on, in [0, n_pes()).\n" SYMMEM__DOC_STREAM
                    "\n" SYMMEM__DOC_INVALID(
                        "pe is outside [0, n_pes()); dst is empty, read-only,\n"
                        "        not of a dtype symmem knows, or not on the symmetric heap; value\n"
                        "        does not fit dst's dtype.") SYMMEM__DOC_RAISES_BACKEND
             "\nExample:\n"
             "    >>> x = symmem.array(1, dtype=\"float64\")\n"
             "    >>> symmem.p(x, 2.5, (symmem.my_pe() + 1) % symmem.n_pes())\n"
             "    >>> symmem.barrier_all()\n"
             "    >>> float(x[0])\n"
             "    2.5\n"
             "    >>> symmem.free_array(x)\n");

PyDoc_STRVAR(g_doc,
             "g($module, src, pe, stream=None)\n--\n\n"
             "Load the first element of PE pe's copy of the symmetric src.\n\n"
             "Args:\n"
             "    src: a symmetric array, tensor or slice of one.\n"
             "    pe: the PE to load from, in [0, n_pes()).\n" SYMMEM__DOC_STREAM "\nReturns:\n"
             "    The element as a Python bool, int or float (by src's dtype).\n"
             "\n" SYMMEM__DOC_INVALID("pe is outside [0, n_pes()); src is empty, not of a\n"
                                      "        dtype symmem knows, or not on the symmetric heap.")
                 SYMMEM__DOC_RAISES_BACKEND "\nExample:\n"
                                            "    >>> x = symmem.array(1, dtype=\"int32\")\n"
                                            "    >>> x[0] = 10 * symmem.my_pe()\n"
                                            "    >>> symmem.barrier_all()\n"
                                            "    >>> symmem.g(x, 0)  # PE 0's element\n"
                                            "    0\n"
                                            "    >>> symmem.barrier_all()\n"
                                            "    >>> symmem.free_array(x)\n");

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("p", p, p_doc),
    SYMMEM__EXT_METHOD("g", g, g_doc),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_p_g_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

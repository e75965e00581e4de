/* put and get (and their _nbi forms) in every call form, quiet and fence.
 * Under the GIL rule (extension.h) small copies on the cpu backend keep the
 * GIL; the rest release it. */
#include "args.h"
#include "concepts.h"
#include "errors.h"
#include "resolve.h"

typedef symmem_status_t (*copy_func_t)(void *, const void *, size_t, int, symmem_stream_t);

/* One of the four calls. dst is written (here, or in a peer's copy), so a
 * read-only dst is refused for all four. */
typedef struct {
    const char *call;
    copy_func_t copy;
} rma_kind_t;

static const rma_kind_t PUT = {"put", symmem_put}, GET = {"get", symmem_get},
                        PUT_NBI = {"put_nbi", symmem_put_nbi},
                        GET_NBI = {"get_nbi", symmem_get_nbi};

/* count < 0: as many bytes as both dst and src hold. */
static PyObject *rma_impl(module_state_t *st, const rma_kind_t *kind, const memory_t *dst,
                          const memory_t *src, long long count, int pe, symmem_stream_t stream)
{
    Py_ssize_t nbytes = dst->nbytes < src->nbytes ? dst->nbytes : src->nbytes;
    if (count >= 0) {
        if (count > dst->nbytes / (dst->itemsize ? dst->itemsize : 1) ||
            count * dst->itemsize > src->nbytes)
            return symmem__ext_raise_invalid(
                st, "%s: count=%lld elements of %zd bytes (%lld bytes) exceeds dst (%zd bytes) "
                    "or src (%zd bytes)", kind->call, count, dst->itemsize,
                count * dst->itemsize, dst->nbytes, src->nbytes);
        nbytes = (Py_ssize_t)count * dst->itemsize;
    }
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil((size_t)nbytes),
                     status = kind->copy(dst->ptr, src->ptr, (size_t)nbytes, pe, stream));
    return symmem__ext_done(st, status);
}

/* The forms: (dst, src, remote_pe, stream=None), NVSHMEM4Py's seeds'
 * (dst, src, count, pe, stream=None), and keywords count=, pe= (or
 * remote_pe=), stream=. The seeds' form is the one when there are 5
 * positional arguments, 4 with an integer 4th (an int, or any integer with
 * __index__, as NumPy's: a PE number, never a stream object), or 3 with pe=
 * (or remote_pe=). */
static int seeds_form(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs >= 5) return 1;
    if (nargs == 4)
        return PyLong_Check(args[3]) ||
               (PyIndex_Check(args[3]) && !PyObject_HasAttrString(args[3], "__cuda_stream__"));
    for (Py_ssize_t k = 0; nargs == 3 && kwnames && k < PyTuple_GET_SIZE(kwnames); k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        if (PyUnicode_CompareWithASCIIString(key, "pe") == 0 ||
            PyUnicode_CompareWithASCIIString(key, "remote_pe") == 0)
            return 1;
    }
    return 0;
}

static PyObject *rma_call(PyObject *module, const rma_kind_t *kind, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const pe_form[] = {"dst", "src", "remote_pe|pe", "stream", "count", NULL};
    static const char *const seeds[] = {"dst", "src", "count", "pe|remote_pe", "stream", NULL};
    module_state_t *st = symmem__ext_state(module);
    const char *call = kind->call;
    int seeded = seeds_form(args, nargs, kwnames);
    symmem__ext_params_t params = {call, seeded ? seeds : pe_form, 2, seeded ? 5 : 4};
    PyObject *v[5];
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0) return NULL;
    PyObject *pe_obj = seeded ? v[3] : v[2], *count_obj = seeded ? v[2] : v[4];
    PyObject *stream_obj = seeded ? v[4] : v[3];
    if (pe_obj == NULL)
        return symmem__ext_raise_invalid(st, "%s: remote_pe (or pe=) is required", call);
    int pe = 0;
    long long count = -1;
    symmem_stream_t stream;
    if (symmem__ext_as_pe(st, pe_obj, call, "remote_pe", &pe) < 0 ||
        symmem__ext_stream_resolve(st, stream_obj, call, &stream) < 0 ||
        (count_obj != Py_None && symmem__ext_as_long(st, count_obj, call, "count", &count) < 0))
        return NULL;
    if (count_obj != NULL && count_obj != Py_None && count < 0)
        return symmem__ext_raise_invalid(st, "%s: count=%lld must be >= 0", call, count);
    memory_t dst, src;
    if (symmem__ext_memory_resolve(st, v[0], 1, call, "dst", &dst) < 0) return NULL;
    PyObject *result = NULL;
    if (symmem__ext_memory_resolve(st, v[1], 0, call, "src", &src) == 0) {
        result = rma_impl(st, kind, &dst, &src, count, pe, stream);
        symmem__ext_memory_release(&src);
    }
    symmem__ext_memory_release(&dst);
    return result;
}

static PyObject *put(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return rma_call(m, &PUT, a, n, k);
}
static PyObject *get(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return rma_call(m, &GET, a, n, k);
}
static PyObject *put_nbi(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return rma_call(m, &PUT_NBI, a, n, k);
}
static PyObject *get_nbi(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return rma_call(m, &GET_NBI, a, n, k);
}

/* ---- completion ---- */

/* quiet's and fence's one argument, stream= (params names the call). */
static int stream_only(module_state_t *st, const symmem__ext_params_t *params,
                       PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                       symmem_stream_t *stream_p)
{
    PyObject *stream_obj;
    if (symmem__ext_parse(st, params, args, nargs, kwnames, &stream_obj) < 0) return -1;
    return symmem__ext_stream_resolve(st, stream_obj, params->call, stream_p);
}

static PyObject *quiet(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    static const char *const names[] = {"stream", NULL};
    static const symmem__ext_params_t params = {"quiet", names, 0, 1};
    module_state_t *st = symmem__ext_state(module);
    symmem_stream_t stream;
    if (stream_only(st, &params, args, nargs, kwnames, &stream) < 0) return NULL;
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil(0), status = symmem_quiet(stream));
    return symmem__ext_done(st, status);
}

/* stream= is accepted (NVSHMEM4Py passes it) and not needed: fence orders
 * this PE's puts whatever stream they were issued on. It must still be a
 * stream: anything else is refused as every call refuses it. */
static PyObject *fence(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    static const char *const names[] = {"stream", NULL};
    static const symmem__ext_params_t params = {"fence", names, 0, 1};
    module_state_t *st = symmem__ext_state(module);
    symmem_stream_t stream;
    if (stream_only(st, &params, args, nargs, kwnames, &stream) < 0) return NULL;
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil(0), status = symmem_fence());
    return symmem__ext_done(st, status);
}

#define RMA_DOC(name, what)                                                                     \
    name "($module, dst, src, remote_pe=None, stream=None, *, count=None, pe=None)\n--\n\n"     \
    what "\n\nForms: " name "(dst, src, remote_pe, stream=None), and NVSHMEM4Py's\n"           \
    name "(dst, src, count, pe, stream=None): with an int 4th positional argument (or\n"       \
    "3 positional and pe=), the third is count. count is in elements of dst; without\n"       \
    "it, as many bytes as dst and src both hold. pe= is remote_pe's other name."

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("put", put,
                       RMA_DOC("put", "Copy src (local) into PE remote_pe's dst (symmetric).")),
    SYMMEM__EXT_METHOD("get", get,
                       RMA_DOC("get", "Copy PE remote_pe's src (symmetric) into dst (local).")),
    SYMMEM__EXT_METHOD("put_nbi", put_nbi,
                       RMA_DOC("put_nbi", "Non-blocking put: complete it with quiet().")),
    SYMMEM__EXT_METHOD("get_nbi", get_nbi,
                       RMA_DOC("get_nbi", "Non-blocking get: complete it with quiet().")),
    SYMMEM__EXT_METHOD("quiet", quiet,
        "quiet($module, stream=None)\n--\n\nComplete this PE's puts and gets (on the stream)."),
    SYMMEM__EXT_METHOD("fence", fence,
        "fence($module, stream=None)\n--\n\n"
        "Order this PE's puts to each PE: those before land before those after."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_rma_exec(PyObject *module) { return PyModule_AddFunctions(module, methods); }

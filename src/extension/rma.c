/* put and get (and their _nbi forms) in every call form, quiet and fence.
 * Under the GIL rule (extension.h) small copies on the cpu backend keep the
 * GIL; the rest release it. */
#include "args.h"
#include "concepts.h"
#include "doc_parts.h"
#include "dtypes.h"
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

/* count elements of itemsize bytes, in decimal and exact: a count near
 * 2**63 makes more than 2**64 bytes, which no 64-bit product holds. */
static void bytes_text(char *out, size_t size, unsigned long long count, size_t itemsize)
{
    unsigned __int128 value = (unsigned __int128)count * itemsize;
    char digits[48];
    size_t n = 0, len = 0;
    do digits[n++] = (char)('0' + (int)(value % 10));
    while ((value /= 10) != 0);
    while (n > 0 && len + 1 < size) out[len++] = digits[--n];
    out[len] = '\0';
}

/* count < 0: as many bytes as both dst and src hold. */
static PyObject *rma_impl(module_state_t *st, const rma_kind_t *kind, const memory_t *dst,
                          const memory_t *src, long long count, int pe, symmem_stream_t stream)
{
    Py_ssize_t nbytes = dst->nbytes < src->nbytes ? dst->nbytes : src->nbytes;
    if (count >= 0) {
        /* the first test bounds count * itemsize by dst's size before the second */
        if (count > dst->nbytes / (dst->itemsize ? dst->itemsize : 1) ||
            count * dst->itemsize > src->nbytes) {
            char total[48];
            bytes_text(total, sizeof(total), (unsigned long long)count, (size_t)dst->itemsize);
            return symmem__ext_raise_invalid(
                st,
                "%s: count=%lld elements of %zd bytes (%s bytes) exceeds dst (%zd bytes) "
                "or src (%zd bytes)",
                kind->call, count, dst->itemsize, total, dst->nbytes, src->nbytes);
        }
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
        Py_ssize_t len = PyUnicode_GET_LENGTH(key); /* stream= is never compared */
        if ((len == 2 && PyUnicode_CompareWithASCIIString(key, "pe") == 0) ||
            (len == 9 && PyUnicode_CompareWithASCIIString(key, "remote_pe") == 0))
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
        if (symmem__ext_check_same_elements(st, &dst, &src, call) == 0 &&
            symmem__ext_check_same_order(st, &dst, &src, call) == 0)
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

static PyObject *quiet(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
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

/* stream=None: the puts issued so far; a stream: those queued on it, in the
 * stream's order (what each backend does there: symmem_fence_on_stream). */
static PyObject *fence(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"stream", NULL};
    static const symmem__ext_params_t params = {"fence", names, 0, 1};
    module_state_t *st = symmem__ext_state(module);
    symmem_stream_t stream;
    if (stream_only(st, &params, args, nargs, kwnames, &stream) < 0) return NULL;
    symmem_status_t status;
    SYMMEM__EXT_CALL(symmem__ext_keep_gil(0), status = symmem_fence_on_stream(stream));
    return symmem__ext_done(st, status);
}

/* ---- docstrings ---- */

/* The arguments put, get and their nbi forms share. */
#define RMA_ARGS(dst, src)                                                                         \
    "Args:\n" dst src                                                                              \
    "    remote_pe: the other PE, in [0, n_pes()); pe= is its other name.\n" SYMMEM__DOC_STREAM    \
    "    count: how many elements of dst's dtype to copy (bytes for a Buffer);\n"                  \
    "        default: as many bytes as dst and src both hold.\n"                                   \
    "    pe: NVSHMEM4Py's name for remote_pe.\n"

#define RMA_FORMS(name)                                                                            \
    "Two call forms: " name "(dst, src, remote_pe, stream=None), and NVSHMEM4Py's\n" name          \
    "(dst, src, count, pe, stream=None), taken when the 4th positional\n"                          \
    "argument is an int (or there are 3 positional arguments and pe=).\n\n"

#define RMA_SIGNATURE(name)                                                                        \
    name "($module, dst, src, remote_pe=None, stream=None, *, count=None, pe=None)\n--\n\n"

#define PUT_ARGS                                                                                   \
    RMA_ARGS("    dst: symmetric memory (a Buffer, or an array or tensor that symmem made,\n"      \
             "        or a contiguous slice of one): PE remote_pe's copy is written.\n",           \
             "    src: local memory to read: any contiguous array, tensor, Buffer or\n"            \
             "        object with the buffer protocol.\n")

#define GET_ARGS                                                                                   \
    RMA_ARGS("    dst: local memory to write: any writable contiguous array, tensor,\n"            \
             "        Buffer or object with the buffer protocol.\n",                               \
             "    src: symmetric memory (a Buffer, or an array or tensor that symmem made,\n"      \
             "        or a contiguous slice of one): PE remote_pe's copy is read.\n")

#define RMA_RAISES(symmetric)                                                                      \
    SYMMEM__DOC_INVALID("remote_pe is missing or outside [0, n_pes()); dst or\n"                   \
                        "        src is not contiguous memory, or dst is read-only; " symmetric    \
                        " is not\n"                                                                \
                        "        on the symmetric heap (or was freed); dst and src are typed\n"    \
                        "        arrays of different dtypes (use src.view(dst's dtype) to copy\n"  \
                        "        the bytes), or one is in C order and the other in Fortran\n"      \
                        "        order; count is negative or larger than dst or src.")             \
    SYMMEM__DOC_RAISES_BACKEND

PyDoc_STRVAR(
    put_doc,
    RMA_SIGNATURE("put") "Copy local src into PE remote_pe's copy of the symmetric "
                         "dst.\n\n" RMA_FORMS(
                             "put") "When it returns, src may be reused; PE remote_pe is sure to "
                                    "see the data\n"
                                    "after this PE's quiet() or a barrier.\n\n" PUT_ARGS
                                    "\n" RMA_RAISES(
                                        "dst") "\n"
                                               "Example:\n"
                                               "    >>> me, n = symmem.my_pe(), symmem.n_pes()\n"
                                               "    >>> dst = symmem.array(4, dtype=\"int32\")\n"
                                               "    >>> symmem.put(dst, np.full(4, me, "
                                               "dtype=np.int32), (me + 1) % n)\n"
                                               "    >>> symmem.barrier_all()  # every put has "
                                               "landed\n"
                                               "    >>> bool((dst == (me - 1) % n).all())  # the "
                                               "previous PE's number\n"
                                               "    True\n"
                                               "    >>> symmem.put(dst, np.zeros(4, "
                                               "dtype=np.int32), 2, me)  # count 2, PE me\n"
                                               "    >>> dst.tolist()[:2]\n"
                                               "    [0, 0]\n"
                                               "    >>> symmem.free_array(dst)\n");

PyDoc_STRVAR(
    get_doc,
    RMA_SIGNATURE("get") "Copy PE remote_pe's copy of the symmetric src into local "
                         "dst.\n\n" RMA_FORMS(
                             "get") "When it returns, dst holds the data.\n\n" GET_ARGS
                                    "\n" RMA_RAISES(
                                        "src") "\n"
                                               "Example:\n"
                                               "    >>> me, n = symmem.my_pe(), symmem.n_pes()\n"
                                               "    >>> src = symmem.array(4, dtype=\"int32\")\n"
                                               "    >>> src[:] = me\n"
                                               "    >>> symmem.barrier_all()  # every PE has "
                                               "filled its src\n"
                                               "    >>> out = np.empty(4, dtype=np.int32)\n"
                                               "    >>> symmem.get(out, src, (me + 1) % n)\n"
                                               "    >>> bool((out == (me + 1) % n).all())\n"
                                               "    True\n"
                                               "    >>> symmem.barrier_all()  # no PE frees src "
                                               "while another reads it\n"
                                               "    >>> symmem.free_array(src)\n");

PyDoc_STRVAR(put_nbi_doc,
             RMA_SIGNATURE(
                 "put_nbi") "Start copying local src into PE remote_pe's copy of dst; quiet() "
                            "ends it.\n\n" RMA_FORMS(
                                "put_nbi") "src must not change until this PE's next quiet(), "
                                           "after which the data\n"
                                           "is in PE remote_pe's dst.\n\n" PUT_ARGS "\n" RMA_RAISES(
                                               "dst") "\n"
                                                      "Example:\n"
                                                      "    >>> me, n = symmem.my_pe(), "
                                                      "symmem.n_pes()\n"
                                                      "    >>> dst = symmem.array(8, "
                                                      "dtype=\"float32\")\n"
                                                      "    >>> src = np.arange(8, "
                                                      "dtype=np.float32)\n"
                                                      "    >>> symmem.put_nbi(dst[:4], src[:4], "
                                                      "(me + 1) % n)\n"
                                                      "    >>> symmem.put_nbi(dst[4:], src[4:], "
                                                      "(me + 1) % n)\n"
                                                      "    >>> symmem.quiet()  # both copies are "
                                                      "complete\n"
                                                      "    >>> symmem.barrier_all()\n"
                                                      "    >>> dst.tolist() == src.tolist()\n"
                                                      "    True\n"
                                                      "    >>> symmem.free_array(dst)\n");

PyDoc_STRVAR(
    get_nbi_doc,
    RMA_SIGNATURE("get_nbi") "Start copying PE remote_pe's copy of src into local dst; quiet() "
                             "ends it.\n\n" RMA_FORMS(
                                 "get_nbi") "dst holds the data after this PE's next "
                                            "quiet().\n\n" GET_ARGS "\n" RMA_RAISES(
                                                "src") "\n"
                                                       "Example:\n"
                                                       "    >>> src = symmem.array(4, "
                                                       "dtype=\"int64\")\n"
                                                       "    >>> src[:] = symmem.my_pe()\n"
                                                       "    >>> symmem.barrier_all()\n"
                                                       "    >>> out = np.empty(4, dtype=np.int64)\n"
                                                       "    >>> symmem.get_nbi(out, src, 0)  # PE "
                                                       "0's copy\n"
                                                       "    >>> symmem.quiet()  # out is ready\n"
                                                       "    >>> out.tolist()\n"
                                                       "    [0, 0, 0, 0]\n"
                                                       "    >>> symmem.barrier_all()\n"
                                                       "    >>> symmem.free_array(src)\n");

PyDoc_STRVAR(quiet_doc,
             "quiet($module, stream=None)\n--\n\n"
             "Complete every put, get, put_signal and atomic this PE has issued.\n\n"
             "After it, the data of this PE's puts is in the other PEs' memory and\n"
             "its gets' destinations hold theirs. flush() is the same call\n"
             "(NVSHMEM's name).\n\n"
             "Args:\n" SYMMEM__DOC_STREAM
             "\n" SYMMEM__DOC_INVALID("stream is not None or a stream.") SYMMEM__DOC_RAISES_BACKEND
             "\nExample:\n"
             "    >>> dst = symmem.array(2, dtype=\"int32\")\n"
             "    >>> symmem.put_nbi(dst, np.array([1, 2], dtype=np.int32), 0)\n"
             "    >>> symmem.quiet()  # the put is in PE 0's dst now\n"
             "    >>> symmem.barrier_all()\n"
             "    >>> symmem.free_array(dst)\n");

PyDoc_STRVAR(
    fence_doc,
    "fence($module, stream=None)\n--\n\n"
    "Order this PE's puts: to each PE, those before land before those after.\n\n"
    "Unlike quiet(), it does not wait for them to complete.\n\n"
    "Args:\n"
    "    stream: None (the default): the fence acts when called, on the puts\n"
    "        issued so far. A stream: it acts where the stream reaches it, on\n"
    "        the puts queued on that stream before it; there it is\n"
    "        quiet(stream=stream), which completes them (no library has a\n"
    "        fence on a stream), so it costs what a quiet costs.\n"
    "\n" SYMMEM__DOC_INVALID("stream is not None or a stream.") SYMMEM__DOC_RAISES_BACKEND
    "\nExample:\n"
    "    >>> data, flag = symmem.array(4, dtype=\"int32\"), symmem.array(1, dtype=\"int32\")\n"
    "    >>> flag[0] = 0\n"
    "    >>> symmem.barrier_all()  # every flag is 0 before any PE sets one\n"
    "    >>> peer = (symmem.my_pe() + 1) % symmem.n_pes()\n"
    "    >>> symmem.put(data, np.arange(4, dtype=np.int32), peer)\n"
    "    >>> symmem.fence()  # the data lands before the flag\n"
    "    >>> symmem.p(flag, 1, peer)\n"
    "    >>> symmem.wait_until(flag, symmem.ComparisonType.CMP_EQ, 1)\n"
    "    >>> data.tolist()\n"
    "    [0, 1, 2, 3]\n"
    "    >>> symmem.barrier_all()\n"
    "    >>> symmem.free_array(data); symmem.free_array(flag)\n");

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("put", put, put_doc),
    SYMMEM__EXT_METHOD("get", get, get_doc),
    SYMMEM__EXT_METHOD("put_nbi", put_nbi, put_nbi_doc),
    SYMMEM__EXT_METHOD("get_nbi", get_nbi, get_nbi_doc),
    SYMMEM__EXT_METHOD("quiet", quiet, quiet_doc),
    SYMMEM__EXT_METHOD("fence", fence, fence_doc),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_rma_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

/* put/get and their forms, p/g, signals, waits and barriers from Python.
 * Parsing is METH_FASTCALL | METH_KEYWORDS; the GIL is released around
 * anything that may wait or copy many bytes. */
#include <string.h>

#include "symmem_python.h"
#include "../core/bfloat16.h"
#include "../core/checks.h"

/* Copies at least this large run without the GIL. */
#define RELEASE_GIL_BYTES (64 * 1024)

#define ST(module) module_state(module)

/* An int argument; names the call and argument when it is not one. */
static int as_long(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                   long long *value_p)
{
    if (!PyLong_Check(obj) && !PyIndex_Check(obj)) {
        raise_invalid(st, "%s: %s must be an int, got %s", call, arg, Py_TYPE(obj)->tp_name);
        return -1;
    }
    long long value = PyLong_AsLongLong(obj);
    if (value == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        raise_invalid(st, "%s: %s is out of range", call, arg);
        return -1;
    }
    *value_p = value;
    return 0;
}

static int as_pe(module_state_t *st, PyObject *obj, const char *call, const char *arg, int *pe)
{
    long long value;
    if (as_long(st, obj, call, arg, &value) < 0) return -1;
    if (value < 0 || value >= symmem_n_pes()) {
        if (!symmem_initialized()) {
            raise_status(st, symmem__check_initialized(call));
            return -1;
        }
        raise_invalid(st, "%s: %s=%lld is outside [0, %d)", call, arg, value, symmem_n_pes());
        return -1;
    }
    *pe = (int)value;
    return 0;
}

/* ---- put / get ---- */

typedef symmem_status_t (*copy_func_t)(void *, const void *, size_t, int, symmem_stream_t);

/* The three call forms: (dst, src, remote_pe, stream), the seeds'
 * (dst, src, count, pe, stream), and keywords count=, pe=/remote_pe=, stream=. */
static PyObject *rma_call(PyObject *module, const char *call, int is_put, copy_func_t copy,
                          PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dst", "src", "a", "b", "c", "count", "pe", "remote_pe",
                                        "stream"};
    module_state_t *st = ST(module);
    PyObject *v[9];
    if (parse_args(st, call, names, 9, 2, args, nargs, kwnames, v) < 0) return NULL;
    if (v[2] && (PyUnicode_Check(v[2]))) return raise_invalid(st, "%s: bad argument", call);
    PyObject *count = v[5], *pe_obj = v[6] ? v[6] : v[7], *stream_obj = v[8];
    if (v[6] && v[7]) return raise_invalid(st, "%s: give pe= or remote_pe=, not both", call);
    /* Positional extras after (dst, src). */
    int nextra = (int)(nargs > 2 ? nargs - 2 : 0);
    if (nextra == 1) {
        pe_obj = pe_obj ? pe_obj : v[2];
    } else if (nextra == 2 && PyLong_Check(v[3])) {
        count = v[2];
        pe_obj = v[3];
    } else if (nextra == 2) {
        pe_obj = v[2];
        stream_obj = v[3];
    } else if (nextra == 3) {
        count = v[2];
        pe_obj = v[3];
        stream_obj = v[4];
    }
    if (pe_obj == NULL) return raise_invalid(st, "%s: remote_pe (or pe=) is required", call);
    int pe;
    symmem_stream_t stream;
    if (as_pe(st, pe_obj, call, "remote_pe", &pe) < 0) return NULL;
    if (stream_resolve(st, stream_obj, call, &stream) < 0) return NULL;

    memory_t dst, src;
    if (memory_resolve(st, v[0], !is_put, call, "dst", &dst) < 0) return NULL;
    if (memory_resolve(st, v[1], 0, call, "src", &src) < 0) {
        memory_release(&dst);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t nbytes = dst.nbytes < src.nbytes ? dst.nbytes : src.nbytes;
    if (count != NULL && count != Py_None) {
        long long n;
        if (as_long(st, count, call, "count", &n) < 0) goto out;
        if (n < 0) {
            raise_invalid(st, "%s: count=%lld must be >= 0", call, n);
            goto out;
        }
        if (n > (dst.nbytes / (dst.itemsize ? dst.itemsize : 1)) ||
            n * dst.itemsize > src.nbytes) {
            raise_invalid(st,
                          "%s: count=%lld elements of %zd bytes (%lld bytes) exceeds dst "
                          "(%zd bytes) or src (%zd bytes)",
                          call, n, dst.itemsize, n * dst.itemsize, dst.nbytes, src.nbytes);
            goto out;
        }
        nbytes = (Py_ssize_t)n * dst.itemsize;
    }
    symmem_status_t status;
    if (nbytes >= RELEASE_GIL_BYTES) {
        Py_BEGIN_ALLOW_THREADS
        status = copy(dst.ptr, src.ptr, (size_t)nbytes, pe, stream);
        Py_END_ALLOW_THREADS
    } else {
        status = copy(dst.ptr, src.ptr, (size_t)nbytes, pe, stream);
    }
    if (status != SYMMEM_OK) raise_status(st, status);
    else result = Py_NewRef(Py_None);
out:
    memory_release(&src);
    memory_release(&dst);
    return result;
}

static PyObject *py_put(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return rma_call(m, "put", 1, symmem_put, a, n, k);
}
static PyObject *py_get(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return rma_call(m, "get", 0, symmem_get, a, n, k);
}
static PyObject *py_put_nbi(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return rma_call(m, "put_nbi", 1, symmem_put_nbi, a, n, k);
}
static PyObject *py_get_nbi(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return rma_call(m, "get_nbi", 0, symmem_get_nbi, a, n, k);
}

/* ---- one element: p / g ---- */

/* Packs value as one element of dtype into out. */
static int pack_element(module_state_t *st, const char *call, int dtype, PyObject *value,
                        unsigned char *out)
{
    if (dtype >= SYMMEM_DTYPE_FLOAT16) {
        double d = PyFloat_AsDouble(value);
        if (d == -1.0 && PyErr_Occurred()) goto bad;
        if (dtype == SYMMEM_DTYPE_FLOAT32) { float f = (float)d; memcpy(out, &f, 4); }
        else if (dtype == SYMMEM_DTYPE_FLOAT64) memcpy(out, &d, 8);
        else if (dtype == SYMMEM_DTYPE_FLOAT16) { if (PyFloat_Pack2(d, (char *)out, 1) < 0) goto bad; }
        else {
            uint16_t half = symmem__float_to_bf16((float)d);
            memcpy(out, &half, 2);
        }
        return 0;
    }
    if (dtype == SYMMEM_DTYPE_BOOL) {
        int truth = PyObject_IsTrue(value);
        if (truth < 0) goto bad;
        out[0] = (unsigned char)truth;
        return 0;
    }
    size_t size = symmem_dtype_size(dtype);
    int is_signed = dtype <= SYMMEM_DTYPE_INT64;
    if (!PyLong_Check(value) && !PyIndex_Check(value)) goto bad;
    if (is_signed) {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) goto bad;
        long long lo = size == 8 ? INT64_MIN : -(1LL << (8 * size - 1));
        long long hi = size == 8 ? INT64_MAX : (1LL << (8 * size - 1)) - 1;
        if (v < lo || v > hi) goto range;
        memcpy(out, &v, size); /* little-endian: the low bytes come first */
    } else {
        unsigned long long v = PyLong_AsUnsignedLongLong(value);
        if (PyErr_Occurred()) goto range;
        if (size < 8 && v >> (8 * size)) goto range;
        memcpy(out, &v, size);
    }
    return 0;
range:
    PyErr_Clear();
    raise_invalid(st, "%s: value does not fit in %s", call, symmem_dtype_name(dtype));
    return -1;
bad:
    PyErr_Clear();
    raise_invalid(st, "%s: value of type %s cannot be stored as %s", call,
                  Py_TYPE(value)->tp_name, symmem_dtype_name(dtype));
    return -1;
}

static PyObject *unpack_element(int dtype, const unsigned char *in)
{
    switch (dtype) {
    case SYMMEM_DTYPE_BOOL: return PyBool_FromLong(in[0]);
    case SYMMEM_DTYPE_INT8: return PyLong_FromLong(*(const int8_t *)in);
    case SYMMEM_DTYPE_INT16: { int16_t v; memcpy(&v, in, 2); return PyLong_FromLong(v); }
    case SYMMEM_DTYPE_INT32: { int32_t v; memcpy(&v, in, 4); return PyLong_FromLong(v); }
    case SYMMEM_DTYPE_INT64: { int64_t v; memcpy(&v, in, 8); return PyLong_FromLongLong(v); }
    case SYMMEM_DTYPE_UINT8: return PyLong_FromLong(in[0]);
    case SYMMEM_DTYPE_UINT16: { uint16_t v; memcpy(&v, in, 2); return PyLong_FromLong(v); }
    case SYMMEM_DTYPE_UINT32: { uint32_t v; memcpy(&v, in, 4); return PyLong_FromUnsignedLong(v); }
    case SYMMEM_DTYPE_UINT64: { uint64_t v; memcpy(&v, in, 8); return PyLong_FromUnsignedLongLong(v); }
    case SYMMEM_DTYPE_FLOAT16: return PyFloat_FromDouble(PyFloat_Unpack2((const char *)in, 1));
    case SYMMEM_DTYPE_BFLOAT16: {
        uint16_t half; memcpy(&half, in, 2);
        return PyFloat_FromDouble(symmem__bf16_to_float(half));
    }
    case SYMMEM_DTYPE_FLOAT32: { float v; memcpy(&v, in, 4); return PyFloat_FromDouble(v); }
    default: { double v; memcpy(&v, in, 8); return PyFloat_FromDouble(v); }
    }
}

static int element_dtype(module_state_t *st, const memory_t *mem, const char *call,
                         const char *arg)
{
    int dtype = memory_dtype(mem);
    if (dtype < 0)
        raise_invalid(st, "%s: %s has element format '%s', which is not a dtype symmem knows",
                      call, arg, mem->format);
    else if (mem->nbytes < (Py_ssize_t)symmem_dtype_size(dtype))
        raise_invalid(st, "%s: %s is empty", call, arg);
    else
        return dtype;
    return -1;
}

static PyObject *py_p(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"dst", "value", "pe", "stream"};
    module_state_t *st = ST(module);
    PyObject *v[4];
    int pe;
    symmem_stream_t stream;
    if (parse_args(st, "p", names, 4, 3, args, nargs, kw, v) < 0 ||
        as_pe(st, v[2], "p", "pe", &pe) < 0 || stream_resolve(st, v[3], "p", &stream) < 0)
        return NULL;
    memory_t dst;
    if (memory_resolve(st, v[0], 0, "p", "dst", &dst) < 0) return NULL;
    PyObject *result = NULL;
    unsigned char element[16];
    int dtype = element_dtype(st, &dst, "p", "dst");
    if (dtype >= 0 && pack_element(st, "p", dtype, v[1], element) == 0) {
        symmem_status_t status = symmem_put(dst.ptr, element, symmem_dtype_size(dtype), pe, stream);
        result = status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status_as(st, status, "put", "p");
    }
    memory_release(&dst);
    return result;
}

static PyObject *py_g(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"src", "pe", "stream"};
    module_state_t *st = ST(module);
    PyObject *v[3];
    int pe;
    symmem_stream_t stream;
    if (parse_args(st, "g", names, 3, 2, args, nargs, kw, v) < 0 ||
        as_pe(st, v[1], "g", "pe", &pe) < 0 || stream_resolve(st, v[2], "g", &stream) < 0)
        return NULL;
    memory_t src;
    if (memory_resolve(st, v[0], 0, "g", "src", &src) < 0) return NULL;
    PyObject *result = NULL;
    unsigned char element[16];
    int dtype = element_dtype(st, &src, "g", "src");
    if (dtype >= 0) {
        symmem_status_t status = symmem_get(element, src.ptr, symmem_dtype_size(dtype), pe, stream);
        result = status == SYMMEM_OK ? unpack_element(dtype, element)
                                     : raise_status_as(st, status, "get", "g");
    }
    memory_release(&src);
    return result;
}

/* ---- completion ---- */

static PyObject *py_quiet(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"stream"};
    module_state_t *st = ST(module);
    PyObject *v[1];
    symmem_stream_t stream;
    if (parse_args(st, "quiet", names, 1, 0, args, nargs, kw, v) < 0 ||
        stream_resolve(st, v[0], "quiet", &stream) < 0)
        return NULL;
    symmem_status_t status = symmem_quiet(stream);
    return status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status(st, status);
}

static PyObject *py_fence(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"stream"};
    module_state_t *st = ST(module);
    PyObject *v[1];
    if (parse_args(st, "fence", names, 1, 0, args, nargs, kw, v) < 0) return NULL;
    symmem_status_t status = symmem_fence();
    return status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status(st, status);
}

/* ---- signals ---- */

/* A signal word: a symmetric uint64 array (its first element) or a Buffer. */
static int resolve_signal(module_state_t *st, PyObject *obj, const char *call, memory_t *mem)
{
    if (memory_resolve(st, obj, 0, call, "signal_var", mem) < 0) return -1;
    int dtype = memory_dtype(mem);
    int raw_bytes = Py_IS_TYPE(obj, st->buffer_type);
    if (!raw_bytes && dtype != SYMMEM_DTYPE_UINT64) {
        raise_invalid(st, "%s: signal_var has element format '%s' (%s); signals are uint64",
                      call, mem->format, dtype >= 0 ? symmem_dtype_name(dtype) : "unknown");
        memory_release(mem);
        return -1;
    }
    if (mem->nbytes < 8) {
        raise_invalid(st, "%s: signal_var has %zd bytes; a signal needs 8", call, mem->nbytes);
        memory_release(mem);
        return -1;
    }
    return 0;
}

static int as_signal_op(module_state_t *st, PyObject *obj, const char *call, int *op)
{
    long long value;
    if (as_long(st, obj, call, "signal_op", &value) < 0) return -1;
    if (value != SYMMEM_SIGNAL_SET && value != SYMMEM_SIGNAL_ADD) {
        raise_invalid(st, "%s: signal_op=%lld is not SignalOp.SIGNAL_SET (9) or SIGNAL_ADD (10)",
                      call, value);
        return -1;
    }
    *op = (int)value;
    return 0;
}

static int as_u64(module_state_t *st, PyObject *obj, const char *call, const char *arg,
                  uint64_t *out)
{
    if (!PyLong_Check(obj) && !PyIndex_Check(obj)) {
        raise_invalid(st, "%s: %s must be an int, got %s", call, arg, Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *number = PyNumber_Index(obj);
    if (number == NULL) return -1;
    unsigned long long value = PyLong_AsUnsignedLongLong(number);
    if (PyErr_Occurred()) {
        /* Negative values wrap as in C (SIGNAL_ADD of -1 subtracts 1). */
        PyErr_Clear();
        long long sv = PyLong_AsLongLong(number);
        if (PyErr_Occurred()) {
            Py_DECREF(number);
            PyErr_Clear();
            raise_invalid(st, "%s: %s does not fit in 64 bits", call, arg);
            return -1;
        }
        value = (unsigned long long)sv;
    }
    Py_DECREF(number);
    *out = value;
    return 0;
}

static PyObject *put_signal_call(PyObject *module, const char *call, int nbi,
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"dst", "src", "signal_var", "signal_val", "signal_op",
                                        "remote_pe", "stream"};
    module_state_t *st = ST(module);
    PyObject *v[7];
    int pe, op;
    uint64_t value;
    symmem_stream_t stream;
    if (parse_args(st, call, names, 7, 6, args, nargs, kw, v) < 0 ||
        as_pe(st, v[5], call, "remote_pe", &pe) < 0 || as_u64(st, v[3], call, "signal_val", &value) < 0 ||
        as_signal_op(st, v[4], call, &op) < 0 || stream_resolve(st, v[6], call, &stream) < 0)
        return NULL;
    memory_t dst, src, sig;
    if (memory_resolve(st, v[0], 0, call, "dst", &dst) < 0) return NULL;
    if (memory_resolve(st, v[1], 0, call, "src", &src) < 0) {
        memory_release(&dst);
        return NULL;
    }
    PyObject *result = NULL;
    if (resolve_signal(st, v[2], call, &sig) == 0) {
        size_t nbytes = (size_t)(dst.nbytes < src.nbytes ? dst.nbytes : src.nbytes);
        symmem_status_t status;
        Py_BEGIN_ALLOW_THREADS
        status = (nbi ? symmem_put_signal_nbi : symmem_put_signal)(
            dst.ptr, src.ptr, nbytes, (uint64_t *)sig.ptr, value, (symmem_signal_op_t)op, pe,
            stream);
        Py_END_ALLOW_THREADS
        result = status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status(st, status);
        memory_release(&sig);
    }
    memory_release(&src);
    memory_release(&dst);
    return result;
}

static PyObject *py_put_signal(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return put_signal_call(m, "put_signal", 0, a, n, k);
}
static PyObject *py_put_signal_nbi(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return put_signal_call(m, "put_signal_nbi", 1, a, n, k);
}

static PyObject *py_signal_op(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kw)
{
    static const char *const names[] = {"signal_var", "signal_val", "signal_op", "remote_pe",
                                        "stream"};
    module_state_t *st = ST(module);
    PyObject *v[5];
    int pe, op;
    uint64_t value;
    symmem_stream_t stream;
    if (parse_args(st, "signal_op", names, 5, 4, args, nargs, kw, v) < 0 ||
        as_pe(st, v[3], "signal_op", "remote_pe", &pe) < 0 ||
        as_u64(st, v[1], "signal_op", "signal_val", &value) < 0 ||
        as_signal_op(st, v[2], "signal_op", &op) < 0 ||
        stream_resolve(st, v[4], "signal_op", &stream) < 0)
        return NULL;
    memory_t sig;
    if (resolve_signal(st, v[0], "signal_op", &sig) < 0) return NULL;
    symmem_status_t status =
        symmem_signal_op((uint64_t *)sig.ptr, value, (symmem_signal_op_t)op, pe, stream);
    memory_release(&sig);
    return status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status(st, status);
}

static int as_cmp(module_state_t *st, PyObject *obj, const char *call, int *cmp)
{
    long long value;
    if (obj == NULL) {
        raise_invalid(st, "%s: the comparison (cmp=) is required", call);
        return -1;
    }
    if (as_long(st, obj, call, "cmp", &value) < 0) return -1;
    if (value < SYMMEM_CMP_EQ || value > SYMMEM_CMP_GE) {
        raise_invalid(st, "%s: cmp=%lld is not a ComparisonType (CMP_EQ=0 .. CMP_GE=5)", call,
                      value);
        return -1;
    }
    *cmp = (int)value;
    return 0;
}

/* signal_wait(signal_var, signal_val, signal_op, stream=None): NVSHMEM4Py's
 * order, value before comparison; cmp= is accepted for signal_op. */
static PyObject *py_signal_wait(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kw)
{
    static const char *const names[] = {"signal_var", "signal_val", "signal_op", "stream", "cmp"};
    module_state_t *st = ST(module);
    PyObject *v[5];
    int cmp;
    uint64_t value;
    symmem_stream_t stream;
    if (parse_args(st, "signal_wait", names, 5, 2, args, nargs, kw, v) < 0) return NULL;
    if (v[2] && v[4]) return raise_invalid(st, "signal_wait: give signal_op= or cmp=, not both");
    if (as_u64(st, v[1], "signal_wait", "signal_val", &value) < 0 ||
        as_cmp(st, v[2] ? v[2] : v[4], "signal_wait", &cmp) < 0 ||
        stream_resolve(st, v[3], "signal_wait", &stream) < 0)
        return NULL;
    memory_t sig;
    if (resolve_signal(st, v[0], "signal_wait", &sig) < 0) return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = symmem_signal_wait_until((uint64_t *)sig.ptr, (symmem_cmp_t)cmp, value, stream, NULL);
    Py_END_ALLOW_THREADS
    memory_release(&sig);
    return status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status(st, status);
}

static PyObject *py_signal_fetch(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kw)
{
    static const char *const names[] = {"signal_var", "stream"};
    module_state_t *st = ST(module);
    PyObject *v[2];
    if (parse_args(st, "signal_fetch", names, 2, 1, args, nargs, kw, v) < 0) return NULL;
    memory_t sig;
    if (resolve_signal(st, v[0], "signal_fetch", &sig) < 0) return NULL;
    uint64_t value = 0;
    symmem_status_t status = symmem_signal_fetch((uint64_t *)sig.ptr, &value);
    memory_release(&sig);
    return status == SYMMEM_OK ? PyLong_FromUnsignedLongLong(value) : raise_status(st, status);
}

/* ---- point synchronisation ---- */

static PyObject *wait_call(PyObject *module, const char *call, int test, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"ivar", "cmp", "value"};
    module_state_t *st = ST(module);
    PyObject *v[3];
    int cmp;
    long long value;
    if (parse_args(st, call, names, 3, 3, args, nargs, kw, v) < 0 ||
        as_cmp(st, v[1], call, &cmp) < 0)
        return NULL;
    if (as_long(st, v[2], call, "value", &value) < 0) {
        uint64_t big; /* uint64 values above INT64_MAX */
        PyErr_Clear();
        if (as_u64(st, v[2], call, "value", &big) < 0) return NULL;
        value = (long long)big;
    }
    memory_t ivar;
    if (memory_resolve(st, v[0], 0, call, "ivar", &ivar) < 0) return NULL;
    int dtype = element_dtype(st, &ivar, call, "ivar");
    PyObject *result = NULL;
    if (dtype >= 0) {
        symmem_status_t status;
        int holds = 0;
        if (test) {
            status = symmem_test(ivar.ptr, (symmem_dtype_t)dtype, (symmem_cmp_t)cmp, value, &holds);
        } else {
            Py_BEGIN_ALLOW_THREADS
            status = symmem_wait_until(ivar.ptr, (symmem_dtype_t)dtype, (symmem_cmp_t)cmp, value);
            Py_END_ALLOW_THREADS
        }
        if (status != SYMMEM_OK) result = raise_status(st, status);
        else result = test ? PyBool_FromLong(holds) : Py_NewRef(Py_None);
    }
    memory_release(&ivar);
    return result;
}

static PyObject *py_wait_until(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return wait_call(m, "wait_until", 0, a, n, k);
}
static PyObject *py_test(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return wait_call(m, "test", 1, a, n, k);
}

/* ---- barriers ---- */

static PyObject *barrier_call(PyObject *module, const char *call,
                              symmem_status_t (*func)(symmem_stream_t), PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kw)
{
    static const char *const names[] = {"stream"};
    module_state_t *st = ST(module);
    PyObject *v[1];
    symmem_stream_t stream;
    if (parse_args(st, call, names, 1, 0, args, nargs, kw, v) < 0 ||
        stream_resolve(st, v[0], call, &stream) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = func(stream);
    Py_END_ALLOW_THREADS
    return status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status(st, status);
}

/* barrier(team, stream=None) / sync(team, stream=None): the core checks the
 * team (that it exists and this PE is a member). */
static PyObject *team_call(PyObject *module, const char *call,
                           symmem_status_t (*func)(symmem_team_t, symmem_stream_t),
                           PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"team", "stream"};
    module_state_t *st = ST(module);
    PyObject *v[2];
    int team;
    symmem_stream_t stream;
    if (parse_args(st, call, names, 2, 1, args, nargs, kwnames, v) < 0 ||
        team_arg(st, v[0], call, &team) < 0 || stream_resolve(st, v[1], call, &stream) < 0)
        return NULL;
    symmem_status_t status;
    Py_BEGIN_ALLOW_THREADS
    status = func((symmem_team_t)team, stream);
    Py_END_ALLOW_THREADS
    return status == SYMMEM_OK ? Py_NewRef(Py_None) : raise_status(st, status);
}

static PyObject *py_barrier(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return team_call(m, "barrier", symmem_team_barrier, a, n, k);
}
static PyObject *py_sync(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return team_call(m, "sync", symmem_team_sync, a, n, k);
}

static PyObject *py_barrier_all(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return barrier_call(m, "barrier_all", symmem_barrier_all, a, n, k);
}
static PyObject *py_sync_all(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)
{
    return barrier_call(m, "sync_all", symmem_sync_all, a, n, k);
}

#define FASTCALL(name, func, doc) \
    {name, (PyCFunction)(void (*)(void))func, METH_FASTCALL | METH_KEYWORDS, doc}

PyMethodDef rma_methods[] = {
    FASTCALL("put", py_put, "put(dst, src, remote_pe, stream=None) or put(dst, src, count, pe, stream=None)"),
    FASTCALL("get", py_get, "get(dst, src, remote_pe, stream=None) or get(dst, src, count, pe, stream=None)"),
    FASTCALL("put_nbi", py_put_nbi, "Non-blocking put; complete with quiet()."),
    FASTCALL("get_nbi", py_get_nbi, "Non-blocking get; complete with quiet()."),
    FASTCALL("p", py_p, "p(dst, value, pe): store one element on PE pe."),
    FASTCALL("g", py_g, "g(src, pe) -> the first element of src on PE pe."),
    FASTCALL("quiet", py_quiet, "quiet(stream=None): complete this PE's puts and gets."),
    FASTCALL("fence", py_fence, "fence(): order puts to each PE."),
    FASTCALL("put_signal", py_put_signal,
             "put_signal(dst, src, signal_var, signal_val, signal_op, remote_pe, stream=None)"),
    FASTCALL("put_signal_nbi", py_put_signal_nbi, "Non-blocking put_signal."),
    FASTCALL("signal_op", py_signal_op,
             "signal_op(signal_var, signal_val, signal_op, remote_pe, stream=None)"),
    FASTCALL("signal_wait", py_signal_wait,
             "signal_wait(signal_var, signal_val, signal_op, stream=None): wait until "
             "signal_var <cmp> signal_val."),
    FASTCALL("signal_fetch", py_signal_fetch, "signal_fetch(signal_var) -> int"),
    FASTCALL("wait_until", py_wait_until, "wait_until(ivar, cmp, value)"),
    FASTCALL("test", py_test, "test(ivar, cmp, value) -> bool"),
    FASTCALL("barrier", py_barrier,
             "barrier(team, stream=None): complete this PE's puts, then wait for the team."),
    FASTCALL("sync", py_sync, "sync(team, stream=None): wait for every PE of the team."),
    FASTCALL("barrier_all", py_barrier_all, "barrier_all(stream=None)"),
    FASTCALL("sync_all", py_sync_all, "sync_all(stream=None)"),
    {NULL, NULL, 0, NULL},
};

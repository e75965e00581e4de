/* Elements of elements.h: Python numbers packed into and out of one
 * element of each dtype, with range checks for the integer types. */
#include "../core/internal.h"
#include "elements.h"
#include "errors.h"

#if PY_VERSION_HEX < 0x030B0000 /* public from 3.11 on */
#define PyFloat_Pack2(x, p, le) _PyFloat_Pack2((x), (unsigned char *)(p), (le))
#define PyFloat_Unpack2(p, le) _PyFloat_Unpack2((const unsigned char *)(p), (le))
#endif

static int pack_float(int dtype, double d, unsigned char *out)
{
    if (dtype == SYMMEM_DTYPE_FLOAT32) {
        float f = (float)d;
        memcpy(out, &f, 4);
    } else if (dtype == SYMMEM_DTYPE_FLOAT64) {
        memcpy(out, &d, 8);
    } else if (dtype == SYMMEM_DTYPE_FLOAT16) {
        return PyFloat_Pack2(d, (char *)out, 1);
    } else {
        uint16_t half = symmem__float_to_bf16((float)d);
        memcpy(out, &half, 2);
    }
    return 0;
}

/* 0 packed, -1 not an int (or an error), 1 out of range. */
static int pack_integer(int dtype, PyObject *value, unsigned char *out)
{
    size_t size = symmem_dtype_size(dtype);
    if (!PyLong_Check(value) && !PyIndex_Check(value)) return -1;
    if (dtype <= SYMMEM_DTYPE_INT64) {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred())
            return PyErr_ExceptionMatches(PyExc_OverflowError) ? 1 : -1;
        long long lo = size == 8 ? INT64_MIN : -(1LL << (8 * size - 1));
        long long hi = size == 8 ? INT64_MAX : (1LL << (8 * size - 1)) - 1;
        if (v < lo || v > hi) return 1;
        memcpy(out, &v, size); /* little-endian: the low bytes come first */
    } else {
        PyObject *number = PyNumber_Index(value);
        unsigned long long v = number ? PyLong_AsUnsignedLongLong(number) : 0;
        Py_XDECREF(number);
        if (PyErr_Occurred()) return PyErr_ExceptionMatches(PyExc_OverflowError) ? 1 : -1;
        if (size < 8 && v >> (8 * size)) return 1;
        memcpy(out, &v, size);
    }
    return 0;
}

int symmem__ext_element_pack(module_state_t *st, const char *call, const char *arg, int dtype,
                             PyObject *value, unsigned char *out)
{
    int rc = 0;
    if (dtype >= SYMMEM_DTYPE_FLOAT16) {
        double d = PyFloat_AsDouble(value);
        rc = (d == -1.0 && PyErr_Occurred()) || pack_float(dtype, d, out) < 0 ? -1 : 0;
    } else if (dtype == SYMMEM_DTYPE_BOOL) {
        int truth = PyObject_IsTrue(value);
        out[0] = (unsigned char)(truth > 0);
        rc = truth < 0 ? -1 : 0;
    } else {
        rc = pack_integer(dtype, value, out);
    }
    if (rc == 0) return 0;
    PyErr_Clear();
    if (rc > 0) {
        PyObject *repr = PyObject_Repr(value);
        symmem__ext_raise_invalid(st, "%s: %s=%.40s does not fit in %s", call, arg,
                                  repr ? PyUnicode_AsUTF8(repr) : "?", symmem_dtype_name(dtype));
        Py_XDECREF(repr);
    } else {
        symmem__ext_raise_invalid(st, "%s: %s of type %s cannot be stored as %s", call, arg,
                                  Py_TYPE(value)->tp_name, symmem_dtype_name(dtype));
    }
    return -1;
}

PyObject *symmem__ext_element_unpack(int dtype, const unsigned char *in)
{
    union {
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        float f32;
        double f64;
    } v;
    memcpy(&v, in, symmem_dtype_size(dtype));
    switch (dtype) {
    case SYMMEM_DTYPE_BOOL: return PyBool_FromLong(v.u8);
    case SYMMEM_DTYPE_INT8: return PyLong_FromLong(v.i8);
    case SYMMEM_DTYPE_INT16: return PyLong_FromLong(v.i16);
    case SYMMEM_DTYPE_INT32: return PyLong_FromLong(v.i32);
    case SYMMEM_DTYPE_INT64: return PyLong_FromLongLong(v.i64);
    case SYMMEM_DTYPE_UINT8: return PyLong_FromLong(v.u8);
    case SYMMEM_DTYPE_UINT16: return PyLong_FromLong(v.u16);
    case SYMMEM_DTYPE_UINT32: return PyLong_FromUnsignedLong(v.u32);
    case SYMMEM_DTYPE_UINT64: return PyLong_FromUnsignedLongLong(v.u64);
    case SYMMEM_DTYPE_FLOAT16: return PyFloat_FromDouble(PyFloat_Unpack2((const char *)in, 1));
    case SYMMEM_DTYPE_BFLOAT16: return PyFloat_FromDouble(symmem__bf16_to_float(v.u16));
    case SYMMEM_DTYPE_FLOAT32: return PyFloat_FromDouble(v.f32);
    default: return PyFloat_FromDouble(v.f64);
    }
}

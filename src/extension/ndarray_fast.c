/* The read of ndarray_fast.h, the probe that must pass before it is used,
 * and the tests' switch. */
#include "args.h"
#include "concepts.h"
#include "dtypes.h"
#include "errors.h"
#include "ndarray_fast.h"
#include "numpy_abi.h"

/* NumPy's array flags (numpy/ndarraytypes.h; the same bits since NumPy 1.7,
 * and checked against .flags by the probe). */
#define FLAG_C_CONTIGUOUS 0x0001u /* bit 0 and bit 1, as order_of_bits reads them */
#define FLAG_F_CONTIGUOUS 0x0002u
#define FLAG_ALIGNED 0x0100u
#define FLAG_WRITEABLE 0x0400u
#define FLAG_WARN_ON_WRITE 0x80000000u /* a write warns (NumPy's private bit): the export's call */

/* PyArrayObject_fields up to its flags: numpy_abi.h's head, then the dtype and
 * the flags, in that order from NumPy 1.7 through 2.x. */
typedef struct {
    symmem__ext_ndarray_head_t head;
    PyObject *descr;
    int flags;
} array_fields_t;

/* The head of PyArray_Descr, the same in NumPy 1.x and 2.x (2.x moved
 * elsize behind it, which is never read here: the table has each size). */
typedef struct {
    PyObject_HEAD PyTypeObject *typeobj;
    char kind;
    char type;
    char byteorder;
    char former_flags;
    int type_num;
} descr_head_t;

int symmem__ext_ndarray_read(const module_state_t *st, PyObject *obj, int writable, memory_t *mem)
{
    const struct symmem__ext_ndarray_fast *fast = st->ndarray_fast;
    const array_fields_t *a = (const array_fields_t *)obj;
    const descr_head_t *d = (const descr_head_t *)a->descr;
    unsigned flags = (unsigned)a->flags;
    unsigned char type = (unsigned char)d->type;
    if (!fast->enabled || type >= sizeof(fast->kinds) / sizeof(fast->kinds[0])) return 0;
    const symmem__ext_ndarray_kind_t *kind = &fast->kinds[type];
    if (kind->typeobj == NULL || d->typeobj != kind->typeobj || d->byteorder != kind->byteorder)
        return 0; /* another dtype (swapped, a user's, not numbers): the export's answer */
    if (!(flags & (FLAG_C_CONTIGUOUS | FLAG_F_CONTIGUOUS)) || !(flags & FLAG_ALIGNED)) return 0;
    if (writable && (flags & (FLAG_WRITEABLE | FLAG_WARN_ON_WRITE)) != FLAG_WRITEABLE) return 0;
    Py_ssize_t count = 1; /* NumPy keeps every array's size * itemsize within a Py_ssize_t */
    for (int i = 0; i < a->head.nd; i++) count *= a->head.dimensions[i];
    mem->ptr = a->head.data;
    mem->nbytes = count * kind->itemsize;
    mem->itemsize = kind->itemsize;
    memcpy(mem->format, kind->format, sizeof(kind->format));
    mem->order = symmem__ext_order_of_bits(flags); /* NumPy's C and F bits are bits 0 and 1 */
    mem->keep = Py_NewRef(obj);
    return 1;
}

/* ---- the probe ---- */

/* The one character of a str of length 1 (dtype.char, dtype.byteorder), else -1. */
static int one_char(PyObject *text)
{
    if (text == NULL || !PyUnicode_Check(text) || PyUnicode_GET_LENGTH(text) != 1) return -1;
    Py_UCS4 c = PyUnicode_READ_CHAR(text, 0);
    return c < 128 ? (int)c : -1;
}

/* Whether NumPy's own word on arr (.shape, .strides, .flags, .dtype and its
 * .type, .char and .byteorder, __array_interface__'s address) is what the
 * structs hold. */
static int fields_agree(PyObject *arr)
{
    static const struct {
        const char *name;
        unsigned bit;
    } bits[] = {{"c_contiguous", FLAG_C_CONTIGUOUS},
                {"f_contiguous", FLAG_F_CONTIGUOUS},
                {"aligned", FLAG_ALIGNED},
                {"writeable", FLAG_WRITEABLE}};
    const array_fields_t *a = (const array_fields_t *)arr;
    const descr_head_t *d = (const descr_head_t *)a->descr;
    PyObject *shape = PyObject_GetAttrString(arr, "shape");
    PyObject *strides = PyObject_GetAttrString(arr, "strides");
    PyObject *flags = PyObject_GetAttrString(arr, "flags");
    PyObject *dtype = PyObject_GetAttrString(arr, "dtype");
    PyObject *interface = PyObject_GetAttrString(arr, "__array_interface__");
    PyObject *type = dtype ? PyObject_GetAttrString(dtype, "type") : NULL;
    PyObject *chr = dtype ? PyObject_GetAttrString(dtype, "char") : NULL;
    PyObject *order = dtype ? PyObject_GetAttrString(dtype, "byteorder") : NULL;
    PyObject *data = interface && PyDict_Check(interface)
                         ? PyDict_GetItemString(interface, "data") /* borrowed */
                         : NULL;
    int agree = shape && strides && flags && PyTuple_Check(shape) && PyTuple_Check(strides) &&
                PyTuple_GET_SIZE(shape) == a->head.nd && PyTuple_GET_SIZE(strides) == a->head.nd &&
                dtype == a->descr && type == (PyObject *)d->typeobj && one_char(chr) == d->type &&
                one_char(order) == d->byteorder && data && PyTuple_Check(data) &&
                PyTuple_GET_SIZE(data) == 2 &&
                PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0)) == (void *)a->head.data;
    for (int i = 0; agree && i < a->head.nd; i++)
        agree = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i)) == a->head.dimensions[i] &&
                PyLong_AsSsize_t(PyTuple_GET_ITEM(strides, i)) == a->head.strides[i];
    for (size_t i = 0; agree && i < sizeof(bits) / sizeof(bits[0]); i++) {
        PyObject *value = PyObject_GetAttrString(flags, bits[i].name);
        agree =
            value != NULL && PyObject_IsTrue(value) == (((unsigned)a->flags & bits[i].bit) != 0);
        Py_XDECREF(value);
    }
    agree = agree && !PyErr_Occurred();
    PyErr_Clear();
    Py_XDECREF(order);
    Py_XDECREF(chr);
    Py_XDECREF(type);
    Py_XDECREF(interface);
    Py_XDECREF(dtype);
    Py_XDECREF(flags);
    Py_XDECREF(strides);
    Py_XDECREF(shape);
    return agree;
}

/* Whether arr's flags have each bit of set and none of clear. */
static int flags_are(PyObject *arr, unsigned set, unsigned clear)
{
    unsigned flags = (unsigned)((const array_fields_t *)arr)->flags;
    return (flags & set) == set && (flags & clear) == 0;
}

/* A (2, 3) array of code (a fresh one, C order, writable), or NULL. */
static PyObject *probe_array(PyTypeObject *ndarray, const char *code)
{
    return PyObject_CallFunction((PyObject *)ndarray, "(nn)s", (Py_ssize_t)2, (Py_ssize_t)3, code);
}

/* The dtype code's entry in fast's table from a probe array and its buffer
 * export; 0, or -1 where the structs disagree with NumPy. A dtype this NumPy
 * lacks, or cannot export, or whose format is not numbers, stays out of the
 * table (its arrays take the buffer protocol). */
static int probe_kind(module_state_t *st, struct symmem__ext_ndarray_fast *fast, const char *code)
{
    PyObject *arr = probe_array(st->ndarray_type, code);
    if (arr == NULL || !Py_IS_TYPE(arr, st->ndarray_type)) {
        PyErr_Clear();
        Py_XDECREF(arr);
        return 0;
    }
    const array_fields_t *a = (const array_fields_t *)arr;
    const descr_head_t *d = (const descr_head_t *)a->descr;
    int rc = fields_agree(arr) && a->head.nd == 2 && a->head.dimensions[0] == 2 &&
                     a->head.dimensions[1] == 3 &&
                     flags_are(arr, FLAG_C_CONTIGUOUS | FLAG_ALIGNED | FLAG_WRITEABLE,
                               FLAG_F_CONTIGUOUS | FLAG_WARN_ON_WRITE) &&
                     (unsigned char)d->type < sizeof(fast->kinds) / sizeof(fast->kinds[0])
                 ? 0
                 : -1;
    Py_buffer view;
    if (rc == 0 &&
        PyObject_GetBuffer(arr, &view, PyBUF_ANY_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) == 0) {
        const char *format = view.format ? view.format : "B";
        if (symmem__ext_check_format(st, format, "probe", "array") == 0) {
            while (*format == '@' || *format == '=' || *format == '<' || *format == '>' ||
                   *format == '!')
                format++;
            symmem__ext_ndarray_kind_t *kind = &fast->kinds[(unsigned char)d->type];
            if (view.buf != a->head.data || view.readonly || view.ndim != 2 || view.itemsize <= 0 ||
                view.len != 6 * view.itemsize || strlen(format) >= sizeof(kind->format) ||
                (kind->typeobj != NULL && kind->typeobj != d->typeobj))
                rc = -1; /* two dtypes of one type character: not the NumPy this reads */
            else if (*format != '\0') {
                kind->typeobj = d->typeobj;
                kind->itemsize = view.itemsize;
                kind->byteorder = d->byteorder;
                memcpy(kind->format, format, strlen(format) + 1);
            }
        }
        PyBuffer_Release(&view);
    }
    PyErr_Clear();
    Py_DECREF(arr);
    return rc;
}

/* Arrays that are not plain, read as the fast path reads them: NumPy's
 * word must agree for each, and their flags and byte order keep them off it. */
static int probe_unusual(PyTypeObject *ndarray)
{
    static const union {
        uint16_t word;
        char first;
    } endian = {1};
    PyObject *base = probe_array(ndarray, "i4");
    PyObject *fortran = base ? PyObject_GetAttrString(base, "T") : NULL;
    PyObject *all_rows = PySlice_New(NULL, NULL, NULL);
    PyObject *step = PyLong_FromLong(2);
    PyObject *every_other = step ? PySlice_New(NULL, NULL, step) : NULL;
    PyObject *index = all_rows && every_other ? PyTuple_Pack(2, all_rows, every_other) : NULL;
    PyObject *sliced = base && index ? PyObject_GetItem(base, index) : NULL; /* base[:, ::2] */
    PyObject *bytes = PyBytes_FromStringAndSize("12345678", 8);
    PyObject *read_only = bytes
                              ? PyObject_CallMethod((PyObject *)ndarray, "__new__", "O(n)sO",
                                                    (PyObject *)ndarray, (Py_ssize_t)8, "u1", bytes)
                              : NULL;
    PyObject *swapped = PyObject_CallFunction((PyObject *)ndarray, "(n)s", (Py_ssize_t)2,
                                              endian.first == 1 ? ">i4" : "<i4");
    PyObject *scalar = PyObject_CallFunction((PyObject *)ndarray, "()s", "f8");
    PyObject *all[] = {fortran, sliced, read_only, swapped, scalar};
    int ok = 1;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        ok = ok && all[i] != NULL && Py_IS_TYPE(all[i], ndarray) && fields_agree(all[i]);
    ok = ok && flags_are(fortran, FLAG_F_CONTIGUOUS, FLAG_C_CONTIGUOUS) &&
         flags_are(sliced, 0, FLAG_C_CONTIGUOUS | FLAG_F_CONTIGUOUS) &&
         flags_are(read_only, 0, FLAG_WRITEABLE) &&
         ((const descr_head_t *)((const array_fields_t *)swapped)->descr)->byteorder != '=' &&
         ((const array_fields_t *)scalar)->head.nd == 0 &&
         flags_are(scalar, FLAG_C_CONTIGUOUS | FLAG_F_CONTIGUOUS, 0);
    PyErr_Clear();
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) Py_XDECREF(all[i]);
    Py_XDECREF(bytes);
    Py_XDECREF(index);
    Py_XDECREF(every_other);
    Py_XDECREF(step);
    Py_XDECREF(all_rows);
    Py_XDECREF(base);
    return ok;
}

void symmem__ext_ndarray_forget(module_state_t *st)
{
    PyMem_Free(st->ndarray_fast);
    st->ndarray_fast = NULL;
}

void symmem__ext_ndarray_probe(module_state_t *st)
{
    /* NumPy's number dtypes by type character; the export names their formats. */
    static const char *const codes[] = {"?", "b", "B", "h", "H", "i", "I", "l", "L", "q",
                                        "Q", "e", "f", "d", "g", "F", "D", "G", NULL};
    symmem__ext_ndarray_forget(st);
    if (st->ndarray_type == NULL) return;
    struct symmem__ext_ndarray_fast *fast = PyMem_Calloc(1, sizeof(*fast));
    if (fast == NULL) {
        PyErr_Clear();
        return;
    }
    int ok = probe_unusual(st->ndarray_type);
    for (int i = 0; ok && codes[i] != NULL; i++) ok = probe_kind(st, fast, codes[i]) == 0;
    fast->enabled = 1;
    if (ok)
        st->ndarray_fast = fast;
    else
        PyMem_Free(fast);
}

/* ---- the tests' switch ---- */

/* _ndarray_fast(enabled=None) -> bool: whether NumPy arrays are read from
 * NumPy's structs (the probe passed and the switch is on); enabled=False
 * sends them through the buffer protocol, True back (where the probe
 * passed). For the tests, which compare the two paths. */
static PyObject *ndarray_fast_switch(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    static const char *const names[] = {"enabled", NULL};
    static const symmem__ext_params_t params = {"_ndarray_fast", names, 0, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *enabled;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &enabled) < 0) return NULL;
    if (enabled != NULL && enabled != Py_None) {
        int on = PyObject_IsTrue(enabled);
        if (on < 0) return NULL;
        if (st->ndarray_fast != NULL) st->ndarray_fast->enabled = on;
    }
    return PyBool_FromLong(st->ndarray_fast != NULL && st->ndarray_fast->enabled);
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("_ndarray_fast", ndarray_fast_switch,
                       "_ndarray_fast($module, enabled=None)\n--\n\n"
                       "Whether put, get and every call taking memory read a plain NumPy array\n"
                       "from NumPy's structs (checked once against NumPy's own answers) rather\n"
                       "than through the buffer protocol; enabled=False switches that off and\n"
                       "True on again. For the tests, which compare the two."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_ndarray_fast_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

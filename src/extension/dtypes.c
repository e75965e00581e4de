/* Element types of dtypes.h, and the table _symmem.DTYPE_ALIASES (NVSHMEM's
 * names, as collective_on_buffer takes them; DTYPES is vocabulary.c's). */
#include "args.h"
#include "concepts.h"
#include "dtypes.h"
#include "errors.h"

static const struct {
    const char *alias;
    symmem_dtype_t dtype;
} aliases[] = {
    {"half", SYMMEM_DTYPE_FLOAT16},   {"float", SYMMEM_DTYPE_FLOAT32},
    {"double", SYMMEM_DTYPE_FLOAT64}, {"char", SYMMEM_DTYPE_INT8},
    {"schar", SYMMEM_DTYPE_INT8},     {"short", SYMMEM_DTYPE_INT16},
    {"int", SYMMEM_DTYPE_INT32},      {"long", SYMMEM_DTYPE_INT64},
    {"longlong", SYMMEM_DTYPE_INT64}, {"uchar", SYMMEM_DTYPE_UINT8},
    {"ushort", SYMMEM_DTYPE_UINT16},  {"uint", SYMMEM_DTYPE_UINT32},
    {"ulong", SYMMEM_DTYPE_UINT64},   {"ulonglong", SYMMEM_DTYPE_UINT64},
    {"size", SYMMEM_DTYPE_UINT64},    {"ptrdiff", SYMMEM_DTYPE_INT64},
};
#define NALIASES (sizeof(aliases) / sizeof(aliases[0]))

/* The dtype a library or NVSHMEM name stands for, or -1. */
static int dtype_by_name(const char *name)
{
    for (int d = 0; d < SYMMEM_DTYPE_COUNT; d++)
        if (strcmp(name, symmem_dtype_name(d)) == 0) return d;
    for (size_t i = 0; i < NALIASES; i++)
        if (strcmp(name, aliases[i].alias) == 0) return (int)aliases[i].dtype;
    return -1;
}

/* An integer type of size bytes, signed or not. */
static int integer(Py_ssize_t size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? SYMMEM_DTYPE_INT8 : SYMMEM_DTYPE_UINT8;
    case 2: return is_signed ? SYMMEM_DTYPE_INT16 : SYMMEM_DTYPE_UINT16;
    case 4: return is_signed ? SYMMEM_DTYPE_INT32 : SYMMEM_DTYPE_UINT32;
    case 8: return is_signed ? SYMMEM_DTYPE_INT64 : SYMMEM_DTYPE_UINT64;
    default: return -1;
    }
}

/* Names the package's resolver gives for numbers that are not symmem dtypes
 * (put and get copy them as bytes). */
static const char *const other_numbers[] = {"complex64", "complex128", "complex256", "clongdouble",
                                            "float128",  "longdouble", NULL};

static int is_numeric(const char *f)
{
    if (f[0] != '\0' && f[1] == '\0') return strchr("?bBhHiIlLqQnNefdg", f[0]) != NULL;
    if (f[0] == 'Z' && f[1] != '\0' && f[2] == '\0') return strchr("efdg", f[1]) != NULL;
    if (dtype_by_name(f) >= 0) return 1;
    for (int i = 0; other_numbers[i]; i++)
        if (strcmp(f, other_numbers[i]) == 0) return 1;
    return 0;
}

int symmem__ext_check_format(module_state_t *st, const char *format, const char *call,
                             const char *arg)
{
    static const union {
        uint16_t word;
        char first;
    } probe = {1};
    const int little = probe.first == 1;
    const char *f = format != NULL && format[0] != '\0' ? format : "B";
    if (*f == '<' || *f == '>' || *f == '!') {
        if ((*f == '<') != little) {
            symmem__ext_raise_invalid(st,
                                      "%s: %s has byte order '%c' (format '%.40s'), not this "
                                      "machine's: its bytes would be read as other values; "
                                      "pass a copy in native order "
                                      "(a.astype(a.dtype.newbyteorder('=')))",
                                      call, arg, *f, format);
            return -1;
        }
        f++;
    } else if (*f == '@' || *f == '=') {
        f++;
    }
    if (is_numeric(f)) return 0;
    symmem__ext_raise_invalid(st,
                              "%s: %s has element format '%.40s', which is not numbers "
                              "(object, structured, void and string data are refused: "
                              "their bytes are not values symmem can move or combine)",
                              call, arg, format);
    return -1;
}

int symmem__ext_memory_dtype(const memory_t *mem)
{
    const char *f = mem->format;
    /* Longer formats are dtype names (what the package's resolver gives). */
    if (f[0] == '\0' || f[1] != '\0') return dtype_by_name(f);
    switch (f[0]) {
    case '?': return SYMMEM_DTYPE_BOOL;
    case 'e': return SYMMEM_DTYPE_FLOAT16;
    case 'f': return SYMMEM_DTYPE_FLOAT32;
    case 'd': return SYMMEM_DTYPE_FLOAT64;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n': return integer(mem->itemsize, 1);
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N': return integer(mem->itemsize, 0);
    default: return -1;
    }
}

/* The name of mem's element type, one for every spelling of it (NumPy's
 * "l" and "q" on a 64-bit Linux, torch's "float32" from the resolver): a
 * symmem dtype's name, else complex<bits> or float<bits> by the item's size
 * for the complex and extended floats, else the format as it is. */
static const char *element_name(const memory_t *mem, char *buf, size_t size)
{
    int dtype = symmem__ext_memory_dtype(mem);
    if (dtype >= 0) return symmem_dtype_name(dtype);
    const char *f = mem->format;
    int complex = (f[0] == 'Z' && f[1] != '\0' && f[2] == '\0') || strcmp(f, "clongdouble") == 0 ||
                  strncmp(f, "complex", 7) == 0;
    int extended =
        strcmp(f, "g") == 0 || strcmp(f, "longdouble") == 0 || strcmp(f, "float128") == 0;
    if (!complex && !extended) return f;
    snprintf(buf, size, "%s%zd", complex ? "complex" : "float", mem->itemsize * 8);
    return buf;
}

/* Raw bytes take any typed memory's: a Buffer's (format "B"), uint8 and int8. */
static int is_raw_bytes(const char *name)
{
    return strcmp(name, "uint8") == 0 || strcmp(name, "int8") == 0;
}

int symmem__ext_check_same_elements(module_state_t *st, const memory_t *dst, const memory_t *src,
                                    const char *call)
{
    if (strcmp(dst->format, src->format) == 0) return 0; /* the common case: one spelling */
    char dbuf[32], sbuf[32];
    const char *d = element_name(dst, dbuf, sizeof(dbuf));
    const char *s = element_name(src, sbuf, sizeof(sbuf));
    if (strcmp(d, s) == 0 || is_raw_bytes(d) || is_raw_bytes(s)) return 0;
    symmem__ext_raise_invalid(st,
                              "%s: dst is %s but src is %s: symmem copies bytes, so src's %s "
                              "values would arrive as other %s values; use src.view('%s') "
                              "to copy the bytes as they are, or convert src first "
                              "(src.astype('%s'))",
                              call, d, s, s, d, d, d);
    return -1;
}

int symmem__ext_as_dtype(module_state_t *st, PyObject *obj, const char *call, int *dtype_p)
{
    if (obj == NULL || obj == Py_None) return 0;
    PyObject *text = PyObject_Str(obj);
    const char *name = text ? PyUnicode_AsUTF8(text) : NULL;
    int dtype = name ? dtype_by_name(name) : -1;
    if (name != NULL && dtype < 0)
        symmem__ext_raise_invalid(st, "%s: dtype='%.60s' is not a symmem dtype", call, name);
    Py_XDECREF(text);
    if (dtype < 0) return -1;
    *dtype_p = dtype;
    return 0;
}

int symmem__ext_as_library_dtype(module_state_t *st, PyObject *obj, const char *call, int *dtype_p)
{
    if (obj == NULL || obj == Py_None) return 0;
    for (int d = 0; PyUnicode_Check(obj) && d < SYMMEM_DTYPE_COUNT; d++)
        if (PyUnicode_CompareWithASCIIString(obj, symmem_dtype_name(d)) == 0) {
            *dtype_p = d;
            return 0;
        }
    PyObject *name = st->dtype_namer ? PyObject_CallOneArg(st->dtype_namer, obj) : NULL;
    if (name == NULL) {
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return -1;
        PyErr_Clear(); /* the namer knows no better: obj's own str() */
    }
    int rc = symmem__ext_as_dtype(st, name ? name : obj, call, dtype_p);
    Py_XDECREF(name);
    return rc;
}

/* _set_dtype_namer(namer): namer(obj) -> the dtype name of a dtype= that is
 * not a name symmem knows (the package's: NumPy's and torch's spellings). */
static PyObject *set_dtype_namer(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    static const char *const names[] = {"namer", NULL};
    static const symmem__ext_params_t params = {"_set_dtype_namer", names, 1, 1};
    module_state_t *st = symmem__ext_state(module);
    PyObject *namer;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, &namer) < 0) return NULL;
    Py_XSETREF(st->dtype_namer, Py_NewRef(namer));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD(
        "_set_dtype_namer", set_dtype_namer,
        "_set_dtype_namer($module, namer)\n--\n\n"
        "namer(obj) -> the name of the dtype obj spells (np.int64, 'i8', torch.int64), for\n"
        "dtype= arguments that are not a name symmem knows."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_element_type(module_state_t *st, const memory_t *mem, int given, const char *call,
                             const char *arg)
{
    if (given >= 0) return given;
    int dtype = symmem__ext_memory_dtype(mem);
    if (dtype < 0)
        symmem__ext_raise_invalid(st,
                                  "%s: %s has element format '%s', which is not a dtype "
                                  "symmem knows",
                                  call, arg, mem->format);
    return dtype;
}

int symmem__ext_first_element_type(module_state_t *st, const memory_t *mem, const char *call,
                                   const char *arg)
{
    int dtype = symmem__ext_element_type(st, mem, -1, call, arg);
    if (dtype >= 0 && mem->nbytes < (Py_ssize_t)symmem_dtype_size(dtype)) {
        symmem__ext_raise_invalid(st, "%s: %s is empty", call, arg);
        return -1;
    }
    return dtype;
}

int symmem__ext_dtypes_exec(PyObject *module)
{
    PyObject *names = PyDict_New();
    int rc = names ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < NALIASES; i++) {
        PyObject *name = PyUnicode_FromString(symmem_dtype_name(aliases[i].dtype));
        rc = name ? PyDict_SetItemString(names, aliases[i].alias, name) : -1;
        Py_XDECREF(name);
    }
    if (rc == 0) rc = PyModule_AddObjectRef(module, "DTYPE_ALIASES", names);
    Py_XDECREF(names);
    return rc < 0 ? -1 : PyModule_AddFunctions(module, methods);
}

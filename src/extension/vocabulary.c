/* symmem/vocabulary.h's lists as the tables the package reads, so that no
 * Python file lists a name or a code again: _symmem.DTYPES (name -> bytes,
 * in code order), DTYPE_CODES (name -> code), DTYPE_NVSHMEM_NAMES (name ->
 * the type NVSHMEM's typed calls name it by), REDUCE_OPS (names by code),
 * ATOMIC_TRAITS (atomic op name -> {"fetches", "floats", "device_op": the
 * code of the device library's instruction it runs as}), DEVICE_ATOMICS
 * (those instructions: name -> code), SIGNAL_OPS and COMPARISONS (name ->
 * code), CALL_KINDS (name -> code), CAPABILITIES (name -> bit), and
 * capabilities(), what the running backend can do. (ATOMIC_OPS is
 * atomics.c's, beside the functions it names.) */
#include "args.h"
#include "capabilities.h"
#include "concepts.h"

/* Adds the row {name: value} to dict, value a new reference (NULL: its
 * making failed), which it drops; 0, or -1 with an exception set. */
static int set_row(PyObject *dict, const char *name, PyObject *value)
{
    int rc = value ? PyDict_SetItemString(dict, name, value) : -1;
    Py_XDECREF(value);
    return rc;
}

static int add_row(PyObject *dict, const char *name, long long value)
{
    return set_row(dict, name, PyLong_FromLongLong(value));
}

static PyObject *dtypes_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, code, size, ctype, nvshmem, kind)                                          \
    if (rc == 0) rc = add_row(table, name, size);
    SYMMEM_DTYPES(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

static PyObject *dtype_codes_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, code, size, ctype, nvshmem, kind)                                          \
    if (rc == 0) rc = add_row(table, name, code);
    SYMMEM_DTYPES(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

static PyObject *dtype_nvshmem_names_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, code, size, ctype, nvshmem, kind)                                          \
    if (rc == 0) rc = set_row(table, name, PyUnicode_FromString(nvshmem));
    SYMMEM_DTYPES(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

static PyObject *reduce_ops_table(void)
{
    PyObject *table = PyTuple_New(SYMMEM_OP_COUNT);
#define ROW(NAME, name, code, bitwise, combine)                                                    \
    if (table != NULL) {                                                                           \
        PyObject *text = PyUnicode_FromString(name);                                               \
        if (text == NULL)                                                                          \
            Py_CLEAR(table);                                                                       \
        else                                                                                       \
            PyTuple_SET_ITEM(table, code, text);                                                   \
    }
    SYMMEM_REDUCE_OPS(ROW)
#undef ROW
    return table;
}

static PyObject *atomic_traits_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, code, operands, fetches, floats, device)                                   \
    if (rc == 0)                                                                                   \
        rc = set_row(table, name,                                                                  \
                     Py_BuildValue("{s:N,s:N,s:i}", "fetches", PyBool_FromLong(fetches), "floats", \
                                   PyBool_FromLong(floats), "device_op",                           \
                                   (int)SYMMEM_DEV_ATOMIC_##device));
    SYMMEM_ATOMIC_OPS(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

static PyObject *device_atomics_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, code)                                                                      \
    if (rc == 0) rc = add_row(table, name, code);
    SYMMEM_DEVICE_ATOMICS(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

static PyObject *signal_ops_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, code)                                                                      \
    if (rc == 0) rc = add_row(table, name, code);
    SYMMEM_SIGNAL_OPS(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

static PyObject *comparisons_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, code, op)                                                                  \
    if (rc == 0) rc = add_row(table, name, code);
    SYMMEM_COMPARISONS(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

static PyObject *call_kinds_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, code, shape, moves_data)                                                   \
    if (rc == 0) rc = add_row(table, name, code);
    SYMMEM_CALL_KINDS(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

static PyObject *capabilities_table(void)
{
    PyObject *table = PyDict_New();
    int rc = table ? 0 : -1;
#define ROW(NAME, name, bit, help)                                                                 \
    if (rc == 0) rc = add_row(table, name, SYMMEM_CAP_##NAME);
    SYMMEM_CAPABILITIES(ROW)
#undef ROW
    if (rc < 0) Py_CLEAR(table);
    return table;
}

PyObject *symmem__ext_capability_names(uint32_t bits)
{
    PyObject *names = PyList_New(0);
    int rc = names ? 0 : -1;
#define ROW(NAME, name, bit, help)                                                                 \
    if (rc == 0 && (bits & SYMMEM_CAP_##NAME)) {                                                   \
        PyObject *text = PyUnicode_FromString(name);                                               \
        rc = text ? PyList_Append(names, text) : -1;                                               \
        Py_XDECREF(text);                                                                          \
    }
    SYMMEM_CAPABILITIES(ROW)
#undef ROW
    PyObject *tuple = rc == 0 ? PyList_AsTuple(names) : NULL;
    Py_XDECREF(names);
    return tuple;
}

static PyObject *capabilities(PyObject *module, PyObject *unused)
{
    (void)module, (void)unused;
    return symmem__ext_capability_names(symmem_capabilities());
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_NOARGS("capabilities", capabilities,
                       "capabilities($module, /)\n--\n\n"
                       "What the running backend can do: a tuple of CAPABILITIES' names, in their\n"
                       "order ('peer_load_store', 'host_rma' on cpu); () before init."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_vocabulary_exec(PyObject *module)
{
    static const struct {
        const char *name;
        PyObject *(*make)(void);
    } tables[] = {
        {"DTYPES", dtypes_table},
        {"DTYPE_CODES", dtype_codes_table},
        {"DTYPE_NVSHMEM_NAMES", dtype_nvshmem_names_table},
        {"REDUCE_OPS", reduce_ops_table},
        {"ATOMIC_TRAITS", atomic_traits_table},
        {"DEVICE_ATOMICS", device_atomics_table},
        {"SIGNAL_OPS", signal_ops_table},
        {"COMPARISONS", comparisons_table},
        {"CALL_KINDS", call_kinds_table},
        {"CAPABILITIES", capabilities_table},
    };
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        PyObject *table = tables[i].make();
        int rc = table ? PyModule_AddObjectRef(module, tables[i].name, table) : -1;
        Py_XDECREF(table);
        if (rc < 0) return -1;
    }
    return PyModule_AddFunctions(module, methods);
}

/* Atomics on one element of any PE's copy of a symmetric array: the 14
 * atomic_* functions, each a C function parsing its own parameters (as put
 * does), and the table _symmem.ATOMIC_OPS, (name, operands) by op code. */
#include "args.h"
#include "concepts.h"
#include "doc_parts.h"
#include "dtypes.h"
#include "elements.h"
#include "errors.h"
#include "resolve.h"

enum { VALUE = 1, COND = 2, FETCHES = 4 };

/* What each op takes and whether it returns the old value (vocabulary.h). */
#define SHAPE(NAME, name, code, operands, fetches, floats, device)                                 \
    [code] =                                                                                       \
        ((operands) >= 1 ? VALUE : 0) | ((operands) == 2 ? COND : 0) | ((fetches) ? FETCHES : 0),
static const int shapes[SYMMEM_ATOMIC_COUNT] = {SYMMEM_ATOMIC_OPS(SHAPE)};
#undef SHAPE

/* An operand's bits in the low bytes of a uint64 (0 where the op takes none). */
static int operand(module_state_t *st, const char *call, const char *arg, int taken, int dtype,
                   PyObject *obj, uint64_t *bits_p)
{
    unsigned char element[sizeof(uint64_t)] = {0};
    if (taken && symmem__ext_element_pack(st, call, arg, dtype, obj ? obj : Py_None, element) < 0)
        return -1;
    memcpy(bits_p, element, sizeof(element));
    return 0;
}

/* Each shape's parameters, as NVSHMEM4Py's atomic_* name them: target,
 * [cond,] [value,] remote_pe=-1, then keyword-only offset=0, dtype=None. */
static const char *const plain_names[] = {"target", "remote_pe", "offset", "dtype", NULL};
static const char *const value_names[] = {"target", "value", "remote_pe", "offset", "dtype", NULL};
static const char *const cond_names[] = {"target", "cond",  "value", "remote_pe",
                                         "offset", "dtype", NULL};

/* The element offset= names: an int in [0, count), checked exactly (no
 * product that could wrap); NULL (not given) is 0. */
static int as_offset(module_state_t *st, const char *call, PyObject *obj, Py_ssize_t count,
                     int dtype, Py_ssize_t *offset_p)
{
    long long value = 0;
    int overflow = 0;
    PyObject *index = obj ? PyNumber_Index(obj) : PyLong_FromLong(0);
    if (index == NULL || (obj != NULL && PyBool_Check(obj))) {
        Py_XDECREF(index);
        if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception)) return -1;
        PyErr_Clear();
        symmem__ext_raise_invalid(st, "%s: offset must be an int, got %s", call,
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    value = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (!overflow && value >= 0 && value < count) {
        Py_DECREF(index);
        *offset_p = (Py_ssize_t)value;
        return 0;
    }
    PyObject *text = PyObject_Str(index); /* the int itself, however large */
    PyErr_Clear();
    symmem__ext_raise_invalid(st,
                              "%s: offset=%.60s is outside [0, %zd): target has %zd "
                              "elements of %s",
                              call, text ? PyUnicode_AsUTF8(text) : "?", count, count,
                              symmem_dtype_name(dtype));
    Py_XDECREF(text);
    Py_DECREF(index);
    return -1;
}

static PyObject *atomic_impl(module_state_t *st, symmem_atomic_op_t op, const memory_t *target,
                             PyObject *value_obj, PyObject *cond_obj, int pe, PyObject *offset_obj,
                             int given_dtype)
{
    const char *call = symmem_atomic_op_name(op);
    int dtype = symmem__ext_element_type(st, target, given_dtype, call, "target");
    if (dtype < 0) return NULL;
    Py_ssize_t size = (Py_ssize_t)symmem_dtype_size(dtype), offset = 0;
    if (as_offset(st, call, offset_obj, target->nbytes / size, dtype, &offset) < 0) return NULL;
    uint64_t value, cond, old = 0;
    if (operand(st, call, "value", shapes[op] & VALUE, dtype, value_obj, &value) < 0 ||
        operand(st, call, "cond", shapes[op] & COND, dtype, cond_obj, &cond) < 0)
        return NULL;
    symmem_status_t status;
    SYMMEM__EXT_CALL(
        symmem__ext_keep_gil((size_t)size),
        status = symmem_atomic(op, target->ptr + offset * size, dtype, value, cond, pe, &old));
    if (status != SYMMEM_OK) return symmem__ext_raise_status(st, status);
    if (!(shapes[op] & FETCHES)) Py_RETURN_NONE;
    return symmem__ext_element_unpack(dtype, (const unsigned char *)&old);
}

/* One atomic_* function: its op's parameters, parsed as every call's are,
 * so a missing or extra argument is NvshmemInvalid naming it. */
static PyObject *atomic_call(PyObject *module, symmem_atomic_op_t op, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    module_state_t *st = symmem__ext_state(module);
    const char *call = symmem_atomic_op_name(op);
    int takes = (shapes[op] & COND) ? 2 : (shapes[op] & VALUE) ? 1 : 0;
    const char *const *names = takes == 2 ? cond_names : takes ? value_names : plain_names;
    const symmem__ext_params_t params = {call, names, 1 + takes, 2 + takes};
    PyObject *v[6]; /* target, [cond,] [value,] remote_pe, offset, dtype */
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0) return NULL;
    PyObject *cond_obj = takes == 2 ? v[1] : NULL, *value_obj = takes ? v[takes] : NULL;
    PyObject *pe_obj = v[1 + takes], *offset_obj = v[2 + takes], *dtype_obj = v[3 + takes];
    int dtype = -1, pe = symmem_my_pe();
    long long remote_pe = -1;
    /* remote_pe=-1 is this PE. */
    if (symmem__ext_as_long(st, pe_obj, call, "remote_pe", &remote_pe) < 0 ||
        (remote_pe != -1 && symmem__ext_as_pe(st, pe_obj, call, "remote_pe", &pe) < 0) ||
        symmem__ext_as_library_dtype(st, dtype_obj, call, &dtype) < 0)
        return NULL;
    memory_t target;
    /* Every op but atomic_fetch writes the target. */
    if (symmem__ext_memory_resolve(st, v[0], op != SYMMEM_ATOMIC_FETCH, call, "target", &target) <
        0)
        return NULL;
    PyObject *result = atomic_impl(st, op, &target, value_obj, cond_obj, pe, offset_obj, dtype);
    symmem__ext_memory_release(&target);
    return result;
}

#define ATOMIC(name, op)                                                                           \
    static PyObject *name(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k)              \
    {                                                                                              \
        return atomic_call(m, op, a, n, k);                                                        \
    }
ATOMIC(atomic_fetch, SYMMEM_ATOMIC_FETCH)
ATOMIC(atomic_set, SYMMEM_ATOMIC_SET)
ATOMIC(atomic_inc, SYMMEM_ATOMIC_INC)
ATOMIC(atomic_fetch_inc, SYMMEM_ATOMIC_FETCH_INC)
ATOMIC(atomic_add, SYMMEM_ATOMIC_ADD)
ATOMIC(atomic_fetch_add, SYMMEM_ATOMIC_FETCH_ADD)
ATOMIC(atomic_and, SYMMEM_ATOMIC_AND)
ATOMIC(atomic_fetch_and, SYMMEM_ATOMIC_FETCH_AND)
ATOMIC(atomic_or, SYMMEM_ATOMIC_OR)
ATOMIC(atomic_fetch_or, SYMMEM_ATOMIC_FETCH_OR)
ATOMIC(atomic_xor, SYMMEM_ATOMIC_XOR)
ATOMIC(atomic_fetch_xor, SYMMEM_ATOMIC_FETCH_XOR)
ATOMIC(atomic_swap, SYMMEM_ATOMIC_SWAP)
ATOMIC(atomic_compare_swap, SYMMEM_ATOMIC_COMPARE_SWAP)

/* ---- docstrings ---- */

#define ATOMIC_INTEGERS "int32, int64, uint32 or uint64"
#define ATOMIC_NUMBERS "int32, int64, uint32, uint64, float32 or float64"
#define ATOMIC_VALUE "    value: the operand, a number that fits the element's dtype.\n"
#define ATOMIC_COND "    cond: the value the element must hold for value to be stored.\n"
#define ATOMIC_FETCHED "The element's value before the operation (an int or a float)."

/* A method entry: the name, its operands' part of the signature and their
 * Args entries, a summary, the dtypes it takes, its Returns section ("" for
 * none) and the middle of its example. */
#define ATOMIC_METHOD(name, operands, operand_args, summary, dtypes, returns, example)             \
    ATOMIC_ENTRY(name, operands, operand_args, summary, " or is read-only", dtypes, returns,       \
                 example)
/* read_only: how the Raises entry ends where target is written. */
#define ATOMIC_ENTRY(name, operands, operand_args, summary, read_only, dtypes, returns, example)   \
    SYMMEM__EXT_METHOD(                                                                            \
        #name, name,                                                                               \
        #name "($module, target, " operands                                                        \
              "remote_pe=-1, *, offset=0, dtype=None)\n--\n\n" summary "\n\n"                      \
              "Atomic with respect to every other atomic on the element, from any PE.\n\n"         \
              "Args:\n"                                                                            \
              "    target: a symmetric array, tensor or Buffer (or a slice of one): PE\n"          \
              "        remote_pe's copy holds the element.\n" operand_args                         \
              "    remote_pe: the PE whose element it is; -1 (the default) is this PE.\n"          \
              "    offset: which element of target, in [0, its number of elements).\n"             \
              "    dtype: the element's dtype (a name such as 'int64', or a NumPy or\n"            \
              "        torch dtype); default: target's own. A Buffer's elements are\n"             \
              "        bytes, so give one for a Buffer.\n" returns "\n" SYMMEM__DOC_INVALID(       \
                  "remote_pe is outside [0, n_pes()) and not -1; target\n"                         \
                  "        is not on the symmetric heap" read_only "; offset is outside\n"         \
                  "        target;"                                                                \
                  " the dtype is not " dtypes ";\n"                                                \
                  "        an operand does not fit the dtype.") SYMMEM__DOC_RAISES_BACKEND         \
        "\nExample:\n"                                                                             \
        "    >>> x = symmem.array(1, dtype=\"int64\")\n" example "    >>> symmem.free_array(x)\n")

#define ATOMIC_RETURNS_NONE ""
#define ATOMIC_RETURNS "\nReturns:\n    " ATOMIC_FETCHED "\n"
/* The examples start from x[0] = start on every PE, then a barrier. */
#define ATOMIC_START(start)                                                                        \
    "    >>> x[0] = " start "\n"                                                                   \
    "    >>> symmem.barrier_all()\n"

/* In op-code order: atomics_exec checks each name against the library's. */
static PyMethodDef methods[] = {
    ATOMIC_ENTRY(atomic_fetch, "", "", "Read the element atomically.", "", ATOMIC_NUMBERS,
                 "\nReturns:\n    The element's value (an int or a float).\n",
                 ATOMIC_START("symmem.my_pe()") "    >>> symmem.atomic_fetch(x, 0)  # PE 0's\n"
                                                "    0\n"
                                                "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(atomic_set, "value, ", ATOMIC_VALUE, "Set the element to value.", ATOMIC_NUMBERS,
                  ATOMIC_RETURNS_NONE,
                  ATOMIC_START("0") "    >>> if symmem.my_pe() == 0:\n"
                                    "    ...     symmem.atomic_set(x, 42, symmem.n_pes() - 1)\n"
                                    "    >>> symmem.barrier_all()\n"
                                    "    >>> symmem.atomic_fetch(x, symmem.n_pes() - 1)\n"
                                    "    42\n"
                                    "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(
        atomic_inc, "", "", "Add 1 to the element.", ATOMIC_INTEGERS, ATOMIC_RETURNS_NONE,
        ATOMIC_START("0") "    >>> symmem.atomic_inc(x, 0)  # every PE counts itself on PE 0\n"
                          "    >>> symmem.barrier_all()\n"
                          "    >>> symmem.atomic_fetch(x, 0) == symmem.n_pes()\n"
                          "    True\n"
                          "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(
        atomic_fetch_inc, "", "", "Add 1 to the element, returning its old value.", ATOMIC_INTEGERS,
        ATOMIC_RETURNS,
        ATOMIC_START("0") "    >>> ticket = symmem.atomic_fetch_inc(x, 0)  # a unique number each\n"
                          "    >>> 0 <= ticket < symmem.n_pes()\n"
                          "    True\n"
                          "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(atomic_add, "value, ", ATOMIC_VALUE, "Add value to the element.", ATOMIC_NUMBERS,
                  ATOMIC_RETURNS_NONE,
                  ATOMIC_START("0") "    >>> symmem.atomic_add(x, 10, 0)\n"
                                    "    >>> symmem.barrier_all()\n"
                                    "    >>> symmem.atomic_fetch(x, 0) == 10 * symmem.n_pes()\n"
                                    "    True\n"
                                    "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(atomic_fetch_add, "value, ", ATOMIC_VALUE,
                  "Add value to the element, returning its old value.", ATOMIC_NUMBERS,
                  ATOMIC_RETURNS,
                  ATOMIC_START("0") "    >>> old = symmem.atomic_fetch_add(x, 5, 0)\n"
                                    "    >>> old % 5, 0 <= old < 5 * symmem.n_pes()\n"
                                    "    (0, True)\n"
                                    "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(atomic_and, "value, ", ATOMIC_VALUE, "Bitwise-and value into the element.",
                  ATOMIC_INTEGERS, ATOMIC_RETURNS_NONE,
                  ATOMIC_START("0b1111") "    >>> symmem.atomic_and(x, 0b0110, 0)\n"
                                         "    >>> symmem.barrier_all()\n"
                                         "    >>> bin(symmem.atomic_fetch(x, 0))\n"
                                         "    '0b110'\n"
                                         "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(
        atomic_fetch_and, "value, ", ATOMIC_VALUE,
        "Bitwise-and value into the element, returning its old value.", ATOMIC_INTEGERS,
        ATOMIC_RETURNS,
        ATOMIC_START("0b1111") "    >>> old = symmem.atomic_fetch_and(x, 0b0110)  # this PE's own\n"
                               "    >>> bin(old), bin(int(x[0]))\n"
                               "    ('0b1111', '0b110')\n"
                               "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(
        atomic_or, "value, ", ATOMIC_VALUE, "Bitwise-or value into the element.", ATOMIC_INTEGERS,
        ATOMIC_RETURNS_NONE,
        ATOMIC_START("0") "    >>> symmem.atomic_or(x, 1 << symmem.my_pe(), 0)  # a bit per PE\n"
                          "    >>> symmem.barrier_all()\n"
                          "    >>> symmem.atomic_fetch(x, 0) == 2 ** symmem.n_pes() - 1\n"
                          "    True\n"
                          "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(
        atomic_fetch_or, "value, ", ATOMIC_VALUE,
        "Bitwise-or value into the element, returning its old value.", ATOMIC_INTEGERS,
        ATOMIC_RETURNS,
        ATOMIC_START("0b0001") "    >>> old = symmem.atomic_fetch_or(x, 0b0100)  # this PE's own\n"
                               "    >>> bin(old), bin(int(x[0]))\n"
                               "    ('0b1', '0b101')\n"
                               "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(atomic_xor, "value, ", ATOMIC_VALUE, "Bitwise-xor value into the element.",
                  ATOMIC_INTEGERS, ATOMIC_RETURNS_NONE,
                  ATOMIC_START("0b1010") "    >>> symmem.atomic_xor(x, 0b0011)  # this PE's own\n"
                                         "    >>> bin(int(x[0]))\n"
                                         "    '0b1001'\n"
                                         "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(atomic_fetch_xor, "value, ", ATOMIC_VALUE,
                  "Bitwise-xor value into the element, returning its old value.", ATOMIC_INTEGERS,
                  ATOMIC_RETURNS,
                  ATOMIC_START("0b1010") "    >>> old = symmem.atomic_fetch_xor(x, 0b0011)\n"
                                         "    >>> bin(old), bin(int(x[0]))\n"
                                         "    ('0b1010', '0b1001')\n"
                                         "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(atomic_swap, "value, ", ATOMIC_VALUE,
                  "Store value in the element, returning its old value.", ATOMIC_NUMBERS,
                  ATOMIC_RETURNS,
                  ATOMIC_START("symmem.my_pe()") "    >>> symmem.atomic_swap(x, -1) == "
                                                 "symmem.my_pe()  # this PE's own\n"
                                                 "    True\n"
                                                 "    >>> int(x[0])\n"
                                                 "    -1\n"
                                                 "    >>> symmem.barrier_all()\n"),
    ATOMIC_METHOD(
        atomic_compare_swap, "cond, value, ", ATOMIC_COND ATOMIC_VALUE,
        "Store value in the element if it equals cond; return its old value.", ATOMIC_INTEGERS,
        ATOMIC_RETURNS,
        ATOMIC_START(
            "-1") "    >>> # a lock on PE 0: whoever swaps -1 for its own number holds it\n"
                  "    >>> while symmem.atomic_compare_swap(x, -1, symmem.my_pe(), 0) != -1:\n"
                  "    ...     pass\n"
                  "    >>> symmem.atomic_set(x, -1, 0)  # release it\n"
                  "    >>> symmem.barrier_all()\n"),
    {NULL, NULL, 0, NULL},
};

/* ((name, operands), ...) by op code: operands () or ("value",) or ("cond", "value"). */
static PyObject *op_table(void)
{
    PyObject *table = PyTuple_New(SYMMEM_ATOMIC_COUNT);
    for (int op = 0; table && op < SYMMEM_ATOMIC_COUNT; op++) {
        int s = shapes[op];
        PyObject *row = (s & COND)
                            ? Py_BuildValue("(s(ss))", symmem_atomic_op_name(op), "cond", "value")
                        : (s & VALUE) ? Py_BuildValue("(s(s))", symmem_atomic_op_name(op), "value")
                                      : Py_BuildValue("(s())", symmem_atomic_op_name(op));
        if (row == NULL)
            Py_CLEAR(table);
        else
            PyTuple_SET_ITEM(table, op, row);
    }
    return table;
}

int symmem__ext_atomics_exec(PyObject *module)
{
    for (int op = 0; op < SYMMEM_ATOMIC_COUNT; op++)
        if (methods[op].ml_name == NULL ||
            strcmp(methods[op].ml_name, symmem_atomic_op_name(op)) != 0) {
            PyErr_Format(PyExc_SystemError, "atomics.c: method %d is not %s", op,
                         symmem_atomic_op_name(op));
            return -1;
        }
    PyObject *table = op_table();
    int rc = table ? PyModule_AddObjectRef(module, "ATOMIC_OPS", table) : -1;
    Py_XDECREF(table);
    return rc < 0 ? -1 : PyModule_AddFunctions(module, methods);
}

/* memory_at: a memoryview over the memory at an address, the raw pointer
 * contract of symmem.bindings. NVSHMEM's C calls take addresses and write
 * their out-parameters through them (NVSHMEM4Py's bindings do the same from
 * Python); the bindings read and write those addresses through this view,
 * with NumPy (np.frombuffer) or struct.pack_into, and nothing else.
 *
 * The contract is C's: the caller vouches that [address, address + nbytes)
 * is mapped host memory, readable (and writable where writable=True), for
 * as long as the view (or an array over it) is used. Nothing is owned,
 * copied or checked against the process's mappings: the view is as safe as
 * the address it was given. Only what cannot be an address is refused: 0
 * (NULL), a negative address or size, and a range past the end of the
 * address space. */
#include <stdint.h>

#include "args.h"
#include "concepts.h"
#include "errors.h"

/* address as a C address: 0, or -1 with NvshmemInvalid naming its value
 * (NULL, negative, or wider than a pointer). */
static int as_address(module_state_t *st, PyObject *obj, uintptr_t *address_p)
{
    if (PyBool_Check(obj) || !PyIndex_Check(obj)) {
        symmem__ext_raise_invalid(st, "memory_at: address must be an int, got %s",
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *value = PyNumber_Index(obj);
    if (value == NULL) return -1;
    int overflow = 0; /* +1: past a long long (an address of 2**63 or more), -1: below */
    long long small = PyLong_AsLongLongAndOverflow(value, &overflow);
    unsigned long long address = overflow > 0 ? PyLong_AsUnsignedLongLong(value)
                                              : (unsigned long long)small;
    const char *why = overflow < 0 || (overflow == 0 && small < 0)
                          ? "is negative (expected the address of mapped memory)"
                      : overflow == 0 && small == 0
                          ? "is NULL (expected the address of mapped memory)"
                      : PyErr_Occurred() || address > UINTPTR_MAX ? "is wider than a pointer"
                                                                   : NULL;
    if (why != NULL) {
        PyErr_Clear();
        PyObject *repr = PyObject_Repr(value);
        symmem__ext_raise_invalid(st, "memory_at: address=%s %s",
                                  repr ? PyUnicode_AsUTF8(repr) : "?", why);
        Py_XDECREF(repr);
    }
    Py_DECREF(value);
    if (why != NULL) return -1;
    *address_p = (uintptr_t)address;
    return 0;
}

static PyObject *memory_at_impl(module_state_t *st, uintptr_t address, long long nbytes,
                                int writable)
{
    if (nbytes < 0)
        return symmem__ext_raise_invalid(st, "memory_at: nbytes=%lld must be >= 0", nbytes);
    if ((uintptr_t)nbytes > UINTPTR_MAX - address)
        return symmem__ext_raise_invalid(st, "memory_at: address=0x%llx with nbytes=%lld runs "
                                             "past the end of the address space",
                                         (unsigned long long)address, nbytes);
    return PyMemoryView_FromMemory((char *)address, (Py_ssize_t)nbytes,
                                   writable ? PyBUF_WRITE : PyBUF_READ);
}

static PyObject *memory_at(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"address", "nbytes", "writable", NULL};
    static const symmem__ext_params_t params = {"memory_at", names, 2, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[3];
    uintptr_t address = 0;
    long long nbytes = 0;
    int writable = 0;
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        as_address(st, v[0], &address) < 0 ||
        symmem__ext_as_long(st, v[1], "memory_at", "nbytes", &nbytes) < 0)
        return NULL;
    if (v[2] != NULL) {
        if (!PyBool_Check(v[2]))
            return symmem__ext_raise_invalid(st, "memory_at: writable must be True or False, "
                                                 "got %s", Py_TYPE(v[2])->tp_name);
        writable = v[2] == Py_True;
    }
    return memory_at_impl(st, address, nbytes, writable);
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD("memory_at", memory_at,
        "memory_at($module, address, nbytes, writable=False)\n--\n\n"
        "A memoryview (format 'B') of the nbytes bytes at address, read-only unless\n"
        "writable: the raw pointer contract of symmem.bindings. The caller vouches that\n"
        "the memory is mapped (and writable) while the view is used; nothing is owned or\n"
        "copied. address 0 or negative, a negative nbytes, or a range past the end of\n"
        "the address space raise NvshmemInvalid (a ValueError)."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_raw_memory_exec(PyObject *module) { return PyModule_AddFunctions(module, methods); }

/* memory_at: a memoryview over the memory at an address, the raw pointer
 * contract of symmem.bindings. NVSHMEM's C calls take addresses and write
 * their out-parameters through them (NVSHMEM4Py's bindings do the same from
 * Python); the bindings read and write those addresses through this view,
 * with NumPy (np.frombuffer) or struct.pack_into, and nothing else.
 *
 * The contract is C's: the caller vouches that [address, address + nbytes)
 * is host memory it may read (and write where writable=True) for as long as
 * the view (or an array over it) is used. Nothing is owned or copied. What
 * cannot be memory is refused rather than left to crash the process: 0
 * (NULL), a negative address or size, a range past the end of the address
 * space, a range with a page the process has not mapped (a junk or stale
 * address), a range with a page mapped without read permission (PROT_NONE:
 * a guard page, an arena's reserve, which a read would crash on), and, for a
 * view to write through (writable=True), a range with a page mapped without
 * write permission (read-only memory, which a write would crash on). Mapped
 * memory that is not what the caller means cannot be told apart here. */
#define _GNU_SOURCE /* process_vm_readv */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "args.h"
#include "concepts.h"
#include "errors.h"

/* address as a C address: 0, or -1 with NvshmemInvalid naming its value
 * (NULL, negative, or wider than a pointer). */
static int as_address(module_state_t *st, PyObject *obj, const char *call, uintptr_t *address_p)
{
    if (PyBool_Check(obj) || !PyIndex_Check(obj)) {
        symmem__ext_raise_invalid(st, "%s: address must be an int, got %s", call,
                                  Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *value = PyNumber_Index(obj);
    if (value == NULL) return -1;
    int overflow = 0; /* +1: past a long long (an address of 2**63 or more), -1: below */
    long long small = PyLong_AsLongLongAndOverflow(value, &overflow);
    unsigned long long address =
        overflow > 0 ? PyLong_AsUnsignedLongLong(value) : (unsigned long long)small;
    const char *why = overflow < 0 || (overflow == 0 && small < 0)
                          ? "is negative (expected the address of mapped memory)"
                      : overflow == 0 && small == 0
                          ? "is NULL (expected the address of mapped memory)"
                      : PyErr_Occurred() || address > UINTPTR_MAX ? "is wider than a pointer"
                                                                  : NULL;
    if (why != NULL) {
        PyErr_Clear();
        PyObject *repr = PyObject_Repr(value);
        symmem__ext_raise_invalid(st, "%s: address=%s %s", call,
                                  repr ? PyUnicode_AsUTF8(repr) : "?", why);
        Py_XDECREF(repr);
    }
    Py_DECREF(value);
    if (why != NULL) return -1;
    *address_p = (uintptr_t)address;
    return 0;
}

/* Every page of [address, address + nbytes) is mapped in this process:
 * msync fails with ENOMEM where one is not (MS_ASYNC writes nothing back). */
static int is_mapped(uintptr_t address, size_t nbytes)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = address & ~(page - 1);
    return msync((void *)start, address + nbytes - start, MS_ASYNC) == 0 || errno != ENOMEM;
}

/* Every page of [address, address + nbytes), which is mapped, has the
 * permission perm ('r' or 'w'): /proc/self/maps lists the mappings in
 * address order with their permissions. No system call says whether a page
 * may be written without writing it (msync, mincore and madvise ignore
 * protection), and reading the list costs tens of microseconds, so only
 * views to write through ask it (the bindings' out-parameters and a get's
 * local dest), and views to read where readable() cannot. 1 allowed, 0 not,
 * -1 unknown (the list is unreadable: the access is then left to the
 * caller's word). */
static int pages_allow(uintptr_t address, size_t nbytes, char perm)
{
    FILE *maps = fopen("/proc/self/maps", "re");
    if (maps == NULL) return -1;
    uintptr_t at = address, end = address + nbytes;
    char *line = NULL;
    size_t capacity = 0;
    while (at < end && getline(&line, &capacity, maps) > 0) {
        unsigned long long low = 0, high = 0;
        char perms[5] = "";
        if (sscanf(line, "%llx-%llx %4s", &low, &high, perms) != 3 || high <= at) continue;
        if (low > at || perms[perm == 'w' ? 1 : 0] != perm) break; /* a hole, or not allowed */
        at = (uintptr_t)high;
    }
    free(line);
    fclose(maps);
    return at >= end;
}

/* Every page of [address, address + nbytes), which is mapped, may be read.
 * process_vm_readv copies one byte of each page from this process into a
 * scratch block: the kernel's copy, which stops short at a page it cannot
 * read (PROT_NONE) instead of raising SIGSEGV, in one system call per
 * 1024 pages. Where the call is not allowed (a seccomp filter: EPERM,
 * ENOSYS), the list of mappings answers. 1 readable, 0 not, -1 unknown. */
static int readable(uintptr_t address, size_t nbytes)
{
    enum { BATCH = 1024 };
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t end = address + nbytes;
    char scratch[BATCH];
    struct iovec remote[BATCH];
    for (uintptr_t at = address; at < end;) {
        int n = 0;
        for (; n < BATCH && at < end; n++) {
            remote[n] = (struct iovec){(void *)at, 1};
            at = (at & ~(page - 1)) + page; /* the next page's first byte */
        }
        struct iovec local = {scratch, (size_t)n};
        ssize_t got = process_vm_readv(getpid(), &local, 1, remote, (unsigned long)n, 0);
        if (got < 0 && (errno == EPERM || errno == ENOSYS))
            return pages_allow(address, nbytes, 'r');
        if (got != n) return 0;
    }
    return 1;
}

static PyObject *memory_at_impl(module_state_t *st, const char *call, uintptr_t address,
                                long long nbytes, int writable)
{
    if (nbytes < 0)
        return symmem__ext_raise_invalid(st, "%s: nbytes=%lld must be >= 0", call, nbytes);
    if ((uintptr_t)nbytes > UINTPTR_MAX - address)
        return symmem__ext_raise_invalid(st,
                                         "%s: address=0x%llx with nbytes=%lld runs "
                                         "past the end of the address space",
                                         call, (unsigned long long)address, nbytes);
    if (nbytes > 0 && !is_mapped(address, (size_t)nbytes))
        return symmem__ext_raise_invalid(st,
                                         "%s: [0x%llx, +%lld) is not memory this process "
                                         "has mapped (a junk or stale address)",
                                         call, (unsigned long long)address, nbytes);
    if (nbytes > 0 && readable(address, (size_t)nbytes) == 0)
        return symmem__ext_raise_invalid(st,
                                         "%s: [0x%llx, +%lld) has a page this process may not "
                                         "read (mapped PROT_NONE: a guard page or reserved "
                                         "memory), which the call would read",
                                         call, (unsigned long long)address, nbytes);
    if (nbytes > 0 && writable && pages_allow(address, (size_t)nbytes, 'w') == 0)
        return symmem__ext_raise_invalid(st,
                                         "%s: [0x%llx, +%lld) is mapped read-only: the call "
                                         "writes there (expected the address of writable "
                                         "memory)",
                                         call, (unsigned long long)address, nbytes);
    return PyMemoryView_FromMemory((char *)address, (Py_ssize_t)nbytes,
                                   writable ? PyBUF_WRITE : PyBUF_READ);
}

static PyObject *memory_at(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    static const char *const names[] = {"address", "nbytes", "writable", "call", NULL};
    static const symmem__ext_params_t params = {"memory_at", names, 2, 3};
    module_state_t *st = symmem__ext_state(module);
    PyObject *v[4];
    uintptr_t address = 0;
    long long nbytes = 0;
    int writable = 0;
    const char *call = "memory_at";
    if (symmem__ext_parse(st, &params, args, nargs, kwnames, v) < 0 ||
        symmem__ext_as_text(st, v[3], "memory_at", "call", 0, &call) < 0 ||
        as_address(st, v[0], call, &address) < 0 ||
        symmem__ext_as_long(st, v[1], call, "nbytes", &nbytes) < 0)
        return NULL;
    if (v[2] != NULL) {
        if (!PyBool_Check(v[2]))
            return symmem__ext_raise_invalid(st, "%s: writable must be True or False, got %s", call,
                                             Py_TYPE(v[2])->tp_name);
        writable = v[2] == Py_True;
    }
    return memory_at_impl(st, call, address, nbytes, writable);
}

static PyMethodDef methods[] = {
    SYMMEM__EXT_METHOD(
        "memory_at", memory_at,
        "memory_at($module, address, nbytes, writable=False, *, call='memory_at')\n--\n\n"
        "A memoryview (format 'B') of the nbytes bytes at address, read-only unless\n"
        "writable: the raw pointer contract of symmem.bindings. The caller vouches that\n"
        "the memory is its own to read (and write) while the view is used; nothing is\n"
        "owned or copied. address 0 or negative, a negative nbytes, a range past the\n"
        "end of the address space, one with a page this process has not mapped or\n"
        "may not read (PROT_NONE), or (writable) one with a page mapped read-only\n"
        "raise NvshmemInvalid (a ValueError), named after call."),
    {NULL, NULL, 0, NULL},
};

int symmem__ext_raw_memory_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, methods);
}

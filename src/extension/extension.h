/* What every file of the extension module shares: the GIL rule, the module
 * state, and the helper that applies the rule. Each concept (errors, args,
 * buffers, resolution, dtypes, elements) has its own header. */
#ifndef SYMMEM_EXT_EXTENSION_H
#define SYMMEM_EXT_EXTENSION_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "object_cache.h"
#include "symmem/symmem.h"

/*
 * The GIL rule. A call into the C library runs with the GIL released
 * (Py_BEGIN_ALLOW_THREADS) unless it is one of these two kinds:
 *
 *  1. Local bookkeeping, which never waits: my_pe, n_pes, the team
 *     queries, backend_name, library_version, symmem_ptr,
 *     find_allocation, the names of dtypes and ops, the env table.
 *  2. On a backend with the host_rma capability (the cpu backend: its
 *     one-sided calls are loads and stores), a one-sided call moving fewer than
 *     SYMMEM__EXT_KEEP_GIL_BYTES (64 KiB): put, get and their _nbi forms,
 *     p, g, put_signal(_nbi), signal_op, signal_fetch, test, the atomics,
 *     quiet and fence. The cpu engine does these with loads, stores,
 *     lock-free atomics, a memcpy into shared memory and at most a futex
 *     wake: it never waits on a peer, a lock, a device or a stream, and
 *     releasing and retaking the GIL would cost as much as the call.
 *
 * Everything else releases it: init, finalize and get_unique_id (bootstrap,
 * loading a backend), every collective call (allocation, free,
 * registration, team creation and destruction, barriers, collectives),
 * every wait (wait_until, signal_wait), copies of 64 KiB or more, and, on
 * the gpu backend, every one-sided call, quiet and fence: they go to the
 * device and may wait on it or on a stream. symmem__ext_keep_gil(nbytes)
 * decides kind 2; it asks the library what the running backend can do on every call
 * (never a cached answer, so it stays right across finalize and init).
 * No Python object is touched while the GIL is released: arguments are
 * converted to C values (and their buffers held) before the call.
 */

/* A keyword argument matched before (args.c): the str a call passed and the
 * slot of the function's names it fills. A call site passes the same
 * (interned) str every time, so one compare of addresses finds the slot. */
typedef struct {
    const char *const *names; /* the function's parameter names; NULL: empty */
    PyObject *key;            /* a reference: a str, so its address means its text */
    int index;
} symmem__ext_keyword_t;

#define SYMMEM__EXT_KEYWORDS 32

typedef struct {
    PyObject *error_type;   /* NvshmemError(RuntimeError) */
    PyObject *invalid_type; /* NvshmemInvalid(ValueError) */
    PyTypeObject *buffer_type;
    PyObject *resolver;         /* Python fallback for objects without the buffer protocol */
    PyObject *owner_of;         /* obj -> the Buffer it was made over, or None (package's) */
    PyObject *dtype_namer;      /* obj -> the name of the dtype it spells (package's) */
    PyTypeObject *ndarray_type; /* numpy.ndarray, whose .base numpy_abi.h reads in C */
    int ndarray_base_in_c;      /* 1 where NumPy's struct has the layout that numpy_abi.h reads */
    void *numpy_dlpack_deleters[2]; /* NumPy's DLPack deleters (legacy, versioned), which keep the
                                       exporting array as manager_ctx; NULL: not known */
    struct symmem__ext_ndarray_fast *ndarray_fast; /* ndarray_fast.h; NULL: the buffer protocol */
    object_cache_t arrays;  /* device arrays read through __cuda_array_interface__ */
    object_cache_t streams; /* stream objects and their handles */
    symmem__ext_keyword_t keywords[SYMMEM__EXT_KEYWORDS]; /* args.c's, by address */
} module_state_t;

static inline module_state_t *symmem__ext_state(PyObject *module)
{
    return (module_state_t *)PyModule_GetState(module);
}

#define SYMMEM__EXT_KEEP_GIL_BYTES (64 * 1024)

/* Kind 2 of the GIL rule: a one-sided call of nbytes on a backend whose
 * one-sided calls are this process's own loads and stores (the cpu one). */
static inline int symmem__ext_keep_gil(size_t nbytes)
{
    return nbytes < SYMMEM__EXT_KEEP_GIL_BYTES && (symmem_capabilities() & SYMMEM_CAP_HOST_RMA);
}

/* Runs statement, a call into the library, with the GIL released unless keep. */
#define SYMMEM__EXT_CALL(keep, statement)                                                          \
    do {                                                                                           \
        if (keep) {                                                                                \
            statement;                                                                             \
        } else {                                                                                   \
            Py_BEGIN_ALLOW_THREADS                                                                 \
            statement;                                                                             \
            Py_END_ALLOW_THREADS                                                                   \
        }                                                                                          \
    } while (0)

#endif

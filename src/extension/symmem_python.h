/* Shared declarations of the CPython extension module symmem._symmem. */
#ifndef SYMMEM_PYTHON_H
#define SYMMEM_PYTHON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "object_cache.h"
#include "symmem/symmem.h"

#if PY_VERSION_HEX < 0x030B0000 /* public from 3.11 on */
#define PyFloat_Pack2(x, p, le) _PyFloat_Pack2((x), (unsigned char *)(p), (le))
#define PyFloat_Unpack2(p, le) _PyFloat_Unpack2((const unsigned char *)(p), (le))
#endif

typedef struct {
    PyObject *error_type;   /* NvshmemError(RuntimeError) */
    PyObject *invalid_type; /* NvshmemInvalid(ValueError) */
    PyTypeObject *buffer_type;
    PyObject *resolver;     /* Python fallback for objects without the buffer protocol */
    object_cache_t arrays;  /* device arrays read through __cuda_array_interface__ */
    object_cache_t streams; /* stream objects and their handles */
} module_state_t;

extern PyModuleDef symmem_module_def;

static inline module_state_t *module_state(PyObject *module)
{
    return (module_state_t *)PyModule_GetState(module);
}

/* Raises the exception for status with symmem_last_error(); returns NULL. */
PyObject *raise_status(module_state_t *st, symmem_status_t status);
/* raise_status for a call the core knows under another name: the message's
 * "inner: " (the core's name, e.g. put) becomes "outer: " (e.g. p). */
PyObject *raise_status_as(module_state_t *st, symmem_status_t status, const char *inner,
                          const char *outer);
/* Raises NvshmemInvalid with "[pe N] call: ..." ; returns NULL. */
PyObject *raise_invalid(module_state_t *st, const char *fmt, ...);

/* ---- buffer_type.c ---- */
typedef struct {
    PyObject_HEAD
    char *ptr;
    Py_ssize_t size;
    int pe;          /* whose memory this is: my_pe for our own allocations */
    int device;      /* CUDA ordinal of device memory; -1 for host memory */
    int owner;       /* 1 if free() may release it (not a peer view) */
    int freed;
    PyObject *base;  /* what keeps a peer view's memory alive: the local Buffer */
} buffer_object_t;

PyType_Spec *buffer_type_spec(void);
PyObject *buffer_new(module_state_t *st, char *ptr, Py_ssize_t size, int pe, int owner,
                     PyObject *base);

/* ---- resolve.c ---- */
/* A contiguous block of memory named by any Python object we accept. */
typedef struct {
    char *ptr;
    Py_ssize_t nbytes;
    Py_ssize_t itemsize;
    char format[16];    /* struct-module format of one element, "B" for raw bytes */
    Py_buffer view;     /* held while the memory is used; view.obj NULL if none */
    PyObject *keep;     /* a reference held while the memory is used */
} memory_t;

/* Resolves obj; writable asks for memory we may write locally. On failure
 * raises NvshmemInvalid naming call and arg and returns -1. */
int memory_resolve(module_state_t *st, PyObject *obj, int writable, const char *call,
                   const char *arg, memory_t *mem);
void memory_release(memory_t *mem);
/* The symmem dtype of mem's elements, or -1. */
int memory_dtype(const memory_t *mem);
/* stream: None, an int handle, or an object with __cuda_stream__ /
 * .cuda_stream / .ptr / .handle. Raises NvshmemInvalid and returns -1 if not. */
int stream_resolve(module_state_t *st, PyObject *obj, const char *call, symmem_stream_t *out);

/* ---- args.c ---- */
/* Fills out[i] with the argument named names[i] (positional or keyword;
 * "a|b" names one argument two ways); unset ones stay NULL. The first
 * nrequired are required. */
int parse_args(module_state_t *st, const char *call, const char *const *names, int nnames,
               int nrequired, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
               PyObject **out);
/* A team argument: an int (or IntEnum), never None or a bool. */
int team_arg(module_state_t *st, PyObject *obj, const char *call, int *team_p);

/* ---- rma.c, collectives.c ---- */
extern PyMethodDef rma_methods[];
extern PyMethodDef collective_methods[];

#endif

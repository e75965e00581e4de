/* Python objects turned into memory (resolve.c) and CUDA streams
 * (stream.c), the way mpi4py accepts them. */
#ifndef SYMMEM_EXT_RESOLVE_H
#define SYMMEM_EXT_RESOLVE_H

#include "extension.h"

/* A contiguous block of memory named by any Python object we accept. */
typedef struct {
    char *ptr;
    Py_ssize_t nbytes;
    Py_ssize_t itemsize;
    char format[16]; /* struct-module code of one element ("B" for raw bytes) or a dtype name */
    Py_buffer view;  /* held while the memory is used; view.obj NULL if none */
    PyObject *keep;  /* a reference held while the memory is used */
} memory_t;

/* Resolves obj; writable asks for memory we may write locally. On failure
 * raises NvshmemInvalid naming call and arg and returns -1. */
int symmem__ext_memory_resolve(module_state_t *st, PyObject *obj, int writable, const char *call,
                               const char *arg, memory_t *mem);
void symmem__ext_memory_release(memory_t *mem);

/* stream: None (or not given: SYMMEM_STREAM_NONE), an int handle, or an
 * object with __cuda_stream__ / .cuda_stream / .ptr / .handle. Raises
 * NvshmemInvalid naming call and returns -1 if not. */
int symmem__ext_stream_resolve(module_state_t *st, PyObject *obj, const char *call,
                               symmem_stream_t *stream_p);

#endif

/* symmem.Buffer: a block of symmetric memory, or a view of a peer's copy. */
#ifndef SYMMEM_EXT_BUFFER_H
#define SYMMEM_EXT_BUFFER_H

#include "extension.h"

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

/* A new Buffer over [ptr, ptr+size) of PE pe; base keeps a peer view's
 * Buffer alive (NULL for our own memory). */
PyObject *symmem__ext_buffer_new(module_state_t *st, char *ptr, Py_ssize_t size, int pe,
                                 int owner, PyObject *base);
/* Whether the memory is still there: not freed, nor the Buffer it views. */
int symmem__ext_buffer_usable(const buffer_object_t *buf);

#endif

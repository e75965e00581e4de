/* symmem.Buffer: a block of symmetric memory, or a view of a peer's copy. */
#ifndef SYMMEM_EXT_BUFFER_H
#define SYMMEM_EXT_BUFFER_H

#include "extension.h"
#include "../core/internal.h"

typedef struct {
    PyObject_HEAD char *ptr;
    Py_ssize_t size;
    int pe;     /* whose memory this is: my_pe for our own allocations */
    int device; /* CUDA ordinal of device memory; -1 for host memory */
    int owner;  /* 1 if free() may release it (not a peer view) */
    int freed;
    uint64_t generation; /* its allocation's (registry.h; size 0: its own); 0 once freed */
    PyObject *base;      /* what keeps a peer view's memory alive: the local Buffer */
    PyObject *weakrefs;  /* the package's weak set of Buffers (_resolver.py) */
} buffer_object_t;

/* A new Buffer over [ptr, ptr+size) of PE pe; base keeps a peer view's
 * Buffer alive (NULL for our own memory). Our own memory must be a live
 * allocation that starts at ptr (or size 0): the Buffer records its
 * generation. */
PyObject *symmem__ext_buffer_new(module_state_t *st, char *ptr, Py_ssize_t size, int pe, int owner,
                                 PyObject *base);

/* The Buffer whose DLPack export a capsule holds (a consumer such as
 * np.from_dlpack keeps it as the array's .base), borrowed; or NULL. */
buffer_object_t *symmem__ext_buffer_of_capsule(PyObject *capsule);

/* Whether the allocation is still the one the Buffer was made for: not
 * freed through it (free sets its generation to 0), nor through the Buffer a
 * peer view views, and not retired by a finalize. Every argument that names
 * a Buffer, or an array made over one, passes here: one integer compare. */
static inline int symmem__ext_buffer_usable(const buffer_object_t *buf)
{
    const buffer_object_t *own = buf->base != NULL ? (const buffer_object_t *)buf->base : buf;
    return own->generation >= symmem__registry_first_live;
}

#endif

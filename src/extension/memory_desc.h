/* What an argument's memory is once resolved (resolve.h turns Python objects
 * into it, ndarray_fast.h reads a NumPy array into it): a contiguous block,
 * its elements' format, and the order they lie in. */
#ifndef SYMMEM_EXT_MEMORY_DESC_H
#define SYMMEM_EXT_MEMORY_DESC_H

#include "extension.h"

/* Which order an array's elements lie in: C (row-major) or Fortran
 * (column-major) where only that one reads them in place; ANY where both do
 * (at most one dimension of more than one element), for raw bytes, and where
 * the object does not say. */
enum { SYMMEM__EXT_ORDER_ANY = 0, SYMMEM__EXT_ORDER_C = 1, SYMMEM__EXT_ORDER_F = 2 };

/* The order of an array whose C-contiguity is bit 0 of bits and whose
 * F-contiguity is bit 1 (as in NumPy's flags): C, F, or ANY for both (or
 * neither); a lookup in a constant, without a branch (every put asks). */
static inline unsigned char symmem__ext_order_of_bits(unsigned bits)
{
    return (unsigned char)((0x0210u >> (4 * (bits & 3u))) & 3u);
}

/* The order of an array that is C-contiguous (c) and F-contiguous (f). */
static inline unsigned char symmem__ext_order_of(int c, int f)
{
    return symmem__ext_order_of_bits((c != 0) | (unsigned)(f != 0) << 1);
}

/* A contiguous block of memory named by any Python object we accept. */
typedef struct {
    char *ptr;
    Py_ssize_t nbytes;
    Py_ssize_t itemsize;
    char format[15]; /* struct-module code of one element ("B" for raw bytes) or a dtype name */
    /* SYMMEM__EXT_ORDER_*: which order the bytes hold the elements in; beside
     * format, so that memory_t stays 128 bytes (every call clears two) */
    unsigned char order;
    Py_buffer view; /* held while the memory is used; view.obj NULL if none */
    PyObject *keep; /* a reference held while the memory is used */
} memory_t;

#endif

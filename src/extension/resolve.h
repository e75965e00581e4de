/* Python objects turned into memory (resolve.c) and CUDA streams
 * (stream.c), the way mpi4py accepts them. */
#ifndef SYMMEM_EXT_RESOLVE_H
#define SYMMEM_EXT_RESOLVE_H

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

/* Resolves obj; writable asks for memory we may write locally. On failure
 * raises NvshmemInvalid naming call and arg and returns -1. */
int symmem__ext_memory_resolve(module_state_t *st, PyObject *obj, int writable, const char *call,
                               const char *arg, memory_t *mem);
void symmem__ext_memory_release(memory_t *mem);

/* Raises NvshmemInvalid: dst and src lie in different orders (refused by
 * check_same_order). Returns -1. */
int symmem__ext_refuse_orders(module_state_t *st, const memory_t *dst, const memory_t *src,
                              const char *call);

/* 0 if call may move the bytes of src into dst as they lie; -1 with
 * NvshmemInvalid naming call, both arguments and both orders where one is in
 * C order and the other in Fortran order: every element off the diagonal
 * would arrive transposed (dst[0, 1] would get src[1, 0]). Refused rather
 * than reordered: a reordering copy is no single copy of bytes (on a stream,
 * non-blocking, on a GPU), so every call that moves two arrays' bytes
 * (put, get, put_signal, the collectives) asks for one order. */
static inline int symmem__ext_check_same_order(module_state_t *st, const memory_t *dst,
                                               const memory_t *src, const char *call)
{
    if ((dst->order | src->order) != (SYMMEM__EXT_ORDER_C | SYMMEM__EXT_ORDER_F)) return 0;
    return symmem__ext_refuse_orders(st, dst, src, call);
}

/* stream: None (or not given: SYMMEM_STREAM_NONE), an int handle, or an
 * object with __cuda_stream__ / .cuda_stream / .ptr / .handle. Raises
 * NvshmemInvalid naming call and returns -1 if not. */
int symmem__ext_stream_resolve(module_state_t *st, PyObject *obj, const char *call,
                               symmem_stream_t *stream_p);

#endif

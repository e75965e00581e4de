/* Python objects turned into memory (resolve.c; memory_desc.h says what
 * that memory is) and CUDA streams (stream.c), the way mpi4py accepts them. */
#ifndef SYMMEM_EXT_RESOLVE_H
#define SYMMEM_EXT_RESOLVE_H

#include "memory_desc.h"

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

/* Element types: of resolved memory (from its format), by name (the
 * library's names and NVSHMEM's), and the tables the package reads. */
#ifndef SYMMEM_EXT_DTYPES_H
#define SYMMEM_EXT_DTYPES_H

#include "resolve.h"

/* The symmem dtype of mem's elements, or -1. */
int symmem__ext_memory_dtype(const memory_t *mem);
/* A dtype argument: its str() names a dtype ("float32", or NVSHMEM's
 * "float"); NULL and None leave *dtype_p. */
int symmem__ext_as_dtype(module_state_t *st, PyObject *obj, const char *call, int *dtype_p);
/* The dtype of arg's elements (mem), or *given where one was given (>= 0);
 * raises NvshmemInvalid and returns -1 where neither names a dtype. */
int symmem__ext_element_type(module_state_t *st, const memory_t *mem, int given,
                             const char *call, const char *arg);

/* element_type of mem's first element, which must exist. */
int symmem__ext_first_element_type(module_state_t *st, const memory_t *mem, const char *call,
                                   const char *arg);

#endif

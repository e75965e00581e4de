/* Element types: of resolved memory (from its format), by name (the
 * library's names and NVSHMEM's), and the tables the package reads. */
#ifndef SYMMEM_EXT_DTYPES_H
#define SYMMEM_EXT_DTYPES_H

#include "memory_desc.h"

/* 0 if format (a buffer-protocol format, or a dtype name from the
 * package's resolver, either after an optional byte-order prefix) names
 * numbers (bool, integers, floats, complex) in this machine's byte order;
 * else -1 with NvshmemInvalid naming call and arg: objects (pointers),
 * structured, void and string data are refused, and so is a swapped byte
 * order (the bytes would be read as other values). */
int symmem__ext_check_format(module_state_t *st, const char *format, const char *call,
                             const char *arg);
/* check_format's common case, inline: one struct-module code of a bool, an
 * integer or a float, in native order ("l", "B", "d"). */
static inline int symmem__ext_format_is_plain_number(const char *f)
{
    if (f == NULL || f[0] == '\0' || f[1] != '\0') return 0;
    switch (f[0]) {
    case '?':
    case 'b':
    case 'B':
    case 'h':
    case 'H':
    case 'i':
    case 'I':
    case 'l':
    case 'L':
    case 'q':
    case 'Q':
    case 'n':
    case 'N':
    case 'e':
    case 'f':
    case 'd':
    case 'g': return 1;
    default: return 0;
    }
}
/* The symmem dtype of mem's elements, or -1. */
int symmem__ext_memory_dtype(const memory_t *mem);
/* A dtype argument: its str() names a dtype ("float32", or NVSHMEM's
 * "float"); NULL and None leave *dtype_p. */
int symmem__ext_as_dtype(module_state_t *st, PyObject *obj, const char *call, int *dtype_p);
/* A dtype argument spelled as NumPy or torch spell them (np.int64, 'i8',
 * 'float' for float64, torch.int64): a symmem name, else the package's dtype
 * namer's name for it (_set_dtype_namer), read by as_dtype. */
int symmem__ext_as_library_dtype(module_state_t *st, PyObject *obj, const char *call, int *dtype_p);
/* The dtype of arg's elements (mem), or *given where one was given (>= 0);
 * raises NvshmemInvalid and returns -1 where neither names a dtype. */
int symmem__ext_element_type(module_state_t *st, const memory_t *mem, int given, const char *call,
                             const char *arg);

/* 0 if a call may copy src's bytes into dst: both hold one element type
 * (however spelled), or either is raw bytes (a Buffer, uint8 or int8);
 * else -1 with NvshmemInvalid naming call, both types and src.view(), since
 * a copy of bytes between two types would arrive as other values. */
int symmem__ext_check_same_elements(module_state_t *st, const memory_t *dst, const memory_t *src,
                                    const char *call);

/* element_type of mem's first element, which must exist. */
int symmem__ext_first_element_type(module_state_t *st, const memory_t *mem, const char *call,
                                   const char *arg);

#endif

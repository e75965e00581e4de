/* One element of a dtype as a Python value and back: what p, g and the
 * atomics store, load and return. */
#ifndef SYMMEM_EXT_ELEMENTS_H
#define SYMMEM_EXT_ELEMENTS_H

#include "extension.h"

/* The largest element (float64, int64), in bytes. */
#define SYMMEM__EXT_ELEMENT_MAX 8

/* Packs value as one element of dtype into out (little-endian, its size);
 * raises NvshmemInvalid naming call and arg if it does not fit or is not a
 * number. */
int symmem__ext_element_pack(module_state_t *st, const char *call, const char *arg, int dtype,
                             PyObject *value, unsigned char *out);
/* The Python value (bool, int or float) of the element of dtype at in. */
PyObject *symmem__ext_element_unpack(int dtype, const unsigned char *in);

#endif

/* What a backend can do (symmem/vocabulary.h's SYMMEM_CAPABILITIES) as
 * Python sees it: a frozenset of names. vocabulary.c makes it. */
#ifndef SYMMEM_EXT_CAPABILITIES_H
#define SYMMEM_EXT_CAPABILITIES_H

#include "extension.h"

/* frozenset({'device_memory', ...}) of the bits set in bits; NULL with an
 * exception set on failure. */
PyObject *symmem__ext_capability_names(uint32_t bits);

#endif

/* What a backend can do (symmem/vocabulary.h's SYMMEM_CAPABILITIES) as
 * Python sees it: a tuple of names, in the list's order (JSON-able, as the
 * launcher's preview must be). vocabulary.c makes it. */
#ifndef SYMMEM_EXT_CAPABILITIES_H
#define SYMMEM_EXT_CAPABILITIES_H

#include "extension.h"

/* ('device_memory', ...): the names of the bits set in bits; NULL with an
 * exception set on failure. */
PyObject *symmem__ext_capability_names(uint32_t bits);

#endif

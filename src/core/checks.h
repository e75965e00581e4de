/* The argument checks every public call makes before it reaches the
 * backend. Each failure's message names the call, the argument and the value. */
#ifndef SYMMEM_CORE_CHECKS_H
#define SYMMEM_CORE_CHECKS_H

#include <stddef.h>

#include "symmem/symmem.h"

symmem_status_t symmem__check_initialized(const char *call);
symmem_status_t symmem__check_pe(const char *call, const char *arg, int pe);
/* [ptr, ptr+nbytes) must lie inside one live allocation of this PE. */
symmem_status_t symmem__check_symmetric(const char *call, const char *arg,
                                        const void *ptr, size_t nbytes);
/* A private argument may be anywhere but in freed parts of our own heap. */
symmem_status_t symmem__check_private(const char *call, const char *arg, const void *ptr,
                                      size_t nbytes);

#endif

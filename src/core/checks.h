/* The argument checks every public call makes before it reaches the
 * backend. Each failure's message names the call, the argument and the value. */
#ifndef SYMMEM_CORE_CHECKS_H
#define SYMMEM_CORE_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "symmem/symmem.h"

symmem_status_t symmem__check_initialized(const char *call);
symmem_status_t symmem__check_pe(const char *call, const char *arg, int pe);
/* What follows "pe=k is outside [0, n)": in a world of one PE (a program
 * started without a launcher, most likely), how to start more; else "". */
const char *symmem__pe_range_hint(void);
/* [ptr, ptr+nbytes) must lie inside one live allocation of this PE. */
symmem_status_t symmem__check_symmetric(const char *call, const char *arg, const void *ptr,
                                        size_t nbytes);
/* A private argument may be anywhere but in freed parts of our own heap. */
symmem_status_t symmem__check_private(const char *call, const char *arg, const void *ptr,
                                      size_t nbytes);
/* The generation (registry.h) of the live allocation that starts at start,
 * or 0 if none does: what a holder of the allocation records, to tell it
 * later from a newer allocation at the same address. (memory.c) */
uint64_t symmem__allocation_generation(const void *start);

#endif

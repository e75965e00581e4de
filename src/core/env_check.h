/* Errors for environment variables whose values cannot be used (env_check.c). */
#ifndef SYMMEM_CORE_ENV_CHECK_H
#define SYMMEM_CORE_ENV_CHECK_H

#include "symmem/symmem.h"

/* Every typed variable that is set (sizes, numbers, durations; not
 * NVSHMEM's own, which NVSHMEM reads): SYMMEM_OK where each parses, else
 * SYMMEM_ERR_INVALID naming call, the variable, its value and what it
 * takes. init calls it first, so a malformed value never becomes the
 * default (SYMMEM_TIMEOUT=30x is no "no limit"). */
symmem_status_t symmem__env_check(const char *call);
/* An integer variable, read strictly: *value_p = -1 where it is unset (or
 * ""), its value where it is a whole number >= 0; else SYMMEM_ERR_INVALID
 * naming call, the variable and its value. */
symmem_status_t symmem__env_whole(const char *call, const char *name, long long *value_p);
/* The index of the value among the variable's choices; else
 * SYMMEM_ERR_INVALID naming call, the variable, its value and the choices. */
symmem_status_t symmem__env_choice(const char *call, const char *name, int *index_p);

#endif

/* Status codes and the per-thread error message every failing call leaves. */
#ifndef SYMMEM_CORE_ERROR_H
#define SYMMEM_CORE_ERROR_H

#include "symmem/symmem.h"

/* Records the message of a failure detected here; "[pe N] " is prepended.
 * Returns status so callers can write: return symmem__error(...). */
symmem_status_t symmem__error(symmem_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The PE number used in message prefixes (-1 before init). */
void symmem__error_set_pe(int pe);

/* Propagate a failure; the first frame that detected it wrote the message. */
#define SYMMEM_CHECK(call)                                                                         \
    do {                                                                                           \
        symmem_status_t _st = (call);                                                              \
        if (_st != SYMMEM_OK) return _st;                                                          \
    } while (0)

#define SYMMEM_CHECK_GOTO(call, status, label)                                                     \
    do {                                                                                           \
        (status) = (call);                                                                         \
        if ((status) != SYMMEM_OK) goto label;                                                     \
    } while (0)

#endif

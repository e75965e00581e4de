/* Whether the program wants a wait to stop: one of its signal handlers asked
 * (Ctrl-C in Python raises KeyboardInterrupt). The library waits without
 * Python's GIL, so it cannot see Python's handlers itself: the extension
 * lends a check, which every wait calls at each poll. */
#ifndef SYMMEM_CORE_INTERRUPT_H
#define SYMMEM_CORE_INTERRUPT_H

#include "symmem/symmem.h"

/* Returns non-zero when the caller has been interrupted. Called from the
 * waiting thread, about ten times a second and after a signal woke it. */
typedef int (*symmem_interrupt_check_func_t)(void);

/* Installs check (NULL: none, the default; a C program is never interrupted). */
void symmem__interrupt_set_check(symmem_interrupt_check_func_t check);

/* SYMMEM_OK, or SYMMEM_ERR_INTERRUPTED ("<call>: interrupted by a signal ...")
 * when the installed check says the caller was interrupted. Every wait of
 * every backend calls it at each poll (the gpu backend through the core's
 * services). */
symmem_status_t symmem__interrupted(const char *call);

#endif

/* A process forked after init() is no PE. It inherits the PE's mappings and
 * state, so its calls would act as the parent's: its barrier pairs with the
 * other PEs' (leaving the parent's one behind), its puts land, its finalize
 * ends the parent's PE for the whole job. A pthread_atfork handler marks
 * every such child at fork time, so the calls cost nothing: in the child
 * the runtime reads as not initialised (finalize does nothing there, and
 * touches none of the parent's shared state), and the not-initialised
 * check, which every call makes, says that it was forked. */
#ifndef SYMMEM_CORE_FORKED_H
#define SYMMEM_CORE_FORKED_H

#include "symmem/symmem.h"

/* After a successful init: this process is the PE; a child forked from now
 * on is not. */
void symmem__forked_arm(void);
/* SYMMEM_OK, or SYMMEM_ERR_FORKED naming call, this process, the PE and
 * its process where this process was forked after init(). */
symmem_status_t symmem__check_not_forked(const char *call);

#endif

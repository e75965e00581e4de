/* Python exceptions from statuses and messages: the one place that turns a
 * status into the right exception, with .msg, .status and "[pe N] ". */
#ifndef SYMMEM_EXT_ERRORS_H
#define SYMMEM_EXT_ERRORS_H

#include "extension.h"

/* Raises the exception for status with symmem_last_error(); returns NULL. */
PyObject *symmem__ext_raise_status(module_state_t *st, symmem_status_t status);
/* raise_status for a call the core knows under another name: the message's
 * "inner: " (the core's name, e.g. put) becomes "outer: " (e.g. p). */
PyObject *symmem__ext_raise_status_as(module_state_t *st, symmem_status_t status, const char *inner,
                                      const char *outer);
/* Raises NvshmemInvalid with "[pe N] " and the formatted text; returns NULL. */
PyObject *symmem__ext_raise_invalid(module_state_t *st, const char *fmt, ...);
/* The exception for status (not raised): message (a str) after "[pe N] "
 * is its message and .msg, status its .status. */
PyObject *symmem__ext_exception(module_state_t *st, symmem_status_t status, PyObject *message);
/* 0 if symmem is initialized; else -1 with the core's NvshmemInvalid naming call. */
int symmem__ext_require_initialized(module_state_t *st, const char *call);
/* None for SYMMEM_OK; else raise_status. */
PyObject *symmem__ext_done(module_state_t *st, symmem_status_t status);

#endif
